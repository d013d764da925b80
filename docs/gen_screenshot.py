"""Renders the source explorer in headless Chromium: the screenshot docs/images/explore.png
(the seed kernel with one Python line pinned), and the helpers tests/test_explore_browser.py
uses to drive the page's script in a real browser.

    python docs/gen_screenshot.py         # needs chromium (Debian: apt-get install chromium)

No DevTools protocol is needed: a small driver script appended to the page sends the
mouse events after the explorer's own script has run and writes what it saw into a
`data-driver` attribute, which `--dump-dom` returns (or the screenshot shows).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT = ROOT / "docs" / "images" / "explore.png"
SEED_LINE = 47  # `output[index] = max(...)` in examples/fused_matmul_add_relu.py
WINDOW = "1600,1000"

# Hover, leave, then click the Python line LINE `CLICKS` times; record the highlighted ids,
# the panels' scroll positions, and the lines whose jump links do not sit on the line.
_DRIVER = """
(function(){var root=document.querySelector('.cubepy-explore');
var py=document.getElementById(root.id+'-py-L'+LINE);var r={};
function ids(c){return Array.prototype.map.call(root.querySelectorAll('.'+c),
function(e){return e.id;}).sort();}
function send(t){py.dispatchEvent(new MouseEvent(t,{bubbles:true,cancelable:true}));}
send('mouseover');r.hover=ids('hit');send('mouseout');r.after_mouseout=ids('hit');
r.pinned_after=[];r.scroll_after=[];
for(var k=0;k<CLICKS;k++){send('click');r.pinned_after.push(ids('pinned'));
r.scroll_after.push(Array.prototype.map.call(root.querySelectorAll('.panel'),
function(p){return p.scrollTop;}));}
r.jumps_off_their_line=Array.prototype.filter.call(root.querySelectorAll('.ln'),function(l){
var j=l.querySelector('.jumps');return j&&Math.abs(j.getBoundingClientRect().top-
l.getBoundingClientRect().top)>1;}).map(function(l){return l.id;});
document.body.setAttribute('data-driver',JSON.stringify(r));})();
"""


def chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(page: Path, *args: str, timeout: float = 120) -> str:
    """Loads `page` in headless Chromium with `args`; its stdout. Offline and sandboxed
    from the user's profile: no network services, a fresh profile folder."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={WINDOW}",
             *args, page.resolve().as_uri()],
            capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"chromium failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return run.stdout


def driven(page_html: str, line: int, clicks: int) -> str:
    """The page with the driver script appended after the explorer's own."""
    driver = _DRIVER.replace("LINE", str(line)).replace("CLICKS", str(clicks))
    assert "</body>" in page_html
    return page_html.replace("</body>", f"<script>{driver}</script></body>")


class _Body(HTMLParser):
    def __init__(self):
        super().__init__()
        self.driver: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.driver = dict(attrs).get("data-driver")


def drive(page_html: str, line: int, clicks: int, folder: Path) -> dict:
    """What the driver saw in a real browser (hover, mouseout, each click)."""
    path = folder / "driven.html"
    path.write_text(driven(page_html, line, clicks))
    body = _Body()
    body.feed(run_chromium(path, "--dump-dom"))
    if body.driver is None:
        raise AssertionError("the driver script did not run (a script error on the page?)")
    return json.loads(body.driver)


def seed_page() -> str:
    """The explorer page of the showcase kernel, as `cubepy explore` writes it."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "seed.html"
        subprocess.run([sys.executable, "-m", "cubepy", "explore",
                        "examples/fused_matmul_add_relu.py:fused_matmul_add_relu_kernel",
                        "--cube-dim", "16,16,1", "-D", "Float=f32", "-o", str(out)],
                       cwd=ROOT, check=True, capture_output=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        return out.read_text()


def screenshot(out: Path = SCREENSHOT) -> Path:
    """docs/images/explore.png: the seed kernel's page with line SEED_LINE pinned."""
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "explore.html"
        # the file's name as a reader's clone would show it, not this machine's path
        html = seed_page().replace(f"{ROOT}{os.sep}", "")
        page.write_text(driven(html, SEED_LINE, 1))
        shot = Path(folder) / "shot.png"
        run_chromium(page, f"--screenshot={shot}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, out)
    return out


if __name__ == "__main__":
    print(f"wrote {screenshot().relative_to(ROOT)}")
