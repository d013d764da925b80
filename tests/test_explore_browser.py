"""The source explorer's page in a real browser: headless Chromium runs the page's own
script, and a driver appended to the page hovers and clicks a Python line
(docs/gen_screenshot.py). Skipped where Chromium is absent (Debian: apt-get install
chromium); tests/test_explore.py checks the HTML structure everywhere."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("pygments")

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gen_screenshot", ROOT / "docs" / "gen_screenshot.py")
shot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shot)

pytestmark = pytest.mark.skipif(shot.chromium() is None, reason="chromium is not installed")
LINE = shot.SEED_LINE  # output[index] = max(sum + bias[index], Float(0.0))


@pytest.fixture(scope="module")
def page() -> str:
    return shot.seed_page()


@pytest.fixture(scope="module")
def seen(page, tmp_path_factory) -> dict:
    return shot.drive(page, LINE, clicks=2, folder=tmp_path_factory.mktemp("browser"))


def _ids_of_line(page: str, line: int) -> list[str]:
    """Every element id the page marks as produced by (or being) Python line `line`."""
    return sorted(re.findall(rf'id="([^"]+)"[^>]*data-py="{line}"', page))


def test_hover_highlights_the_line_and_every_line_it_produced(page, seen):
    expected = _ids_of_line(page, LINE)
    targets = {re.sub(r"cubepy-explore-\d+-(\w+)-L\d+", r"\1", i) for i in expected}
    assert targets == {"py", "ir", "cuda", "wgsl", "metal"}
    assert seen["hover"] == expected
    assert seen["after_mouseout"] == []


def test_click_pins_and_scrolls_each_panel_and_a_second_click_unpins(page, seen):
    assert seen["pinned_after"][0] == _ids_of_line(page, LINE)
    assert seen["pinned_after"][1] == []
    # line 47 produced code far down each generated listing: the panels scrolled to it
    assert sum(1 for top in seen["scroll_after"][0] if top > 0) >= 4


def test_jump_links_sit_on_their_own_line(seen):
    assert seen["jumps_off_their_line"] == []


def test_screenshot_is_a_png_of_the_page(tmp_path):
    out = shot.screenshot(tmp_path / "explore.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == tuple(int(v) for v in shot.WINDOW.split(","))
