"""Decoration-time parsing: source -> ast, the syntax whitelist, parameter annotations.

`parse_function` runs once per @cube function. It reads the source once, fixes line and
column numbers to the user's file, rejects every construct the kernel language lacks
(an unknown ast node is an error by default), evaluates the parameter annotations and
records which names the body assigns (used by the builder for scoping).
"""
from __future__ import annotations

import ast
import builtins
import inspect
import os
import sys
import textwrap
import typing
from dataclasses import field, replace
from typing import Any, Callable

from ..ir.batched_dataclass import dataclass  # (cheap to create)
from ..errors import CompileError, compile_error
from ..ir.nodes import Loc
from ..ir.types import DType, Generic, bool_, f32, i32
from ..lang import BufferAnnotation, ComptimeAnnotation, LineOf
from ..records import is_struct, leaf_fields
from .inlinable import is_cube_decorator
from ..params import ParamInfo  # (defined without the frontend: cached signatures)


@dataclass(frozen=False)
class ParsedFunction:
    """A @cube function after parsing: its ast, parameters and name environment."""

    name: str
    params: tuple[ParamInfo, ...]
    generics: dict[str, Generic]
    loc: Loc
    tree: ast.FunctionDef
    filename: str
    fn: Callable
    is_kernel: bool
    returns: Any = None  # evaluated return annotation (DType/Generic) or None
    arg_names: tuple[str, ...] = ()  # the parameters as written (a struct is one)
    structs: dict[str, type] = field(default_factory=dict)  # struct parameter -> class
    # names assigned by `=`/`+=`/annotated assignment, with how often (augmented counts 2)
    assign_counts: dict[str, int] = field(default_factory=dict)
    for_targets: set[str] = field(default_factory=set)
    top_assigned: set[str] = field(default_factory=set)  # assigned in the top-level block
    returns_inside: set[int] = field(default_factory=set)  # ids of stmts holding a return
    returns_value: bool = False  # some `return <value>`
    early_return: bool = False  # a return anywhere but as the last top-level statement
    # names of the enclosing function that the annotations read (they are not closure
    # cells: Python evaluates annotations in the enclosing scope at the `def`)
    enclosing: dict[str, Any] = field(default_factory=dict)
    # every free name resolved so far (annotations, body) and what it was: the
    # dependencies the disk cache of compiled kernels re-checks (spec_cache.py)
    lookups: dict[str, Any] = field(default_factory=dict)

    def lookup_global(self, name: str) -> tuple[bool, Any]:
        """(found, value) of a free name: closure, then the enclosing function's names
        (annotations), then globals, then Python builtins."""
        found, value = self._lookup(name)
        if found:
            self.lookups[name] = value
        return found, value

    def _lookup(self, name: str) -> tuple[bool, Any]:
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                return True, cell.cell_contents
            except ValueError:  # a cell not yet filled (defined later in the function)
                return False, None
        if name in self.enclosing:
            return True, self.enclosing[name]
        g = self.fn.__globals__
        if name in g:
            return True, g[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def make_loc(filename: str, node: ast.AST) -> Loc:
    end = getattr(node, "end_col_offset", None)
    if getattr(node, "end_lineno", None) != getattr(node, "lineno", None):
        end = None
    return Loc(filename, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), end)


# ----------------------------------------------------------------------------- whitelist

_ALLOWED = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For, ast.While,
    ast.Break, ast.Continue, ast.Return, ast.Pass,
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.Call, ast.Constant,
    ast.Name, ast.Attribute, ast.Subscript, ast.Tuple,
    ast.Load, ast.Store, ast.And, ast.Or,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift,
    ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.Invert, ast.Not, ast.UAdd, ast.USub,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
    ast.Match, ast.match_case, ast.MatchValue, ast.MatchAs, ast.MatchOr, ast.MatchSingleton,
    ast.Slice,  # only in x[a:b] (a view)
)

