"""On-disk caches (cubepy/cache.py) cannot be poisoned: trusted folders and entries only,
checksummed entries, atomic writes, per-user default folder; and the caches built on it
(jinja2 bytecode, cubins) plus the wgpu runtime's XDG_RUNTIME_DIR fallback.

Tests that need a second user run as root (as CI does) and play uid 65534 with `chown`
or `setpriv`; elsewhere they are skipped.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import cubepy
from cubepy import cache
from cubepy.cache import CacheWarning, DiskCache, cache_key
from cubepy.runtime import cuda_compile

OTHER_UID = 65534  # "nobody"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="playing another user needs root "
                                "(CI runs the suite as root)")
KEY = "ab" * 32


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    """A fresh cache root (not yet created) and a clean warning memory."""
    root = tmp_path / "cache"
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(root))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    monkeypatch.delenv("CUBEPY_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_warned", set())
    return root


class FakeCompilers:
    """Stands in for NVRTC and nvcc: counts compilations, returns a payload derived from
    the source, so cache logic runs without CUDA."""

    def __init__(self, monkeypatch, nvcc_id="nvcc|fake-12.8"):
        self.calls = 0
        self.nvcc_id = nvcc_id
        monkeypatch.setattr(cuda_compile, "nvrtc_identity", lambda: None)
        monkeypatch.setattr(cuda_compile, "nvcc_identity", lambda: self.nvcc_id)
        monkeypatch.setattr(cuda_compile, "nvcc_version", lambda: "nvcc-fake")
        monkeypatch.setattr(cuda_compile, "compile_nvcc", self.compile)

    def compile(self, source: str, arch: str, fast_math: bool = True) -> bytes:
        self.calls += 1
        return b"\x7fELF-cubin-for-" + arch.encode() + b"-" + source.encode()


def _cubin_file(root: Path) -> Path:
    (found,) = (root / "cuda").glob("*.cubin")
    return found


def _caught(fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        result = fn()
    return result, [w for w in got if issubclass(w.category, CacheWarning)]


# -- where, and turning it off ----------------------------------------------------------

def test_default_folder_is_the_per_user_cache_dir_created_0700(tmp_path, monkeypatch):
    import platformdirs
    monkeypatch.delenv("CUBEPY_CACHE_DIR", raising=False)
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = cache.cache_dir()
    assert root == Path(platformdirs.user_cache_dir("cubepy", appauthor=False))
    assert str(root).startswith(str(tmp_path))
    DiskCache("things").put(KEY, b"payload")
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "things").st_mode) == 0o700
    entry = root / "things" / f"{KEY}.bin"
    assert stat.S_IMODE(os.stat(entry).st_mode) & 0o077 == 0
    assert DiskCache("things").get(KEY) == b"payload"


LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the rule applied without platformdirs is Linux's")


@LINUX_ONLY
@pytest.mark.parametrize("xdg, home", [
    (None, "/home/someone"), ("", "/home/someone"), ("   ", "/home/someone/"),
    ("/var/cache/x", "/home/someone"), ("/var/cache/x/", "/home/someone"),
    ("/var/cache/x", "relative-home"), ("relative/xdg", "/home/someone"),
    (None, "relative-home"), (None, None)])
def test_default_folder_agrees_with_platformdirs(xdg, home, monkeypatch):
    """The Linux rule cubepy applies without importing platformdirs gives platformdirs'
    folder, and where it gives none (a relative XDG_CACHE_HOME or HOME), platformdirs
    decides."""
    import platformdirs
    for var, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    monkeypatch.delenv("CUBEPY_CACHE_DIR", raising=False)
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    try:
        expected = platformdirs.user_cache_dir("cubepy", appauthor=False)
    except RuntimeError:  # platformdirs could not find a home: neither may cubepy guess one
        assert cache._linux_user_cache_dir() is None
        return
    fast = cache._linux_user_cache_dir()
    assert fast is None or Path(fast) == Path(expected)
    assert cache.cache_dir() == Path(expected)
    if xdg is None or xdg.strip() == "" or xdg.startswith("/"):
        assert fast is not None or not (home or "").startswith("/")


@LINUX_ONLY
def test_default_folder_does_not_import_platformdirs(tmp_path):
    """Resolving the default folder on Linux loads neither platformdirs nor tempfile
    (whose import was 3-4 ms of a warm process's first launch)."""
    import site
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "CUBEPY_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(
        [str(root), *site.getsitepackages(), site.getusersitepackages()]))
    code = ("import sys, cubepy.cache as c\n"
            "print(c.cache_dir(), 'platformdirs' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=root).stdout.split()
    assert out == [str(tmp_path / "cubepy"), "False"]


@pytest.mark.parametrize("var", ["CUBEPY_NO_CACHE", "CUBEPY_DISABLE_CACHE"])
def test_no_cache_turns_every_disk_cache_off(cache_root, monkeypatch, var):
    monkeypatch.setenv(var, "1")
    assert cache.cache_dir() is None
    DiskCache("things").put(KEY, b"payload")
    assert DiskCache("things").get(KEY) is None
    fake = FakeCompilers(monkeypatch)
    cuda_compile.CudaCompiler("sm_90").compile("src")
    cuda_compile.CudaCompiler("sm_90").compile("src")
    assert fake.calls == 2 and not cache_root.exists()


def test_entries_carry_a_checksum_of_key_and_payload(cache_root):
    disk = DiskCache("things")
    disk.put(KEY, b"payload")
    raw = (cache_root / "things" / f"{KEY}.bin").read_bytes()
    assert raw.startswith(cache.MAGIC) and raw.endswith(b"payload")
    assert cache.decode_entry(KEY, raw) == b"payload"
    assert cache.decode_entry("cd" * 32, raw) is None  # bound to its key
    with pytest.raises(ValueError):
        disk.get("../../etc/passwd")


# -- corrupt entries ----------------------------------------------------------------------

CORRUPTIONS = {
    "empty": lambda raw: b"",
    "truncated": lambda raw: raw[: len(raw) - 3],
    "header-only-half": lambda raw: raw[:10],
    "payload-flipped": lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]),
    "digest-flipped": lambda raw: raw[:20] + bytes([raw[20] ^ 1]) + raw[21:],
    "old-format": lambda raw: raw[len(cache.MAGIC) + 32:],  # a bare cubin
}


