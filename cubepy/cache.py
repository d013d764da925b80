"""On-disk caches that another local user cannot poison (docs/CACHE.md).

Every disk cache of cubepy (jinja2 bytecode, cubins, any later one) goes through
`DiskCache`, which enforces these rules:

- Where: `$CUBEPY_CACHE_DIR`, else `platformdirs.user_cache_dir("cubepy")` (on Linux the
  same XDG rule applied without importing platformdirs); one sub-folder per cache.
  `CUBEPY_NO_CACHE=1` turns every disk cache off. Folders cubepy creates are created 0700.
- Trust: a folder or entry that is not owned by the current user, or that group or others
  may write, is never read: one `CacheWarning` per path, then cubepy works without it.
  Entries are opened without following symlinks and checked on the open descriptor.
- Integrity: an entry is a header (magic + SHA-256 of key and payload) then the payload;
  an empty, truncated or corrupt entry reads as a miss, so the caller recomputes it and
  `put` replaces it. Nothing read from disk is unpickled or loaded before this check.
- Writes are atomic (a temporary file in the same folder, then a rename); the temporary
  file is removed whatever interrupts the write. A cache that cannot be written (read-only
  folder or file system) is skipped silently.
"""
from __future__ import annotations

import functools
import os
import stat
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

DIR_ENV = "CUBEPY_CACHE_DIR"
NO_CACHE_ENV = "CUBEPY_NO_CACHE"
_LEGACY_NO_CACHE_ENV = "CUBEPY_DISABLE_CACHE"  # the earlier spelling, still honoured

MAGIC = b"cubepy-cache-1\n"
_DIGEST = 32  # bytes of SHA-256
_HEADER = len(MAGIC) + _DIGEST
_TMP_PREFIX = ".tmp-"


class CacheWarning(UserWarning):
    """A cache folder or entry is not trusted (owned by another user, or writable by
    group/others) and is ignored."""


_warned: set[str] = set()  # paths already warned about in this process


def cache_enabled() -> bool:
    """False when CUBEPY_NO_CACHE (or the older CUBEPY_DISABLE_CACHE) is set to a value
    other than "" and "0"."""
    return all(os.environ.get(var, "") in ("", "0")
               for var in (NO_CACHE_ENV, _LEGACY_NO_CACHE_ENV))


def cache_dir() -> Path | None:
    """The root of cubepy's disk caches, or None when they are turned off. The folder
    may not exist yet."""
    if not cache_enabled():
        return None
    root = os.environ.get(DIR_ENV)
    if root:
        return Path(root).expanduser()
    return Path(_linux_user_cache_dir() or _platformdirs_user_cache_dir())


def _platformdirs_user_cache_dir() -> str:
    import platformdirs
    return platformdirs.user_cache_dir("cubepy", appauthor=False)


def _linux_user_cache_dir() -> str | None:
    """platformdirs' answer on Linux, `$XDG_CACHE_HOME/cubepy` or `~/.cache/cubepy`,
    without importing it: its import (tempfile, random and hashlib's setup with it) took
    3-4 ms, as much as the rest of a warm process's first launch. None wherever its rule
    has more to it (another OS, Android, a relative XDG_CACHE_HOME, which its versions
    treat differently, or a HOME that is not an absolute path);
    tests/test_cache.py holds the two to the same answer."""
    if not sys.platform.startswith("linux") or hasattr(sys, "getandroidapilevel") \
            or "ANDROID_DATA" in os.environ:
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "cubepy")
    if xdg.strip() or not os.path.isabs(os.environ.get("HOME", "")):
        return None
    return os.path.join(os.path.expanduser("~/.cache"), "cubepy")


def cubepy_version() -> str:
    import cubepy
    return cubepy.__version__


def sha256(data: bytes = b""):
    """A SHA-256 hash object, from CPython's own SHA-256 module where there is one:
    importing hashlib maps OpenSSL's libcrypto, a few ms of a warm start that needs a
    handful of short digests. The digests are the same."""
    return _sha256_constructor()(data)


@functools.cache  # looked up once: a failed import searches sys.path each time
def _sha256_constructor() -> Callable[[bytes], Any]:
    try:
        from _sha2 import sha256 as new  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256 as new  # Python 3.11
        except ImportError:  # a build without them
            from hashlib import sha256 as new
    return new


def cache_key(*parts: str | bytes) -> str:
    """A file-name-safe key (hex SHA-256) over `parts` and the cubepy version. Each part
    is length-prefixed, so ("ab", "c") and ("a", "bc") differ."""
    h = sha256()
    for part in (cubepy_version(), *parts):
        data = part.encode() if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _warn_once(path: Path | str, why: str) -> None:
    key = str(path)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(f"cubepy ignores the cache at {key}: {why}; working without it "
                  f"(see docs/CACHE.md)", CacheWarning, stacklevel=3)


