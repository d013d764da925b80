"""Frozen dataclasses whose methods are compiled for many classes at once.

`dataclasses.dataclass` compiles five or six small functions per class, one `exec` each
(about 1 ms a class), and the IR's fifty node classes made that most of the import cost
of the compiler, so most of a cold kernel compile. `dataclass` below makes the same
classes for the options the IR uses (frozen, eq, kw_only; fields with a default,
`compare` or `repr`): the same `dataclasses.Field` objects in `__dataclass_fields__`, so
`dataclasses.fields`, `replace` and `is_dataclass` work; the same `__init__` signature,
`__repr__` text, `__eq__` and `__hash__` (the tuple of the compared fields),
`FrozenInstanceError` on assignment, `__match_args__` and `__doc__`.

`__init__`, `__eq__` and `__hash__` are the code dataclasses writes (so as fast), but
compiled once per shape (how many fields) and copied per class with the field names
swapped in (`CodeType.replace`). A class gets them when it is first used (its first
instance, or its first `==` or hash), so a process builds the methods of the classes it
uses only: a first compile of a small kernel uses a third of the IR's node classes.
`build_pending()` builds every class not built yet at once; modules whose classes users
see (whose `inspect.signature` must be right before a first instance) call it after
their classes. `__repr__` and the frozen `__setattr__`/`__delattr__` are closures (not
hot).

It reads two private details of `dataclasses` that have no public spelling: a field's
`_field_type` (`dataclasses._FIELD`, which `fields()` keeps, or `_FIELD_CLASSVAR`) and the
`_DataclassParams` record of `__dataclass_params__`; tests/test_batched_dataclass.py
compares every class made here with the one `dataclasses.dataclass` makes, so a Python
that changes either fails loudly there.
"""
from __future__ import annotations

import dataclasses
import reprlib
import sys
import threading
import typing
from dataclasses import MISSING, Field, FrozenInstanceError
from types import CellType, CodeType, FunctionType
from typing import Any, Callable, NamedTuple, Optional, TypeVar, dataclass_transform

_T = TypeVar("_T", bound=type)

_lock = threading.Lock()


class _Job(NamedTuple):
    """A class waiting for its compiled methods."""
    cls: type
    positional: list[Field]
    keyword: list[Field]
    init: bool  # which methods it gets (those the class does not define)
    eq: bool
    hash: bool
    frozen: bool  # (a mutable class's __init__ assigns its fields plainly)
    compared: list[str]  # the fields __eq__ takes
    hashed: list[str]  # the fields __hash__ takes


_pending: dict[type, _Job] = {}  # the classes whose methods are not built yet
# Set by dataclasses.dataclass on 3.13+ (copy.replace); absent before.
_REPLACE: Optional[Callable[..., Any]] = getattr(dataclasses, "_replace", None)


@dataclass_transform(field_specifiers=(dataclasses.field, Field))
def dataclass(cls: Optional[_T] = None, /, *, frozen: bool = True, eq: bool = True,
              kw_only: bool = False) -> Any:
    """`dataclasses.dataclass(frozen=frozen, eq=eq, kw_only=kw_only)`, its methods
    compiled with other classes' (module docstring). Frozen unless `frozen=False` is
    given (the IR's classes are frozen; mutable ones are records of the frontend)."""

    def wrap(cls: _T) -> _T:
        return _process(cls, eq, kw_only, frozen)

    return wrap if cls is None else wrap(cls)


def build_pending() -> None:
    """Builds the methods of every class decorated and not built yet, in one go."""
    with _lock:
        batch = list(_pending.values())
        _pending.clear()
        if batch:
            _build(batch)


# ----------------------------------------------------------------------------- fields

