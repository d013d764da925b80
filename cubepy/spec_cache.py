"""The disk cache of compiled specialisations: a fresh process launches a kernel it
compiled before without the frontend, the passes or the code generators (docs/CACHE.md).

Two kinds of entries in the `kernels/` folder of `cache.DiskCache` (so the same
ownership, mode and checksum rules hold), plain data (dicts, lists, strings, numbers)
written with `marshal`:

- a signature, keyed by the function: its parameters as launches check them;
- a specialisation, keyed by the function and the specialisation, the target and
  `checked`: the launch ABI, the generated code, and the facts of the kernel's IR that
  launches check (parameter ranks, shared memory, local arrays).

The function's key is its source text, qualname, module and file, cubepy's version and
the stamp of the compiler's own files (`compiler_stamp`), Python's and numpy's versions.
What the kernel's code also depends on, the values of the free names it (and every
@cube function it calls, recursively) resolved, is recorded with each entry as
fingerprints; a hit re-resolves each name and compares, so editing a called function or
a global constant misses. A value without a stable fingerprint (an object of the user's,
a user module whose attributes the kernel reads) makes the kernel uncacheable here.

Nothing read is executed before its checksum and every dependency matched; the cpu
runtime's namespace is rebuilt from names (modules, numpy types, typed constants), never
unpickled. `marshal` rather than JSON because it is built into the interpreter: a warm
process's first launch reads these entries, and importing `json` cost it 2.3 ms on the
H200's host. marshal reads only what it wrote (entries are keyed by Python's version)
and, like Python's own bytecode cache, trusts its input, which the checksum and the
cache's ownership and mode rules make this process's own writing.
"""
from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
from typing import Any

from .cache import DiskCache, cache_dir, cache_key, sha256
from .ir.types import DType, Generic, dtype_from_name
from .params import ParamInfo
from .spec import Specialization

FOLDER = "kernels"
_DISK = DiskCache(FOLDER, ".rec")
_FORMAT = 3  # bump when the layout of an entry changes


# What a well-checksummed entry of another layout raises while read: a miss, never an error.
_MALFORMED = (KeyError, ValueError, TypeError, IndexError, AttributeError, ImportError)


class Uncacheable(Exception):
    """A value the cache cannot fingerprint: the kernel is compiled every process."""


# ----------------------------------------------------------------------------- keys

_stamp: str | None = None
# The files whose change changes what the compiler makes of a kernel.
_COMPILER_FILES = (".py", ".lark", ".j2", ".jinja", ".wgsl", ".cu", ".h", ".metal", ".txt")


def compiler_stamp() -> str:
    """A digest of the compiler's own files (path, size and modification time of every
    file of the cubepy package), so that changing cubepy invalidates every entry."""
    global _stamp
    if _stamp is None:
        _stamp = files_stamp(os.path.dirname(os.path.abspath(__file__)))
    return _stamp


def files_stamp(root: str) -> str:
    """A digest of the path (under `root`), size and modification time of every compiler
    file below `root`, `__pycache__` and hidden folders left out.

    Every launch of a fresh process pays for it (about 150 files), so the walk does
    little per file: one `DirEntry.stat` and one string, sorted and hashed once."""
    skip = len(root) + 1
    rows = []
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.name.endswith(_COMPILER_FILES):
                    st = e.stat()
                    rows.append(f"{e.path[skip:]}\0{st.st_size}\0{st.st_mtime_ns}")
                elif (e.name != "__pycache__" and not e.name.startswith(".")
                      and e.is_dir(follow_symlinks=False)):
                    stack.append(e.path)
    rows.sort()
    return sha256("\n".join(rows).encode()).hexdigest()


def function_source(fn) -> str | None:
    """The lines of `fn`'s definition, decorators included: from the code object's first
    line to the last line any of its instructions comes from, read through linecache
    (as the frontend reads them; unlike inspect.getsource this tokenizes nothing). None
    when Python keeps no source for it."""
    import linecache
    code = fn.__code__
    last = max((end for _, end, _, _ in code.co_positions() if end is not None),
               default=code.co_firstlineno)
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if len(lines) < last:
        return None
    return "".join(lines[code.co_firstlineno - 1:last])