_REJECTED: dict[type, str] = {
    ast.ListComp: "list comprehensions are not supported in kernels",
    ast.SetComp: "set comprehensions are not supported in kernels",
    ast.DictComp: "dict comprehensions are not supported in kernels",
    ast.GeneratorExp: "generator expressions are not supported in kernels",
    ast.Lambda: "lambda is not supported in kernels: write a @cube function instead",
    ast.Try: "try/except is not supported in kernels",
    ast.With: "with statements are not supported in kernels",
    ast.AsyncWith: "async with is not supported in kernels",
    ast.ClassDef: "class definitions are not supported in kernels",
    ast.FunctionDef: "nested functions are not supported: define a @cube function at "
                     "module level",
    ast.AsyncFunctionDef: "async functions are not supported in kernels",
    ast.Global: "global is not supported in kernels",
    ast.Nonlocal: "nonlocal is not supported in kernels",
    ast.Yield: "yield is not supported in kernels",
    ast.YieldFrom: "yield from is not supported in kernels",
    ast.Await: "await is not supported in kernels",
    ast.JoinedStr: "f-strings are not supported in kernels",
    ast.Starred: "starred arguments (*x) are not supported in kernels",
    ast.Lambda: "lambda is not supported in kernels: write a @cube function instead",
    ast.List: "lists are not supported in kernels: use SharedMemory or a Tensor/Array",
    ast.Dict: "dicts are not supported in kernels",
    ast.Set: "sets are not supported in kernels",
    ast.NamedExpr: "the walrus operator (:=) is not supported in kernels",
    ast.Delete: "del is not supported in kernels",
    ast.Import: "import is not supported inside kernels: import at module level",
    ast.ImportFrom: "import is not supported inside kernels: import at module level",
    ast.Raise: "raise is not supported in kernels",
    ast.Assert: "assert is not supported in kernels",
    ast.MatMult: "the @ operator is not supported in kernels",
    ast.Is: "'is' is not supported in kernels: use ==",
    ast.IsNot: "'is not' is not supported in kernels: use !=",
    ast.In: "'in' is not supported in kernels",
    ast.NotIn: "'not in' is not supported in kernels",
    ast.AsyncFor: "async for is not supported in kernels",
}
if hasattr(ast, "TryStar"):
    _REJECTED[ast.TryStar] = "try/except* is not supported in kernels"
# match: integer, bool and comptime subjects with literal patterns (frontend/pyforms.py)
_REJECTED.update({
    ast.MatchSequence: "sequence patterns (case [a, b]:) are not supported in kernels: "
                       "match literal values (case 1 | 2:)",
    ast.MatchMapping: "mapping patterns (case {...}:) are not supported in kernels: "
                      "match literal values (case 1 | 2:)",
    ast.MatchClass: "class patterns (case C(...):) are not supported in kernels: match "
                    "literal values (case 1 | 2:)",
    ast.MatchStar: "star patterns (*rest) are not supported in kernels",
})


