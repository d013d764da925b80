"""NVRTC called through ctypes: libnvrtc found and loaded without cuda-python.

cuda-python's NVRTC bindings take about 60 ms to import, all of it holding the GIL, so
in a cold process their import on the loading thread competed with the frontend for the
interpreter instead of overlapping it. Loaded through ctypes, libnvrtc costs one dlopen
(5-8 ms, made without the GIL: see _open) and each NVRTC call releases the GIL;
cuda-python is not needed at all.

Where the library is looked for, first found wins (the order of cuda-python's own
pathfinder, so both pick the same file):

1. `CUBEPY_NVRTC_LIBRARY`, a path (or a name for the system loader), when set: nothing
   else is tried;
2. pip's NVIDIA wheels in any `sys.path` folder (`nvidia/cu13/lib`, `nvidia/cu12/lib`,
   `nvidia/cuda_nvrtc/lib`), newest version first;
3. a conda environment's `lib` (`CONDA_PREFIX`);
4. the system loader (`LD_LIBRARY_PATH`, the ldconfig cache): `libnvrtc.so.13`, `.12`;
5. `CUDA_HOME`, `CUDA_PATH`, then `/usr/local/cuda`: their `lib64` and `lib`.

Linux only (the library names, the loader's dlopen and dladdr); elsewhere the cuda runtime
uses nvcc.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import os
import re
import sys
import threading
from typing import Iterator

# Where pip's NVIDIA wheels put libnvrtc, under a sys.path folder.
WHEEL_FOLDERS = ("nvidia/cu13/lib", "nvidia/cu12/lib", "nvidia/cuda_nvrtc/lib")
_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12")
_TOOLKIT_VARIABLES = ("CUDA_HOME", "CUDA_PATH")
# Every environment variable the search reads: part of the key of the record that
# remembers its answer (cuda_compile.nvrtc_identity).
SEARCH_VARIABLES = ("CUBEPY_NVRTC_LIBRARY", "CONDA_PREFIX", "LD_LIBRARY_PATH",
                    *_TOOLKIT_VARIABLES)
_VERSIONED = re.compile(r"libnvrtc\.so\.(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


class NvrtcError(RuntimeError):
    """An NVRTC call failed, or no libnvrtc loaded; the message holds NVRTC's log or
    error string, or the places tried (also in `tried`, one "place: why" each)."""

    def __init__(self, message: str, tried: tuple[str, ...] = ()):
        super().__init__(message)
        self.tried = tried


def wheel_folders(subfolders: tuple[str, ...]) -> list[str]:
    """Each of `subfolders` under each sys.path folder (where pip's NVIDIA wheels put
    their files), in sys.path's order; whether they exist is the caller's question."""
    return [os.path.join(folder or ".", sub) for folder in dict.fromkeys(sys.path)
            for sub in subfolders]


def library_candidates() -> list[str]:
    """The paths and names to try loading, in order (see the module docstring)."""
    return list(_candidates())


def _candidates() -> Iterator[str]:
    """library_candidates one by one, each folder listed only when the ones before it
    are used up: the search mostly stops at the first."""
    explicit = os.environ.get("CUBEPY_NVRTC_LIBRARY")
    if explicit:
        yield explicit
        return
    seen: set[str] = set()

    def new(found: list[str] | tuple[str, ...]) -> Iterator[str]:
        for candidate in found:
            if candidate not in seen:
                seen.add(candidate)
                yield candidate

    for folder in wheel_folders(WHEEL_FOLDERS):
        yield from new(_libraries_in(folder))
    if os.environ.get("CONDA_PREFIX"):
        yield from new(_libraries_in(os.path.join(os.environ["CONDA_PREFIX"], "lib")))
    yield from new(_SONAMES)
    roots = [os.environ[v] for v in _TOOLKIT_VARIABLES if os.environ.get(v)]
    for root in [*roots, "/usr/local/cuda"]:
        for lib in ("lib64", "lib"):
            yield from new(_libraries_in(os.path.join(root, lib)))


def _libraries_in(folder: str) -> list[str]:
    """The versioned libnvrtc files in `folder`, newest first (none when it is absent)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = [(tuple(int(g or 0) for g in m.groups()), name)
             for name in names if (m := _VERSIONED.match(name))]
    return [os.path.join(folder, name) for _, name in sorted(found, reverse=True)]


