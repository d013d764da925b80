"""cubepy/ir/batched_dataclass.py makes the same classes as dataclasses.dataclass: each
module that uses it is run a second time with the real decorator, and every class of the
two runs is compared (fields, params, signature, docstring, repr, eq/hash, frozenness,
replace). The comparison also reads the private details of dataclasses the helper sets
(`Field._field_type`, `__dataclass_params__`), so a Python that changes them fails here."""
from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import subprocess
import sys
import threading
import types
import typing
from dataclasses import FrozenInstanceError, InitVar, field
from typing import ClassVar

import pytest

from cubepy.ir import batched_dataclass
from cubepy.ir.batched_dataclass import build_pending

# The modules whose classes are made by batched_dataclass, and the import line of each
# that the reference run swaps for the real decorator.
MODULES = {"cubepy.ir.types": "from .batched_dataclass import build_pending, dataclass",
           "cubepy.ir.nodes": "from .batched_dataclass import dataclass",
           "cubepy.frontend.values": "from ..ir.batched_dataclass import dataclass",
           "cubepy.lang": "from .ir.batched_dataclass import build_pending, dataclass",
           "cubepy.abi": "from .ir.batched_dataclass import dataclass",
           "cubepy.frontend.intrinsics": "from ..ir.batched_dataclass import dataclass",
           "cubepy.frontend.indexing": "from ..ir.batched_dataclass import dataclass",
           "cubepy.ir.passes.uniform": "from ..batched_dataclass import dataclass",
           "cubepy.codegen.clike_dialect":
               "from ..ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)",
           "cubepy.targets": "from ..ir.batched_dataclass import build_pending, dataclass",
           "cubepy.codegen.compiled": "from ..ir.batched_dataclass import dataclass",
           "cubepy.ir.ops": "from .batched_dataclass import dataclass",
           "cubepy.ir.loc": "from .batched_dataclass import dataclass",
           "cubepy.ir.dtype_facts": "from .batched_dataclass import dataclass",
           "cubepy.params": "from .ir.batched_dataclass import dataclass",
           "cubepy.spec": "from .ir.batched_dataclass import build_pending, dataclass",
           "cubepy.timing": "from .ir.batched_dataclass import build_pending, dataclass",
           "cubepy.frontend.parse": "from ..ir.batched_dataclass import dataclass",
           "cubepy.frontend.context": "from ..ir.batched_dataclass import dataclass",
           "cubepy.dlpack": "from .ir.batched_dataclass import build_pending, dataclass",
           "cubepy.kernel": "from .ir.batched_dataclass import build_pending, dataclass",
           "cubepy.codegen.wgsl_barriers":
               "from ..ir.batched_dataclass import dataclass  # (cheap to create)",
           "cubepy.codegen.wgsl_memory":
               "from ..ir.batched_dataclass import dataclass  # (cheap to create)",
           "cubepy.codegen.float_helpers":
               "from ..ir.batched_dataclass import dataclass  # (cheap to create)"}
# Where a module's twin stops running: what follows registers into the real modules.
TWIN_STOPS = {"cubepy.targets": "from . import cuda, wgsl, metal, cpu",
              "cubepy.kernel": "register_inlinable(CubeFunction, decorator=cube)"}
FIELD_ATTRS = ("name", "type", "default", "default_factory", "init", "repr", "hash",
               "compare", "metadata", "kw_only", "_field_type")


def reference_module(name: str, import_line: str) -> types.ModuleType:
    """Module `name` run again with dataclasses.dataclass in place of the batched one."""
    module = importlib.import_module(name)
    source = inspect.getsource(module)
    assert source.count(import_line) == 1, f"{name} no longer imports {import_line!r}"
    source = source.replace(import_line,
                            "from dataclasses import dataclass\nbuild_pending = lambda: None")
    if name in TWIN_STOPS:  # (what follows registers into the real module)
        source = source[:source.index(TWIN_STOPS[name])]
    twin = types.ModuleType(name + "_reference")
    twin.__package__ = module.__package__
    sys.modules[twin.__name__] = twin
    try:
        exec(compile(source, module.__file__, "exec"), twin.__dict__)
    finally:
        del sys.modules[twin.__name__]
    return twin


def class_pairs(name: str, import_line: str):
    module = importlib.import_module(name)
    build_pending()  # (most modules' classes are built at their first use)
    twin = reference_module(name, import_line)
    pairs = [(obj, getattr(twin, key)) for key, obj in vars(module).items()
             if isinstance(obj, type) and obj.__module__ == name
             and dataclasses.is_dataclass(obj)]
    assert pairs
    return pairs


