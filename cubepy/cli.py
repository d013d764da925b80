"""The `cubepy` command line.

    cubepy emit path/to/file.py:kernel_name --target wgsl --cube-dim 16,16,1 -D Float=f32
    cubepy ir   path/to/file.py:kernel_name -D Float=f32
    cubepy explore path/to/file.py:kernel_name -D Float=f32 -o kernel.html
    cubepy info
    cubepy cache [--clear]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from .errors import (CubepyError, LaunchError, command_line_phrasing, debug_enabled,
                     report_error)


def _load_kernel(spec: str):
    """The CubeFunction named by FILE.py:NAME."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"cubepy: expected FILE.py:KERNEL, got {spec!r}")
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"cubepy: no such file: {path}")
    module_name = f"_cubepy_cli_{file.stem}"
    mod_spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(file.parent.resolve()))
    mod_spec.loader.exec_module(module)
    kernel = getattr(module, name, None)
    if kernel is None:
        raise SystemExit(f"cubepy: {path} has no {name!r}")
    from .kernel import CubeFunction
    if not isinstance(kernel, CubeFunction):
        raise SystemExit(f"cubepy: {name!r} in {path} is not a @cube function")
    if not kernel.is_kernel:
        raise SystemExit(f"cubepy: {name!r} in {path} is a device function (@cube without "
                         f"launch=True); emit and ir take a kernel")
    return kernel


