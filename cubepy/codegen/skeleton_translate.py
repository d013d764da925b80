"""Translates a kernel skeleton (a jinja2 template of codegen/templates/) into a plain
Python module that renders it without jinja2: see cubepy/codegen/skeleton.py for why
and when the module is used.

The translation starts from jinja2's own parse of the template, with the skeleton
environment's settings (trim_blocks, lstrip_blocks, keep_trailing_newline), so the
whitespace rules are jinja2's: the text between tags comes out as jinja2 gives it.
What the skeletons use is translated; anything else raises `NotTranslatable`, naming
the construct and its line, and `python -m cubepy.codegen.skeleton` fails until the
translator learns it (or the template drops it).

Translated: text, `{{ expr }}` (str() of the value, as jinja2 gives it with autoescape
off), `{% if %}/{% elif %}/{% else %}`, `{% for x in xs %}` (with `{% else %}`, and
`loop.first/last/index/index0/length`), names from the context, constants, `a.b`,
`a[b]` (jinja2's getattr/getitem fallbacks), `x if c else y` (`else` may be left out
directly inside `{{ }}`, giving ""), `not`/`and`/`or`, comparisons, the `join` and
`length` filters.
"""
from __future__ import annotations

import jinja2
from jinja2 import nodes

from ..cache import sha256
from .skeleton import TRANSLATION

_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "lteq": "<=", "gt": ">", "gteq": ">=",
                "in": "in", "notin": "not in"}
_LOOP_ATTRIBUTES = {"first": "({i} == 0)", "last": "({i} == len({items}) - 1)",
                    "index": "({i} + 1)", "index0": "{i}", "length": "len({items})"}


class NotTranslatable(Exception):
    """The template uses a jinja2 construct the translator does not know."""


class _Loop:
    """One `{% for %}` being translated: its Python names."""

    def __init__(self, number: int):
        self.items = f"items_{number}"
        self.index = f"index_{number}"
        self.used = False  # whether the body reads `loop`