class _Whitelist:
    """Rejects unsupported syntax, at the offending node."""

    def __init__(self, filename: str):
        self.filename = filename

    def error(self, node: ast.AST, msg: str):
        compile_error(make_loc(self.filename, node), msg)

    def body(self, stmts: list[ast.stmt], docstring_ok: bool = False) -> None:
        for i, s in enumerate(stmts):
            if (i == 0 and docstring_ok and isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)):
                continue
            self.visit(s)

    def visit(self, node: ast.AST, parent: ast.AST | None = None) -> None:
        t = type(node)
        where = node if hasattr(node, "lineno") else parent  # operators have no position
        if t in _REJECTED:
            self.error(where, _REJECTED[t])
        if t not in _ALLOWED:
            self.error(where, f"unsupported syntax in a kernel: {t.__name__}")
        if t is ast.Constant:
            v = node.value
            if isinstance(v, str):
                self.error(node, "strings can only be compared with a Comptime[str] "
                                 "parameter (e.g. if tag == \"zero\":)")
            if not isinstance(v, (bool, int, float)):
                self.error(node, f"the constant {v!r} cannot be used in a kernel")
            return
        if t is ast.MatchValue and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            return  # a string pattern: matched against a Comptime[str] subject
        if t is ast.Compare:
            for operand in [node.left, *node.comparators]:
                if not (isinstance(operand, ast.Constant) and isinstance(operand.value, str)):
                    self.visit(operand, node)
            for op in node.ops:
                self.visit(op, node)
            return
        if t is ast.Call:
            if node.keywords:
                self.error(node.keywords[0].value if node.keywords[0].arg is None
                           else node.keywords[0], "keyword arguments are not supported in "
                                                  "kernels: pass arguments by position")
            if _is_float_of_text(node):  # float("inf"): the text is the literal
                return self.visit(node.func, node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr_context):
                continue
            self.visit(child, node)


def _is_float_of_text(node: ast.Call) -> bool:
    """`float("inf")` (and "-inf", "nan", ...): a float literal written as text."""
    return (isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str))


# ----------------------------------------------------------------------------- nesting

MAX_NESTING = 1000  # expressions and blocks nested in one function (docs/LANGUAGE.md)


def _check_nesting(filename: str, fdef: ast.FunctionDef) -> None:
    """Rejects a body nested deeper than MAX_NESTING (every node counts: the statement
    `out[i] = a + b + ...` of n terms nests n + 2 deep), measured without recursion so
    that any depth gets this error rather than a RecursionError."""
    stack: list[tuple[ast.AST, int]] = [(s, 1) for s in fdef.body]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            compile_error(make_loc(filename, node),
                          f"this code is nested more than {MAX_NESTING} levels deep "
                          f"(expressions and blocks), the compiler's limit: split the "
                          f"expression with intermediate variables")
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node)
                     if isinstance(c, (ast.expr, ast.stmt)))


# ----------------------------------------------------------------------------- scan

def _scan(parsed: ParsedFunction) -> None:
    """Records assigned names, loop targets and statements holding a return."""
    counts = parsed.assign_counts

    def target_names(t: ast.AST, weight: int) -> None:
        if isinstance(t, ast.Name):
            counts[t.id] = counts.get(t.id, 0) + weight
        elif isinstance(t, ast.Tuple):
            for e in t.elts:
                target_names(e, weight)

    def walk(stmts: list[ast.stmt], top: bool) -> bool:
        has_return = False
        for s in stmts:
            inner = False
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    target_names(t, 1)
                    if top and isinstance(t, ast.Name):
                        parsed.top_assigned.add(t.id)
            elif isinstance(s, ast.AnnAssign):
                target_names(s.target, 1)
                if top and isinstance(s.target, ast.Name):
                    parsed.top_assigned.add(s.target.id)
            elif isinstance(s, ast.AugAssign):
                target_names(s.target, 2)
            elif isinstance(s, ast.For):
                for t in ast.walk(s.target):  # `i` or `i, x` (enumerate, zip)
                    if isinstance(t, ast.Name):
                        parsed.for_targets.add(t.id)
                inner = walk(s.body, False) | walk(s.orelse, False)
            elif isinstance(s, ast.While):
                inner = walk(s.body, False) | walk(s.orelse, False)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    for p in ast.walk(case.pattern):  # captures: `case x:`, `case 1 as x:`
                        if isinstance(p, ast.MatchAs) and p.name is not None:
                            counts[p.name] = counts.get(p.name, 0) + 1
                    inner |= walk(case.body, False)
            elif isinstance(s, ast.If):
                inner = walk(s.body, False) | walk(s.orelse, False)
            elif isinstance(s, ast.Return):
                inner = True
                parsed.returns_value |= s.value is not None
                if not (top and s is parsed.tree.body[-1]):
                    parsed.early_return = True
            if inner:
                parsed.returns_inside.add(id(s))
                has_return = True
        return has_return

    walk(parsed.tree.body, True)