@pytest.mark.parametrize("how", list(CORRUPTIONS))
def test_corrupt_cubin_entry_is_recompiled_and_replaced(cache_root, monkeypatch, how):
    fake = FakeCompilers(monkeypatch)
    first = cuda_compile.CudaCompiler("sm_90").compile("kernel source")
    path = _cubin_file(cache_root)
    good = path.read_bytes()
    path.write_bytes(CORRUPTIONS[how](good))
    comp = cuda_compile.CudaCompiler("sm_90")
    again, warned = _caught(lambda: comp.compile("kernel source"))
    assert again == first and fake.calls == 2 and comp.last_compiler == "nvcc-fake"
    assert path.read_bytes() == good and not warned  # replaced; corruption is no attack
    third = cuda_compile.CudaCompiler("sm_90")
    assert third.compile("kernel source") == first and third.last_compiler == "disk"


def test_cubin_cache_hit_serves_without_compiling(cache_root, monkeypatch):
    fake = FakeCompilers(monkeypatch)
    cubin = cuda_compile.CudaCompiler("sm_90").compile("src")
    comp = cuda_compile.CudaCompiler("sm_90")
    assert comp.compile("src") == cubin and comp.last_compiler == "disk" and fake.calls == 1


# -- trust: mode and owner ----------------------------------------------------------------

def test_group_writable_cache_folder_is_ignored_with_one_warning(cache_root, monkeypatch):
    fake = FakeCompilers(monkeypatch)
    cuda_compile.CudaCompiler("sm_90").compile("src")
    os.chmod(cache_root, 0o777)  # anyone could have planted entries
    comp = cuda_compile.CudaCompiler("sm_90")
    _, warned = _caught(lambda: [comp.compile("src") for _ in range(3)])
    assert len(warned) == 1 and "group or others may write" in str(warned[0].message)
    assert fake.calls == 4 and comp.last_compiler == "nvcc-fake"


