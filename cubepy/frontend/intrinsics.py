"""The handlers of the callables a kernel can call by name (cubepy intrinsics, math
functions, the Python builtins it understands, `Line`), in one registry, and the hook by
which the frontend recognises @cube device functions.

A handler is `fn(builder, call_node, site) -> value`, registered with
`@intrinsic("key", ...)` under the keys of values.CALLABLE_NAMES ("terminate",
"atomic_add", "math.exp", "builtins.len", "Line"); the call builder (calls.py) finds the
key of the called object and runs its handler. A new intrinsic is one handler here (plus
its entry in cubepy/lang.py or cubepy/math.py). Capability checks read
`cubepy.targets.PORTABLE`, what every built-in target supports.

Device functions are recognised through `register_inlinable` (kernel.py registers
CubeFunction and `cube`), so the frontend never imports kernel.py and, through it, the
runtimes.
"""
from __future__ import annotations

import ast
import math
from ..ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..ir import nodes as n
from ..ir.types import DType, LineType, bool_, dtype_from_name, elem_of, u32
from ..ir.ops import BOOL_MATH, BitOp
from ..lang import LineOf
from ..math import PUBLIC_MATH
from ..targets import PORTABLE, line_sizes_for
from .indexing import shared_dims
from .infer import find, resolve
from .values import Buf, Py, Tup, is_number

if TYPE_CHECKING:
    from .build import Builder


# -- the registry -----------------------------------------------------------------------
@dataclass(frozen=True)
class CallSite:
    """What a handler knows besides the call's ast."""

    name: str  # the name the intrinsic is known by in messages ("len", "exp", "atomic_add")
    want_value: bool = True  # False for a call statement (an atomic then keeps no result)
    shared_name: Optional[str] = None  # the name `SharedMemory(...)` is assigned to


Handler = Callable[["Builder", ast.Call, CallSite], Any]
_HANDLERS: dict[str, Handler] = {}


def intrinsic(*keys: str) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of the callables `keys` (keys of
    values.CALLABLE_NAMES: "terminate", "math.exp", "builtins.len", ...)."""
    def register(handler: Handler) -> Handler:
        for key in keys:
            if key in _HANDLERS:
                raise ValueError(f"two handlers for {key!r}")
            _HANDLERS[key] = handler
        return handler
    return register


def handler_for(key: str) -> Optional[Handler]:
    """The handler of the callable registered as `key`, or None."""
    handler = _HANDLERS.get(key)
    if handler is None and _import_registering(key):
        handler = _HANDLERS.get(key)
    return handler


def _lazy_modules(key: str) -> tuple[str, ...]:
    """The modules registering the handler of `key` that are imported at its first call:
    those of features few kernels use (matrix units, asynchronous copies, bit functions),
    which a first compile of a plain kernel then does not load."""
    if key.startswith("cmma.") or key == "tf32":
        return ("matrices", "warpgroup")
    if key.startswith("pipeline."):
        return ("pipeline_calls",)
    if key in _BIT_KEYS:
        return ("bits",)
    return ()


_BIT_KEYS = frozenset(op.value for op in BitOp)


def _import_registering(key: str) -> bool:
    """Imports the modules registering `key`'s handler; whether there were any."""
    import importlib
    modules = _lazy_modules(key)
    for module in modules:
        importlib.import_module(f"{__package__}.{module}")
    return bool(modules)


def _or_list(items) -> str:
    """"a, b or c"."""
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _listed(names) -> tuple[DType, ...]:
    """The element types called `names`, in the order messages list them: integers,
    then floats widest first, then bool."""
    types = [dtype_from_name(x) for x in names]
    return tuple(sorted(types, key=lambda t: (t.is_bool, t.is_float,
                                              -t.bits if t.is_float else t.bits, t.name)))


# -- Python builtins --------------------------------------------------------------------
@intrinsic("builtins.range")
def _range(b: Builder, node: ast.Call, site: CallSite):
    b.error("range() can only be used in a for loop: for i in range(n)", node)