def sample_args(cls, tag: str):
    """Distinct hashable values for every field: positional ones as args, kw_only ones
    as keywords."""
    fields = dataclasses.fields(cls)
    args = [f"{tag}.{f.name}" for f in fields if not f.kw_only]
    kwargs = {f.name: f"{tag}.{f.name}" for f in fields if f.kw_only}
    return args, kwargs


def same_value(mine, theirs) -> bool:
    """Equal, or the same repr for instances of the two runs' classes (a default Block()),
    or the two runs' same default factory (a lambda) making equal values."""
    if mine == theirs or (type(mine).__qualname__ == type(theirs).__qualname__
                          and repr(mine) == repr(theirs)):
        return True
    return (isinstance(mine, types.FunctionType) and isinstance(theirs, types.FunctionType)
            and mine.__qualname__ == theirs.__qualname__ and mine() == theirs())


def assert_same_class(ours, ref) -> None:
    name = ours.__qualname__
    assert ours is not ref and name == ref.__qualname__
    assert dataclasses.is_dataclass(ours)
    assert sorted(vars(ours)) == sorted(vars(ref)), name
    # All of __dataclass_fields__: the ClassVar pseudo-fields too, which fields() skips.
    ours_fields = list(ours.__dataclass_fields__.values())
    ref_fields = list(ref.__dataclass_fields__.values())
    assert [f.name for f in ours_fields] == [f.name for f in ref_fields], name
    for mine, theirs in zip(ours_fields, ref_fields):
        # A ClassVar's value is state (an interning registry): only its type must match.
        state = mine._field_type is dataclasses._FIELD_CLASSVAR
        for attr in FIELD_ATTRS:
            mine_value, their_value = getattr(mine, attr), getattr(theirs, attr)
            if state and attr == "default":
                mine_value, their_value = type(mine_value), type(their_value)
            assert same_value(mine_value, their_value), (name, mine.name, attr)
        if not state:
            assert same_value(getattr(ours, mine.name, None), getattr(ref, mine.name, None)), \
                (name, mine.name, "class attribute")
    assert repr(ours.__dataclass_params__) == repr(ref.__dataclass_params__), name
    assert str(inspect.signature(ours)) == str(inspect.signature(ref)), name
    assert ours.__init__.__annotations__ == ref.__init__.__annotations__, name
    assert ours.__doc__ == ref.__doc__, name
    assert ours.__match_args__ == ref.__match_args__, name
    assert ours.__init__.__qualname__ == f"{name}.__init__"

    if "__new__" in vars(ours) or "__post_init__" in vars(ours):  # takes real values
        return  # (LineType, Specialization): their own tests below
    args, kwargs = sample_args(ours, "a")
    a, a_ref = ours(*args, **kwargs), ref(*args, **kwargs)
    assert repr(a) == repr(a_ref)
    same, same_ref = ours(*args, **kwargs), ref(*args, **kwargs)
    assert (a == same) is (a_ref == same_ref) and (a != same) is (a_ref != same_ref)
    assert (ours.__hash__ is None) is (ref.__hash__ is None), name  # mutable: unhashable
    if ref.__hash__ is not None:
        assert (hash(a) == hash(same)) is (hash(a_ref) == hash(same_ref))
    if ref.__hash__ is not None and "__hash__" in vars(ref) and a_ref == same_ref:
        assert hash(a) == hash(a_ref)  # hashed by value: the same value
    assert a != a_ref and a_ref != a  # another class, even with the same fields
    for f in dataclasses.fields(ours):
        other = dataclasses.replace(a, **{f.name: "other"})
        other_ref = dataclasses.replace(a_ref, **{f.name: "other"})
        assert type(other) is ours and getattr(other, f.name) == "other"
        assert (other == a) is (other_ref == a_ref), (name, f.name)
    if not ref.__dataclass_params__.frozen:  # a mutable record: fields assign freely
        for f in dataclasses.fields(ours):
            setattr(a, f.name, "changed")
            setattr(a_ref, f.name, "changed")
        assert repr(a) == repr(a_ref)
        return
    for f in dataclasses.fields(ours):
        with pytest.raises(FrozenInstanceError, match=f"cannot assign to field '{f.name}'"):
            setattr(a, f.name, "changed")
        with pytest.raises(FrozenInstanceError, match=f"cannot delete field '{f.name}'"):
            delattr(a, f.name)
    with pytest.raises(FrozenInstanceError):
        a.not_a_field = 1
    required = [f for f in dataclasses.fields(ours) if f.default is dataclasses.MISSING]
    if required:  # the same message for a missing argument (the field names are right)
        with pytest.raises(TypeError) as mine:
            ours()
        with pytest.raises(TypeError) as theirs:
            ref()
        assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_classes_match_real_dataclasses(module):
    for ours, ref in class_pairs(module, MODULES[module]):
        assert_same_class(ours, ref)