def test_others_writable_entry_is_ignored_and_replaced(cache_root, monkeypatch):
    FakeCompilers(monkeypatch)
    first = cuda_compile.CudaCompiler("sm_90").compile("src")
    path = _cubin_file(cache_root)
    os.chmod(path, 0o666)
    comp = cuda_compile.CudaCompiler("sm_90")
    got, warned = _caught(lambda: comp.compile("src"))
    assert got == first and comp.last_compiler == "nvcc-fake" and len(warned) == 1
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o022 == 0  # rewritten privately


def test_symlinked_entry_is_not_followed(cache_root, tmp_path):
    disk = DiskCache("things")
    disk.put(KEY, b"mine")
    elsewhere = tmp_path / "planted"
    elsewhere.write_bytes(cache.encode_entry("cd" * 32, b"planted"))
    (cache_root / "things" / f"{'cd' * 32}.bin").symlink_to(elsewhere)
    assert disk.get("cd" * 32) is None and disk.get(KEY) == b"mine"


def _poisoned_cubin_dir(cache_root: Path, source: str, arch: str = "sm_90") -> bytes:
    """Writes, under the key `source` will have, a valid entry holding an attacker's
    cubin; returns that payload."""
    comp = cuda_compile.CudaCompiler(arch)
    key = comp.key(source, cuda_compile.nvcc_identity(), cuda_compile.nvcc_options(arch))
    evil = b"\x7fELF-attacker-cubin"
    path = cuda_compile.CUBINS.path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(cache.encode_entry(key, evil))
    return evil


@needs_root
def test_foreign_owned_cache_folder_is_not_read(cache_root, monkeypatch):
    fake = FakeCompilers(monkeypatch)
    evil = _poisoned_cubin_dir(cache_root, "src")
    assert cuda_compile.CudaCompiler("sm_90").compile("src") == evil  # the attack works...
    for p in [cache_root, *cache_root.rglob("*")]:
        os.chown(p, OTHER_UID, OTHER_UID)  # ...unless the folder is someone else's
    comp = cuda_compile.CudaCompiler("sm_90")
    got, warned = _caught(lambda: [comp.compile("src") for _ in range(2)])
    assert got[0] != evil and got[0] == fake.compile("src", "sm_90")
    assert len(warned) == 1 and f"uid {OTHER_UID}" in str(warned[0].message)
    assert cache.decode_entry(comp.key("src", fake.nvcc_id, cuda_compile.nvcc_options(
        "sm_90")), _cubin_file(cache_root).read_bytes()) == evil  # theirs, untouched


@needs_root
def test_folder_made_by_another_user_with_setpriv_is_not_used(tmp_path, monkeypatch):
    """The other user creates the cache folder first (as in a shared /tmp) with a
    planted entry; cubepy warns once and compiles as if there were no cache."""
    monkeypatch.setattr(cache, "_warned", set())
    shared = Path(tempfile_dir())
    try:
        root = shared / "cubepy-cache"
        fake = FakeCompilers(monkeypatch)
        comp = cuda_compile.CudaCompiler("sm_90")
        key = comp.key("src", fake.nvcc_id, cuda_compile.nvcc_options("sm_90"))
        planted = cache.encode_entry(key, b"\x7fELF-attacker-cubin")
        script = (f"umask 077; mkdir -p {root}/cuda && cat > {root}/cuda/{key}.cubin")
        subprocess.run(["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}",
                        "--clear-groups", "sh", "-c", script], input=planted, check=True)
        assert os.stat(root / "cuda" / f"{key}.cubin").st_uid == OTHER_UID
        monkeypatch.setenv("CUBEPY_CACHE_DIR", str(root))
        got, warned = _caught(lambda: [comp.compile("src") for _ in range(2)])
        assert fake.calls == 2 and len(warned) == 1  # compiled each time, warned once
        assert got == [fake.compile("src", "sm_90")] * 2
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def tempfile_dir() -> str:
    """A folder in the shared temp folder that uid 65534 can write (0777, like /tmp)."""
    import tempfile
    d = tempfile.mkdtemp(prefix="cubepy-test-", dir="/tmp")
    os.chmod(d, 0o777)
    return d


