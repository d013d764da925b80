"""HTML of the source explorer (cubepy/explore.py): panels, ABI tables, style, script.

Every id is prefixed with the page's own id, so several explorations can share one
Jupyter notebook. Python line N is `<uid>-py-L<N>` with `data-links` naming the ids of
the lines it produced; generated line k of target t is `<uid>-<t>-L<k>` with
`data-py="N"`. Plain `<a href>` links jump between them without the script; the script
adds hover highlighting and click-to-pin (scrolling every panel to the pinned line).
"""
from __future__ import annotations

import html
from typing import TYPE_CHECKING

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, Text,
                            Whitespace)

from .targets import all_targets, get_target

if TYPE_CHECKING:
    from .abi import KernelABI
    from .explore import Exploration, TargetView

def _short(panel: str) -> str:
    """The tag of a panel in a Python line's links (the target's `short`: cu, wg, mt)."""
    return "ir" if panel == "ir" else get_target(panel).short


def _order(panel: str) -> int:
    """Panels in registry order, the IR first."""
    names = [t.name for t in all_targets()]
    return -1 if panel == "ir" else names.index(panel)


class IRLexer(RegexLexer):
    """cubepy's IR text (cubepy/ir/printer.py)."""

    name = "cubepy IR"
    tokens = {"root": [
        (r"#.*$", Comment.Single),
        (r"\b(kernel|let|var|if|else|for|in|range|while|loop|break|continue|terminate|"
         r"return|shared|cube_dim)\b", Keyword),
        (r"\b(f16|bf16|f32|f64|i32|i64|u32|u64|bool|e4m3|e5m2|array|tensor|line)\b",
         Keyword.Type),
        (r"%[A-Za-z_]\w*", Name.Variable),
        (r"@[A-Za-z_]\w*", Name.Builtin),
        (r"-?\d+\.\d*(?:e[+-]?\d+)?|-?\d+", Number),
        (r"[=<>!+\-*/]+", Operator),
        (r"[(){}\[\],:;.]", Punctuation),
        (r"[A-Za-z_]\w*", Name.Function),
        (r"\s+", Whitespace),
        (r".", Text),
    ]}


def _lexer(language: str):
    """The pygments lexer of "python", "ir" or a target's source (its `lexer`)."""
    if language == "ir":
        return IRLexer(stripnl=False, ensurenl=True)
    alias = language if language == "python" else get_target(language).lexer
    return get_lexer_by_name(alias, stripnl=False, ensurenl=True)


def highlighted_lines(text: str, language: str) -> list[str]:
    """`text` highlighted, one HTML string per line (tokens never span two lines)."""
    count = len(text.splitlines())
    out = highlight(text, _lexer(language), HtmlFormatter(nowrap=True))
    lines = out.split("\n")[:count]  # the formatter closes every span at a line's end
    return lines + [""] * (count - len(lines))


def _python_panel(ex: "Exploration", uid: str) -> str:
    links = ex.links()
    numbers = sorted(ex.python)
    texts = highlighted_lines("\n".join(ex.python[n] for n in numbers) + "\n", "python")
    row_of = dict(zip(numbers, texts))
    rows = []
    for title, first, last in ex.sections:
        rows.append(f'<span class="sec">{html.escape(title)}</span>')
        for n in range(first, last + 1):
            targets = links.get(n, {})
            ids = " ".join(f"{uid}-{t}-L{k}" for t, ks in targets.items() for k in ks)
            jumps = "".join(
                f'<a class="jump" href="#{uid}-{t}-L{ks[0]}" title="{t}: line'
                f'{"s" if len(ks) > 1 else ""} {_ranges(ks)}">{_short(t)}</a>'
                for t, ks in sorted(targets.items(), key=lambda kv: _order(kv[0])))
            attrs = f' data-py="{n}" data-links="{ids}"' if targets else ""
            rows.append(f'<span class="ln" id="{uid}-py-L{n}"{attrs}><span class="no">{n}'
                        f'</span>{row_of.get(n, "")}<span class="jumps">{jumps}</span></span>')
    return (f'<section class="panel py"><h3>Python <small>{html.escape(ex.filename)}'
            f'</small></h3><pre class="hl">{"".join(rows)}</pre></section>')


def _ranges(numbers: list[int]) -> str:
    """1,2,3,7 -> "1-3, 7"."""
    parts, start = [], numbers[0]
    for prev, cur in zip(numbers, numbers[1:] + [None]):
        if cur != prev + 1:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = cur
    return ", ".join(parts)


def _target_panel(view: "TargetView", uid: str) -> str:
    rows = []
    for k, (text, py) in enumerate(zip(highlighted_lines(view.text, view.name),
                                       view.py_lines), start=1):
        attr = "" if py is None else f' data-py="{py}"'
        back = "" if py is None else f'<a class="back" href="#{uid}-py-L{py}">{py}</a>'
        rows.append(f'<span class="ln" id="{uid}-{view.name}-L{k}"{attr}>'
                    f'<span class="no">{k}</span>{text}{back}</span>')
    return (f'<section class="panel" data-target="{view.name}"><h3>{view.title}</h3>'
            f'<pre class="hl">{"".join(rows)}</pre></section>')