# ----------------------------------------------------------------------------- annotations

def _eval_annotation(parsed: ParsedFunction, node: ast.expr) -> Any:
    """Evaluates an annotation expression (a Name/Attribute/Subscript chain) in the
    function's namespace, without running arbitrary code. An exception raised on the
    way (a property, a module __getattr__, a failing __getitem__) is a CompileError."""
    try:
        return _eval_annotation_node(parsed, node)
    except CompileError:
        raise
    except Exception as exc:
        compile_error(make_loc(parsed.filename, node), f"evaluating the annotation "
                      f"{ast.unparse(node)} raised {type(exc).__name__}: {exc}")


def _eval_annotation_node(parsed: ParsedFunction, node: ast.expr) -> Any:
    loc = make_loc(parsed.filename, node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            compile_error(loc, f"invalid annotation {node.value!r}")
        inner = ast.fix_missing_locations(ast.copy_location(inner, node))
        for sub in ast.walk(inner):
            sub.lineno, sub.col_offset = node.lineno, node.col_offset
            sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
        return _eval_annotation(parsed, inner)
    if isinstance(node, ast.Name):
        found, value = parsed.lookup_global(node.id)
        if not found:
            compile_error(loc, f"unknown name {node.id!r} in annotation")
        return value
    if isinstance(node, ast.Attribute):
        base = _eval_annotation(parsed, node.value)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            compile_error(loc, f"{ast.unparse(node.value)} has no attribute {node.attr!r}")
    if isinstance(node, ast.Subscript):
        base = _eval_annotation(parsed, node.value)
        index = _eval_annotation(parsed, node.slice)
        try:
            return base[index]
        except Exception as exc:  # the annotation factories raise TypeError with a reason
            compile_error(loc, f"invalid annotation {ast.unparse(node)}: {exc}")
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Tuple):  # the items of tuple[f32, i32]
        return tuple(_eval_annotation(parsed, e) for e in node.elts)
    compile_error(loc, f"invalid annotation {ast.unparse(node)}: expected Tensor[T], "
                       f"Array[T], a dtype, a placeholder or Comptime[T]")


# Python's scalar types as annotations: `x: int`, `-> bool`, `n: float = 0`
PY_SCALAR_TYPES: dict[type, DType] = {bool: bool_, int: i32, float: f32}


def python_scalar_type(ann: Any) -> Any:
    """`bool`, `int`, `float` as the dtype they stand for (bool_, i32, f32); any other
    annotation unchanged."""
    if isinstance(ann, type) and ann in PY_SCALAR_TYPES:
        return PY_SCALAR_TYPES[ann]
    return ann


def _return_annotation(parsed: ParsedFunction, node: ast.expr) -> Any:
    """A device function's return type: a dtype, a placeholder, Line[...], or a tuple
    of them (`-> tuple[f32, i32]`, for `return a, b`)."""
    ann = python_scalar_type(_eval_annotation(parsed, node))
    if ann is None:
        return None
    if typing.get_origin(ann) is tuple:
        items = tuple(python_scalar_type(a) for a in typing.get_args(ann))
        if items and all(isinstance(a, (DType, Generic, LineOf)) for a in items):
            return items
    elif isinstance(ann, (DType, Generic, LineOf)):
        return ann
    compile_error(make_loc(parsed.filename, node),
                  f"invalid return annotation {ast.unparse(node)}: expected a dtype, a "
                  f"placeholder, Line[...], bool/int/float or tuple[...] of them")