@needs_root
def test_foreign_owned_entry_is_not_read_and_is_replaced(cache_root, monkeypatch):
    fake = FakeCompilers(monkeypatch)
    evil = _poisoned_cubin_dir(cache_root, "src")
    path = _cubin_file(cache_root)
    os.chown(path, OTHER_UID, OTHER_UID)
    comp = cuda_compile.CudaCompiler("sm_90")
    got, warned = _caught(lambda: comp.compile("src"))
    assert got != evil and fake.calls == 1 and len(warned) == 1
    assert os.stat(path).st_uid == os.geteuid()  # our own entry took its place
    assert cuda_compile.CudaCompiler("sm_90").compile("src") == got


@needs_root
def test_read_only_cache_is_skipped_silently(monkeypatch):
    """As uid 65534 (seteuid: root could write anywhere) in its own 0500 cache folder:
    existing entries serve, new ones are not written, nothing warns or raises."""
    monkeypatch.setattr(cache, "_warned", set())
    shared = Path(tempfile_dir())
    cache_root = shared / "cache"
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(cache_root))
    try:
        FakeCompilers(monkeypatch)
        served = cuda_compile.CudaCompiler("sm_90").compile("old")
        for p in [cache_root, *cache_root.rglob("*")]:
            os.chown(p, OTHER_UID, OTHER_UID)
        os.chmod(cache_root / "cuda", 0o500)
        os.seteuid(OTHER_UID)
        try:
            old, new = cuda_compile.CudaCompiler("sm_90"), cuda_compile.CudaCompiler("sm_90")
            (a, b), warned = _caught(lambda: (old.compile("old"), new.compile("new")))
            files = sorted(p.name for p in (cache_root / "cuda").iterdir())
        finally:
            os.seteuid(0)
        assert a == served and old.last_compiler == "disk"
        assert b.endswith(b"new") and new.last_compiler == "nvcc-fake"
        assert not warned and len(files) == 1  # no new entry, no temp file left
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_read_only_cache_is_skipped_silently_without_root(cache_root, monkeypatch):
    """The same through a folder whose writes fail (what a read-only mount does)."""
    FakeCompilers(monkeypatch)
    served = cuda_compile.CudaCompiler("sm_90").compile("old")

    def refuse(*a, **k):
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(cache, "make_temp_file", refuse)
    comp = cuda_compile.CudaCompiler("sm_90")
    (a, b), warned = _caught(lambda: (comp.compile("old"), comp.compile("new")))
    assert a == served and b.endswith(b"new") and not warned
    assert len(list((cache_root / "cuda").iterdir())) == 1


# -- atomic writes -----------------------------------------------------------------------

@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_interrupted_write_leaves_no_temp_file(cache_root, monkeypatch, error):
    disk = DiskCache("things")
    disk.put(KEY, b"old")

    def interrupted(src, dst):
        raise error("interrupted")
    monkeypatch.setattr(cache.os, "replace", interrupted)
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            disk.put(KEY, b"new")
    else:
        disk.put(KEY, b"new")  # a failing write only costs the entry
    monkeypatch.undo()
    assert sorted(p.name for p in (cache_root / "things").iterdir()) == [f"{KEY}.bin"]
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(cache_root))
    assert disk.get(KEY) == b"old"


def test_write_failing_midway_leaves_no_temp_file(cache_root, monkeypatch):
    disk = DiskCache("things")
    disk.put(KEY, b"x")  # creates the folder
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd, mode):
            self.f = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[:5])
            raise OSError(28, "No space left on device")
    monkeypatch.setattr(cache.os, "fdopen", Full)
    disk.put("cd" * 32, b"payload")
    monkeypatch.undo()
    assert sorted(p.name for p in (cache_root / "things").iterdir()) == [f"{KEY}.bin"]


# -- keys --------------------------------------------------------------------------------

