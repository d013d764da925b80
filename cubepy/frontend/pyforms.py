"""Python control forms lowered onto the IR's if/for/while: `match` on integer, bool and
compile-time subjects (an if/elif chain), `for` over `enumerate(...)`/`zip(...)` of
ranges (extra loop variables carried by counters), `for ... else`/`while ... else` (a
"broke out" flag) and `and`/`or` whose right-hand operands run statements (a
conditional block: they run only when Python would evaluate them). The generators see
nothing new. See docs/LANGUAGE.md, Control flow."""
from __future__ import annotations

import ast
import builtins
import copy
from typing import Any, Callable

from ..ir import nodes as n
from ..ir.types import bool_
from .values import CALLABLE_NAMES, Buf, Dead, Py, Tup

_PATTERN_KINDS = "literal values (case 1:, case -2:, case 1 | 2:, case A.B:), _ or a name"


class PyFormsMixin:
    """Builder methods for the Python forms above."""

    # -- match ------------------------------------------------------------------------
    def s_Match(self, node: ast.Match) -> None:
        subject = self.expr(node.subject)
        if isinstance(subject, (Buf, Tup)):
            self.error("match takes an integer or a compile-time value as its "
                       "subject", node.subject)
        if isinstance(subject, n.Expr):
            self.ctx.unifier.require(subject.ty, lambda t: t.is_int,
                                     self.ctx.loc, lambda t: (
                f"match on a runtime value takes an integer, not {t.name}"))
            subject = self.once(subject, "match_subject")  # evaluated once
        opened: list[tuple[n.Expr, n.Block, n.Loc]] = []
        for case in node.cases:
            with self.at(case.pattern):
                cond = self.case_condition(subject, case)
            if isinstance(cond, Py):  # decided at compile time: the other arms vanish
                if self.truth(cond, case.pattern):
                    self.body(case.body)
                    break
                continue
            loc = self.ctx.loc
            then = self.block(case.body)
            opened.append((cond, then, loc))
            self.ctx.blocks.append([])  # the next case is tested in this one's else
        for cond, then, loc in reversed(opened):
            orelse = n.Block(tuple(self.ctx.blocks.pop()))
            self.emit(n.If(cond=cond, then=then, orelse=orelse, loc=loc))

    def case_condition(self, subject, case: ast.match_case):
        """Whether `case` is taken (a Py when known at compile time), after binding its
        captures (a guard may read them)."""
        cond = self.pattern_test(subject, case.pattern)
        if isinstance(cond, Py) and not cond.value:
            return cond
        for p in ast.walk(case.pattern):
            if isinstance(p, ast.MatchAs) and p.name is not None:
                target = ast.copy_location(ast.Name(id=p.name, ctx=ast.Store()), p)
                self.assign_to(target, subject, target)
        if case.guard is None:
            return cond
        with self.at(case.guard), self.ctx.banning_side_effects("a case guard"):
            guard = self.expr(case.guard)
            if isinstance(guard, Py):
                return cond if self.truth(guard, case.guard) else Py(False)
            guard = self.condition(guard, case.guard, "a case guard")
        if isinstance(cond, Py):
            return guard
        return n.Logical(ty=bool_, op="and", lhs=cond, rhs=guard, loc=self.ctx.loc)

    def pattern_test(self, subject, pattern: ast.pattern):
        """`subject` matches `pattern`: a Py, or a runtime bool."""
        if isinstance(pattern, ast.MatchAs):
            if pattern.pattern is None:  # `_` or a capture: always matches
                return Py(True)
            return self.pattern_test(subject, pattern.pattern)
        if isinstance(pattern, ast.MatchValue):
            value = self.expr(pattern.value)
            if not isinstance(value, Py):
                self.error(f"a case pattern is a value known at compile time: "
                           f"{_PATTERN_KINDS}", pattern.value)
            return self.compare(ast.Eq(), subject, value, pattern)
        if isinstance(pattern, ast.MatchSingleton):  # `case True:` is `subject is True`
            if not isinstance(subject, Py):
                self.error("None/True/False patterns take a compile-time subject (a "
                           "Comptime[bool]): test a runtime bool with if", pattern)
            return Py(subject.value is pattern.value)
        if isinstance(pattern, ast.MatchOr):
            result = None
            for alt in pattern.patterns:
                t = self.pattern_test(subject, alt)
                if isinstance(t, Py):
                    if t.value:
                        return Py(True)
                    continue
                result = t if result is None else n.Logical(
                    ty=bool_, op="or", lhs=result, rhs=t, loc=self.ctx.loc)
            return Py(False) if result is None else result
        self.error(f"{type(pattern).__name__} patterns are not supported in kernels: use "
                   f"{_PATTERN_KINDS}", pattern)

    # -- for ... in enumerate(...) / zip(...) -------------------------------------------
    def for_enumerate_zip(self, node: ast.For) -> bool:
        """Builds `for i, x in enumerate(range(...))` or `for x, y in zip(range(...),
        ...)` (also under unroll); False when the loop is over something else."""
        it, unroll = node.iter, False
        func = self.py_callee(it)
        if func is not None and CALLABLE_NAMES.get(id(func)) == "unroll" \
                and len(it.args) == 1:
            inner = self.py_callee(it.args[0])
            if inner is builtins.enumerate or inner is builtins.zip:
                it, func, unroll = it.args[0], inner, True
        if func is not builtins.enumerate and func is not builtins.zip:
            return False
        if it.keywords:
            self.error(f"{func.__name__}() takes its arguments by position", it)
        if func is builtins.enumerate:
            if not 1 <= len(it.args) <= 2:
                self.error(f"enumerate() takes a range and an optional start, got "
                           f"{len(it.args)} arguments", it)
            ranges = [it.args[0]]
            if self.py_callee(it.args[0]) is builtins.zip:  # i, (a, b) in enumerate(zip(...))
                ranges = list(it.args[0].args)
                names = self.enumerate_zip_targets(node.target, len(ranges))
            else:
                names = self.loop_targets(node.target, func, it)
        else:
            names = self.loop_targets(node.target, func, it)
            if not it.args:
                self.error("zip() needs at least one range", it)
            ranges = list(it.args)
        seqs = []
        for r in ranges:
            ct: list = []
            start, stop, step, unrolled = self.range_bounds(r, ct)
            seqs.append((start, stop, step, ct))
            unroll |= unrolled
        if func is builtins.enumerate:
            seqs.insert(0, self.enumerate_counter(it, seqs[0][0]))
            primary = 1  # the range drives the loop, the counter follows it
        else:
            primary = 0
        if unroll and any(None in s[3] for s in seqs if s[3] is not None):
            self.error("unroll(...) over zip() needs compile-time bounds in every range",
                       it)
        self.build_multi_loop(node, names, seqs, primary, unroll)
        return True

    def py_callee(self, it: ast.expr) -> Any:
        """The Python object a call calls, when it is a compile-time name (else None)."""
        if not isinstance(it, ast.Call):
            return None
        f = self.expr(it.func)
        return f.value if isinstance(f, Py) else None

    def loop_targets(self, target: ast.expr, func, it: ast.Call) -> list[ast.Name]:
        want = 2 if func is builtins.enumerate else len(it.args)
        if not (isinstance(target, ast.Tuple) and len(target.elts) == want
                and all(isinstance(e, ast.Name) for e in target.elts)):
            self.error(f"{func.__name__}() here needs {want} loop variable names, e.g. "
                       f"for {', '.join('abcdefgh'[:want])} in ...", target)
        return list(target.elts)

    def enumerate_zip_targets(self, target: ast.expr, k: int) -> list[ast.Name]:
        """`i, (a, b)` of `for i, (a, b) in enumerate(zip(r1, r2))`, flattened."""
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                and isinstance(target.elts[0], ast.Name)
                and isinstance(target.elts[1], ast.Tuple) and len(target.elts[1].elts) == k
                and all(isinstance(e, ast.Name) for e in target.elts[1].elts)):
            self.error(f"enumerate(zip(...)) of {k} ranges needs the names "
                       f"i, ({', '.join('abcdefgh'[:k])})", target)
        return [target.elts[0], *target.elts[1].elts]

    def enumerate_counter(self, it: ast.Call, like: n.Expr):
        """The counter of enumerate(seq[, start]): (start, None, 1, ct) with the type of
        the range's loop variable."""
        with self.at(it):
            first = self.expr(it.args[1]) if len(it.args) == 2 else Py(0)
            start = self.materialize(first, it.args[1] if len(it.args) == 2 else it)
            self.ctx.unifier.unify(start.ty, like.ty, self.ctx.loc, lambda a, b: (
                f"enumerate() start is {a}, the range is {b}: cast it, e.g. {b}(...)"))
            one = n.Const(ty=like.ty, value=1, loc=self.ctx.loc)
        return start, None, one, None

    def build_multi_loop(self, node: ast.For, names, seqs, primary: int,
                         unroll: bool) -> None:
        """One For over seqs[primary]; each other sequence's variable is read from a
        counter advanced at the top of every iteration (before any `continue`). zip stops
        at the shortest range: at compile time by shortening the loop, else by a break
        when a counter runs out."""
        frame, loc = self.ctx.frame, self.ctx.loc
        start, stop, step, ct = seqs[primary]
        if all(s[3] is not None and None not in s[3] for s in seqs if s[1] is not None):
            trips = min(len(range(*s[3])) for s in seqs if s[1] is not None)
            stop = n.Const(ty=start.ty, value=ct[0] + trips * ct[2], loc=loc)
            limited = False
        else:
            limited = True
        loop_vars, prefix = {}, []
        for k, (s_start, s_stop, s_step, s_ct) in enumerate(seqs):
            name = names[k].id
            self.check_new_loop_name(name, names[k])
            var = self.loop_variable(name, s_start.ty, declared=k == primary)
            loop_vars[name] = var
            if k == primary:
                continue
            cur = self.new_var(f"{name}_next", s_start.ty)
            self.use(cur)
            self.emit(n.Assign(var=cur, value=s_start, loc=loc))
            now = n.Load(ty=cur.ty, var=cur, loc=loc)
            if limited and s_stop is not None:
                left = self.in_range(now, s_stop, s_step, s_ct)
                prefix.append(n.If(cond=n.Unary(ty=bool_, op="not", operand=left, loc=loc),
                                   then=n.Block((n.Break(loc=loc),)), loc=loc))
            prefix.append(n.Assign(var=var, value=now, loc=loc))
            prefix.append(n.Assign(var=cur, loc=loc, value=n.Binary(
                ty=cur.ty, op="add", lhs=now, rhs=s_step, loc=loc)))
        for name in loop_vars:
            frame.loop_vars.add(name)
            frame.assigned.add(name)
        try:
            body = self.block(node.body, loop=True)
        finally:
            for name in loop_vars:
                frame.loop_vars.discard(name)
                frame.scope[name] = Dead(name)
        var = loop_vars[names[primary].id]
        self.emit(n.For(var=var, start=start, stop=stop, step=step, unroll=unroll, loc=loc,
                        body=n.Block((*prefix, *body.stmts))))

    def in_range(self, now: n.Expr, stop: n.Expr, step: n.Expr, ct) -> n.Expr:
        """Whether a range's counter `now` has not reached `stop` (by the sign of step)."""
        loc = self.ctx.loc

        def cmp(op, a, b):
            return n.Compare(ty=bool_, op=op, lhs=a, rhs=b, loc=loc)
        if ct[2] is not None:
            return cmp("lt" if ct[2] > 0 else "gt", now, stop)
        zero = n.Const(ty=step.ty, value=0, loc=loc)
        up = n.Logical(ty=bool_, op="and", lhs=cmp("gt", step, zero),
                       rhs=cmp("lt", now, stop), loc=loc)
        down = n.Logical(ty=bool_, op="and", lhs=cmp("lt", step, zero),
                         rhs=cmp("gt", now, stop), loc=loc)
        return n.Logical(ty=bool_, op="or", lhs=up, rhs=down, loc=loc)

    def check_new_loop_name(self, name: str, target: ast.AST) -> None:
        frame = self.ctx.frame
        if isinstance(frame.scope.get(name), (n.Var, Py, Buf, Tup)):
            self.error(f"{name!r} is already a variable: use another name for the loop "
                       f"variable", target)
        if name in frame.loop_vars:
            self.error(f"the loop variable {name!r} is already used by an enclosing loop",
                       target)

    def loop_variable(self, name: str, ty, declared: bool) -> n.Var:
        """A fresh loop variable (the user's own name in a kernel where it is unused);
        `declared`: the For declares it, else a Declare is made for it."""
        frame = self.ctx.frame
        if frame.is_kernel and name not in self.ctx.used_loop_names:
            var = n.Var(name, ty)
        else:
            var = self.new_var(name, ty)
        self.ctx.used_loop_names.add(name)
        if declared:
            self.ctx.declared.add(id(var))
        else:
            self.use(var)
        frame.scope[name] = var
        return var

    # -- for ... else / while ... else ----------------------------------------------------
    def loop_else(self, node: ast.For | ast.While, build: Callable[[Any], None]) -> None:
        """The loop, then its `else` block when no `break` left it (a flag that every
        break of this loop sets; without a break the else block simply follows)."""
        frame, loc = self.ctx.frame, self.ctx.loc
        loop = copy.copy(node)
        loop.orelse = []
        flag = self.new_var("broke", bool_)
        depth = frame.loop_depth + 1
        mark = len(self.ctx.blocks[-1])
        frame.else_flags[depth] = entry = [flag, False]
        try:
            build(loop)
        finally:
            del frame.else_flags[depth]
        if not entry[1]:
            self.body(node.orelse)
            return
        self.use(flag)
        self.ctx.blocks[-1].insert(mark, n.Assign(
            var=flag, value=n.Const(ty=bool_, value=False, loc=loc), loc=loc))
        then = self.block(node.orelse)
        self.emit(n.If(cond=n.Unary(ty=bool_, op="not", loc=loc,
                                    operand=n.Load(ty=bool_, var=flag, loc=loc)),
                       then=then, loc=loc))

    def flag_break(self) -> None:
        """Before a `break` of a loop that has an `else`: record that it broke out."""
        entry = self.ctx.frame.else_flags.get(self.ctx.frame.loop_depth)
        if entry is not None:
            entry[1] = True
            self.emit(n.Assign(var=entry[0], loc=self.ctx.loc,
                               value=n.Const(ty=bool_, value=True, loc=self.ctx.loc)))

    # -- and / or ---------------------------------------------------------------------
    def e_BoolOp(self, node: ast.BoolOp):
        """`a and b`, `a or b`: the first operand always runs; an operand whose code needs
        statements (a device function that stores, an atomic) runs in a block entered
        only when Python would evaluate it; pure operands stay in a short-circuit
        expression. Compile-time operands fold."""
        is_and = isinstance(node.op, ast.And)
        word = "and" if is_and else "or"
        result, holder = None, None
        for v_node in node.values:
            self.ctx.blocks.append([])
            try:
                if result is None:
                    v = self.expr(v_node)
                else:
                    with self.ctx.diverging(f"'{word}'"):
                        v = self.expr(v_node)
                cond = v if isinstance(v, Py) else self.condition(v, v_node, f"'{word}'")
            finally:
                stmts = self.ctx.blocks.pop()
            if result is None:  # the operand always runs
                self.ctx.blocks[-1].extend(stmts)
                stmts = []
            if isinstance(cond, Py) and not stmts:
                if self.truth(cond, v_node) != is_and:  # absorbs: False for and, True for or
                    return Py(not is_and)
                continue
            if isinstance(cond, Py):
                cond = n.Const(ty=bool_, value=self.truth(cond, v_node), loc=self.ctx.loc)
            if result is None:
                result = cond
            elif not stmts:
                result = n.Logical(ty=bool_, op=word, lhs=result, rhs=cond, loc=self.ctx.loc)
            else:
                result, holder = self.conditional_operand(result, holder, stmts, cond, is_and)
        return Py(is_and) if result is None else result

    def conditional_operand(self, result: n.Expr, holder, stmts, cond: n.Expr,
                            is_and: bool):
        """`holder = result; if holder (and) / if not holder (or): stmts; holder = cond`."""
        loc = self.ctx.loc
        if holder is None:
            holder = self.new_var("and_value" if is_and else "or_value", bool_)
            self.use(holder)
        held = n.Load(ty=bool_, var=holder, loc=loc)
        if result != held:
            self.emit(n.Assign(var=holder, value=result, loc=loc))
        test = held if is_and else n.Unary(ty=bool_, op="not", operand=held, loc=loc)
        self.emit(n.If(cond=test, loc=loc,
                       then=n.Block((*stmts, n.Assign(var=holder, value=cond, loc=loc)))))
        return held, holder