def function_key(fn, launch: bool, fast_math: bool) -> str | None:
    """The key of a @cube function: what it is before any name is resolved."""
    source = function_source(fn)
    if source is None:
        return None
    import numpy
    code = fn.__code__
    return cache_key("cube-function", str(_FORMAT), compiler_stamp(), sys.version,
                     numpy.__version__, fn.__module__ or "", fn.__qualname__,
                     code.co_filename, str(code.co_firstlineno), source,
                     f"{launch}:{fast_math}")


def spec_key(function: str, spec: Specialization, target: str, checked: bool) -> str:
    """The key of one specialisation of the function keyed `function`: the text of
    every field of the Specialization, so that a field added to it reaches the key."""
    fields = [f"{f.name}={_value_text(getattr(spec, f.name))}"
              for f in dataclasses.fields(spec)]
    return cache_key("cube-spec", function, ";".join(fields), target, repr(checked))


def _value_text(v: Any) -> str:
    """A text that tells apart every value compiling differently (comptime values,
    dtypes and the rest of a Specialization's fields)."""
    if isinstance(v, DType):
        return f"dtype:{v.name}"
    if isinstance(v, float):
        return f"float:{v.hex()}"
    if isinstance(v, (bool, int, str)) or v is None:
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, tuple):
        return "tuple:(" + ",".join(_value_text(x) for x in v) + ")"
    raise Uncacheable(f"comptime value {v!r}")


# ----------------------------------------------------------------------------- dependencies

_STABLE_MODULES = ("cubepy", "numpy")
_names_of: dict[int, str] | None = None


def _cubepy_names() -> dict[int, str]:
    """id -> qualified name of the objects cubepy's public modules define at top level
    (BuiltinVar, intrinsics, factories): their identity is fixed by the compiler stamp."""
    global _names_of
    if _names_of is None:
        _names_of = {}
        for mod_name in ("cubepy.math", "cubepy.lang", "cubepy.ir.types", "cubepy"):
            mod = sys.modules.get(mod_name)
            for name, value in vars(mod).items() if mod else ():
                _names_of.setdefault(id(value), f"{mod_name}.{name}")
    return _names_of


def fingerprint(value: Any) -> str:
    """A text that is equal in two processes exactly when `value` compiles the same
    (Uncacheable when there is none)."""
    from .kernel import CubeFunction
    if isinstance(value, CubeFunction):
        key = function_key(value.fn, value.is_kernel, value.fast_math)
        if key is None:
            raise Uncacheable(value.__name__)
        return f"cube:{key}"
    if value is None or isinstance(value, (bool, int, float, str)):
        return "value:" + _value_text(value)
    if isinstance(value, tuple):
        return "tuple:(" + ",".join(fingerprint(v) for v in value) + ")"
    if isinstance(value, DType):
        return f"dtype:{value.name}"
    if isinstance(value, Generic):
        return f"generic:{value.name}:{','.join(t.name for t in value.bound)}"
    if type(value).__name__ == "module":
        name = value.__name__
        if name.split(".")[0] in _STABLE_MODULES or name in sys.stdlib_module_names:
            return f"module:{name}"
        raise Uncacheable(f"module {name}")  # its attributes are not tracked
    from .records import is_struct
    if is_struct(value):
        import inspect
        try:
            text = inspect.getsource(value)
        except (OSError, TypeError):
            raise Uncacheable(value.__qualname__) from None
        return (f"struct:{value.__module__}.{value.__qualname__}:"
                f"{sha256(text.encode()).hexdigest()}")
    module = getattr(value, "__module__", None) or type(value).__module__ or ""
    qualname = getattr(value, "__qualname__", None)
    root = module.split(".")[0]
    if qualname is not None and (root in _STABLE_MODULES or module == "builtins"):
        return f"object:{module}.{qualname}"  # a class or function of cubepy/numpy/Python
    import numpy as np
    if isinstance(value, np.generic):
        return f"numpy:{value.dtype.str}:{value.tobytes().hex()}"
    name = _cubepy_names().get(id(value))
    if name is not None:
        return f"cubepy:{name}"
    raise Uncacheable(f"{type(value).__name__} {value!r}"[:80])


