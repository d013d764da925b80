"""Frozen dataclasses whose `__init__`s are compiled together, in one batch.

`dataclasses.dataclass` compiles five or six small functions per class, one `exec` each
(about 1 ms a class), and the IR's fifty node classes made that most of the import cost
of the compiler, so most of a cold kernel compile. `dataclass` below makes the same
classes for the options the IR uses (frozen, eq, kw_only; fields with a default,
`compare` or `repr`): the same `dataclasses.Field` objects in `__dataclass_fields__`, so
`dataclasses.fields`, `replace` and `is_dataclass` work; the same `__init__` signature,
`__repr__` text, `__eq__` and `__hash__` (the tuple of the compared fields),
`FrozenInstanceError` on assignment, `__match_args__` and `__doc__`. Only `__init__`
needs compiling, to stay as fast as the one dataclasses writes: it is compiled for every
class decorated since the last batch by one `compile()`, in `build_pending()` (a module
calls it after its classes) or on the first instantiation of any of them (a class may be
used as a default value inside its own module). The other methods are closures.

It reads two private details of `dataclasses` that have no public spelling: a field's
`_field_type` (set to `dataclasses._FIELD`, as `fields()` filters on it) and the
`_DataclassParams` record of `__dataclass_params__`; tests/test_batched_dataclass.py
compares every class made here with the one `dataclasses.dataclass` makes, so a Python
that changes either fails loudly there.
"""
from __future__ import annotations

import dataclasses
import reprlib
import sys
import threading
from dataclasses import MISSING, Field, FrozenInstanceError
from operator import attrgetter
from types import CellType, CodeType, FunctionType
from typing import Any, Callable, Optional, TypeVar, dataclass_transform

_T = TypeVar("_T", bound=type)

_lock = threading.Lock()
_pending: list[tuple[type, list[Field], list[Field]]] = []
# Set by dataclasses.dataclass on 3.13+ (copy.replace); absent before.
_REPLACE: Optional[Callable[..., Any]] = getattr(dataclasses, "_replace", None)


@dataclass_transform(field_specifiers=(dataclasses.field, Field))
def dataclass(cls: Optional[_T] = None, /, *, frozen: bool = True, eq: bool = True,
              kw_only: bool = False) -> Any:
    """`dataclasses.dataclass(frozen=True, eq=eq, kw_only=kw_only)`, with `__init__`
    compiled in a batch (module docstring). Only frozen classes: their instances never
    change, which is what lets them share one compile."""
    if not frozen:
        raise TypeError("batched_dataclass makes frozen dataclasses only")

    def wrap(cls: _T) -> _T:
        return _process(cls, eq, kw_only)

    return wrap if cls is None else wrap(cls)


def build_pending() -> None:
    """Compiles the `__init__`s of every class decorated and not built yet, in one go."""
    with _lock:
        batch = _pending[:]
        del _pending[:]
        if batch:
            _build(batch)


# ----------------------------------------------------------------------------- fields

def _process(cls: _T, eq: bool, kw_only: bool) -> _T:
    own = cls.__dict__
    if "__slots__" in own:
        raise TypeError(f"{cls.__name__}: batched dataclasses have no __slots__")
    fields: dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, "__dataclass_fields__", None)
        if base_fields is not None:
            if not getattr(base, "__dataclass_params__").frozen:
                raise TypeError(f"{cls.__name__}: a frozen dataclass of a mutable one")
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
    cls.__dataclass_params__ = _params(eq, kw_only)  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    field_list = list(fields.values())
    positional = [f for f in field_list if not f.kw_only]
    keyword = [f for f in field_list if f.kw_only]
    _check_defaults_order(cls, positional)

    if "__init__" not in own:
        cls.__init__ = _pending_init  # type: ignore[misc]
        _pending.append((cls, positional, keyword))
    _set_new(cls, "__repr__", _repr_fn(cls, [f.name for f in field_list if f.repr]))
    if eq:
        compared = [f.name for f in field_list if f.compare]
        _set_new(cls, "__eq__", _eq_fn(cls, compared))
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        if not explicit_hash:
            cls.__hash__ = _hash_fn(cls, compared)  # type: ignore[assignment]
    names = tuple(f.name for f in field_list)
    for method in ("__setattr__", "__delattr__"):
        if method in own:
            raise TypeError(f"cannot overwrite attribute {method} in class {cls.__name__}")
    cls.__setattr__ = _frozen_setattr(cls, names)  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr(cls, names)  # type: ignore[assignment]
    if _REPLACE is not None:
        _set_new(cls, "__replace__", _REPLACE)
    if not own.get("__doc__"):
        cls.__doc__ = cls.__name__ + _text_signature(positional, keyword)
    _set_new(cls, "__match_args__", tuple(f.name for f in positional))
    return cls


