"""cffi's parses of wgpu-py's C type names made in one go (cubepy/runtime/wgpu_ctypes.py):
each entry is the type cffi's own parse of that name gives, bad input leaves cffi's cache
alone, and a client's whole first use meets no name left out."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import needs_wgpu

cffi = pytest.importorskip("cffi")
native_ffi = pytest.importorskip("wgpu.backends.wgpu_native._ffi")

from cubepy.runtime.wgpu_ctypes import NAMES, preparse  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fresh_ffi():
    """An FFI with wgpu's header declared and no type name parsed yet."""
    ffi = cffi.FFI()
    ffi.cdef(native_ffi.get_wgpu_header())
    return ffi


def _public_spelling(name: str) -> str:
    """The name as cffi's public typeof takes it: a function type as its pointer."""
    return name.replace("void(", "void(*)(", 1) if name.startswith("void(") else name


def test_every_entry_is_the_type_cffi_parses_from_that_name():
    ffi, reference = _fresh_ffi(), _fresh_ffi()
    assert preparse(ffi) is True
    for name in NAMES:
        ctype, is_function = ffi._parsed_types[name]
        own = reference.typeof(_public_spelling(name))
        assert (ctype.cname, ctype.kind) == (own.cname, own.kind), name
        assert is_function == name.startswith("void("), name
        if not is_function:  # the cached entry is what typeof answers
            assert ffi.typeof(name) is ctype
    # what wgpu-py does with them: allocate a struct, an array, a callback
    assert ffi.sizeof(ffi.new("WGPUBufferDescriptor *")[0]) == \
        reference.sizeof("WGPUBufferDescriptor")
    assert len(ffi.new("uint32_t []", 5)) == 5
    callback = ffi.callback(NAMES[3], lambda *args: None)
    assert ffi.typeof(callback).kind == "function"


def test_a_name_the_header_lacks_leaves_the_cache_as_it_was():
    ffi = _fresh_ffi()
    before = dict(ffi._parsed_types)
    assert preparse(ffi, ("uint16_t *", "WGPUNoSuchStruct *")) is False
    assert ffi._parsed_types == before
    assert ffi.typeof("uint16_t *").cname == "uint16_t *"  # parsed at its use, as always


def test_names_already_parsed_are_kept_and_other_ffis_refused():
    ffi = _fresh_ffi()
    kept = ffi.typeof("WGPUBufferDescriptor *")
    assert preparse(ffi) is True
    assert ffi._parsed_types["WGPUBufferDescriptor *"][0] is kept
    assert preparse(object()) is False  # no cffi internals: nothing done, no error


# A client's first use, counted: every cffi parse after wgpu-py's backend is imported
# (its header and its log callback parse at import) is printed by the child.
_COUNT_PARSES = r"""
import sys
import numpy as np
import wgpu.backends.wgpu_native
import cffi.cparser
parses = []
original = cffi.cparser.Parser._parse
def counted(self, source):
    parses.append(source.split("(", 1)[1][:60] if "__dummy" in source else source[:60])
    return original(self, source)
cffi.cparser.Parser._parse = counted
import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
client = cubepy.client("wgpu")
x = client.tensor(np.arange(64, dtype=np.float32)); y = client.zeros(64, f32)
@cube(launch=True)
def double(x: Array[f32], y: Array[f32]):
    if ABSOLUTE_POS < len(x):
        y[ABSOLUTE_POS] = 2.0 * x[ABSOLUTE_POS]
with client.timer() as timer:
    double.launch(client, CubeCount(1), CubeDim(64), x, y)
timer.elapsed_ms()
assert np.array_equal(y.numpy(), 2 * np.arange(64, dtype=np.float32))
print(len(parses), parses)
"""


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_wgpu(), id="wgpu")])
def test_a_clients_first_use_parses_once(tmp_path, _):
    script = tmp_path / "first_use.py"  # a file: cubepy compiles kernels from source
    script.write_text(_COUNT_PARSES)
    path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, CUBEPY_CACHE_DIR=str(tmp_path), PYTHONPATH=path)
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, _, parses = done.stdout.strip().splitlines()[-1].partition(" ")
    assert count == "1", f"parsed one at a time, missing from NAMES: {parses}"
