"""`@cubepy.struct`: a record of scalars, tensors/arrays and other records, passed to a
kernel as one argument (CubeCL's `#[derive(CubeType, CubeLaunch)]` structs).

    @cubepy.struct
    class Config:
        scale: f32
        n: u32
        x: Tensor[f32]

    @cube(launch=True)
    def k(cfg: Config, out: Array[f32]): ... cfg.scale ... cfg.x[i] ...

    k.launch(client, count, dim, Config(scale=2.0, n=10, x=t), out)

A record is no new type for the code generators: a kernel parameter `cfg: Config` is
flattened at decoration into one parameter per leaf field, named `cfg.scale`, `cfg.x`,
`cfg.inner.a` (the names errors give) with identifiers `cfg_scale`, ... in the IR and the
launch ABI; a launch flattens the `Config(...)` argument the same way. Inside a kernel
`cfg` is a compile-time record of those parameters (frontend/values.py `Rec`), so device
functions take it like a buffer.
"""
from __future__ import annotations

import inspect
import sys
from typing import Any, Iterator

from .errors import CompileError, LaunchError
from .ir.types import DType, Generic
from .lang import BufferAnnotation, ComptimeAnnotation, LineOf

_FIELDS = "__cubepy_struct_fields__"
MISSING = object()  # a field the constructor was not given (a LaunchError at launch)


def is_struct(obj: Any) -> bool:
    """True for a class decorated with @cubepy.struct."""
    return inspect.isclass(obj) and _FIELDS in obj.__dict__


def struct_fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, annotation) of each field of a @cubepy.struct class, in declaration order."""
    return cls.__dict__[_FIELDS]


def struct(cls: type) -> type:
    """Declares a record of kernel arguments, as a dataclass is declared: each field is
    annotated with a dtype (`f32`), a placeholder (`Float`, bound by the kernel's
    generics), `Tensor[T]` / `Array[T]` (also of `Line[T]`), `Comptime[T]` (the kernel
    is specialised per value), or another @cubepy.struct.

    A kernel parameter annotated with the class takes one instance at launch
    (`Config(scale=2.0, n=10, x=t)`, or positionally in field order) and reads
    `cfg.scale`, `cfg.x[i]`, `cfg.x.len()`; a device function may take it too. A field
    left out of the constructor, or of the wrong type, is a LaunchError naming it
    (`cfg.scale`); an unknown attribute in a kernel is a CompileError at its line.
    """
    if not inspect.isclass(cls):
        raise TypeError(f"@cubepy.struct decorates a class, not {cls!r}")
    fields = tuple(_read_fields(cls))
    if not fields:
        _declaration_error(cls, f"@cubepy.struct {cls.__name__} declares no fields "
                                f"(name: type lines in the class body)")
    setattr(cls, _FIELDS, fields)
    names = tuple(name for name, _ in fields)
    cls.__init__ = _make_init(cls.__name__, names)
    cls.__repr__ = lambda self: f"{type(self).__name__}(" + ", ".join(
        f"{n}={getattr(self, n)!r}" for n in names if getattr(self, n) is not MISSING) + ")"
    cls.__eq__ = _make_eq(names)
    cls.__hash__ = None  # mutable, like a dataclass without frozen=True
    cls.__match_args__ = names
    return cls


def _make_init(class_name: str, names: tuple[str, ...]):
    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{class_name}() takes {len(names)} fields "
                            f"({', '.join(names)}); got {len(args)} positional values")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{class_name}() has no field {key!r} (fields: "
                                f"{', '.join(names)})")
            if key in values:
                raise TypeError(f"{class_name}() got two values for field {key!r}")
            values[key] = value
        for name in names:
            setattr(self, name, values.get(name, MISSING))
    __init__.__qualname__ = f"{class_name}.__init__"
    return __init__


def _make_eq(names: tuple[str, ...]):
    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        return all(_same(getattr(self, n), getattr(other, n)) for n in names)
    return __eq__


def _same(a: Any, b: Any) -> bool:
    """Numbers and records by value, tensors (and anything else) by identity."""
    if a is b:
        return True
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) or is_struct(type(a)):
        return bool(a == b)
    return False


def _read_fields(cls: type) -> Iterator[tuple[str, Any]]:
    """The fields of the @cubepy.struct bases, then the class's own annotations,
    evaluated in its module (string annotations too)."""
    own = inspect.get_annotations(cls)
    inherited: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        if is_struct(base):
            inherited.update(struct_fields(base))
    yield from ((k, v) for k, v in inherited.items() if k not in own)
    namespace = dict(getattr(sys.modules.get(cls.__module__), "__dict__", {}))
    namespace[cls.__name__] = cls
    for name, ann in own.items():
        if isinstance(ann, str):
            try:
                ann = eval(ann, namespace)  # noqa: S307 - the user's own annotation text
            except Exception as exc:
                _declaration_error(cls, f"{cls.__name__}.{name}: evaluating the annotation "
                                        f"{ann!r} raised {type(exc).__name__}: {exc}")
        _check_field(cls, name, ann)
        yield name, ann


def _check_field(cls: type, name: str, ann: Any) -> None:
    what = f"{cls.__name__}.{name}"
    if ann is cls:
        _declaration_error(cls, f"{what}: a struct cannot contain itself")
    if isinstance(ann, (DType, Generic)) or is_struct(ann):
        return
    if isinstance(ann, (BufferAnnotation, ComptimeAnnotation)):
        return
    if isinstance(ann, LineOf):
        _declaration_error(cls, f"{what}: a scalar field cannot be a Line (lines come from "
                                f"Tensor[Line[T]] or Array[Line[T]] fields)")
    _declaration_error(cls, f"{what}: a struct field is a dtype, a placeholder, Tensor[T], "
                            f"Array[T], Comptime[T] or another @cubepy.struct, not {ann!r}")


def _declaration_error(cls: type, msg: str):
    try:
        filename = inspect.getsourcefile(cls) or "<unknown>"
        lineno = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        filename, lineno = "<unknown>", 0
    raise CompileError(msg, filename, lineno)


# -- flattening -----------------------------------------------------------------------

def leaf_fields(cls: type, prefix: str) -> Iterator[tuple[str, Any]]:
    """("cfg.scale", f32), ("cfg.inner.a", ...): every leaf field, depth first."""
    for name, ann in struct_fields(cls):
        path = f"{prefix}.{name}"
        if is_struct(ann):
            yield from leaf_fields(ann, path)
        else:
            yield path, ann


def flatten_value(cls: type, value: Any, prefix: str, kernel: str, out: list) -> None:
    """Appends the leaf values of `value` (an instance of `cls`) to `out`, in the order
    of leaf_fields; a LaunchError names the first field that is wrong."""
    if not isinstance(value, cls):
        raise LaunchError(f"parameter {prefix!r} of {kernel} is a {cls.__name__}: pass "
                          f"{cls.__name__}(...), not {type(value).__name__}", prefix)
    for name, ann in struct_fields(cls):
        path = f"{prefix}.{name}"
        field_value = getattr(value, name, MISSING)
        if field_value is MISSING:
            raise LaunchError(f"parameter {path!r} of {kernel} is missing: the "
                              f"{cls.__name__} was built without {name!r}", path)
        if is_struct(ann):
            flatten_value(ann, field_value, path, kernel, out)
        else:
            out.append(field_value)