class _Translator:
    """Writes Python statements for a template's nodes, one list of lines."""

    def __init__(self, template: str, env_globals: set[str]):
        self.template = template
        self.env_globals = env_globals  # jinja2's globals (range, cycler...): not translated
        self.lines: list[str] = []
        self.scopes: list[dict[str, str]] = []  # template name -> Python name, per for
        self.loops: list[_Loop] = []
        self.counter = 0

    def fail(self, node: nodes.Node, what: str) -> NotTranslatable:
        return NotTranslatable(f"{self.template}:{node.lineno}: {what} is not translated "
                               f"(cubepy/codegen/skeleton_translate.py)")

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    # -- statements ----------------------------------------------------------------------

    def block(self, body: list[nodes.Node], depth: int) -> None:
        before = len(self.lines)
        for node in body:
            self.statement(node, depth)
        if len(self.lines) == before:
            self.emit(depth, "pass")

    def statement(self, node: nodes.Node, depth: int) -> None:
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData):
                    self.emit(depth, f"w({child.data!r})  # {self.template}:{child.lineno}")
                else:
                    self.emit(depth, f"w(str({self.expr(child, in_output=True)}))"
                                     f"  # {self.template}:{child.lineno}")
        elif isinstance(node, nodes.If):
            self.emit(depth, f"if {self.expr(node.test)}:  # {self.template}:{node.lineno}")
            self.block(node.body, depth + 1)
            for elif_ in node.elif_:
                self.emit(depth, f"elif {self.expr(elif_.test)}:")
                self.block(elif_.body, depth + 1)
            if node.else_:
                self.emit(depth, "else:")
                self.block(node.else_, depth + 1)
        elif isinstance(node, nodes.For):
            self.for_loop(node, depth)
        else:
            raise self.fail(node, f"the statement {type(node).__name__}")

    def for_loop(self, node: nodes.For, depth: int) -> None:
        if node.recursive or node.test is not None:
            raise self.fail(node, "a recursive or filtered for loop")
        if not isinstance(node.target, nodes.Name):
            raise self.fail(node, "a for loop over several names")
        self.counter += 1
        loop = _Loop(self.counter)
        variable = f"l_{node.target.name}_{self.counter}"
        where = f"  # {self.template}:{node.lineno}"
        self.emit(depth, f"{loop.items} = list({self.expr(node.iter)}){where}")
        header = len(self.lines)
        self.emit(depth, f"for {variable} in {loop.items}:")
        self.scopes.append({node.target.name: variable})
        self.loops.append(loop)
        self.block(node.body, depth + 1)
        self.loops.pop()
        self.scopes.pop()
        if loop.used:
            self.lines[header] = ("    " * depth
                                  + f"for {loop.index}, {variable} in enumerate({loop.items}):")
        if node.else_:  # jinja2's for-else: the loop ran no iteration
            self.emit(depth, f"if not {loop.items}:")
            self.block(node.else_, depth + 1)

    # -- expressions ---------------------------------------------------------------------

    def expr(self, node: nodes.Node, in_output: bool = False) -> str:
        if isinstance(node, nodes.Const):
            return repr(node.value)
        if isinstance(node, nodes.Name):
            return self.name(node)
        if isinstance(node, nodes.Getattr):
            if isinstance(node.node, nodes.Name) and node.node.name == "loop" \
                    and not self.bound("loop"):
                return self.loop_attribute(node)
            return f"attr({self.expr(node.node)}, {node.attr!r})"
        if isinstance(node, nodes.Getitem):
            if isinstance(node.arg, nodes.Slice):
                raise self.fail(node, "a slice")
            return f"item({self.expr(node.node)}, {self.expr(node.arg)})"
        if isinstance(node, nodes.CondExpr):
            if node.expr2 is None and not in_output:
                raise self.fail(node, "an inline if without else outside {{ }}")
            otherwise = "''" if node.expr2 is None else self.expr(node.expr2)
            return f"({self.expr(node.expr1)} if {self.expr(node.test)} else {otherwise})"
        if isinstance(node, nodes.Not):
            return f"(not {self.expr(node.node)})"
        if isinstance(node, (nodes.And, nodes.Or)):
            op = "and" if isinstance(node, nodes.And) else "or"
            return f"({self.expr(node.left)} {op} {self.expr(node.right)})"
        if isinstance(node, nodes.Compare):
            parts = [self.expr(node.expr)]
            for operand in node.ops:
                if operand.op not in _COMPARISONS:
                    raise self.fail(node, f"the comparison {operand.op}")
                parts += [_COMPARISONS[operand.op], self.expr(operand.expr)]
            return f"({' '.join(parts)})"
        if isinstance(node, nodes.Filter):
            return self.filter(node)
        raise self.fail(node, f"the expression {type(node).__name__}")

    def bound(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def name(self, node: nodes.Name) -> str:
        local = self.bound(node.name)
        if local is not None:
            return local
        if node.name == "loop":
            raise self.fail(node, "`loop` other than loop.first/last/index/index0/length")
        if node.name in self.env_globals:
            raise self.fail(node, f"jinja2's global `{node.name}`")
        return f"context[{node.name!r}]"

    def loop_attribute(self, node: nodes.Getattr) -> str:
        if not self.loops or node.attr not in _LOOP_ATTRIBUTES:
            raise self.fail(node, f"loop.{node.attr}")
        loop = self.loops[-1]
        loop.used = True
        return _LOOP_ATTRIBUTES[node.attr].format(i=loop.index, items=loop.items)

    def filter(self, node: nodes.Filter) -> str:
        if node.kwargs or node.dyn_args is not None or node.dyn_kwargs is not None:
            raise self.fail(node, f"keyword or unpacked arguments to the {node.name} filter")
        value = self.expr(node.node)
        if node.name == "join" and len(node.args) <= 1:
            separator = self.expr(node.args[0]) if node.args else "''"
            return f"join({value}, {separator})"
        if node.name in ("length", "count") and not node.args:
            return f"len({value})"
        raise self.fail(node, f"the {node.name} filter")


def translate(env: jinja2.Environment, name: str) -> str:
    """The text of the Python module that renders template `name` of `env`'s loader."""
    source, filename, _ = env.loader.get_source(env, name)
    translator = _Translator(name, set(env.globals))
    translator.block(env.parse(source, name, filename).body, depth=1)
    body = "\n".join(translator.lines)
    digest = sha256(source.encode("utf-8")).hexdigest()  # (the file's bytes, as read)
    return (f"# Template {name} translated into Python from jinja2 {jinja2.__version__}'s "
            f"parse of it:\n"
            f"# written by `python -m cubepy.codegen.skeleton`, do not edit. "
            f"cubepy/codegen/skeleton.py renders\n"
            f"# with it while the template's SHA-256 and the translation's version match.\n"
            f"# flake8: noqa\n"
            f"from ..skeleton import attr, item, join\n\n"
            f"TEMPLATE = {name!r}\n"
            f"TEMPLATE_SHA256 = {digest!r}\n"
            f"TRANSLATION = {TRANSLATION}\n\n\n"
            f"def render(context: dict) -> str:\n"
            f"    out: list[str] = []\n"
            f"    w = out.append\n"
            f"{body}\n"
            f"    return ''.join(out)\n")