def _process(cls: _T, eq: bool, kw_only: bool, frozen: bool = True) -> _T:
    own = cls.__dict__
    if "__slots__" in own:
        raise TypeError(f"{cls.__name__}: batched dataclasses have no __slots__")
    fields: dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, "__dataclass_fields__", None)
        if base_fields is not None:
            if getattr(base, "__dataclass_params__").frozen != frozen:
                raise TypeError(f"{cls.__name__}: cannot inherit a frozen dataclass from a "
                                f"mutable one or a mutable one from a frozen one")
            fields.update((f.name, f) for f in base_fields.values())
    annotations = own.get("__annotations__", {})
    for name, ty in annotations.items():
        fields[name] = _own_field(cls, name, ty, kw_only)
    for name, value in own.items():
        if isinstance(value, Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    for name in annotations:  # the class attribute is the default, as dataclasses leaves it
        if isinstance(own.get(name), Field):
            if fields[name].default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, fields[name].default)
    cls.__dataclass_params__ = _params(eq, kw_only, frozen)  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    field_list = [f for f in fields.values() if f._field_type is dataclasses._FIELD]
    positional = [f for f in field_list if not f.kw_only]
    keyword = [f for f in field_list if f.kw_only]
    _check_defaults_order(cls, positional)

    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    job = _Job(cls, positional, keyword, "__init__" not in own,
               eq and "__eq__" not in own, eq and frozen and not explicit_hash, frozen,
               [f.name for f in field_list if f.compare],
               [f.name for f in field_list if (f.compare if f.hash is None else f.hash)])
    if job.init or job.eq or job.hash:
        _pending[cls] = job
        _set_pending_methods(cls, job)
    if eq and not frozen and not explicit_hash:  # as dataclasses: unhashable
        cls.__hash__ = None  # type: ignore[assignment]
    _set_new(cls, "__repr__", _repr_fn(cls, [f.name for f in field_list if f.repr]))
    names = tuple(f.name for f in field_list)
    if frozen:
        for method in ("__setattr__", "__delattr__"):
            if method in own:
                raise TypeError(f"cannot overwrite attribute {method} in class "
                                f"{cls.__name__}")
        cls.__setattr__ = _frozen_setattr(cls, names)  # type: ignore[assignment]
        cls.__delattr__ = _frozen_delattr(cls, names)  # type: ignore[assignment]
    if _REPLACE is not None:
        _set_new(cls, "__replace__", _REPLACE)
    if not own.get("__doc__"):
        cls.__doc__ = cls.__name__ + _text_signature(positional, keyword)
    _set_new(cls, "__match_args__", tuple(f.name for f in positional))
    return cls


def _annotation_name(ty: Any) -> str:
    """`ClassVar` for `ClassVar[...]`, `typing.ClassVar` or a string of either."""
    if isinstance(ty, str):
        return ty.strip("'\" ").split("[")[0].split(".")[-1].strip()
    return getattr(typing.get_origin(ty) or ty, "_name", None) or type(ty).__name__


def _own_field(cls: type, name: str, ty: Any, kw_only: bool) -> Field:
    kind = _annotation_name(ty)
    if kind in ("InitVar", "KW_ONLY"):
        raise TypeError(f"{cls.__name__}.{name}: InitVar and KW_ONLY are not supported by "
                        "batched dataclasses")
    default = getattr(cls, name, MISSING)
    if isinstance(default, Field):
        f = default
    else:
        f = dataclasses.field(default=default)
    if kind == "ClassVar":  # a pseudo-field, which fields() leaves out (not in __init__)
        if f.default_factory is not MISSING:
            raise TypeError(f"field {name} cannot have a default factory")
        f.name, f.type = name, ty
        f._field_type = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
        return f
    if not f.init:
        raise TypeError(f"{cls.__name__}.{name}: init=False is not supported by batched "
                        "dataclasses")
    if f.default is not MISSING and f.default.__class__.__hash__ is None:
        raise ValueError(f"mutable default {type(f.default)} for field {name} is not "
                         "allowed: use default_factory")
    if name in ("self", "_setattr"):  # the names of __init__'s own variables
        raise TypeError(f"{cls.__name__}: a batched dataclass field may not be named {name}")
    f.name = name
    f.type = ty
    f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() keeps
    if f.kw_only is MISSING:
        f.kw_only = kw_only
    return f


def _check_defaults_order(cls: type, positional: list[Field]) -> None:
    seen_default = False
    for f in positional:
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


_params_cache: dict[tuple[bool, bool, bool], Any] = {}