def resolve(fn, name: str) -> tuple[bool, Any]:
    """A free name of `fn` as the frontend resolves it: closure, globals, builtins."""
    code = fn.__code__
    if name in code.co_freevars and fn.__closure__:
        try:
            return True, fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return False, None
    g = fn.__globals__
    if name in g:
        return True, g[name]
    if hasattr(builtins, name):
        return True, getattr(builtins, name)
    return False, None


def record_dependencies(parsed) -> list:
    """[path, name, fingerprint] for every free name `parsed` and the @cube functions it
    reached resolved (path: the names leading from the kernel to the function that
    resolved it). Uncacheable when one has no fingerprint."""
    from .kernel import CubeFunction
    out: list = []

    def walk(p, path: list[str], active: set[int]) -> None:
        if p.enclosing:  # names of an enclosing function: not re-resolvable later
            raise Uncacheable("annotations read an enclosing function's names")
        for name, value in sorted(p.lookups.items()):
            out.append([path, name, fingerprint(value)])
            if isinstance(value, CubeFunction) and value._parsed is not None \
                    and id(value) not in active:
                walk(value._parsed, path + [name], active | {id(value)})

    walk(parsed, [], {id(parsed)})
    return out


def dependencies_hold(fn, deps: list) -> bool:
    """Whether every recorded dependency resolves to a value with the same fingerprint."""
    from .kernel import CubeFunction
    owners: dict[tuple, Any] = {(): fn}
    for path, name, expected in deps:
        owner = owners.get(tuple(path))
        if owner is None:
            return False
        found, value = resolve(owner, name)
        if not found:
            return False
        try:
            if fingerprint(value) != expected:
                return False
        except Uncacheable:
            return False
        if isinstance(value, CubeFunction):
            owners[(*path, name)] = value.fn
    return True


# ----------------------------------------------------------------------------- encoding

def _enc_elem(elem: Any) -> Any:
    from .lang import LineOf
    if elem is None:
        return None
    if isinstance(elem, DType):
        return ["dtype", elem.name]
    if isinstance(elem, Generic):
        return ["generic", elem.name, [t.name for t in elem.bound]]
    if isinstance(elem, LineOf):
        return ["line", _enc_elem(elem.elem)]
    raise Uncacheable(f"parameter element {elem!r}")


_generics: dict[tuple, Generic] = {}


def _dec_elem(data: Any) -> Any:
    from .lang import LineOf
    if data is None:
        return None
    if data[0] == "dtype":
        return dtype_from_name(data[1])
    if data[0] == "generic":
        key = (data[1], tuple(data[2]))
        found = _generics.get(key)
        if found is None:  # one object per placeholder (cubepy's own where it is one)
            found = Generic(data[1], tuple(map(dtype_from_name, data[2])))
            from .ir import types
            builtin = getattr(types, data[1], None)
            _generics[key] = found = builtin if builtin == found else found
        return found
    if data[0] == "line":
        return LineOf(_dec_elem(data[1]))
    raise ValueError(data)


_PYTYPES = {"int": int, "float": float, "bool": bool, "str": str}


def _enc_param(p: ParamInfo) -> list:
    if p.pytype is not None and p.pytype not in _PYTYPES.values():
        raise Uncacheable(f"comptime type {p.pytype!r}")
    loc = p.loc
    return [p.name, p.kind, _enc_elem(p.elem), p.pytype and p.pytype.__name__,
            [loc.filename, loc.lineno, loc.col, loc.end_col], p.symbol]


def _dec_param(d: list) -> ParamInfo:
    from .ir.loc import Loc
    name, kind, elem, pytype, loc, symbol = d
    return ParamInfo(name, kind, _dec_elem(elem), _PYTYPES[pytype] if pytype else None,
                     Loc(*loc), symbol)


class Signature:
    """What launches need of a parsed function: parameters, argument names, whether
    one is a struct (signatures of such kernels are not cached)."""

    def __init__(self, params: tuple[ParamInfo, ...], arg_names: tuple[str, ...]):
        self.params = params
        self.arg_names = arg_names
        self.structs: dict = {}


def _get(key: str) -> dict | None:
    data = _DISK.get(key)
    if data is None:
        return None
    try:
        entry = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    return entry if isinstance(entry, dict) and entry.get("format") == _FORMAT else None


