"""The gallery of the documentation site: one page per example in examples/, with the
example's output on the cpu runtime and the source each of its kernels generates for one
specialisation. docs/hooks.py adds the pages to the site at build time (gallery/*.md), so
they always show what the current code generates.

    python docs/gen_gallery.py OUT_DIR     # write the pages to OUT_DIR, to read them
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GALLERY = Path("gallery")  # where the pages go in the site
TARGETS = (("CUDA", "cuda", "cuda"), ("WGSL", "wgsl", "wgsl"), ("Metal", "metal", "cpp"))
_F32 = {"Float": "f32"}

# example -> [(kernel, cube dim, placeholders, line sizes)]: the specialisation each
# kernel is shown for, the one the example launches by default.
KERNELS: dict[str, list[tuple[str, tuple[int, int, int], dict, dict]]] = {
    "fused_matmul_add_relu": [("fused_matmul_add_relu_kernel", (16, 16, 1), _F32, {})],
    "fused_matmul_add_relu_backward": [
        ("relu_backward", (256, 1, 1), _F32, {}),
        ("matmul_grad_lhs", (16, 16, 1), _F32, {}),
        ("matmul_grad_rhs", (16, 16, 1), _F32, {}),
    ],
    "plane_row_stats": [("row_stats", (256, 1, 1), {}, {})],
    "cmma_matmul": [("matmul", (128, 1, 1), {}, {})],  # WGSL, Metal: their CompileError
    "fp8_quantize": [("quantize_rows", (32, 1, 1), {}, {})],  # WGSL, Metal: no 8-bit float
    "torch_autograd": [
        ("fused_matmul_add_relu_kernel", (16, 16, 1), _F32, {}),
        ("relu_backward", (256, 1, 1), _F32, {}),
    ],
    "fusion_mlp": "fused",  # kernels made by cubepy.fusion: see _fused_sections
    "vectorized_bias_relu": [
        ("bias_relu", (64, 1, 1), _F32, {"x": 4, "bias": 4, "out": 4}),
        ("row_sums", (64, 1, 1), _F32, {"x": 4}),
    ],
}


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"gallery_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_example(name: str) -> str:
    """The example's stdout on the cpu runtime, run as a user would run it."""
    env = dict(os.environ, CUBEPY_RUNTIME="cpu", PYTHONPATH=str(ROOT))
    env.pop("CUBEPY_DEBUG", None)
    run = subprocess.run([sys.executable, f"examples/{name}.py", "--runtime", "cpu"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise SystemExit(f"examples/{name}.py failed:\n{run.stderr}")
    return run.stdout.rstrip()


def _fence(code: str, lang: str, indent: str = "") -> str:
    body = "\n".join((indent + line).rstrip() for line in code.rstrip().splitlines())
    return f"{indent}```{lang}\n{body}\n{indent}```"


def _kernel_section(module, kernel: str, dim, placeholders: dict, line_sizes: dict) -> str:
    import cubepy

    fn = getattr(module, kernel)
    bound = {k: getattr(cubepy, v) for k, v in placeholders.items()}
    options = dict(cube_dim=dim, **bound)
    if line_sizes:
        options["line_sizes"] = line_sizes
    spec = ", ".join([f"cube dim {dim[0]}x{dim[1]}x{dim[2]}"]
                     + [f"`{k}={v}`" for k, v in placeholders.items()]
                     + [f"line size {v} for `{k}`" for k, v in line_sizes.items()])
    tabs = [f'=== "{title}"\n\n' + _target_source(fn, target, options, lang)
            for title, target, lang in TARGETS]
    ir_options = {k: v for k, v in options.items() if k != "line_sizes"}
    ir_options.update({"line_sizes": line_sizes} if line_sizes else {})
    # the IR names the kernel's file: as a clone shows it, not this machine's path
    ir_text = fn.ir(**ir_options).replace(f"{ROOT}{os.sep}", "")
    tabs.append('=== "IR"\n\n' + _fence(ir_text, "text", "    "))
    return f"### `{kernel}`\n\n{spec}:\n\n" + "\n\n".join(tabs)


def _target_source(fn, target: str, options: dict, lang: str) -> str:
    """The kernel's source for `target`, or the CompileError a target that lacks what it
    uses gives (cmma on WGSL), as the user sees it."""
    from cubepy import CompileError

    try:
        return _fence(fn.source(target, **options), lang, "    ")
    except CompileError as e:  # the message names the kernel's file: as a clone shows it
        return _fence(f"CompileError: {e}".replace(f"{ROOT}{os.sep}", ""), "text", "    ")


def _fused_sections(module) -> list[str]:
    """The kernels cubepy.fusion makes of the example's `forward` (batch 64, cpu
    client), each for every target and as IR."""
    import numpy as np

    import cubepy
    import cubepy.fusion as fz
    from cubepy.fusion.runner import build_all, evaluated_now, source_of
    from cubepy.ir.printer import print_kernel
    client = cubepy.client("cpu")
    rng = np.random.default_rng(0)
    x = fz.asarray(client.tensor(rng.random((64, module.LAYERS[0]), dtype=np.float32)))
    params = [(fz.asarray(client.tensor(w)), fz.asarray(client.tensor(b)))
              for w, b in module.init_params(rng)]
    out = module.forward(x, params)
    evaluated = evaluated_now()
    sections = []
    for built in build_all([out.node], evaluated, True):
        tabs = [f'=== "{title}"\n\n' + _fence(source_of(built.kernel, target), lang, "    ")
                for title, target, lang in TARGETS]
        tabs.append('=== "IR"\n\n' + _fence(print_kernel(built.kernel), "text", "    "))
        sections.append(f"### `{built.name}`\n\nfuses {', '.join(built.fused_ops)}:\n\n"
                        + "\n\n".join(tabs))
    return sections


def page(name: str) -> str:
    """The gallery page of examples/NAME.py."""
    module = _load(name)
    title, _, rest = (module.__doc__ or name).strip().partition("\n")
    sections = (_fused_sections(module) if KERNELS[name] == "fused"
                else [_kernel_section(module, *k) for k in KERNELS[name]])
    return "\n\n".join([
        f"# {title.rstrip('.')}",
        f"<!-- Generated at build time by docs/gen_gallery.py from examples/{name}.py. -->",
        rest.strip("\n"),
        "## Output",
        "On the cpu runtime (times and rounding errors vary between machines):",
        _fence(f"$ python examples/{name}.py --runtime cpu\n{run_example(name)}", "text"),
        "## Source",
        f"examples/{name}.py (the tests run it too: tests/test_example.py):",
        "<!-- snippet: skip -->\n" + _fence(f'--8<-- "examples/{name}.py"', "python"),
        "## Generated code",
        "\n\n".join(sections),
    ]) + "\n"


def index() -> str:
    rows = []
    for name in KERNELS:
        title = ((_load(name).__doc__ or name).strip().splitlines()[0]).rstrip(".")
        rows.append(f"| [{name}]({name}.md) | {title} |")
    return "\n".join([
        "# Gallery", "",
        "Every example in the repository's examples/ folder, with what it prints on the cpu "
        "runtime and the CUDA, WGSL, Metal and IR that each of its kernels generates. "
        "Run one with `python examples/NAME.py` (the best runtime present) or "
        "`--runtime cpu|wgpu|cuda`.", "",
        "| example | what it shows |", "| --- | --- |", *rows, ""])


def pages() -> dict[Path, str]:
    """Every gallery file and its content."""
    missing = sorted({p.stem for p in EXAMPLES.glob("*.py")} - set(KERNELS))
    if missing:
        raise SystemExit(f"examples without a gallery entry in docs/gen_gallery.py: {missing}")
    if str(ROOT) not in sys.path:  # the examples import cubepy from this checkout
        sys.path.insert(0, str(ROOT))
    out = {GALLERY / "index.md": index()}
    out.update({GALLERY / f"{name}.md": page(name) for name in KERNELS})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the pages to")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path, text in pages().items():
        (args.out / path.name).write_text(text)
        print(f"wrote {args.out / path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