def _params(eq: bool, kw_only: bool, frozen: bool = True) -> Any:
    """The `__dataclass_params__` dataclasses would set (its record grew fields in 3.12)."""
    params = _params_cache.get((eq, kw_only, frozen))
    if params is None:
        record = dataclasses._DataclassParams  # type: ignore[attr-defined]
        code = record.__init__.__code__
        wanted = dict(init=True, repr=True, eq=eq, order=False, unsafe_hash=False,
                      frozen=frozen, match_args=True, kw_only=kw_only, slots=False,
                      weakref_slot=False)
        names = code.co_varnames[1:code.co_argcount]
        params = _params_cache[(eq, kw_only, frozen)] = record(**{n: wanted[n] for n in names})
    return params


def _set_new(cls: type, name: str, value: Any) -> None:
    if name not in cls.__dict__:
        if isinstance(value, FunctionType):
            value.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, value)


def _text_signature(positional: list[Field], keyword: list[Field]) -> str:
    """str(inspect.signature(cls)) of the dataclass, which dataclasses makes the
    docstring of a class without one (computed here without inspect)."""
    def param(f: Field) -> str:
        text = f"{f.name}: {f.type!r}" if f.type is not MISSING else f.name
        if f.default_factory is not MISSING:
            return f"{text} = <factory>"
        return text if f.default is MISSING else f"{text} = {f.default!r}"
    parts = [param(f) for f in positional]
    if keyword:
        parts += ["*"] + [param(f) for f in keyword]
    return "(" + ", ".join(parts) + ")"


# ----------------------------------------------------------------------------- methods

