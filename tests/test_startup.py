"""Start-up cost: `import cubepy` stays light, and `cubepy.client()` skips runtimes that
cheap checks rule out, without importing their packages (docs/PERFORMANCE.md, "Start-up")."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

import cubepy
from cubepy import runtime
from cubepy.runtime import detect

ROOT = Path(__file__).resolve().parents[1]
# The checks of a machine without a GPU, with both packages installed, so that the
# device checks (not a missing package) are what rule the runtimes out.
NO_GPU = """
from cubepy.runtime import detect
detect._installed = lambda module: True
detect._nvidia_driver = lambda: None
detect._gpu_device_node = lambda: None
detect._linux = lambda: True
"""


def _python(code: str, script: Path | None = None) -> str:
    """Runs `code` in a fresh interpreter (from file `script` when given: kernels need a
    source file)."""
    env = {k: v for k, v in os.environ.items() if k != "CUBEPY_RUNTIME"}
    env["PYTHONPATH"] = str(ROOT)
    args = ["-c", textwrap.dedent(code)]
    if script is not None:
        script.write_text(textwrap.dedent(code))
        args = [str(script)]
    done = subprocess.run([sys.executable, *args], capture_output=True,
                          text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_cubepy_does_not_import_heavy_optional_packages():
    out = _python("""
        import sys, cubepy
        print(sorted(m for m in ("jinja2", "lark", "wgpu", "pycuda") if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_import_cubepy_leaves_the_compiler_passes_for_first_use(tmp_path):
    out = _python("""
        import sys, cubepy
        lazy = ("cubepy.frontend.parse", "cubepy.frontend.build", "cubepy.ir.passes",
                "cubepy.frontend.intrinsics", "cubepy.frontend.indexing", "hashlib",
                "statistics")
        print(sorted(m for m in lazy if m in sys.modules))
        @cubepy.cube
        def double(x: cubepy.Array[cubepy.Float]):
            x[cubepy.ABSOLUTE_POS] = x[cubepy.ABSOLUTE_POS] + x[cubepy.ABSOLUTE_POS]
        print("parse" if "cubepy.frontend.parse" in sys.modules else "")
    """, tmp_path / "kernel.py")
    assert out.split() == ["[]", "parse"]


def test_default_client_skips_ruled_out_runtimes_without_importing_them():
    out = _python(NO_GPU + """
import sys, cubepy
c = cubepy.client()
print(c.runtime, "wgpu" in sys.modules, "pycuda" in sys.modules)
""")
    assert out.split() == ["cpu", "False", "False"]


@pytest.fixture
def fake_runtimes(monkeypatch):
    """Fresh client cache; `_create` records the runtimes probed and returns fakes."""
    monkeypatch.delenv("CUBEPY_RUNTIME", raising=False)
    monkeypatch.setattr(runtime, "_CLIENTS", {})
    monkeypatch.setattr(detect, "_installed", lambda module: True)
    monkeypatch.setattr(detect, "_linux", lambda: True)
    probed: list[str] = []
    devices = {"wgpu": SimpleNamespace(lost=None, is_software=False, device="a GPU",
                                       runtime="wgpu")}
    real_create = runtime._create

    def create(kind, index):
        probed.append(kind)
        if kind == "cpu":
            return real_create(kind, index)
        if kind not in devices:
            raise RuntimeError("no device")
        return devices[kind]
    monkeypatch.setattr(runtime, "_create", create)
    return probed, devices


def test_default_client_probes_wgpu_when_a_gpu_device_node_is_there(fake_runtimes,
                                                                   monkeypatch):
    probed, devices = fake_runtimes
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: None)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/dri/renderD128")
    chosen, notes = runtime.default_choice()
    assert probed == ["wgpu"]
    assert chosen is devices["wgpu"]
    assert notes[-1] == "wgpu: chosen (a GPU)"
    assert notes[0].startswith("cuda: skipped, no NVIDIA driver visible")


def test_default_client_drops_a_software_adapter_it_probed(fake_runtimes, monkeypatch):
    probed, devices = fake_runtimes
    devices["wgpu"].is_software = True
    devices["wgpu"].device = "llvmpipe"
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: None)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/dri/renderD128")
    assert cubepy.client().runtime == "cpu"
    assert probed == ["wgpu", "cpu"]
    assert runtime.default_choice()[1][1] == "wgpu: skipped, llvmpipe is a software adapter"


def test_default_client_probes_cuda_when_an_nvidia_driver_is_visible(fake_runtimes,
                                                                    monkeypatch):
    probed, _ = fake_runtimes
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: "/dev/nvidia0")
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/nvidia0")
    chosen, notes = runtime.default_choice()
    assert probed == ["cuda", "wgpu"]  # cuda failed to open here; wgpu's fake opened
    assert notes[0] == "cuda: skipped, unavailable: runtime 'cuda' is not available: no device"
    assert chosen.runtime == "wgpu"


def test_missing_packages_rule_runtimes_out(monkeypatch):
    monkeypatch.setattr(detect, "_installed", lambda module: False)
    assert detect.ruled_out("cuda") == "pycuda is not installed"
    assert detect.ruled_out("wgpu") == "wgpu-py is not installed"
    assert detect.ruled_out("cpu") is None


def test_wgpu_is_always_probed_off_linux(monkeypatch):
    monkeypatch.setattr(detect, "_installed", lambda module: True)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: None)
    monkeypatch.setattr(detect, "_linux", lambda: False)  # Metal / DX12: no cheap test
    assert detect.ruled_out("wgpu") is None


def test_an_explicit_name_is_not_screened(fake_runtimes, monkeypatch):
    probed, _ = fake_runtimes
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: None)
    assert cubepy.client("wgpu").runtime == "wgpu"
    monkeypatch.setenv("CUBEPY_RUNTIME", "wgpu")
    assert cubepy.client().runtime == "wgpu"
    assert probed == ["wgpu"]


def test_info_says_what_was_chosen_and_why():
    out = _python(NO_GPU + """
from cubepy.cli import main
main(["info"])
""")
    assert "default runtime: cpu (cubepy.client() without a name)" in out
    assert "  cuda: skipped, no NVIDIA driver visible" in out
    assert "  wgpu: skipped, no GPU device node" in out
    assert "  cpu: chosen (" in out


def test_info_names_the_runtime_set_by_the_environment(capsys, monkeypatch):
    from cubepy.cli import _print_default_choice
    monkeypatch.setenv("CUBEPY_RUNTIME", "cpu")
    _print_default_choice(runtime.default_choice)
    assert capsys.readouterr().out == "default runtime: cpu (from $CUBEPY_RUNTIME)\n"