def _param_infos(parsed: ParsedFunction, arg: ast.arg, is_kernel: bool) -> list[ParamInfo]:
    """The parameters `arg` stands for: itself, or one per leaf field of a kernel's
    @cubepy.struct parameter (`cfg.scale`, `cfg.x`: records.py)."""
    ann = None if arg.annotation is None else _eval_annotation(parsed, arg.annotation)
    if not is_struct(ann):
        return [_param_info(parsed, arg, is_kernel, ann)]
    loc = make_loc(parsed.filename, arg)
    if not is_kernel:
        return [ParamInfo(arg.arg, "struct", ann, None, loc)]
    parsed.structs[arg.arg] = ann
    out = []
    for path, field_ann in leaf_fields(ann, arg.arg):
        if isinstance(field_ann, BufferAnnotation):
            out.append(ParamInfo(path, field_ann.kind, field_ann.elem, None, loc))
        elif isinstance(field_ann, ComptimeAnnotation):
            out.append(ParamInfo(path, "comptime", None, field_ann.pytype, loc))
        else:
            out.append(ParamInfo(path, "scalar", field_ann, None, loc))
    return out


def _name_struct_fields(parsed: ParsedFunction) -> None:
    """Gives each struct field parameter an identifier (`cfg.scale` -> `cfg_scale`) that
    no name of the function takes."""
    taken = set(parsed.arg_names) | set(parsed.assign_counts) | parsed.for_targets
    named = []
    for p in parsed.params:
        if "." in p.name:
            base = symbol = p.name.replace(".", "_")
            k = 1
            while symbol in taken:
                symbol, k = f"{base}_{k}", k + 1
            taken.add(symbol)
            p = replace(p, symbol=symbol)
        named.append(p)
    parsed.params = tuple(named)


def _param_info(parsed: ParsedFunction, arg: ast.arg, is_kernel: bool,
                ann: Any) -> ParamInfo:
    loc = make_loc(parsed.filename, arg)
    if arg.annotation is None:
        if is_kernel:
            compile_error(loc, f"kernel parameter {arg.arg!r} needs an annotation "
                               f"(Tensor[T], Array[T], a dtype or Comptime[T])")
        return ParamInfo(arg.arg, "scalar", None, None, loc)
    ann = python_scalar_type(ann)
    aloc = make_loc(parsed.filename, arg.annotation)
    if isinstance(ann, BufferAnnotation):
        return ParamInfo(arg.arg, ann.kind, ann.elem, None, loc)
    if isinstance(ann, ComptimeAnnotation):
        return ParamInfo(arg.arg, "comptime", None, ann.pytype, loc)
    if isinstance(ann, (DType, Generic, LineOf)):
        return ParamInfo(arg.arg, "scalar", ann, None, loc)
    compile_error(aloc, f"invalid annotation for parameter {arg.arg!r}: expected "
                        f"Tensor[T], Array[T], a dtype, a placeholder, Comptime[T] or a "
                        f"@cubepy.struct, not {ann!r}")


def _collect_generics(parsed: ParsedFunction) -> None:
    def add(elem):
        if isinstance(elem, LineOf):
            elem = elem.elem
        if isinstance(elem, Generic):
            parsed.generics[elem.name] = elem
    for p in parsed.params:
        add(p.elem)
    for r in (parsed.returns if isinstance(parsed.returns, tuple) else (parsed.returns,)):
        add(r)
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id not in parsed.assign_counts:
            # (not recorded as a dependency: a parameter may share a global's name)
            found, value = parsed._lookup(node.id)
            if found and isinstance(value, Generic):
                parsed.generics[value.name] = value


def _check_decorators(parsed: ParsedFunction, node: ast.FunctionDef) -> None:
    values = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        value = None
        try:
            value = _eval_annotation(parsed, target)
        except CompileError:
            pass
        values.append(value)
    # Decorators above @cube (such as @cubepy.autotune) wrap the finished kernel; one
    # below it would change the function cubepy compiles.
    first_cube = next((k for k, v in enumerate(values) if is_cube_decorator(v)), 0)
    for dec, value in zip(node.decorator_list[first_cube:], values[first_cube:]):
        if not is_cube_decorator(value):
            compile_error(make_loc(parsed.filename, dec),
                          "a @cube function takes no other decorators below @cube")