def test_cubin_key_covers_compiler_options_arch_source_and_cubepy_version(monkeypatch):
    comp, other_arch = cuda_compile.CudaCompiler("sm_90"), cuda_compile.CudaCompiler("sm_80")
    opts = cuda_compile.nvcc_options("sm_90")
    base = comp.key("src", "nvcc|12.8.93", opts)
    assert comp.key("src", "nvcc|12.8.93", opts) == base  # deterministic
    variants = {
        "compiler version": comp.key("src", "nvcc|12.8.61", opts),
        "compiler": comp.key("src", "nvrtc-12.8|/lib/libnvrtc.so:1:2", opts),
        "options": comp.key("src", "nvcc|12.8.93", opts + ["--use_fast_math"]),
        "arch": other_arch.key("src", "nvcc|12.8.93", opts),
        "source": comp.key("src ", "nvcc|12.8.93", opts),
    }
    monkeypatch.setattr(cubepy, "__version__", "99.0")
    variants["cubepy version"] = comp.key("src", "nvcc|12.8.93", opts)
    assert base not in variants.values() and len(set(variants.values())) == len(variants)
    assert "--gpu-architecture=sm_90" in cuda_compile.nvrtc_options("sm_90")


def test_nvcc_identity_changes_with_the_toolkit_files_and_needs_no_subprocess(
        tmp_path, monkeypatch):
    bin_dir = tmp_path / "cuda" / "bin"
    bin_dir.mkdir(parents=True)
    nvcc = bin_dir / "nvcc"
    nvcc.write_bytes(b"\x7fELF" + b"\0" * 60)
    nvcc.chmod(0o755)
    (bin_dir / "ptxas").write_bytes(b"\x7fELF" + b"\0" * 10)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CUBEPY_CUDA_COMPILER", raising=False)

    def no_subprocess():
        raise AssertionError("a cache key must not need `nvcc --version`")
    monkeypatch.setattr(cuda_compile, "nvcc_version", no_subprocess)
    cuda_compile.nvcc_identity.cache_clear()
    try:
        first = cuda_compile.nvcc_identity()
        assert str(nvcc) in first
        cuda_compile.nvcc_identity.cache_clear()
        (bin_dir / "ptxas").write_bytes(b"\x7fELF" + b"\0" * 11)  # a new ptxas
        assert cuda_compile.nvcc_identity() != first
        cuda_compile.nvcc_identity.cache_clear()
        nvcc.write_bytes(b"#!/bin/sh\nexec /elsewhere/nvcc \"$@\"\n")  # a wrapper script
        monkeypatch.setattr(cuda_compile, "nvcc_version", lambda: "nvcc-Build cuda_13.0")
        assert cuda_compile.nvcc_identity().endswith("nvcc-Build cuda_13.0")
    finally:
        cuda_compile.nvcc_identity.cache_clear()


def test_nvrtc_identity_names_the_loaded_library_file(tmp_path, monkeypatch):
    lib = tmp_path / "libnvrtc.so.13"
    lib.write_bytes(b"\x7fELF" + b"\0" * 100)
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    monkeypatch.setattr(cuda_compile, "nvrtc_version", lambda: "nvrtc-13.0")
    monkeypatch.setattr(cuda_compile, "_nvrtc_library_path", lambda: str(lib))
    cuda_compile.nvrtc_identity.cache_clear()
    try:
        first = cuda_compile.nvrtc_identity()
        assert first.startswith("nvrtc-13.0|") and str(lib) in first
        cuda_compile.nvrtc_identity.cache_clear()
        lib.write_bytes(b"\x7fELF" + b"\0" * 101)  # a patched library, same version
        assert cuda_compile.nvrtc_identity() != first
    finally:
        cuda_compile.nvrtc_identity.cache_clear()


# -- the jinja2 bytecode cache -----------------------------------------------------------

def _render_fresh(template="wgsl_kernel.wgsl.j2"):
    from cubepy.codegen import skeleton
    env = skeleton.make_environment()
    return env, env.get_template(template)


def _template_names():
    from cubepy.codegen import skeleton
    return sorted(p.name for p in (Path(skeleton.__file__).parent / "templates").iterdir())