def _own_field(cls: type, name: str, ty: Any, kw_only: bool) -> Field:
    if isinstance(ty, str) and ty.strip("'\" ").split("[")[0].split(".")[-1].strip() in (
            "ClassVar", "InitVar", "KW_ONLY"):
        raise TypeError(f"{cls.__name__}.{name}: ClassVar, InitVar and KW_ONLY are not "
                        "supported by batched dataclasses")
    default = getattr(cls, name, MISSING)
    if isinstance(default, Field):
        f = default
    else:
        f = dataclasses.field(default=default)
    if f.default_factory is not MISSING or not f.init:
        raise TypeError(f"{cls.__name__}.{name}: default_factory and init=False are not "
                        "supported by batched dataclasses")
    if f.default is not MISSING and f.default.__class__.__hash__ is None:
        raise ValueError(f"mutable default {type(f.default)} for field {name} is not "
                         "allowed: use default_factory")
    f.name = name
    f.type = ty
    f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() keeps
    if f.kw_only is MISSING:
        f.kw_only = kw_only
    return f


def _check_defaults_order(cls: type, positional: list[Field]) -> None:
    seen_default = False
    for f in positional:
        if f.default is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


_params_cache: dict[tuple[bool, bool], Any] = {}


def _params(eq: bool, kw_only: bool) -> Any:
    """The `__dataclass_params__` dataclasses would set (its record grew fields in 3.12)."""
    params = _params_cache.get((eq, kw_only))
    if params is None:
        record = dataclasses._DataclassParams  # type: ignore[attr-defined]
        code = record.__init__.__code__
        wanted = dict(init=True, repr=True, eq=eq, order=False, unsafe_hash=False,
                      frozen=True, match_args=True, kw_only=kw_only, slots=False,
                      weakref_slot=False)
        names = code.co_varnames[1:code.co_argcount]
        params = _params_cache[(eq, kw_only)] = record(**{n: wanted[n] for n in names})
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


def _key_fn(names: list[str]) -> Callable[[Any], tuple]:
    """The tuple of the compared fields of an instance, as dataclasses compares them."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return attrgetter(*names)


def _eq_fn(cls: type, names: list[str]) -> Callable[[Any, Any], Any]:
    key = _key_fn(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    return __eq__


def _hash_fn(cls: type, names: list[str]) -> Callable[[Any], int]:
    key = _key_fn(names)

    def __hash__(self: Any) -> int:
        return hash(key(self))
    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


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


def _pending_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """Stands for `__init__` until the batch is built: builds it, then initialises."""
    build_pending()
    type(self).__init__(self, *args, **kwargs)


def _build(batch: list[tuple[type, list[Field], list[Field]]]) -> None:
    shapes = {(len(pos), len(kw), hasattr(cls, "__post_init__")) for cls, pos, kw in batch}
    templates = _templates(sorted(shapes - _template_code.keys()))
    _template_code.update(templates)
    for cls, positional, keyword in batch:
        template = _template_code[(len(positional), len(keyword),
                                   hasattr(cls, "__post_init__"))]
        names = [f.name for f in positional + keyword]
        rename = {_placeholder(i): name for i, name in enumerate(names)}
        code = template.replace(
            co_varnames=tuple(rename.get(v, v) for v in template.co_varnames),
            co_consts=tuple(rename.get(c, c) if isinstance(c, str) else c
                            for c in template.co_consts),
            co_name="__init__", co_qualname=f"{cls.__qualname__}.__init__")
        # The module's globals, as dataclasses gives them (get_type_hints of __init__
        # resolves the field types there); the defaults of the fields.
        init = FunctionType(code, sys.modules[cls.__module__].__dict__, "__init__",
                            tuple(f.default for f in positional if f.default is not MISSING)
                            or None, _SETATTR_CELL if code.co_freevars else None)
        init.__kwdefaults__ = {f.name: f.default for f in keyword
                               if f.default is not MISSING} or None
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init.__annotations__ = {**{f.name: f.type for f in positional + keyword},
                                "return": None}
        cls.__init__ = init  # type: ignore[misc]


# One compiled __init__ per shape (positional and keyword field counts, __post_init__),
# its fields named by placeholders that each class's copy renames (code.replace): the
# fifty node classes have a dozen shapes, and compiling is what costs.
_template_code: dict[tuple[int, int, bool], CodeType] = {}
# object.__setattr__, as dataclasses' __init__ assigns a frozen field: instances keep
# their values inline (no __dict__ is made), so reading a field stays as fast.
_SETATTR_CELL = (CellType(object.__setattr__),)


def _placeholder(i: int) -> str:
    return f"_batched_field_{i}_"


def _templates(shapes: list[tuple[int, int, bool]]) -> dict[tuple[int, int, bool], CodeType]:
    if not shapes:
        return {}
    lines = []
    for n_pos, n_kw, post_init in shapes:
        names = [_placeholder(i) for i in range(n_pos + n_kw)]
        params = ["self"] + names[:n_pos] + (["*"] + names[n_pos:] if n_kw else [])
        lines += [f"def make_{n_pos}_{n_kw}_{int(post_init)}(_setattr):",
                  f" def __init__({', '.join(params)}):"]
        lines += [f"  _setattr(self, {name!r}, {name})" for name in names]
        if post_init:
            lines.append("  self.__post_init__()")
        lines += ["  pass", " return __init__"]
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<batched dataclass __init__>", "exec"), namespace)
    return {(n_pos, n_kw, post_init):
            namespace[f"make_{n_pos}_{n_kw}_{int(post_init)}"](object.__setattr__).__code__
            for n_pos, n_kw, post_init in shapes}