def _put(key: str, entry: dict) -> None:
    entry["format"] = _FORMAT
    try:
        data = marshal.dumps(entry)
    except ValueError:  # (a value marshal cannot write: not cached)
        return
    _DISK.put(key, data)


def load_signature(fn, key: str | None) -> Signature | None:
    """The cached signature of function `fn` keyed `key`, when its dependencies hold."""
    if key is None or cache_dir() is None:
        return None
    entry = _get(cache_key("signature", key))
    try:
        if entry is None or not dependencies_hold(fn, entry["deps"]):
            return None
        return Signature(tuple(_dec_param(p) for p in entry["params"]),
                         tuple(entry["arg_names"]))
    except _MALFORMED:
        return None


def store_signature(parsed, key: str | None) -> None:
    """Caches the signature of `parsed` (nothing when it cannot be cached)."""
    if key is None or parsed.structs or cache_dir() is None:
        return
    try:
        entry = {"deps": record_dependencies(parsed),
                 "params": [_enc_param(p) for p in parsed.params],
                 "arg_names": list(parsed.arg_names)}
    except Uncacheable:
        return
    _put(cache_key("signature", key), entry)


# ----------------------------------------------------------------------------- specialisations

def _enc_buffer(b) -> list:
    return [b.name, b.dtype.name, b.kind, b.read_only, b.atomic]


def _enc_abi(abi) -> dict:
    return {"buffers": [_enc_buffer(b) for b in abi.buffers],
            "fields": [[f.name, f.kind, f.param, f.dtype.name, f.count, f.offset]
                       for f in abi.fields],
            "size": abi.size, "format": abi.struct_format}


def _dec_abi(d: dict):
    from .abi import BufferBinding, InfoField, KernelABI
    buffers = tuple(BufferBinding(n, dtype_from_name(t), k, bool(ro), bool(at))
                    for n, t, k, ro, at in d["buffers"])
    fields = tuple(InfoField(n, k, p, dtype_from_name(t), int(c), int(o))
                   for n, k, p, t, c, o in d["fields"])
    return KernelABI(buffers, fields, int(d["size"]), str(d["format"]))


def _enc_kernel(k) -> dict:
    """The facts of the IR that launches and runtimes read (the body is not kept)."""
    decls = lambda ds: [[d.buffer.name, d.buffer.elem.name, d.size] for d in ds]
    from .kernel import tiled_global_buffers
    return {"name": k.name, "cube_dim": list(k.cube_dim),
            "params": [[p.name, p.kind, p.dtype.name, p.line_size, p.rank] for p in k.params],
            "shared": decls(k.shared), "local": decls(k.local_arrays),
            "tiled": sorted(tiled_global_buffers(k))}


class KernelFacts:
    """What launches and runtimes read of a kernel's IR, for a specialisation read back
    from the disk: its name, parameters (name, kind, dtype, line_size, rank), shared
    memory and local arrays (`.buffer.name`, `.buffer.elem`, `.size`), the cmma facts
    `tiled`; no body. Plain
    objects, so that a cached launch loads no IR module."""

    def __init__(self, d: dict):
        self.name = str(d["name"])
        self.cube_dim = tuple(int(v) for v in d["cube_dim"])
        self.params = tuple(_Fields(name=n, kind=k, dtype=dtype_from_name(t),
                                    line_size=int(ls), rank=None if r is None else int(r))
                            for n, k, t, ls, r in d["params"])
        self.shared = self._decls(d["shared"], "shared")
        self.local_arrays = self._decls(d["local"], "local")
        # cmma: the global buffers whose tiles wmma accesses directly, which an
        # unchecked CUDA launch checks for alignment without the IR
        self.tiled = frozenset(str(name) for name in d["tiled"])
        self.body = None  # not kept: the code is in the cached artefact

    @staticmethod
    def _decls(items: list, space: str) -> tuple:
        return tuple(_Fields(buffer=_Fields(name=n, elem=dtype_from_name(t), space=space),
                             size=int(s)) for n, t, s in items)

    def param(self, name: str):
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


class _Fields:
    def __init__(self, **fields: Any):
        self.__dict__.update(fields)