def test_ir_nodes_behave_as_the_passes_use_them():
    from cubepy.ir import nodes as ir
    from cubepy.ir.types import f32, u32
    one = ir.Const(ty=u32, value=1)
    add = ir.Binary(ty=u32, op="+", lhs=one, rhs=ir.Const(ty=u32, value=2),
                    loc=ir.Loc("k.py", 3))
    assert add == ir.Binary(ty=u32, op="+", lhs=one, rhs=ir.Const(ty=u32, value=2))
    assert len({add, dataclasses.replace(add, loc=ir.NO_LOC)}) == 1  # loc not compared
    assert dataclasses.replace(add, op="*") != add
    assert [f.name for f in dataclasses.fields(add)] == ["ty", "loc", "op", "lhs", "rhs"]
    assert ir.If(cond=one).then == ir.Block()
    assert ir.Var("x", f32) == ir.Var(name="x", ty=f32)
    with pytest.raises(TypeError):
        ir.Const(u32, 1)  # keyword-only, as declared
    with pytest.raises(FrozenInstanceError):
        add.op = "-"
    assert pickle.loads(pickle.dumps(add)) == add and copy.deepcopy(add) == add
    assert ir.Binary.__init__.__module__ == "cubepy.ir.nodes"
    assert typing.get_type_hints(ir.Var.__init__)["ty"] is ir.DType  # the module's globals


def test_interned_types_stay_interned_and_frozen():
    from cubepy.ir.types import DType, LineType, f16, f32
    line = LineType(f32, 4)
    assert line is LineType(f32, 4) and line == LineType(f32, 4) and line != LineType(f32, 2)
    assert dataclasses.replace(line, elem=f16) is LineType(f16, 4)
    assert [f.name for f in dataclasses.fields(line)] == ["elem", "size"]
    assert [f.name for f in dataclasses.fields(DType)] == ["name", "kind", "bits"]
    assert hash(line) == object.__hash__(line) and f32 == f32 and f32 != f16
    with pytest.raises(FrozenInstanceError):
        line.size = 8
    with pytest.raises(FrozenInstanceError):
        f32.bits = 64


# ----------------------------------------------------------------------------- the helper

def _define(decorator):
    """Classes covering the options the helper takes, made with `decorator`."""
    @decorator(frozen=True)
    class Point:
        x: int
        y: int = 0
        tag: str = field(default="p", compare=False)
        hidden: int = field(default=1, repr=False)

    @decorator(frozen=True, kw_only=True)
    class Point3(Point):
        z: int
        y: int = 5  # a default overridden in a subclass keeps the field's position

    @decorator(frozen=True)
    class Mixed:
        a: int
        b: int = field(default=2, kw_only=True)
        c: int = 3

    @decorator(frozen=True, eq=False)
    class ByIdentity:
        name: str

    @decorator(frozen=True)
    class OwnEq:
        v: int

        def __eq__(self, other):
            return isinstance(other, OwnEq)

    @decorator(frozen=True)
    class OwnHash:
        v: int

        def __hash__(self):
            return 7

    @decorator(frozen=True)
    class Checked:
        """Has its own docstring."""
        v: int

        def __post_init__(self):
            if self.v == -1:
                raise ValueError("negative")

    @decorator(frozen=True)
    class Empty:
        pass

    @decorator(frozen=True)
    class PartlyHashed:
        a: int
        b: int = field(default=0, hash=False)
        c: int = field(default=0, compare=False, hash=True)

    @decorator(frozen=True, eq=False)
    class Interned:
        name: str
        registry: ClassVar[dict] = {}
        plain: typing.ClassVar[int] = 3

    return [Point, Point3, Mixed, ByIdentity, OwnEq, OwnHash, Checked, Empty, Interned,
            PartlyHashed]


def test_helper_options_match_real_dataclasses():
    ours = _define(batched_dataclass.dataclass)
    build_pending()
    for mine, theirs in zip(ours, _define(dataclasses.dataclass)):
        assert_same_class(mine, theirs)
    point, point3, mixed, _, own_eq, own_hash, checked, _, interned, partly = ours
    assert point3(x=1, z=2).y == 5 and point3(x=1, z=2) == point3(x=1, y=5, z=2)
    assert mixed(1, 4, b=9) == mixed(a=1, c=4, b=9)
    assert own_eq(1) == own_eq(2) and hash(own_hash(1)) == 7
    with pytest.raises(ValueError, match="negative"):
        checked(-1)
    assert [f.name for f in dataclasses.fields(interned)] == ["name"]
    assert interned.registry == {} and interned("x").plain == 3
    assert hash(partly(1, 2, 3)) == hash((1, 3)) and partly(1, 2, 3) != partly(1, 5, 3)


