"""MkDocs hooks (no network, no plugin): pages and tables generated at build time, so the
site always shows what the current code does.

- The gallery (gallery/*.md, docs/gen_gallery.py): each example run on the cpu runtime,
  its source and the code its kernels generate.
- The benchmark charts (images/bench_*.svg, docs/gen_charts.py) from benchmarks/results/.
- Tables of cubepy's names from their docstrings, below.

A page line `<!-- cubepy-names: KIND -->` becomes a table of the public names of `cubepy`
of that kind, each with the first paragraph of its docstring:

    intrinsics   the functions a kernel calls (`terminate`, `atomic_add`, `plane_sum`, ...)
    builtins     the position builtins (`ABSOLUTE_POS`, `CUBE_DIM_X`, ...)
    dtypes       the element types (`f32`, `u32`, ...)
    annotations  the parameter annotations (`Tensor`, `Array`, `Line`, `Comptime`) and
                 the generic placeholders (`Float`, ...)

Such objects are instances, which mkdocstrings (static analysis) cannot document, so the
hook imports cubepy and reads them. `names_of_kind` is what tests/test_docs_site.py uses
to check that the API page covers every public name.
"""
from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

_HERE = Path(__file__).resolve().parent

_MARKER = re.compile(r"^<!-- cubepy-names: (\w+) -->$", re.M)


def names_of_kind(kind: str) -> list[str]:
    """Public names of `cubepy` of one kind, in the order `cubepy/__init__.py` lists them."""
    import cubepy
    from cubepy.ir.types import DType, Generic
    from cubepy.lang import BuiltinVar, Intrinsic, MatrixElement

    tests = {
        "intrinsics": lambda o: isinstance(o, Intrinsic),
        "builtins": lambda o: isinstance(o, BuiltinVar),
        "dtypes": lambda o: isinstance(o, (DType, MatrixElement)),
        "annotations": lambda o: (isinstance(o, Generic)
                                  or type(o).__name__ in ("_BufferFactory", "_LineFactory",
                                                          "_ComptimeFactory")),
    }
    if kind not in tests:
        raise ValueError(f"unknown cubepy-names kind {kind!r} (known: {sorted(tests)})")
    return [n for n, o in vars(cubepy).items() if not n.startswith("_") and tests[kind](o)]


_POSITIONS = {
    "ABSOLUTE_POS": "the unit's position in the whole launch",
    "UNIT_POS": "the unit's position in its cube",
    "CUBE_POS": "the cube's position in the launch",
    "CUBE_DIM": "units per cube (a compile-time constant)",
    "CUBE_COUNT": "cubes in the launch",
    "PLANE_DIM": "units per plane (warp, subgroup, SIMD-group)",
    "UNIT_POS_PLANE": "the unit's lane in its plane",
}
_KINDS = {"float": "floating point", "int": "signed integer", "uint": "unsigned integer",
          "bool": "boolean"}


def _summary(kind: str, name: str) -> str:
    import cubepy
    from cubepy.ir.types import Generic

    obj = getattr(cubepy, name)
    if kind == "builtins":
        base, _, axis = name.rpartition("_")
        if base in _POSITIONS and axis in "XYZ":
            return f"`u32`: {_POSITIONS[base]}, along {axis.lower()}"
        return f"`u32`: {_POSITIONS[name]}" + (", linearised (x fastest)"
                                               if name not in ("PLANE_DIM", "UNIT_POS_PLANE")
                                               else "")
    if kind == "dtypes" and not hasattr(obj, "bits"):  # tf32: cmma fragments only
        return (f"TensorFloat-32, the element type of cmma A/B fragments only (stored as "
                f"`{obj.storage.name}`)")
    if kind == "dtypes" and obj.bits == 8 and obj.kind == "float":
        return (f"8-bit floating point ({obj.name}), a storage type: loaded, stored and "
                f"converted")
    if kind == "dtypes":
        return f"{obj.bits}-bit {_KINDS.get(obj.kind, obj.kind)}"
    if isinstance(obj, Generic):
        return ("generic placeholder, bound per launch to one of "
                + ", ".join(f"`{t}`" for t in obj.bound))
    doc = _ANNOTATIONS.get(name) or inspect.getdoc(obj) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").replace("|", "\\|")


_ANNOTATIONS = {
    "Tensor": "`Tensor[T]`: a buffer with a shape and strides (`t.shape(d)`, `t.stride(d)`, "
              "`t.rank()`, `t.len()`); `t[i]` is a flat index.",
    "Array": "`Array[T]`: a buffer with a length (`len(a)`); `a[i]` is a flat index.",
    "Line": "`Line[T]`: an element type of `line size` values, chosen at launch "
            "(`tensor.with_line_size(n)`).",
    "Comptime": "`Comptime[int|bool|float|str]`: a parameter fixed at compile time; the "
                "kernel is specialised per value.",
}


def names_table(kind: str) -> str:
    """The markdown table that replaces a `cubepy-names` marker."""
    rows = [f"| `cubepy.{n}` | {_summary(kind, n)} |" for n in names_of_kind(kind)]
    return "\n".join(["| name | what it is |", "| --- | --- |", *rows])


def on_page_markdown(markdown: str, **_) -> str:
    """MkDocs hook: expand every `cubepy-names` marker of a page."""
    return _MARKER.sub(lambda m: names_table(m.group(1)), markdown)


def _generator(name: str):
    spec = importlib.util.spec_from_file_location(f"cubepy_docs_{name}", _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated_files() -> dict[str, str]:
    """Site path -> content of every page and image made at build time."""
    gallery, charts = _generator("gen_gallery"), _generator("gen_charts")
    out = {f"gallery/{path.name}": text for path, text in gallery.pages().items()}
    out.update({f"images/{chart}": charts.svg(chart) for chart in charts.CHARTS})
    return out


def on_files(files, config, **_):
    """MkDocs hook: add the gallery pages and the benchmark charts."""
    from mkdocs.structure.files import File

    for uri, content in generated_files().items():
        files.append(File.generated(config, uri, content=content))
    return files