def _abi_section(ex: "Exploration") -> str:
    by_target = [(v.title, v.abi) for v in ex.targets if v.abi is not None]
    if not by_target:
        return ""
    abi = by_target[0][1]
    rows = "".join(
        f"<tr><td>{i}</td><td>{html.escape(b.name)}</td><td>{b.dtype.name}</td>"
        f"<td>{b.kind}</td><td>{'atomic' if b.atomic else 'read' if b.read_only else 'read-write'}"
        f"</td></tr>" for i, b in enumerate(abi.buffers))
    out = ['<section class="abi"><h3>Launch ABI</h3>',
           "<p>Buffers are CUDA pointer parameters, WGSL <code>@binding(i)</code> storage "
           "buffers and Metal <code>[[buffer(i)]]</code>, in this order; the info struct "
           "follows them (CUDA: by value, last; WGSL and Metal: the next binding). "
           "Layout: cubepy/abi.py.</p>",
           f"<table><tr><th>#</th><th>buffer</th><th>dtype</th><th>kind</th>"
           f"<th>access</th></tr>{rows}</table>"]
    shown: list[tuple[str, "KernelABI"]] = []
    for title, target_abi in by_target:
        same = next((t for t, a in shown if a.fields == target_abi.fields), None)
        if same is not None:
            out.append(f"<p>{title}: the info struct of {same}.</p>")
            continue
        shown.append((title, target_abi))
        out.append(_info_table(title, target_abi))
    out.append("</section>")
    return "".join(out)


def _info_table(title: str, abi: "KernelABI") -> str:
    if not abi.fields:
        return f"<p>{title}: no info struct.</p>"
    rows = "".join(
        f"<tr><td>{f.offset}</td><td>{html.escape(f.name)}</td><td>{f.dtype.name}"
        f"{f'[{f.count}]' if f.count > 1 else ''}</td><td>{f.kind}"
        f"{' of ' + html.escape(f.param) if f.param else ''}</td></tr>" for f in abi.fields)
    return (f"<h4>{title} info struct ({abi.size} bytes)</h4><table><tr><th>offset</th>"
            f"<th>field</th><th>type</th><th>holds</th></tr>{rows}</table>")


_STYLE = """
#UID{font:13px/1.45 system-ui,sans-serif;color:#1d1d1f;background:#fff;padding:10px}
#UID h2{font-size:16px;margin:0 0 4px}#UID h3{font-size:13px;margin:0;padding:4px 8px;
background:#f0f0f3;border-bottom:1px solid #ddd;position:sticky;top:0;z-index:1}
#UID h3 small{font-weight:normal;color:#777}#UID .meta{color:#555;margin:0 0 8px}
#UID .grid{display:grid;grid-template-columns:minmax(0,1.1fr) minmax(0,1fr) minmax(0,1fr);
grid-template-rows:46vh 46vh;gap:8px}#UID .panel{position:relative;overflow:auto;
border:1px solid #ddd;border-radius:4px}#UID .panel.py{grid-row:span 2}
#UID pre{margin:0;padding:4px 0;font:12px/1.45 ui-monospace,Menlo,Consolas,monospace}
#UID .ln{display:block;white-space:pre;padding-right:8px;position:relative;
background:inherit}#UID .ln[data-py]{cursor:pointer}
#UID .no{display:inline-block;width:3.2em;text-align:right;margin-right:10px;color:#aaa;
user-select:none}#UID .sec{display:block;color:#666;font-style:italic;padding:2px 8px;
background:#fafafa}#UID .jumps{position:absolute;right:0;top:0;
padding:0 4px;background:inherit}#UID a.jump,#UID a.back{font-size:10px;
color:#36c;text-decoration:none;margin-left:4px}#UID a.back{color:#999}
#UID .hit{background:#fff3b0}#UID .pinned{background:#ffd966}
#UID table{border-collapse:collapse;margin:4px 0 8px}#UID td,#UID th{border:1px solid #ddd;
padding:2px 8px;text-align:left;font-size:12px}#UID .abi{margin-top:10px}
"""

_SCRIPT = """
(function(){var root=document.getElementById("UID");if(!root)return;var pinned=null;
function each(n,f){root.querySelectorAll('[data-py="'+n+'"]').forEach(f);}
function mark(n,c,on){each(n,function(e){e.classList.toggle(c,on);});}
function reveal(n){root.querySelectorAll('.panel').forEach(function(p){
var e=p.querySelector('[data-py="'+n+'"]');if(e)p.scrollTop=e.offsetTop-p.clientHeight/3;});}
root.addEventListener('mouseover',function(ev){var e=ev.target.closest('[data-py]');
if(e)mark(e.dataset.py,'hit',true);});
root.addEventListener('mouseout',function(ev){var e=ev.target.closest('[data-py]');
if(e)mark(e.dataset.py,'hit',false);});
root.addEventListener('click',function(ev){if(ev.target.closest('a'))return;
var e=ev.target.closest('[data-py]');if(!e)return;var n=e.dataset.py;
if(pinned!==null)mark(pinned,'pinned',false);pinned=(pinned===n)?null:n;
if(pinned!==null){mark(n,'pinned',true);reveal(n);}});})();
"""


def render(ex: "Exploration", uid: str) -> str:
    """The exploration as one HTML fragment (style and script inline)."""
    pygments_css = HtmlFormatter(style="default").get_style_defs(f"#{uid} .hl")
    panels = [_python_panel(ex, uid)] + [_target_panel(v, uid) for v in ex.targets]
    return (f'<div class="cubepy-explore" id="{uid}"><style>{_STYLE.replace("UID", uid)}'
            f"{pygments_css}</style>"
            f"<h2>{html.escape(ex.kernel)}</h2><p class=\"meta\">specialisation: "
            f"<code>{html.escape(ex.spec)}</code>, "
            f"{'bounds-checked' if ex.checked else 'unchecked'} launch. Hover a line to "
            f"see what it became; click to pin it.</p>"
            f'<div class="grid">{"".join(panels)}</div>{_abi_section(ex)}'
            f"<script>{_SCRIPT.replace('UID', uid)}</script></div>")