def _dec_kernel(d: dict) -> KernelFacts:
    return KernelFacts(d)


def _enc_namespace(ns) -> list:
    """The cpu runtime's namespace by name: modules, numpy types, typed constants,
    cubepy helpers. Uncacheable for anything else."""
    import numpy as np
    out = []
    for name, value in sorted(ns.items()):
        if type(value).__name__ == "module":
            out.append([name, "module", value.__name__])
        elif isinstance(value, np.generic):
            out.append([name, "scalar", value.dtype.str, value.tobytes().hex()])
        elif isinstance(value, type) and issubclass(value, np.generic):
            out.append([name, "nptype", np.dtype(value).str])
        elif getattr(value, "__module__", "").startswith("cubepy.") \
                and _attr_path(value) is not None:
            out.append([name, "object", value.__module__, value.__qualname__])
        else:
            raise Uncacheable(f"cpu namespace entry {name}")
    return out


def _attr_path(value) -> Any:
    qualname = getattr(value, "__qualname__", None)
    mod = sys.modules.get(getattr(value, "__module__", ""))
    if qualname is None or mod is None:
        return None
    found = mod
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if found is value else None


def _dec_namespace(items: list) -> dict:
    import importlib

    import numpy as np
    ns: dict = {}
    for item in items:
        name, kind = item[0], item[1]
        if kind == "module":
            if item[2].split(".")[0] not in _STABLE_MODULES:
                raise ValueError(item)
            ns[name] = importlib.import_module(item[2])
        elif kind == "scalar":
            ns[name] = np.frombuffer(bytes.fromhex(item[3]), np.dtype(item[2]))[0]
        elif kind == "nptype":
            ns[name] = np.dtype(item[2]).type
        elif kind == "object":
            if not item[2].startswith("cubepy."):
                raise ValueError(item)
            found = importlib.import_module(item[2])
            for part in item[3].split("."):
                found = getattr(found, part)
            ns[name] = found
        else:
            raise ValueError(item)
    return ns


def _enc_artefact(a) -> dict:
    if a.render is not None and a.target != "wgsl":
        raise Uncacheable("a re-rendering hook")  # wgsl rewrites its text instead
    return {"target": a.target, "source": a.source, "entry": a.entry,
            "bindings": [_enc_buffer(b) for b in a.bindings],
            "features": sorted(a.features), "shared_bytes": a.shared_bytes,
            "namespace": _enc_namespace(a.namespace), "positions": sorted(a.positions),
            "fast_math": a.fast_math, "dynamic_shared_bytes": a.dynamic_shared_bytes}


def _dec_artefact(d: dict, abi):
    from types import MappingProxyType

    from .codegen.compiled import Compiled
    return Compiled(d["target"], d["source"], d["entry"], tuple(abi.buffers),
                    frozenset(d["features"]), int(d["shared_bytes"]),
                    MappingProxyType(_dec_namespace(d["namespace"])),
                    frozenset(d["positions"]), None, bool(d["fast_math"]),
                    int(d["dynamic_shared_bytes"]))


def load_spec(fn, function: str | None, spec: Specialization, target: str, checked: bool):
    """(kernel facts, abi, artefact) of a cached specialisation, or None."""
    if function is None or cache_dir() is None:
        return None
    try:
        key = spec_key(function, spec, target, checked)
    except Uncacheable:
        return None
    entry = _get(key)
    try:
        if entry is None or not dependencies_hold(fn, entry["deps"]):
            return None
        abi = _dec_abi(entry["abi"])
        return _dec_kernel(entry["kernel"]), abi, _dec_artefact(entry["code"], abi)
    except _MALFORMED:
        return None


def store_spec(parsed, function: str | None, spec: Specialization, target: str,
               checked: bool, kernel, abi, artefact) -> None:
    """Caches one compiled specialisation (nothing when it cannot be cached)."""
    if function is None or cache_dir() is None:
        return
    try:
        key = spec_key(function, spec, target, checked)
        entry = {"deps": record_dependencies(parsed), "abi": _enc_abi(abi),
                 "kernel": _enc_kernel(kernel), "code": _enc_artefact(artefact)}
    except Uncacheable:
        return
    _put(key, entry)