def _enclosing_names(fn: Callable, fdef: ast.FunctionDef) -> dict[str, Any]:
    """The local names of the function whose body defines `fn` (found on the stack at
    decoration: the first caller outside cubepy, when its code holds fn's code) that
    fn's source reads and that are not closure cells: the names only its annotations
    use, which Python evaluates in that scope (`def k(x: Array[T])` inside a factory
    taking T). Empty for a module-level function."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
    # (not frame.f_locals here: reading it makes the frame keep a snapshot of every
    # local, so the caller's tensors would live as long as its frame)
    if frame is None or not frame.f_code.co_flags & inspect.CO_NEWLOCALS \
            or fn.__code__ not in frame.f_code.co_consts:
        return {}
    # Only names inside annotations: a name the body reads is a closure cell already,
    # and holding other locals (the caller's tensors) would keep them alive.
    args = fdef.args
    annotations = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs
                   if a.annotation is not None]
    annotations += [fdef.returns] if fdef.returns is not None else []
    annotations += [node.annotation for node in ast.walk(fdef)
                    if isinstance(node, ast.AnnAssign)]
    wanted: set[str] = set()
    for ann in annotations:
        for node in ast.walk(ann):
            if isinstance(node, ast.Name):
                wanted.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:  # a string annotation: "Array[T]"
                    wanted |= {x.id for x in ast.walk(ast.parse(node.value, mode="eval"))
                               if isinstance(x, ast.Name)}
                except SyntaxError:
                    pass
    wanted -= set(fn.__code__.co_freevars)
    wanted = {w for w in wanted if w not in fn.__globals__ and not hasattr(builtins, w)}
    if not wanted:  # f_locals only when an annotation needs a name of the caller
        return {}
    local = frame.f_locals
    return {name: local[name] for name in wanted if name in local}


_SOURCELESS = {
    "<string>": "code run by `python -c` or exec()",
    "<stdin>": "code read from standard input (piped in, or typed in the REPL of "
               "Python 3.12 or older)",
}


def _no_source_message(fn: Callable, exc: Exception) -> str:
    """Why the source of `fn` cannot be read, and what to do instead. cubepy compiles a
    kernel from its source text, which Python keeps only for files and for the cells of
    IPython/Jupyter and the Python 3.13+ REPL (both put it in linecache)."""
    filename = fn.__code__.co_filename
    if filename.startswith("<") and filename.endswith(">"):
        where = _SOURCELESS.get(filename, f"{filename}, which keeps no source text")
        return (f"cannot read the source of {fn.__name__}: it was defined in {where}, and "
                f"cubepy compiles a kernel from its source. Put the kernel in a .py file "
                f"(run or import it), or define it in IPython/Jupyter or the Python 3.13+ "
                f"REPL, which keep the source of what you type")
    return f"cannot read the source of {fn.__name__} from {filename}: {exc}"


def function_source_lines(fn: Callable) -> tuple[list[str], int]:
    """`inspect.getsourcelines(fn)`, cheaper for a function (see _function_source)."""
    lines, first, _ = _function_source(fn)
    return lines, first


def _function_source(fn: Callable) -> tuple[list[str], int, ast.Module | None]:
    """`inspect.getsourcelines(fn)` for a function, without its tokenizer: Python's
    tokenize compiles a large regular expression on first use (a few ms of a process's
    first decoration). The function's last line comes from its code's instruction
    positions, extended over any further lines indented deeper than the `def` (an
    `else: pass` leaves no instruction). The lines found must parse as exactly that one
    function, ending on their last line; otherwise, and for anything but a plain
    function, inspect's own block finder decides. Raises what inspect raises. Also
    gives the dedented lines' ast when the check parsed them (else None)."""
    target = inspect.unwrap(fn)
    code = getattr(target, "__code__", None)
    if code is not None and hasattr(code, "co_positions"):
        lines, start = inspect.findsource(target)  # (no tokenizing: a line search)
        found = _block_by_positions(lines, start, code)
        if found is not None:
            return found[0], start + 1, found[1]
    return (*inspect.getsourcelines(fn), None)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _last_line(code) -> int:
    """The last source line any instruction of `code` or its nested code comes from."""
    last = max((end for _, end, _, _ in code.co_positions() if end), default=0)
    for const in code.co_consts:
        if hasattr(const, "co_positions"):
            last = max(last, _last_line(const))
    return last