def _bucket_entry(env, name: str, code_source: str):
    """The cache key and a valid entry holding bytecode compiled from `code_source`
    for the template `name`."""
    cache_obj = env.bytecode_cache
    source, filename, _ = env.loader.get_source(env, name)
    bucket = cache_obj.get_bucket(env, name, filename, source)
    bucket.code = compile(code_source, filename, "exec")
    return cache_obj.key(bucket), bucket.bytecode_to_string(), bucket


def test_jinja2_bytecode_goes_through_the_trusted_cache(cache_root):
    name = _template_names()[0]
    env, _ = _render_fresh(name)
    files = list((cache_root / "jinja2").glob("*.j2c"))
    assert len(files) == 1 and files[0].read_bytes().startswith(cache.MAGIC)
    # The entry is what a fresh environment loads: swap in bytecode of another body.
    key, data, _ = _bucket_entry(env, name, env.compile("HIJACKED", raw=True))
    env.bytecode_cache.disk.put(key, data)
    _, again = _render_fresh(name)
    assert again.render() == "HIJACKED"


@pytest.mark.parametrize("how", ["empty", "truncated", "payload-flipped"])
def test_corrupt_jinja2_entry_is_recompiled_and_replaced(cache_root, how):
    name = _template_names()[0]
    _render_fresh(name)
    (path,) = (cache_root / "jinja2").glob("*.j2c")
    good = path.read_bytes()
    path.write_bytes(CORRUPTIONS[how](good))
    _, warned = _caught(lambda: _render_fresh(name))
    assert path.read_bytes() == good and not warned


@needs_root
def test_poisoned_jinja2_bytecode_from_another_user_never_runs(cache_root, tmp_path):
    name = _template_names()[0]
    env, tmpl = _render_fresh(name)
    marker = tmp_path / "pwned"
    key, evil, _ = _bucket_entry(env, name, f"open({str(marker)!r}, 'w').close()\n")
    env.bytecode_cache.disk.put(key, evil)
    try:
        _render_fresh(name)  # the planted code runs when the entry is trusted...
    except Exception:
        pass  # (it is no real template)
    assert marker.exists()
    marker.unlink()
    (path,) = (cache_root / "jinja2").glob("*.j2c")
    os.chown(path, OTHER_UID, OTHER_UID)  # ...so another user's entry must never load
    (_, fresh), warned = _caught(lambda: _render_fresh(name))
    assert not marker.exists() and len(warned) == 1
    assert callable(fresh.root_render_func)  # the real template, compiled afresh
    assert os.stat(path).st_uid == os.geteuid()  # and stored as our own entry


def test_codegen_works_when_the_cache_folder_is_untrusted(cache_root, monkeypatch):
    from corpus import axpy  # (decorating may already store its signature there)
    cache_root.mkdir(mode=0o700, exist_ok=True)
    os.chmod(cache_root, 0o757)
    # a fresh specialisation cache: an earlier test may have generated this source already
    monkeypatch.setattr(axpy, "_compiled", type(axpy._compiled)(axpy._compiled.maxsize))
    from cubepy.codegen import skeleton
    saved = skeleton._ENV
    skeleton._ENV = None
    try:
        src, warned = _caught(lambda: axpy.source("wgsl", cube_dim=(64, 1, 1), Float="f32"))
    finally:
        skeleton._ENV = saved
    assert "@compute" in src and len(warned) == 1
    assert not (cache_root / "jinja2").exists()


# -- the wgpu runtime's XDG_RUNTIME_DIR fallback -----------------------------------------