@intrinsic("builtins.divmod")
def _divmod(b: Builder, node: ast.Call, site: CallSite):
    """`q, r = divmod(a, b)`: Python's `(a // b, a % b)` (floor semantics, every
    target), each operand evaluated once."""
    b.arity(node, "divmod", 2)
    lhs, rhs = (_once(b, b.expr(arg), "divmod_arg") for arg in node.args)
    # the results held in variables: the values at this line, read as often as needed
    return Tup(tuple(_once(b, b.binop(op, lhs, rhs, node, node.args[0], node.args[1]),
                           "divmod")
                     for op in (ast.FloorDiv(), ast.Mod())))


def _once(b: Builder, v, base: str):
    """An IR value read once (b.once); compile-time values and buffers unchanged."""
    return b.once(v, base) if isinstance(v, n.Expr) else v


@intrinsic("builtins.len")
def _len(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, "len", 1)
    buf = b.expr(node.args[0])
    if not isinstance(buf, Buf):  # a line value: its size, known at compile time
        return b.line_size_of(buf, node.args[0])
    if buf.start is not None:  # a view
        return buf.length
    if buf.is_kernel_array:
        return n.Const(ty=u32, value=buf.size, loc=b.ctx.loc)
    return n.Meta(ty=u32, kind="len", buffer=buf.ref, loc=b.ctx.loc)


_PY_CONVERSIONS = {"int": (int, "i32"), "float": (float, "f32"), "bool": (bool, "x != 0")}


@intrinsic("builtins.int", "builtins.float", "builtins.bool")
def _py_conversion(b: Builder, node: ast.Call, site: CallSite):
    name = site.name
    b.arity(node, name, 1)
    v = b.expr(node.args[0])
    convert, hint = _PY_CONVERSIONS[name]
    if isinstance(v, Py) and is_number(v.value):
        return Py(convert(v.value))
    if name == "float" and isinstance(v, Py) and isinstance(v.value, str):
        return Py(_float_of_text(b, v.value, node))
    b.error(f"{name}() works only on compile-time values: use {hint}"
            f"{'(...)' if name != 'bool' else ''} in a kernel", node)


def _float_of_text(b: Builder, text: str, node: ast.Call) -> float:
    """float("inf"), float("-inf"), float("nan"), float("1.5"): a compile-time float."""
    try:
        return float(text)
    except ValueError:
        b.error(f"float({text!r}) is not a number: use a decimal, 'inf', '-inf' or 'nan'",
                node.args[0])


@intrinsic("builtins.max", "builtins.min")
def _max_min(b: Builder, node: ast.Call, site: CallSite):
    """`max(a, b, ...)` / `min(...)` of two or more values: folded from the left into
    nested two-operand max/min (each with the NaN rule of docs/LANGUAGE.md)."""
    name = site.name
    if len(node.args) < 2:
        b.error(f"{name}() takes 2 or more values, got {len(node.args)} (a {name} over a "
                f"sequence is not supported in kernels: write {name}(a, b, c))", node)
    values = [b.expr(a) for a in node.args]
    if all(isinstance(v, Py) and is_number(v.value) for v in values):
        numbers = [v.value for v in values]
        return Py(max(numbers) if name == "max" else min(numbers))
    result = values[0]
    for value, arg in zip(values[1:], node.args[1:]):
        result = _max_min_pair(b, name, result, value, node.args[0], arg)
    return result