class Nvrtc:
    """One loaded libnvrtc: its version and a compile to cubin."""

    def __init__(self, lib: ctypes.CDLL, path: str):
        self.path = path
        self._lib = lib
        # Every function used is looked up now: a library missing one (older than
        # NVRTC 11.1, which added the cubin calls) is refused at the load.
        self._version = self._bind("nvrtcVersion", ctypes.POINTER(ctypes.c_int),
                                   ctypes.POINTER(ctypes.c_int))
        self._version_seen: tuple[int, int] | None = None
        strings = ctypes.POINTER(ctypes.c_char_p)
        self._create = self._bind("nvrtcCreateProgram", ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                  strings, strings)
        self._compile = self._bind("nvrtcCompileProgram", ctypes.c_void_p, ctypes.c_int,
                                   strings)
        size = ctypes.POINTER(ctypes.c_size_t)
        self._log_size = self._bind("nvrtcGetProgramLogSize", ctypes.c_void_p, size)
        self._log = self._bind("nvrtcGetProgramLog", ctypes.c_void_p, ctypes.c_char_p)
        self._cubin_size = self._bind("nvrtcGetCUBINSize", ctypes.c_void_p, size)
        self._cubin = self._bind("nvrtcGetCUBIN", ctypes.c_void_p, ctypes.c_char_p)
        self._destroy = self._bind("nvrtcDestroyProgram", ctypes.POINTER(ctypes.c_void_p))
        self._error_string = lib.nvrtcGetErrorString
        self._error_string.argtypes, self._error_string.restype = [ctypes.c_int], \
            ctypes.c_char_p

    def _bind(self, name: str, *argtypes):
        fn = getattr(self._lib, name)  # AttributeError when the library lacks it
        fn.argtypes, fn.restype = list(argtypes), ctypes.c_int
        return fn

    def _check(self, result: int, call: str) -> None:
        if result != 0:
            raise NvrtcError(f"{call} failed: {self._error_string(result).decode()}")

    def version(self) -> tuple[int, int]:
        """NVRTC's (major, minor), asked once per loaded library (every compile reads it:
        compile_nvrtc's --minimal choice)."""
        if self._version_seen is None:
            major, minor = ctypes.c_int(), ctypes.c_int()
            self._check(self._version(ctypes.byref(major), ctypes.byref(minor)),
                        "nvrtcVersion")
            self._version_seen = (major.value, minor.value)
        return self._version_seen

    def compile(self, source: str, name: str, options: list[str]) -> bytes:
        """The cubin NVRTC makes of `source` with `options`; NvrtcError with the
        compiler's log when it rejects it."""
        prog = ctypes.c_void_p()
        self._check(self._create(ctypes.byref(prog), source.encode(), name.encode(),
                                 0, None, None), "nvrtcCreateProgram")
        try:
            opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            if self._compile(prog, len(options), opts) != 0:
                raise NvrtcError(self._program_log(prog))
            size = ctypes.c_size_t()
            self._check(self._cubin_size(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
            if size.value == 0:
                raise NvrtcError("nvrtcGetCUBINSize: NVRTC made no cubin")
            cubin = ctypes.create_string_buffer(size.value)
            self._check(self._cubin(prog, cubin), "nvrtcGetCUBIN")
            return cubin.raw
        finally:
            self._destroy(ctypes.byref(prog))

    def _program_log(self, prog: ctypes.c_void_p) -> str:
        size = ctypes.c_size_t()
        if self._log_size(prog, ctypes.byref(size)) != 0 or size.value == 0:
            return "NVRTC rejected the source (no log)"
        log = ctypes.create_string_buffer(size.value)
        self._log(prog, log)
        return log.value.decode(errors="replace").rstrip()


_lock = threading.Lock()
_loaded: Nvrtc | None = None
_tried: tuple[str, ...] | None = None  # what the search tried, when it found nothing
# What open_ahead's dlopens gave, each candidate's library or OSError, for the search to
# take instead of opening the candidate again.
_opened_ahead: dict[str, ctypes.CDLL | OSError] = {}


def load() -> Nvrtc:
    """The process's libnvrtc, loaded on the first call (the outcome, found or not, is
    kept); NvrtcError saying what was tried when none loads."""
    global _loaded, _tried
    with _lock:
        if _loaded is None and _tried is None:
            _loaded, _tried = _search()
    if _loaded is None:
        raise NvrtcError("libnvrtc was not found; tried:\n  " + "\n  ".join(_tried),
                         tried=_tried)
    return _loaded


def load_finished() -> bool:
    """Whether `load` has run (whatever it found)."""
    return _loaded is not None or _tried is not None


def prepare_open_ahead() -> list[str]:
    """What open_ahead needs, made on the calling thread: the first candidate (as a
    list: none when there is none) and the loader's functions. The loading thread then
    runs no Python but the dlopen's call: on the H200, each GIL hand-over between it and
    the frontend cost the frontend more than the Python work itself. The rest of the
    candidates are listed only if the first does not load (by `load`)."""
    _loader()
    return list(itertools.islice(_candidates(), 1))


def open_ahead(candidates: list[str]) -> None:
    """dlopen of `candidates` in order until one opens, for `load` to take (on the
    thread that cuda_compile.start_loading_nvrtc starts: the dlopen without the GIL).
    Only the library's mapping is done here; `load` checks its functions and version,
    as it does for a library it opens itself, so the outcome and errors are the same."""
    for candidate in candidates:
        try:
            _opened_ahead[candidate] = _open(candidate)
            return
        except OSError as e:
            _opened_ahead[candidate] = e


def _open_once(candidate: str) -> ctypes.CDLL:
    """`candidate` loaded: open_ahead's outcome when it tried it, else opened now."""
    opened = _opened_ahead.pop(candidate, None)
    if isinstance(opened, OSError):
        raise opened
    return opened if opened is not None else _open(candidate)


def _search() -> tuple[Nvrtc | None, tuple[str, ...] | None]:
    tried = []
    for candidate in _candidates():
        try:
            lib = _open_once(candidate)
            nvrtc = Nvrtc(lib, _library_path(lib, candidate))
            nvrtc.version()
            return nvrtc, None
        except (OSError, AttributeError, NvrtcError) as e:
            tried.append(f"{candidate}: {e}")
    return None, tuple(tried)


class _DlInfo(ctypes.Structure):
    """dladdr's answer (glibc's Dl_info)."""
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]


@functools.lru_cache(maxsize=None)
def _loader() -> ctypes.CDLL | None:
    """The process's global namespace, where the loader's dlopen, dlerror and dladdr
    are found, their signatures declared; None where they are not."""
    try:
        loader = ctypes.CDLL(None)
        loader.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
        loader.dlopen.restype = ctypes.c_void_p
        loader.dlerror.argtypes, loader.dlerror.restype = [], ctypes.c_char_p
        loader.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    except (OSError, AttributeError):
        return None
    return loader


def _open(candidate: str) -> ctypes.CDLL:
    """`candidate` loaded. ctypes.CDLL holds the GIL through its dlopen (5-8 ms for
    libnvrtc), which would stall the frontend on the main thread, so the loader's dlopen
    is called as a foreign function (which releases the GIL) and ctypes wraps the
    handle; OSError with the loader's message when it fails."""
    loader = _loader()
    if loader is None:
        return ctypes.CDLL(candidate)
    handle = loader.dlopen(os.fsencode(candidate), os.RTLD_NOW | os.RTLD_LOCAL)
    if not handle:
        message = loader.dlerror()
        raise OSError(message.decode(errors="replace") if message else "dlopen failed")
    return ctypes.CDLL(candidate, handle=handle)


def _library_path(lib: ctypes.CDLL, candidate: str) -> str:
    """The file `lib` was loaded from: the loader's answer for one of its functions
    (dladdr), which also resolves a bare name; `candidate` when it cannot say."""
    loader, info = _loader(), _DlInfo()
    if loader is not None:
        address = ctypes.cast(lib.nvrtcVersion, ctypes.c_void_p)
        if loader.dladdr(address, ctypes.byref(info)) and info.fname:
            return os.path.realpath(info.fname.decode())
    return os.path.realpath(candidate) if os.sep in candidate else candidate


def reset_for_tests() -> None:
    """Forgets the loaded library, so a test can load another (the old stays mapped)."""
    global _loaded, _tried
    with _lock:
        _loaded = _tried = None
        _opened_ahead.clear()