def test_first_instance_builds_its_class():
    @batched_dataclass.dataclass(frozen=True)
    class Early:
        v: int = 0

    @batched_dataclass.dataclass(frozen=True, kw_only=True)
    class Later:
        e: Early = Early()  # a default made while Later is still pending

    assert Later().e == Early(0) and Later(e=Early(3)).e.v == 3
    assert str(inspect.signature(Early)) == "(v: 'int' = 0) -> None"


def test_only_the_classes_used_are_built():
    @batched_dataclass.dataclass(frozen=True)
    class Used:
        v: int

    @batched_dataclass.dataclass(frozen=True)
    class Unused:
        v: int

    class PlainSubclass(Used):  # not a dataclass: inherits Used's pending methods
        pass

    assert PlainSubclass(4).v == 4 and PlainSubclass(4) == PlainSubclass(4) != Used(4)
    assert Used not in batched_dataclass._pending  # built by that instance
    assert Unused in batched_dataclass._pending  # never used: never built
    assert str(inspect.signature(Unused)) == "(*args: 'Any', **kwargs: 'Any') -> 'None'"
    build_pending()
    assert Unused not in batched_dataclass._pending and Unused(1).v == 1
    assert str(inspect.signature(Unused)) == "(v: 'int') -> None"


def test_threads_first_using_a_class_build_it_once():
    @batched_dataclass.dataclass(frozen=True)
    class Shared:
        v: int

    start = threading.Barrier(8)
    made = []

    def make(i):
        start.wait()
        made.append(Shared(i))

    threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(m.v for m in made) == list(range(8))
    assert Shared.__init__.__qualname__.endswith("Shared.__init__")
    assert Shared not in batched_dataclass._pending


def test_methods_called_before_a_first_instance_build_the_class():
    @batched_dataclass.dataclass(frozen=True)
    class OwnInit:
        v: int

        def __init__(self, v):
            object.__setattr__(self, "v", v * 2)

    a = OwnInit(1)  # its own __init__: nothing built yet
    assert OwnInit in batched_dataclass._pending
    assert a == OwnInit(1) and a != OwnInit(2) and hash(a) == hash((2,))
    assert OwnInit not in batched_dataclass._pending  # built by that first ==


def test_a_subclass_init_calling_super_reaches_the_pending_one():
    @batched_dataclass.dataclass(frozen=False)
    class Base:
        v: int

    class Child(Base):
        def __init__(self, v):
            self.calls = getattr(self, "calls", 0) + 1
            super().__init__(v * 10)

    c = Child(2)  # Base's __init__ is still pending when Child's calls it
    assert c.v == 20 and c.calls == 1 and Base not in batched_dataclass._pending


def test_unsupported_options_are_refused():
    @batched_dataclass.dataclass(frozen=False)
    class Mutable:
        v: int
    with pytest.raises(TypeError, match="frozen"):
        @batched_dataclass.dataclass(frozen=True)
        class FrozenOfMutable(Mutable):
            w: int
    with pytest.raises(TypeError, match="init=False"):
        @batched_dataclass.dataclass(frozen=True)
        class NotInInit:
            v: int = field(default=1, init=False)
    with pytest.raises(TypeError, match="InitVar"):
        @batched_dataclass.dataclass(frozen=True)
        class WithInitVar:
            v: InitVar[int] = 1
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @batched_dataclass.dataclass(frozen=True)
        class Order:
            a: int = 0
            b: int
    with pytest.raises(ValueError, match="mutable default"):
        @batched_dataclass.dataclass(frozen=True)
        class MutableDefault:
            v: object = {}
    build_pending()


MYPY_SAMPLE = """\
import dataclasses
from cubepy.ir import nodes as ir
from cubepy.ir.types import u32
c = ir.Const(ty=u32, value=1)
k = dataclasses.replace(ir.Var(name="x", ty=u32), name="y")
ir.Const(u32, 1)
c.value = 2
ir.Var("x", u32, 3)
"""