def _block_by_positions(lines: list[str], start: int, code
                        ) -> tuple[list[str], ast.Module] | None:
    end = _last_line(code)  # 1-based line number = index just past it
    if end <= start or end > len(lines):
        return None
    base = _indent(lines[start])
    scan = end
    while scan < len(lines):
        stripped = lines[scan].strip()
        if stripped and not stripped.startswith("#"):
            if _indent(lines[scan]) <= base:
                break
            end = scan + 1  # still inside the function's body
        scan += 1
    block = lines[start:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef,
                                                            ast.AsyncFunctionDef)) \
            or tree.body[0].end_lineno != len(block):
        return None
    return block, tree


def parse_function(fn: Callable, launch: bool) -> ParsedFunction:
    """Parses `fn` at decoration time and checks its syntax (raises CompileError)."""
    try:
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        lines, first, tree = _function_source(fn)
    except (OSError, TypeError) as exc:
        raise CompileError(_no_source_message(fn, exc), fn.__code__.co_filename,
                           fn.__code__.co_firstlineno) from None
    raw = "".join(lines)
    source = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if source != raw else 0
    if tree is None:  # (else parsed already, from the same text)
        tree = ast.parse(source, filename)
    ast.increment_lineno(tree, first - 1)
    if indent:
        for node in ast.walk(tree):
            if hasattr(node, "col_offset"):
                node.col_offset += indent
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += indent
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise CompileError(f"@cube expects a function, not {type(fdef).__name__}",
                           filename, fdef.lineno, fdef.col_offset)
    loc = make_loc(filename, fdef)
    parsed = ParsedFunction(fdef.name, (), {}, loc, fdef, filename, fn, launch)
    parsed.enclosing = _enclosing_names(fn, fdef)
    _check_decorators(parsed, fdef)
    args = fdef.args
    if args.vararg or args.kwarg:
        bad = args.vararg or args.kwarg
        compile_error(make_loc(filename, bad), "*args and **kwargs are not supported in "
                                               "@cube functions")
    if args.kwonlyargs:
        compile_error(make_loc(filename, args.kwonlyargs[0]),
                      "keyword-only parameters are not supported in @cube functions")
    if args.defaults or args.kw_defaults:
        d = (args.defaults or [x for x in args.kw_defaults if x is not None])[0]
        compile_error(make_loc(filename, d), "default parameter values are not supported "
                                             "in @cube functions")
    all_args = [*args.posonlyargs, *args.args]
    parsed.arg_names = tuple(a.arg for a in all_args)
    parsed.params = tuple(p for a in all_args for p in _param_infos(parsed, a, launch))
    if fdef.returns is not None:
        if launch and _eval_annotation(parsed, fdef.returns) is not None:
            compile_error(make_loc(filename, fdef.returns), "a kernel returns nothing: "
                                                            "remove the return annotation")
        parsed.returns = _return_annotation(parsed, fdef.returns)
    _check_nesting(filename, fdef)
    _Whitelist(filename).body(fdef.body, docstring_ok=True)
    _scan(parsed)
    if parsed.structs:
        _name_struct_fields(parsed)
    _collect_generics(parsed)
    return parsed