def _repr_fn(cls: type, names: list[str]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        return (self.__class__.__qualname__ + "("
                + ", ".join([f"{n}={getattr(self, n)!r}" for n in names]) + ")")
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return reprlib.recursive_repr()(__repr__)


def _frozen_setattr(cls: type, names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)
    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    return __setattr__


def _frozen_delattr(cls: type, names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __delattr__


def _set_pending_methods(cls: type, job: _Job) -> None:
    """Until `cls` is built, each of its methods builds it when first called, then runs
    as built. They call `cls`'s own method, not the instance's class's, so that a
    subclass's `__init__` calling `super().__init__()` reaches this one."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _build_class(cls)
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]

    def __eq__(self: Any, other: Any) -> Any:
        _build_class(cls)
        return cls.__eq__(self, other)

    def __hash__(self: Any) -> int:
        _build_class(cls)
        return cls.__hash__(self)

    for name, method, wanted in (("__init__", __init__, job.init), ("__eq__", __eq__, job.eq),
                                 ("__hash__", __hash__, job.hash)):
        if wanted:
            setattr(cls, name, method)


def _build_class(cls: type) -> None:
    """Builds `cls`'s methods, unless another thread just did."""
    with _lock:
        job = _pending.pop(cls, None)
        if job is not None:
            _build([job])


_module_shapes: dict[str, set[tuple]] = {}  # module name -> the shapes of its classes


def _build(batch: list[_Job]) -> None:
    for job in batch:
        _module_shapes.setdefault(job.cls.__module__, set()).update(_shapes(job))
    shapes = {shape for job in batch for shape in _shapes(job)}
    missing = shapes - _template_code.keys()
    if missing:
        _template_code.update(_shipped_templates(missing))
        _template_code.update(_templates(sorted(shapes - _template_code.keys())))
    for job in batch:
        cls, positional, keyword = job.cls, job.positional, job.keyword
        for shape in _shapes(job):
            kind = shape[0]
            names = ([f.name for f in positional + keyword] if kind == "__init__"
                     else job.compared if kind == "__eq__" else job.hashed)
            factories = ([f.default_factory for f in positional + keyword]
                         if kind == "__init__" else [])
            method = _instantiate(cls, _template_code[shape], names, factories)
            if kind == "__init__":
                method.__defaults__ = tuple(_init_default(f) for f in positional
                                            if _init_default(f) is not MISSING) or None
                method.__kwdefaults__ = {f.name: _init_default(f) for f in keyword
                                         if _init_default(f) is not MISSING} or None
                method.__annotations__ = {**{f.name: f.type for f in positional + keyword},
                                          "return": None}
            setattr(cls, kind, method)


def _init_default(f: Field) -> Any:
    """The default of `f`'s __init__ parameter: a default_factory's is dataclasses'
    marker (shown as `<factory>`), which __init__ replaces by a call of the factory."""
    if f.default_factory is not MISSING:
        return dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
    return f.default


def _factory_positions(job: _Job) -> tuple[int, ...]:
    return tuple(i for i, f in enumerate(job.positional + job.keyword)
                 if f.default_factory is not MISSING)


def _shapes(job: _Job) -> list[tuple]:
    """The templates a class's methods are copies of: __init__ by its numbers of
    positional and keyword fields (and whether it calls __post_init__), __eq__ and
    __hash__ by their number of compared fields. Fields with a default_factory add
    their positions to __init__'s shape."""
    shapes: list[tuple] = []
    if job.init:
        factories = _factory_positions(job)  # (part of the shape only when there are)
        extra = (factories,) if factories else ()
        if not job.frozen:  # (and then a mutable marker)
            extra = (factories, "mutable")
        shapes.append(("__init__", len(job.positional), len(job.keyword),
                       hasattr(job.cls, "__post_init__")) + extra)
    if job.eq:
        shapes.append(("__eq__", len(job.compared)))
    if job.hash:
        shapes.append(("__hash__", len(job.hashed)))
    return shapes


def _instantiate(cls: type, template: CodeType, names: list[str],
                 factories: list[Any]) -> FunctionType:
    """The template's function for `cls`: its placeholders renamed to the field names
    (arguments, the attribute names and the strings of the code) and the globals of the
    class's module, as dataclasses gives them (get_type_hints of __init__ reads them)."""
    rename = {_placeholder(i): name for i, name in enumerate(names)}
    kind = template.co_name
    code = template.replace(
        co_varnames=tuple(rename.get(v, v) for v in template.co_varnames),
        co_names=tuple(rename.get(v, v) for v in template.co_names),
        co_consts=tuple(rename.get(c, c) if isinstance(c, str) else c
                        for c in template.co_consts),
        co_qualname=f"{cls.__qualname__}.{kind}")
    cells = {"_setattr": _SETATTR_CELL[0], "_HAS_DEFAULT_FACTORY": _FACTORY_MARK_CELL}
    closure = tuple(cells[v] if v in cells else CellType(factories[int(v.split("_")[-1])])
                    for v in code.co_freevars)  # (`_factory_<position>`)
    method = FunctionType(code, sys.modules[cls.__module__].__dict__, kind, None,
                          closure or None)
    method.__qualname__ = f"{cls.__qualname__}.{kind}"
    return method


# One compiled method per shape (_shapes), its fields named by placeholders that each
# class's copy renames (code.replace): the fifty node classes have a dozen shapes, and
# compiling is what costs. The code is the code dataclasses writes.
_template_code: dict[tuple, CodeType] = {}
# object.__setattr__, as dataclasses' __init__ assigns a frozen field: instances keep
# their values inline (no __dict__ is made), so reading a field stays as fast.
_SETATTR_CELL = (CellType(object.__setattr__),)
_FACTORY_MARK_CELL = CellType(dataclasses._HAS_DEFAULT_FACTORY)  # type: ignore[attr-defined]


def _placeholder(i: int) -> str:
    return f"_batched_field_{i}_"


def _template_source(shape: tuple) -> list[str]:
    kind = shape[0]
    if kind == "__init__":
        _, n_pos, n_kw, post_init, *rest = shape
        factories = rest[0] if rest else ()
        mutable = len(rest) > 1  # ("mutable"): plain assignments, as dataclasses writes
        names = [_placeholder(i) for i in range(n_pos + n_kw)]
        params = ["self"] + names[:n_pos] + (["*"] + names[n_pos:] if n_kw else [])
        lines = [f" def __init__({', '.join(params)}):"]
        for i, name in enumerate(names):
            value = (f"_factory_{i}() if {name} is _HAS_DEFAULT_FACTORY else {name}"
                     if i in factories else name)
            lines.append(f"  self.{name} = {value}" if mutable
                         else f"  _setattr(self, {name!r}, {value})")
        lines += ["  self.__post_init__()"] if post_init else []
        return lines + ["  pass"]
    names = [_placeholder(i) for i in range(shape[1])]
    mine = "(" + "".join(f"self.{n}," for n in names) + ")"
    if kind == "__hash__":
        return [" def __hash__(self):", f"  return hash({mine})"]
    theirs = "(" + "".join(f"other.{n}," for n in names) + ")"
    return [" def __eq__(self, other):", "  if other.__class__ is self.__class__:",
            f"   return {mine}=={theirs}", "  return NotImplemented"]


def _templates_text(shapes: list[tuple]) -> str:
    """The module text defining `make{i}(_setattr)`, which returns shape i's method."""
    lines = []
    for i, shape in enumerate(shapes):
        factories = shape[4] if shape[0] == "__init__" and len(shape) > 4 else ()
        extra = "".join(f", _factory_{j}=None" for j in factories)
        extra = f", _HAS_DEFAULT_FACTORY=None{extra}" if factories else ""
        lines += [f"def make{i}(_setattr{extra}):", *_template_source(shape),
                  f" return {shape[0]}"]
    return "\n".join(lines)


def _templates(shapes: list[tuple]) -> dict[tuple, CodeType]:
    """Compiles the templates of `shapes`, all in one compile()."""
    if not shapes:
        return {}
    namespace: dict[str, Any] = {}
    exec(compile(_templates_text(shapes), "<batched dataclass>", "exec"), namespace)
    return {shape: namespace[f"make{i}"](object.__setattr__).__code__
            for i, shape in enumerate(shapes)}


# The shapes whose templates ship compiled, in cubepy/ir/batched_shapes.py (a module, so
# Python caches its bytecode and a process need not compile() them): common shapes, and
# every shape of cubepy's own classes (write_shipped_shapes collects them).
COMMON_SHAPES: list[tuple] = sorted(
    [("__eq__", n) for n in range(13)] + [("__hash__", n) for n in range(13)]
    + [("__init__", n, 0, post_init) for n in range(13) for post_init in (False, True)]
    + [("__init__", 0, n, False) for n in range(1, 13)])


def shipped_shapes_text(shapes: list[tuple]) -> str:
    """The text of cubepy/ir/batched_shapes.py holding the templates of `shapes`."""
    return ('"""The method templates of batched dataclasses for common shapes and those of\n'
            "cubepy's own classes (see cubepy/ir/batched_dataclass.py), compiled like any\n"
            'module. Written by batched_dataclass.write_shipped_shapes(): do not edit."""\n'
            f"SHAPES = {shapes!r}\n\n"
            f"{_templates_text(shapes)}\n")


def cubepy_shapes() -> set[tuple]:
    """The shapes of every batched class in cubepy's modules (importing them all)."""
    import importlib
    import pkgutil
    import cubepy
    for info in pkgutil.walk_packages(cubepy.__path__, "cubepy."):
        if not info.name.endswith("__main__"):
            try:
                importlib.import_module(info.name)
            except Exception:  # (a module of an optional dependency)
                pass
    build_pending()
    return {shape for module, shapes in _module_shapes.items()
            if module.split(".")[0] == "cubepy" for shape in shapes}


def write_shipped_shapes() -> None:
    """Rewrites cubepy/ir/batched_shapes.py (after a change to _template_source or to
    the shape of one of cubepy's classes)."""
    from pathlib import Path
    shapes = sorted(set(COMMON_SHAPES) | cubepy_shapes(), key=repr)
    (Path(__file__).parent / "batched_shapes.py").write_text(shipped_shapes_text(shapes))


_shipped_positions: dict[tuple, int] = {}


def _shipped_index(batched_shapes: Any) -> dict[tuple, int]:
    """shape -> its position in batched_shapes.SHAPES (made once: classes are built
    one by one)."""
    if not _shipped_positions:
        _shipped_positions.update((shape, i) for i, shape in enumerate(batched_shapes.SHAPES))
    return _shipped_positions


def _shipped_templates(shapes: set[tuple]) -> dict[tuple, CodeType]:
    """The templates of `shapes` that ship compiled (batched_shapes.py)."""
    try:
        from . import batched_shapes
    except ImportError:
        return {}
    index = _shipped_index(batched_shapes)
    found = {}
    for shape in shapes:
        if shape in index:
            make = getattr(batched_shapes, f"make{index[shape]}")
            found[shape] = make(object.__setattr__).__code__
    return found