def untrusted_reason(st: os.stat_result) -> str | None:
    """Why a file or folder with this status must not be trusted, or None."""
    euid = getattr(os, "geteuid", None)
    if euid is not None and st.st_uid != euid():
        return f"it is owned by uid {st.st_uid}, not by the current user ({euid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others may write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def trusted_dir(path: Path | str, create: bool = False) -> bool:
    """True when `path` is a folder owned by the current user that group and others
    cannot write. With `create`, a missing folder is created 0700 (its parents with the
    default mode). An untrusted folder gives one CacheWarning; a folder that cannot be
    created or read gives False silently."""
    path = Path(path)
    try:
        if create and not path.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        _warn_once(path, "it is not a folder")
        return False
    why = untrusted_reason(st)
    if why:
        _warn_once(path, why)
        return False
    return True


def _digest(key: str, payload: bytes) -> bytes:
    h = sha256(MAGIC)
    h.update(key.encode())
    h.update(b"\x00")
    h.update(payload)
    return h.digest()


def encode_entry(key: str, payload: bytes) -> bytes:
    """The bytes stored on disk for `payload` under `key`."""
    return MAGIC + _digest(key, payload) + payload


def decode_entry(key: str, data: bytes) -> bytes | None:
    """The payload of a stored entry, or None when it is empty, truncated or corrupt."""
    if len(data) < _HEADER or not data.startswith(MAGIC):
        return None
    payload = data[_HEADER:]
    if data[len(MAGIC):_HEADER] != _digest(key, payload):
        return None
    return payload


class DiskCache:
    """One cache folder (`<cache_dir()>/<name>`) of checksummed entries named by key.

    `get` and `put` never raise for cache problems: the worst a bad cache can cost is a
    recomputation. The folder is resolved on every call, so CUBEPY_CACHE_DIR and
    CUBEPY_NO_CACHE take effect at once.
    """

    def __init__(self, name: str, suffix: str = ".bin"):
        self.name = name
        self.suffix = suffix

    def folder(self, create: bool = False) -> Path | None:
        """The folder when the cache is on and both it and the root are trusted."""
        root = cache_dir()
        if root is None:
            return None
        folder = root / self.name
        if not (trusted_dir(root, create) and trusted_dir(folder, create)):
            return None
        return folder

    def path(self, key: str) -> Path | None:
        """Where the entry for `key` lives (None when the cache is off)."""
        root = cache_dir()
        return None if root is None else root / self.name / f"{_check_key(key)}{self.suffix}"

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (missing, untrusted or corrupt)."""
        folder = self.folder()
        if folder is None:
            return None
        path = folder / f"{_check_key(key)}{self.suffix}"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_BINARY", 0))
        except OSError:  # missing, a symlink, unreadable
            return None
        with os.fdopen(fd, "rb") as f:
            try:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return None
                why = untrusted_reason(st)
                if why:
                    _warn_once(path, why)
                    return None
                data = f.read()
            except OSError:
                return None
        return decode_entry(key, data)

    def put(self, key: str, payload: bytes) -> None:
        """Stores `payload` under `key` atomically; silently does nothing when the cache
        is off, untrusted or not writable."""
        folder = self.folder(create=True)
        if folder is None:
            return
        atomic_write(folder / f"{_check_key(key)}{self.suffix}", encode_entry(key, payload))


def atomic_write(path: Path, data: bytes) -> bool:
    """Writes `data` to `path` through a temporary file in the same folder and a rename,
    so readers see the old file or the whole new one. The temporary file is removed on
    any failure (also KeyboardInterrupt, which is re-raised). Returns False when the
    folder is not writable."""
    try:
        fd, tmp = make_temp_file(path.parent)
    except OSError:
        return False  # read-only folder or file system
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            return False
        raise


def make_temp_file(folder: Path) -> tuple[int, str]:
    """`tempfile.mkstemp(dir=folder, prefix=".tmp-")` without importing tempfile, which
    imports shutil, random and the compression modules (milliseconds of a process's
    first cache write): a new file of a random name, mode 0600, created exclusively
    (O_EXCL) and never through a symlink. Returns its descriptor and path."""
    flags = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    for _ in range(100):
        name = os.path.join(folder, _TMP_PREFIX + os.urandom(8).hex())
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary file name in {folder}")


def _check_key(key: str) -> str:
    """Keys become file names: only hex digests are accepted."""
    if not key or len(key) > 128 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError(f"a cache key is a lowercase hex digest, not {key!r}")
    return key


def clear() -> list[Path]:
    """Deletes cubepy's cache folders under cache_dir() (those cubepy creates); returns
    the folders removed. Equivalent to removing the folder by hand."""
    import shutil
    root = cache_dir()
    removed = []
    if root is None or not root.is_dir():
        return removed
    for sub in sorted(root.iterdir()):
        if sub.is_dir() and not sub.is_symlink():
            shutil.rmtree(sub, ignore_errors=True)
            removed.append(sub)
    return removed