def _max_min_pair(b: Builder, name: str, x, y, xnode: ast.expr, ynode: ast.expr):
    u = b.ctx.unifier
    x, y = b.materialize(x, xnode), b.materialize(y, ynode)
    x, y = b.broadcast([x, y], f"in {name}()")
    ty = u.unify(x.ty, y.ty, b.ctx.loc, lambda p, q: (
        f"{name}() of {p} and {q}: cast one, e.g. "
        f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
    u.require(ty, lambda t: not t.is_bool, b.ctx.loc,
              lambda t: f"{name}() does not apply to bool")
    return n.Binary(ty=ty, op=name, lhs=x, rhs=y, loc=b.ctx.loc)


@intrinsic("builtins.abs")
def _abs(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, "abs", 1)
    v = b.expr(node.args[0])
    if isinstance(v, Py) and is_number(v.value):
        return Py(abs(v.value))
    e = b.materialize(v, node.args[0])
    b.ctx.unifier.require(e.ty, lambda t: not t.is_bool, b.ctx.loc,
                          lambda t: "abs() does not apply to bool")
    return n.Unary(ty=e.ty, op="abs", operand=e, loc=b.ctx.loc)


# -- math (cubepy.math, Python's math module, and the builtin round) ----------------------
# (frexp, modf, ldexp and round: math_calls.py)
@intrinsic(*(f"math.{f}" for f in PUBLIC_MATH if f not in ("frexp", "modf", "ldexp")))
def _math(b: Builder, node: ast.Call, site: CallSite):
    return math_call(b, node, site.name)


def math_call(b: Builder, node: ast.Call, name: str) -> n.Call:
    """A call of the math op `name` on arguments of one type: a float type (for clamp
    also an integer type)."""
    u = b.ctx.unifier
    b.arity(node, name, n.MATH_FUNCS[name])
    args = [b.rvalue(a) for a in node.args]
    args = b.broadcast(args, f"in {name}()")
    ty = args[0].ty
    for a in args[1:]:
        ty = u.unify(ty, a.ty, b.ctx.loc, lambda p, q: (
            f"{name}() arguments mix {p} and {q}: cast one, e.g. "
            f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
    if name == "clamp":  # clamp also orders integers
        u.require(ty, lambda t: not elem_of(t).is_bool, b.ctx.loc,
                  lambda t: "clamp() does not apply to bool")
    else:
        ty = u.require_float(ty, b.ctx.loc, lambda t: (
            f"{name}() needs float arguments, not {t}: cast it, e.g. f32(...)"))
    out = ty
    if name in BOOL_MATH:
        line = find(ty)
        out = LineType(bool_, line.size) if isinstance(line, LineType) else bool_
        if not isinstance(line, LineType):  # a line only later: not supported
            b.no_line(ty, f"{name}() of a value typed after the call")
    return n.Call(ty=out, func=name, args=tuple(args), loc=b.ctx.loc)


# -- cubepy intrinsics ----------------------------------------------------------------
@intrinsic("terminate")
def _control(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, site.name, 0)
    b.no_side_effects(site.name, node)
    loc = b.ctx.loc
    b.emit(n.Terminate(loc=loc) if site.name == "terminate" else n.Barrier(loc=loc))
    return Py(None)


@intrinsic("select")
def _select(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, "select", 3)
    c = b.expr(node.args[0])
    x, y = b.rvalue(node.args[1]), b.rvalue(node.args[2])
    if isinstance(c, Py):
        cond = n.Const(ty=bool_, value=b.truth(c, node.args[0]), loc=b.ctx.loc)
    elif isinstance(c, n.Expr) and isinstance(find(c.ty), LineType) and find(c.ty).is_bool:
        cond = c  # a line of bools: chooses per element
    else:
        cond = b.condition(c, node.args[0], "select()")
    return b.select(cond, x, y, "select()")


@intrinsic("unroll")
def _unroll(b: Builder, node: ast.Call, site: CallSite):
    b.error("unroll() can only be used in a for loop: for i in unroll(range(n))", node)


@intrinsic("Line")
def _line(b: Builder, node: ast.Call, site: CallSite):
    return b.make_line(node)


@intrinsic("Line.fill")
def _line_fill(b: Builder, node: ast.Call, site: CallSite):
    """`Line.fill(value, size)`: `value` broadcast to a line of `size` (known at compile
    time); size 1 is the scalar itself, so generic line code needs no special case."""
    b.arity(node, "Line.fill", 2)
    size = b.ct_int(b.expr(node.args[1]))
    if size is None or not 1 <= size <= 16:
        b.error("the size of Line.fill(value, size) must be an int from 1 to 16 known at "
                "compile time (e.g. x.line_size())", node.args[1])
    with b.at(node.args[0]):
        value = b.rvalue(node.args[0])
    if isinstance(find(value.ty), LineType):
        b.error("Line.fill(value, size) takes a scalar value, not a line", node.args[0])
    if size == 1:
        return value
    return b.splat(value, LineType(resolve(value.ty), size), "in Line.fill")


_VOTES = ("ballot", "elect")  # plane ops with a handler of their own (_plane_vote)


@intrinsic(*(f"plane_{op}" for op in n.PLANE_OPS if op not in _VOTES))
def _plane(b: Builder, node: ast.Call, site: CallSite):
    """`plane_<op>(value[, lane])`: evaluated once, as its own assignment, by the units
    that reach it (so never inside a short-circuit or conditional expression or a while
    condition, where only some of them would)."""
    name, u = site.name, b.ctx.unifier
    op = name[len("plane_"):]
    if op not in PORTABLE.plane_ops:
        b.error(f"{name}() is not a plane operation", node.func)
    takes_arg = n.PLANE_OPS[op]
    b.arity(node, name, 2 if takes_arg else 1)
    b.no_side_effects(name, node)
    with b.at(node.args[0]):
        value = b.rvalue(node.args[0])
        if op in ("all", "any"):
            u.unify(value.ty, bool_, b.ctx.loc, lambda x, y: (
                f"{name}() takes a bool (a condition), not {x}: compare it, e.g. x != 0"))
        else:
            # bool only where the value is moved, not combined (broadcast, shuffles)
            # (what some target has: a target lacking the type says so later)
            allowed = tuple(t for t in _listed(PORTABLE.plane_dtypes_any)
                            if takes_arg or not t.is_bool)
            # a line: the operation runs per element
            u.require(value.ty, lambda t: elem_of(t) in allowed, b.ctx.loc, lambda t: (
                f"{name}() takes {_or_list(a.name for a in allowed)} values, not {t.name}"))
    arg = None
    if takes_arg:
        what = {"shuffle_xor": "mask", "shuffle_up": "delta",
                "shuffle_down": "delta"}.get(op, "lane")
        with b.at(node.args[1]):
            arg = b.rvalue(node.args[1])
            u.unify(arg.ty, u32, b.ctx.loc, lambda x, y: (
                f"the {what} of {name}() must be u32, not {x}: cast it, e.g. u32(...)"))
    result = b.new_var(name, value.ty)
    b.use(result)
    loc = b.ctx.loc
    b.emit(n.Assign(var=result, value=n.Plane(ty=value.ty, op=op, value=value, arg=arg,
                                              loc=loc), loc=loc))
    return n.Load(ty=value.ty, var=result, loc=loc)


@intrinsic("plane_ballot", "plane_elect")
def _plane_vote(b: Builder, node: ast.Call, site: CallSite):
    """`plane_ballot(c)`: a Line of 4 u32 words (lane i is bit i % 32 of word i // 32),
    one plane operation per word on the condition evaluated once; `plane_elect()`: a
    bool, true on the lowest active lane only."""
    name, loc = site.name, b.ctx.loc
    b.no_side_effects(name, node)
    if name == "plane_elect":
        b.arity(node, name, 0)
        return _plane_assign(b, name, "elect", n.Const(ty=bool_, value=True, loc=loc), None)
    b.arity(node, name, 1)
    with b.at(node.args[0]):
        cond = b.condition(b.expr(node.args[0]), node.args[0], f"{name}()")
        cond = b.once(cond, "vote")  # the condition once, for 4 words
    words = tuple(_plane_assign(b, name, "ballot", cond, n.Const(ty=u32, value=k, loc=loc))
                  for k in range(4))
    return n.MakeLine(ty=LineType(u32, 4), elems=words, loc=loc)


def _plane_assign(b: Builder, name: str, op: str, value: n.Expr, arg) -> n.Load:
    """`op` as its own assignment to a fresh variable; its load."""
    ty = n.plane_type(op, value.ty)
    result = b.new_var(name, ty)
    b.use(result)
    loc = b.ctx.loc
    b.emit(n.Assign(var=result, value=n.Plane(ty=ty, op=op, value=value, arg=arg, loc=loc),
                    loc=loc))
    return n.Load(ty=ty, var=result, loc=loc)


@intrinsic("sync_cube", "sync_plane", "fence_cube", "fence_device")
def _sync(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, site.name, 0)
    b.no_side_effects(site.name, node)
    b.emit(n.Barrier(op=site.name, loc=b.ctx.loc))
    return Py(None)


@intrinsic("SharedMemory")
def _shared_memory(b: Builder, node: ast.Call, site: CallSite) -> Buf:
    target = site.shared_name
    if target is None:
        b.error("SharedMemory(...) must be assigned to a name: "
                "buf = SharedMemory(f32, 256)", node)
    b.arity(node, "SharedMemory", 2, 3)
    kind = b.expr(node.args[0])
    line = 1
    if isinstance(kind, Py) and isinstance(kind.value, LineOf):  # lines of shared memory
        if len(node.args) != 3:
            b.error("SharedMemory(Line[T], size, line_size): the line size is the third "
                    "argument, e.g. x.line_size()", node)
        line = b.ct_int(b.expr(node.args[2]))
        kind = Py(kind.value.elem)
    elif len(node.args) == 3:
        b.error("a line size needs a Line element type: SharedMemory(Line[T], size, "
                "line_size)", node.args[2])
    ty = b.as_type(kind, node.args[0])
    if not isinstance(ty, DType):
        b.error("the element type of SharedMemory must be known here", node.args[0])
    sizes = line_sizes_for(ty, PORTABLE.line_sizes)
    if len(node.args) == 3 and (line is None or line not in sizes):
        b.error(f"the line size of SharedMemory must be {_or_list(sizes)}, "
                f"known at compile time (e.g. x.line_size())", node.args[2])
    dims = shared_dims(b, node.args[1])
    size = math.prod(dims)
    ctx = b.ctx
    name = target if ctx.frame.is_kernel else ctx.names.fresh(target)
    ref = n.BufferRef(name, ty, "shared")
    ctx.shared.append(n.SharedDecl(ref, size * line, ctx.loc))
    return Buf(ref, "shared", size, line=line, shape=dims if len(dims) > 1 else None)


_ATOMIC_ARITY = {"compare_exchange": 4, "load": 2}  # others: (buffer, index, value)


@intrinsic(*(f"atomic_{op}" for op in n.ATOMIC_OPS))
def _atomic(b: Builder, node: ast.Call, site: CallSite):
    name = site.name
    op = name[len("atomic_"):]
    b.arity(node, name, _ATOMIC_ARITY.get(op, 3))
    b.no_side_effects(name, node)
    buf = b.expr(node.args[0])
    if not isinstance(buf, Buf):
        b.error(f"{name}() takes a tensor, an array or shared memory first", node.args[0])
    if buf.kind == "local":
        b.error(f"{name}() on the LocalArray {buf.ref.name!r}: a local array belongs to "
                f"one unit, so no other unit can race on it; read and write it instead",
                node.args[0])
    if buf.line > 1 and buf.kind == "shared":
        b.error(f"{name}() on a shared Line buffer ({buf.ref.name!r}) is not supported; "
                f"use a Line tensor or a shared buffer of single elements", node.args[0])
    _check_atomic_elem(b, name, op, buf, node.args[0])
    index = b.buffer_index(buf, node.args[1])
    values = []
    for a in node.args[2:]:
        with b.at(a):
            v = b.unify_elem(buf, b.rvalue(a), f"use in {name}()")  # a scalar: broadcast
        values.append(v)
    result = None
    if site.want_value:
        if op == "store":
            b.error("atomic_store() gives no value", node)
        result = b.new_var("old", buf.value_type)  # a line buffer: one atomic per element
        b.use(result)
    compare = values[0] if op == "compare_exchange" else None
    b.emit(n.AtomicOp(op=op, buffer=buf.ref, index=index,
                      value=values[-1] if values else None, compare=compare,
                      result=result, loc=b.ctx.loc))
    if result is None:
        return Py(None)
    return n.Load(ty=result.ty, var=result, loc=b.ctx.loc)


def _check_atomic_elem(b: Builder, name: str, op: str, buf: Buf, where: ast.AST) -> None:
    """A CompileError unless some built-in target has atomic `op` on the buffer's
    element type. Types only some targets have (i64 on CUDA) pass here; the legalize
    pass names a target that lacks one."""
    elem = buf.ref.elem
    if elem.name in PORTABLE.atomic_dtypes_anywhere.get(op, ()):
        return
    everywhere = _listed(PORTABLE.atomic_dtypes.get(op, ()))
    ints = [t.name for t in everywhere if not t.is_float]
    floats = [t.name for t in everywhere if t.is_float]
    some = [t.name for t in _listed(PORTABLE.atomic_dtypes_anywhere.get(op, ()))
            if t not in everywhere]
    b.error(f"{name}() needs {_or_list(ints)} elements"
            f"{f' (or {_or_list(floats)})' if floats else ''}"
            f"{f'; {_or_list(some)} on some targets' if some else ''}, but "
            f"{buf.ref.name!r} holds {elem.name}", where)


# -- local arrays ---------------------------------------------------------------------
MAX_LOCAL_BYTES = 512 * 1024  # per unit, all LocalArrays together: CUDA's local memory


@intrinsic("LocalArray")
def _local_array(b: Builder, node: ast.Call, site: CallSite) -> Buf:
    """`LocalArray(T, n)` / `LocalArray(Line[T], n, line_size)`: an array of each unit
    (CUDA/Metal `T a[n]`, WGSL `var<private>`), zero-filled when the kernel starts. Like
    SharedMemory it is declared once per kernel however often the call runs (in a loop it
    is the same array in every iteration)."""
    if site.shared_name is None:
        b.error("LocalArray(...) must be assigned to a name: a = LocalArray(f32, 8)", node)
    b.arity(node, "LocalArray", 2, 3)
    ty, line = _array_element(b, node, "LocalArray")
    size = b.ct_int(b.expr(node.args[1]))
    if size is None:
        b.error("the size of LocalArray must be known at compile time (a literal, a "
                "constant or a Comptime[int] parameter)", node.args[1])
    if size <= 0:
        b.error(f"the size of LocalArray must be positive, not {size}", node.args[1])
    ctx = b.ctx
    used = sum(d.size * d.buffer.elem.itemsize for d in ctx.local_arrays)
    if used + size * line * ty.itemsize > MAX_LOCAL_BYTES:
        b.error(f"LocalArray({ty.name}, {size}) takes {size * line * ty.itemsize} bytes of "
                f"each unit{f' after {used} in earlier ones' if used else ''}: a kernel's "
                f"local arrays hold at most {MAX_LOCAL_BYTES} bytes per unit (CUDA's "
                f"local memory per thread); use shared or global memory", node)
    taken = {d.buffer.name for d in ctx.shared} | {d.buffer.name for d in ctx.local_arrays}
    name = site.shared_name
    if not ctx.frame.is_kernel or name in taken:
        name = ctx.names.fresh(name)
        while name in taken:  # fresh to the variables, but an array's already
            name = ctx.names.fresh(site.shared_name)
    ref = n.BufferRef(name, ty, "local")
    ctx.local_arrays.append(n.LocalDecl(ref, size * line, ctx.loc))
    return Buf(ref, "local", size, line=line)


def _array_element(b: Builder, node: ast.Call, what: str,
                   line_arg: int = 2) -> tuple[DType, int]:
    """The element type and line size of `what(T, ...)` / `what(Line[T], ...,
    line_size)`, whose line size is argument `line_arg` (the last)."""
    form = f"{what}(Line[T], {'size, ' if line_arg == 2 else ''}line_size)"
    kind = b.expr(node.args[0])
    line = 1
    if isinstance(kind, Py) and isinstance(kind.value, LineOf):
        if len(node.args) != line_arg + 1:
            b.error(f"{form}: the line size is the last argument, e.g. x.line_size()",
                    node)
        line = b.ct_int(b.expr(node.args[line_arg]))
        if line is None or line not in PORTABLE.line_sizes:
            b.error(f"the line size of {what} must be {_or_list(PORTABLE.line_sizes)}, "
                    f"known at compile time (e.g. x.line_size())", node.args[line_arg])
        kind = Py(kind.value.elem)
    elif len(node.args) == line_arg + 1:
        b.error(f"a line size needs a Line element type: {form}", node.args[line_arg])
    ty = b.as_type(kind, node.args[0])
    if not isinstance(ty, DType):
        b.error(f"the element type of {what} must be known here", node.args[0])
    return ty, line


# -- dynamic shared memory ---------------------------------------------------------------
@intrinsic("DynamicSharedMemory")
def _dynamic_shared_memory(b: Builder, node: ast.Call, site: CallSite) -> Buf:
    """`DynamicSharedMemory(T)` / `DynamicSharedMemory(Line[T], line_size)`: shared memory
    whose byte size is the launch's `shared_mem=` (CUDA's `extern __shared__ T s[]` with
    `<<<grid, block, bytes>>>`). Each size is a specialisation of its own: on every target
    the array is then an ordinary SharedMemory of shared_mem // sizeof(element) elements.
    As in CUDA every DynamicSharedMemory of a kernel is the same memory: a second call
    (a loop, a device function called twice) gives the same array."""
    if site.shared_name is None:
        b.error("DynamicSharedMemory(...) must be assigned to a name: "
                "s = DynamicSharedMemory(f32)", node)
    b.arity(node, "DynamicSharedMemory", 1, 2)
    ty, line = _array_element(b, node, "DynamicSharedMemory", line_arg=1)
    ctx = b.ctx
    found = ctx.dynamic_shared
    if found is not None:
        if found.ref.elem is not ty or found.line != line:
            b.error(f"this kernel's DynamicSharedMemory already holds {found.value_type} "
                    f"({found.ref.name!r}); every DynamicSharedMemory of a kernel is the "
                    f"same memory, so it has one element type", node)
        return found
    nbytes = ctx.spec.shared_mem
    if nbytes is None:
        b.error("the size of DynamicSharedMemory is given at launch: "
                "kernel.launch(..., shared_mem=<bytes>) (source(), ir(): shared_mem=...)",
                node)
    size = nbytes // (ty.itemsize * line)
    if size <= 0:
        b.error(f"shared_mem={nbytes} bytes holds no {ty.name}"
                f"{f' line of {line}' if line > 1 else ''} element: DynamicSharedMemory "
                f"needs at least {ty.itemsize * line} bytes", node)
    name = site.shared_name if ctx.frame.is_kernel else ctx.names.fresh(site.shared_name)
    ref = n.BufferRef(name, ty, "shared")
    ctx.shared.append(n.SharedDecl(ref, size * line, ctx.loc))
    ctx.dynamic_shared = Buf(ref, "shared", size, line=line)
    return ctx.dynamic_shared


from . import math_calls  # noqa: E402,F401  (registers frexp, modf, ldexp, round)
# (bits, matrices, warpgroup and pipeline_calls register theirs at a first call: handler_for)