def test_mypy_sees_the_node_fields_constructors_and_frozenness(tmp_path):
    """mypy reads the batched decorator as dataclasses.dataclass (dataclass_transform):
    keyword-only and positional constructors, read-only fields."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    import subprocess
    from pathlib import Path
    sample = tmp_path / "nodes_sample.py"
    sample.write_text(MYPY_SAMPLE)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(sample)],
        cwd=root, capture_output=True, text=True, timeout=600)
    errors = sorted(line.split(":")[1] + ": " + line.split("error: ")[1]
                    for line in done.stdout.splitlines() if ": error: " in line)
    assert errors == [
        '6: Argument 2 to "Const" has incompatible type "int"; expected "Loc"  [arg-type]',
        '6: Too many positional arguments for "Const"  [call-arg]',
        '7: Property "value" defined in "Const" is read-only  [misc]',
        '8: Too many arguments for "Var"  [call-arg]'], done.stdout + done.stderr


def test_shipped_templates_are_current_and_used():
    """cubepy/ir/batched_shapes.py is what write_shipped_shapes() writes for its shapes
    (rerun it after a change to the templates), and cubepy's classes take their methods
    from it."""
    from cubepy.ir import batched_shapes
    path = batched_shapes.__file__
    with open(path) as f:
        assert f.read() == batched_dataclass.shipped_shapes_text(batched_shapes.SHAPES)
    assert set(batched_dataclass.COMMON_SHAPES) <= set(batched_shapes.SHAPES)
    import cubepy.ir.nodes as nodes
    from cubepy.frontend.parse import ParsedFunction
    from cubepy.targets import Target
    for cls in (nodes.Binary, Target, ParsedFunction):
        assert cls.__init__.__code__.co_filename == path, cls


def test_every_shape_of_cubepys_classes_is_shipped():
    """A class of cubepy whose shape is not shipped fails here: rerun
    `python -c "from cubepy.ir import batched_dataclass as b; b.write_shipped_shapes()"`."""
    code = ("from cubepy.ir import batched_dataclass as b, batched_shapes as s\n"
            "print(sorted(b.cubepy_shapes() - set(s.SHAPES), key=repr))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_shape_not_shipped_is_compiled():
    @batched_dataclass.dataclass(frozen=True)
    class Wide:
        f0: int
        f1: int = 1
        f2: int = 2
        f3: int = 3
        f4: int = 4
        f5: int = 5
        f6: int = 6
        f7: int = 7
        f8: int = 8
        f9: int = 9
        f10: int = 10
        f11: int = 11
        f12: int = 12
        f13: int = 13

    build_pending()
    from cubepy.ir import batched_shapes
    assert ("__init__", 14, 0, False) not in batched_shapes.SHAPES
    assert Wide.__init__.__code__.co_filename == "<batched dataclass>"
    w = Wide(0, f13=-1)
    assert w == Wide(0, f13=-1) and hash(w) == hash(Wide(0, f13=-1)) and w.f13 == -1


def test_default_factory_fields_match_dataclasses():
    def make(decorator):
        @decorator(frozen=True)
        class WithFactories:
            a: int
            items: list = field(default_factory=list)
            n: int = 3
            tags: dict = field(default_factory=lambda: {"k": 1}, kw_only=True)
        return WithFactories

    ours, ref = make(batched_dataclass.dataclass), make(dataclasses.dataclass)
    build_pending()
    assert str(inspect.signature(ours)) == str(inspect.signature(ref))
    assert ours.__doc__ == ref.__doc__
    for args, kwargs in [((1,), {}), ((1, [2], 4), {"tags": {}})]:
        mine, theirs = ours(*args, **kwargs), ref(*args, **kwargs)
        assert repr(mine) == repr(theirs).replace(ref.__qualname__, ours.__qualname__)
    first, second = ours(1), ours(1)
    assert first.items == [] and first.items is not second.items  # a new list each time
    assert first.tags == {"k": 1} and first.tags is not second.tags
    assert "items" not in vars(ours) and "tags" not in vars(ours)  # as dataclasses leaves it


def test_specialization_instances_match_dataclasses():
    from cubepy.ir.types import f16, f32
    twin = reference_module("cubepy.spec", MODULES["cubepy.spec"])
    from cubepy.spec import Specialization
    args = dict(generics={"F": f32}, comptime={"n": 3, "flag": True}, cube_dim=(64, 2, 1),
                line_sizes={"x": 4, "y": 1}, shared_mem=256, misaligned=("x",))
    ours, ref = Specialization.make(**args), twin.Specialization.make(**args)
    assert repr(ours) == repr(ref) and ours._key == ref._key
    assert ours == Specialization.make(**args) and hash(ours) == hash(ref)
    assert ours != Specialization.make(**{**args, "comptime": {"n": 3, "flag": 1}})
    assert ours != Specialization.make(**{**args, "generics": {"F": f16}})
    with pytest.raises(FrozenInstanceError):
        ours.cube_dim = (1, 1, 1)