@pytest.fixture
def runtime_dir(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(cache, "_warned", set())
    uid = getattr(os, "getuid", lambda: 0)()
    return tmp_path / f"cubepy-runtime-{uid}"


def _quiet():
    from cubepy.runtime.wgpu_runtime import _quiet_vulkan_loader
    return _caught(_quiet_vulkan_loader)[1]


def test_xdg_runtime_fallback_is_made_private(runtime_dir):
    assert not _quiet()
    assert os.environ["XDG_RUNTIME_DIR"] == str(runtime_dir)
    assert stat.S_IMODE(os.stat(runtime_dir).st_mode) == 0o700


def test_xdg_runtime_fallback_writable_by_others_is_refused(runtime_dir):
    runtime_dir.mkdir()
    os.chmod(runtime_dir, 0o777)
    warned = _quiet()
    assert "XDG_RUNTIME_DIR" not in os.environ and len(warned) == 1


@needs_root
def test_xdg_runtime_fallback_owned_by_another_user_is_refused(runtime_dir):
    runtime_dir.mkdir(mode=0o700)
    os.chown(runtime_dir, OTHER_UID, OTHER_UID)
    warned = _quiet()
    assert "XDG_RUNTIME_DIR" not in os.environ and len(warned) == 1
    assert f"uid {OTHER_UID}" in str(warned[0].message)


def test_clear_removes_the_cache_folders(cache_root):
    DiskCache("a").put(KEY, b"1")
    DiskCache("b").put(KEY, b"2")
    removed = cache.clear()
    assert sorted(p.name for p in removed) == ["a", "b"]
    assert DiskCache("a").get(KEY) is None and list(cache_root.iterdir()) == []


def test_cli_cache_command(cache_root):
    DiskCache("a").put(KEY, b"1")
    env = {**os.environ, "CUBEPY_CACHE_DIR": str(cache_root)}
    out = subprocess.run([sys.executable, "-m", "cubepy", "cache"], capture_output=True,
                         text=True, env=env, cwd=Path(cubepy.__file__).parent.parent)
    assert out.returncode == 0 and str(cache_root) in out.stdout
    out = subprocess.run([sys.executable, "-m", "cubepy", "cache", "--clear"],
                         capture_output=True, text=True, env=env,
                         cwd=Path(cubepy.__file__).parent.parent)
    assert out.returncode == 0 and not (cache_root / "a").exists()


# -- on a CUDA machine: real compilers, real cubins --------------------------------------

@pytest.mark.cuda
def test_cuda_cubin_cache_with_real_compiler_and_device(cache_root):
    """A real cubin is cached, a corrupted entry is recompiled and replaced, an entry
    another user could write is refused, and every cubin served runs correctly."""
    import struct

    import numpy as np

    from cubepy.runtime.cuda import CudaExecutable
    from test_runtime_cuda import FILL_ABI, FILL_SOURCE
    try:
        client = cubepy.client("cuda")
    except cubepy.LaunchError:
        pytest.skip("no CUDA device")
    import pycuda.driver as drv

    def run(cubin: bytes) -> np.ndarray:
        client._activate()
        module = drv.module_from_buffer(cubin)
        exe = CudaExecutable(module.get_function("fill"), "fill", FILL_SOURCE, FILL_ABI,
                             "test")
        out = client.zeros(64, cubepy.u32)
        client.dispatch(exe, (1, 1, 1), (64, 1, 1), [out], struct.pack("<I", 64))
        return out.numpy()

    want = np.arange(64, dtype=np.uint32) * 3 + 1
    first = cuda_compile.CudaCompiler(client.arch)
    cubin = first.compile(FILL_SOURCE)
    assert first.last_compiler != "disk" and np.array_equal(run(cubin), want)
    path = _cubin_file(cache_root)
    hit = cuda_compile.CudaCompiler(client.arch)
    assert hit.compile(FILL_SOURCE) == cubin and hit.last_compiler == "disk"
    path.write_bytes(path.read_bytes()[:100])  # truncated
    again = cuda_compile.CudaCompiler(client.arch)
    assert np.array_equal(run(again.compile(FILL_SOURCE)), want)
    assert again.last_compiler != "disk" and cache.decode_entry(
        path.stem, path.read_bytes()) is not None
    os.chmod(path, 0o666)
    refused = cuda_compile.CudaCompiler(client.arch)
    got, warned = _caught(lambda: refused.compile(FILL_SOURCE))
    assert refused.last_compiler != "disk" and len(warned) == 1
    assert np.array_equal(run(got), want)


def test_nvrtc_identity_is_recorded_so_a_later_process_need_not_load_nvrtc(
        cache_root, tmp_path, monkeypatch):
    """The first call loads NVRTC (its version, the library's file) and records them;
    a later call (a new process: the lru_cache cleared) with the same key reads the
    record and stats the library, never asking NVRTC; a rebuilt library, or one that is
    gone, is not trusted: NVRTC is asked again, so the version is never stale."""
    lib = tmp_path / "libnvrtc.so.13"
    lib.write_bytes(b"\x7fELF" + b"\0" * 100)
    loads = []
    monkeypatch.setattr(cuda_compile, "_nvrtc_record_key", lambda: "ab" * 32)
    monkeypatch.setattr(cuda_compile, "nvrtc_version",
                        lambda: loads.append(1) or "nvrtc-13.0")
    monkeypatch.setattr(cuda_compile, "_nvrtc_library_path", lambda: str(lib))
    cuda_compile.nvrtc_identity.cache_clear()
    try:
        first = cuda_compile.nvrtc_identity()
        assert first.startswith("nvrtc-13.0|") and str(lib) in first and loads == [1]
        cuda_compile.nvrtc_identity.cache_clear()
        assert cuda_compile.nvrtc_identity() == first and loads == [1]  # from the record
        cuda_compile.nvrtc_identity.cache_clear()
        lib.write_bytes(b"\x7fELF" + b"\0" * 101)  # a patched library: loaded again
        second = cuda_compile.nvrtc_identity()
        assert second != first and str(lib) in second and loads == [1, 1]
        cuda_compile.nvrtc_identity.cache_clear()
        assert cuda_compile.nvrtc_identity() == second and loads == [1, 1]  # re-recorded
        cuda_compile.nvrtc_identity.cache_clear()
        lib.unlink()  # the recorded library is gone: NVRTC is asked again
        assert cuda_compile.nvrtc_identity() == "nvrtc-13.0|" and loads == [1, 1, 1]
    finally:
        cuda_compile.nvrtc_identity.cache_clear()


def test_nvrtc_record_key_follows_what_decides_the_search(tmp_path, monkeypatch):
    """Each variable the search reads and each folder it looks in changes the key: a
    new library in a folder (its mtime), another LD_LIBRARY_PATH or CUDA_HOME."""
    for var in ("CUBEPY_NVRTC_LIBRARY", "CONDA_PREFIX", "LD_LIBRARY_PATH", "CUDA_HOME",
                "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    first = cuda_compile._nvrtc_record_key()
    assert cuda_compile._nvrtc_record_key() == first  # stable while nothing changes
    keys = {first}
    for var, value in (("LD_LIBRARY_PATH", str(tmp_path)), ("CUDA_HOME", str(tmp_path)),
                       ("CUBEPY_NVRTC_LIBRARY", "/opt/lib/libnvrtc.so.13")):
        monkeypatch.setenv(var, value)
        keys.add(cuda_compile._nvrtc_record_key())
    monkeypatch.delenv("CUBEPY_NVRTC_LIBRARY")
    before = cuda_compile._nvrtc_record_key()
    (tmp_path / "lib64").mkdir()  # CUDA_HOME's lib64 appears
    keys.add(cuda_compile._nvrtc_record_key())
    assert len(keys) == 5 and before in keys


def test_nvrtc_and_include_records_ignore_files_written_beside_a_script(tmp_path,
                                                                      monkeypatch):
    """A script's folder is on sys.path and changes whenever it writes a file there;
    that must not cost a warm process its records (and NVRTC's load). A pip wheel
    installed in a sys.path folder does change them."""
    script_folder = tmp_path / "project"
    script_folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(script_folder), *sys.path])
    keys = (cuda_compile._nvrtc_record_key, cuda_compile._include_record_key)
    before = [key() for key in keys]
    (script_folder / "results.csv").write_text("1,2,3")
    assert [key() for key in keys] == before
    (script_folder / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    (script_folder / "nvidia" / "cu13" / "include").mkdir()
    after = [key() for key in keys]
    assert after[0] != before[0] and after[1] != before[1]