def _parse_value(text: str) -> Any:
    """-D values: dtype names stay strings (CubeFunction resolves them); ints, floats and
    bools become Python values; anything else is a string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _parse_defines(defines: Sequence[str]) -> dict[str, Any]:
    out = {}
    for d in defines:
        name, eq, value = d.partition("=")
        if not eq or not name:
            raise SystemExit(f"cubepy: -D expects NAME=VALUE, got {d!r}")
        out[name.strip()] = _parse_value(value.strip())
    return out


def _parse_line_sizes(items: Sequence[str]) -> dict[str, int]:
    """--line-size NAME=N values: the line size of each Line parameter."""
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise SystemExit(f"cubepy: --line-size expects NAME=N, got {item!r}") from None
        if not eq or not name.strip():
            raise SystemExit(f"cubepy: --line-size expects NAME=N, got {item!r}")
    return out


def _parse_dims(text: str) -> tuple[int, int, int]:
    try:
        dims = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise SystemExit(f"cubepy: --cube-dim expects X[,Y[,Z]], got {text!r}") from None
    return (dims + (1, 1, 1))[:3]


def _cmd_emit(args) -> int:
    kernel = _load_kernel(args.kernel)
    options = _parse_defines(args.define)
    print(kernel.source(args.target, cube_dim=_parse_dims(args.cube_dim),
                        checked=not args.unchecked,
                        line_sizes=_parse_line_sizes(args.line_size), **options))
    return 0


def _cmd_ir(args) -> int:
    kernel = _load_kernel(args.kernel)
    print(kernel.ir(cube_dim=_parse_dims(args.cube_dim), target=args.target,
                    line_sizes=_parse_line_sizes(args.line_size),
                    checked=not args.unchecked, **_parse_defines(args.define)))
    return 0


def _cmd_explore(args) -> int:
    kernel = _load_kernel(args.kernel)
    page = kernel.explore(cube_dim=_parse_dims(args.cube_dim), checked=not args.unchecked,
                          line_sizes=_parse_line_sizes(args.line_size),
                          **_parse_defines(args.define))
    out = page.save(args.output or f"{kernel.__name__}.html")
    print(f"wrote {out}")
    return 0


def _cmd_info(args) -> int:
    from .runtime import RUNTIMES, client, default_choice
    from .targets import all_targets, targets_for_runtime
    _print_default_choice(default_choice)
    print("cubepy runtimes:")
    for name in RUNTIMES:
        try:
            c = client(name)
        except LaunchError as e:
            print(f"  {name:5} unavailable: {e}")
        else:
            lim = c.limits
            print(f"  {name:5} {c.device}")
            print(f"        max cube dim {lim.max_cube_dim}, {lim.max_units_per_cube} "
                  f"units/cube, max cube count {lim.max_cube_count}")
            print(f"        dtypes: {', '.join(sorted(t.name for t in lim.dtypes))}")
            if lim.features:
                print(f"        features: {', '.join(lim.features)}")
        if name == "cuda":  # which CUDA compiler serves, even without the runtime
            from .runtime.cuda_compile import describe_compilers
            for line in describe_compilers():
                print(f"        compiler: {line}")
        for target in targets_for_runtime(name):  # what the compiler generates for it
            for line in _capabilities(target):
                print(f"        {line}")
    print("source-only targets (kernel.source / cubepy emit):")
    for target in all_targets():
        if not target.runtimes:
            print(f"  {target.name:5} {target.title}")
            for line in _capabilities(target):
                print(f"        {line}")
    return 0


def _print_default_choice(default_choice) -> None:
    """Which runtime cubepy.client() picks here, and what ruled the others out."""
    env = os.environ.get("CUBEPY_RUNTIME")
    if env:
        print(f"default runtime: {env} (from $CUBEPY_RUNTIME)")
        return
    chosen, notes = default_choice()
    print(f"default runtime: {chosen.runtime} (cubepy.client() without a name)")
    for note in notes:
        print(f"  {note}")


def _capabilities(target) -> list[str]:
    """What the compiler generates for `target`, from its registry record."""
    by_types: dict[frozenset, list[str]] = {}
    for op, dtypes in target.atomic_dtypes.items():
        by_types.setdefault(frozenset(dtypes), []).append(op)
    atomics = "; ".join(f"{', '.join(ops)} on {', '.join(sorted(types))}"
                        for types, ops in by_types.items() if types) or "none"
    return [f"target {target.name}: types {', '.join(sorted(target.dtypes))}",
            f"  atomics: {atomics}",
            f"  plane ops: {len(target.plane_ops)} on "
            f"{', '.join(sorted(target.plane_dtypes)) or 'none'}; "
            f"line sizes {', '.join(map(str, target.line_sizes))} "
            f"({'vector' if target.vector_lines else 'element'} accesses)"]


def _cmd_cache(args) -> int:
    from . import cache
    root = cache.cache_dir()
    if root is None:
        print(f"the disk cache is off ({cache.NO_CACHE_ENV} is set)")
        return 0
    if args.clear:
        for folder in cache.clear():
            print(f"removed {folder}")
        return 0
    print(f"cache folder: {root} (docs/CACHE.md)")
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        files = [f for f in folder.iterdir() if f.is_file()] if folder.is_dir() else []
        size = sum(f.stat().st_size for f in files)
        print(f"  {folder.name:8} {len(files)} entries, {size / 1024:.1f} KiB")
    return 0


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    from .targets import source_targets, target_names
    parser = argparse.ArgumentParser(prog="cubepy", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"cubepy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("emit", "print the generated source of a kernel"),
                            ("ir", "print the IR of a kernel"),
                            ("explore", "write an HTML page showing the kernel's Python "
                                        "beside its IR, CUDA, WGSL and Metal")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("kernel", help="FILE.py:KERNEL_NAME")
        p.add_argument("--cube-dim", default="1,1,1", help="X,Y,Z (default 1,1,1)")
        p.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                       help="bind a generic (Float=f32) or a comptime parameter (n=4)")
        p.add_argument("--line-size", action="append", default=[], metavar="NAME=N",
                       help="the line size of a Line parameter (x=4; default 1)")
        p.add_argument("--unchecked", action="store_true",
                       help="the variant without bounds checks")
        if name == "emit":
            p.add_argument("--target", "-t", default="cuda", choices=source_targets(),
                           help="the language to emit (default cuda)")
        elif name == "explore":
            p.add_argument("-o", "--output", metavar="PAGE.html",
                           help="where to write the page (default KERNEL.html)")
        else:
            p.add_argument("--target", "-t", default=None, choices=target_names(),
                           help="also run that target's legalisation passes")
    sub.add_parser("info", help="list the runtimes and devices found")
    p = sub.add_parser("cache", help="show the on-disk cache folder, or clear it")
    p.add_argument("--clear", action="store_true", help="delete every cache entry")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The `cubepy` command. Errors print as one message: exit status 1 for a kernel the
    compiler rejects, 2 for a usage or environment problem (CUBEPY_DEBUG=1: a traceback)."""
    args = _parser().parse_args(argv)
    commands = {"emit": _cmd_emit, "ir": _cmd_ir, "explore": _cmd_explore, "info": _cmd_info,
                "cache": _cmd_cache}
    try:
        with command_line_phrasing():
            return commands[args.command](args)
    except CubepyError as exc:
        if debug_enabled():
            raise
        return report_error(exc, "cubepy")


if __name__ == "__main__":
    raise SystemExit(main())
