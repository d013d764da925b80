"""`@cube`: the decorator, and CubeFunction, which specialises, compiles, caches and
launches a kernel."""
from __future__ import annotations

import functools
import inspect
import logging
import math
import os
import struct
import sys
import threading
import time
import weakref
from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .ir.batched_dataclass import build_pending, dataclass  # (cheap to create)
from . import abi as abi_mod
from . import spec_cache
from .abi import KernelABI, compute_abi
from .deep import call_deep
from .errors import (CompileError, CubepyError, LaunchError, OptionError,
                     hide_internal_frames, line_sizes_option, public_entry)
from .interop import make_importer
from .ir.dtype_facts import fits, int_range
from .ir.types import F32_ON_HOST, DType, Generic, dtype_from_name, f32, i32, u32
from .lang import LineOf
from .log import describe, elapsed_ms, logger
from .lru import LRU
from .spec import Specialization
from .targets import WMMA_TILE_ALIGN, get_target, line_sizes_for, source_targets

# The frontend, the passes and the IR load at first use: `import cubepy` stays light.
if TYPE_CHECKING:
    from .ir import nodes as ir
    from .frontend import ParamInfo, ParsedFunction


class _SourceTargets:
    """The targets whose source the user can see, read from the registry on each use
    (a target registered later, such as a test's toy target, is included)."""

    def __contains__(self, name: object) -> bool:
        return name in source_targets()

    def __iter__(self):
        return iter(source_targets())

    def __repr__(self) -> str:
        return repr(source_targets())


SOURCE_TARGETS = _SourceTargets()
# Per-kernel in-memory caches, least recently used dropped first (docs/CACHE.md): compiled
# specialisations (IR, ABI, source, and one executable per client) and launch plans.
COMPILED_CACHE = 64
PLAN_CACHE = 256


@dataclass(frozen=False)
class Specialised:
    """One specialisation of a kernel for one target: IR after passes, ABI, and the
    generated code (`artefact`, a codegen.Compiled every client of the target reuses).
    Read from the disk cache, `kernel` is a spec_cache.KernelFacts: the parameters and
    declarations launches check, without a body."""

    kernel: ir.Kernel
    abi: KernelABI
    artefact: Any  # codegen.Compiled (imported with the code generators, on first use)
    checked: bool
    # client -> its executable of this specialisation, shared by every plan for it (other
    # cube counts, scalar types); weak, so a dropped client does not stay alive here.
    executables: weakref.WeakKeyDictionary = field(
        default_factory=weakref.WeakKeyDictionary, repr=False, compare=False)

    @property
    def source(self) -> str:
        """The generated source (for the cpu target, its numpy code)."""
        return self.artefact.source


@dataclass(frozen=False)
class _LaunchPlan:
    """What a launch needs once arguments of a given signature were checked once."""

    client: Any  # the client it was made for (plans are keyed by id(client))
    executable: Any
    buffer_args: tuple[int, ...]  # positions of the buffer arguments, in ABI order
    pack: Callable[[tuple], bytes]
    # (position, name) of the buffers an unchecked CUDA launch hands to wmma directly:
    # each must start 32-byte aligned (_check_tile_alignment)
    aligned_args: tuple[tuple[int, str], ...] = ()


class CubeFunction:
    """A function compiled by cubepy. `@cube(launch=True)` kernels can be launched;
    plain `@cube` functions are device functions callable from other cube functions."""

    def __init__(self, fn: Callable, launch: bool, fast_math: bool = True):
        _require_function(fn)
        self.fn = fn
        self.is_kernel = launch
        # False: strict floats, every float operation rounded as written (no contraction)
        self.fast_math = fast_math
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._parsed: ParsedFunction | None = None
        # Bounded, and owned by this object: they (and the executables they hold) go
        # with the kernel.
        self._compiled: LRU[tuple, Specialised] = LRU(COMPILED_CACHE)
        self._plans: LRU[tuple, _LaunchPlan] = LRU(PLAN_CACHE)
        self._newest_plan: _LaunchPlan | None = None  # the one at the end of _plans
        self._key_of: Callable[[tuple], tuple] | None = None  # see _make_key_of
        # Held while specialising, compiling and planning (rare: launches that hit a
        # plan never take it), so threads sharing a kernel compile each variant once.
        self._lock = threading.RLock()
        self._foreign_of: Callable[[tuple], bool] | None = None  # see _make_foreign_of
        self._buffer_params: tuple[tuple[int, str], ...] = ()
        self._foreign_memo: dict = {}  # see interop.import_arguments
        self._importer: Callable | None = None  # see _make_importer
        # The function's key in the disk cache of compiled kernels (spec_cache.py), and
        # its signature read back from there: a function compiled by an earlier process
        # is not parsed until something needs more than its parameters.
        self._disk_key = spec_cache.function_key(fn, launch, fast_math) \
            if spec_cache.cache_dir() is not None else None
        self._signature = spec_cache.load_signature(fn, self._disk_key)
        if self._signature is None:
            parsed = self._parse()  # (syntax errors surface here)
            spec_cache.store_signature(parsed, self._disk_key)
        # a @cubepy.struct parameter: launches flatten its argument into field arguments
        # (cached signatures never have one)
        self._has_structs = bool((self._parsed or self._signature).structs)

    # -- compilation ------------------------------------------------------------------
    def _parse(self) -> ParsedFunction:
        if self._parsed is None:
            self._parsed = call_deep(lambda: parse_function(self.fn, self.is_kernel),
                                     self._too_deep)
        return self._parsed

    def _too_deep(self, reason: str) -> CompileError:
        code = self.fn.__code__
        return CompileError(f"{self.__name__}: {reason}", code.co_filename,
                            code.co_firstlineno)

    @property
    def params(self) -> tuple[ParamInfo, ...]:
        """The parameters, a struct parameter's leaf fields each one (`cfg.scale`)."""
        return (self._parsed or self._signature or self._parse()).params

    @property
    def arg_names(self) -> tuple[str, ...]:
        """The names of the arguments a launch takes, as written (a struct is one)."""
        return (self._parsed or self._signature or self._parse()).arg_names

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a @cube function: call it inside another @cube "
                        f"function, or launch it with {self.__name__}.launch(...)")

    def _specialization(self, cube_dim, options: dict[str, Any],
                        line_sizes: dict[str, int] | None = None) -> Specialization:
        """A Specialization from source()/ir() keyword arguments (Float=f32, tag=...)
        and their `line_sizes` ({"x": 4}: Line parameter -> line size, default 1)."""
        parsed = self._parse()
        comptime_names = {p.name: p for p in parsed.params if p.kind == "comptime"}
        if "line_sizes" in options and "line_sizes" not in comptime_names:
            options = dict(options)  # line sizes given among the other options
            line_sizes = {**(options.pop("line_sizes") or {}), **(line_sizes or {})}
        shared_mem = None
        if SHARED_MEM in options and SHARED_MEM not in comptime_names:
            options = dict(options)  # DynamicSharedMemory's bytes, as at launch
            shared_mem = _shared_mem_bytes(options.pop(SHARED_MEM), OptionError)
        generics, comptime = {}, {}
        for name, value in options.items():
            if name in comptime_names:
                comptime[name] = _convert_comptime(comptime_names[name], value)
            elif name in parsed.generics:
                dtype = _as_dtype(value)
                if dtype is None or not parsed.generics[name].accepts(dtype):
                    bound = parsed.generics[name].bound
                    raise OptionError(f"{name}={value!r}: expected one of "
                                      f"{', '.join(t.name for t in bound)}")
                generics[name] = dtype
            else:
                known = sorted(set(comptime_names) | set(parsed.generics))
                raise OptionError(f"{self.__name__} has no generic placeholder or comptime "
                                  f"parameter {name!r} (known: {', '.join(known) or 'none'})")
        self._check_line_sizes(parsed, line_sizes or {}, generics)
        return Specialization.make(generics, comptime, _dim3(cube_dim, "cube_dim"),
                                   line_sizes, shared_mem, self.fast_math)

    def _check_line_sizes(self, parsed: ParsedFunction, line_sizes: dict[str, int],
                          generics: dict[str, DType]) -> None:
        """OptionError for a line size given to no Line parameter, or one its element
        type cannot have (16 for 8-bit floats only; a placeholder not given may be)."""
        lines = {}
        for p in parsed.params:
            if isinstance(p.elem, LineOf) and p.kind in ("tensor", "array"):
                elem = p.elem.elem
                if isinstance(elem, Generic):
                    elem = generics.get(elem.name, elem)
                types = elem.bound if isinstance(elem, Generic) else (elem,)
                lines[p.name] = max((line_sizes_for(t) for t in types), key=len)
        for name, size in line_sizes.items():
            if name not in lines:
                raise OptionError(f"{line_sizes_option()}: {self.__name__} has no Line "
                                  f"parameter {name!r} (Line parameters: "
                                  f"{', '.join(sorted(lines)) or 'none'})")
            if size not in lines[name] or isinstance(size, bool):
                raise OptionError(f"{line_sizes_option()}: {name}={size!r}: a line size is "
                                  f"one of {', '.join(map(str, lines[name]))}")

    def _compile(self, spec: Specialization, target: str, checked: bool,
                 on_miss: Callable[[], None] | None = None) -> Specialised:
        key = (spec, target, checked)
        compiled = self._compiled.get(key)
        if compiled is not None:
            if logger.isEnabledFor(logging.DEBUG):  # describe() only when it is printed
                logger.debug("compile cache hit: %s for %s (%s)", self.__name__, target,
                             describe(spec))
            return compiled
        with self._lock:
            return self._compile_locked(key, spec, target, checked, on_miss)

    def _compile_locked(self, key: tuple, spec: Specialization, target: str,
                        checked: bool, on_miss: Callable[[], None] | None = None
                        ) -> Specialised:
        compiled = self._compiled.get(key)
        if compiled is None:
            start = time.perf_counter()
            found = spec_cache.load_spec(self.fn, self._disk_key, spec, target, checked)
            if found is not None:
                compiled = Specialised(*found, checked)
            else:
                if on_miss is not None:  # (before the frontend, which it may overlap)
                    on_miss()
                parsed = self._parse()
                compiled = call_deep(lambda: _compile_spec(parsed, spec, target, checked),
                                     self._too_deep)
                spec_cache.store_spec(parsed, self._disk_key, spec, target, checked,
                                      compiled.kernel, compiled.abi, compiled.artefact)
            self._compiled.put(key, compiled)
            if logger.isEnabledFor(logging.INFO):
                logger.info("%s %s for %s (%s%s)%s in %.1f ms",
                            "compiled" if found is None else "read", self.__name__, target,
                            describe(spec), "" if checked else ", unchecked",
                            "" if found is None else " from the disk cache",
                            elapsed_ms(start))
        return compiled

    @public_entry
    def source(self, target: str = "cuda", cube_dim=(1, 1, 1), checked: bool = True,
               line_sizes: dict[str, int] | None = None, **specialization) -> str:
        """The generated source for `target` ("cuda", "wgsl" or "metal").

        `specialization` binds generic placeholders (Float=f32) and comptime parameters.
        `checked=True` (the default) shows the bounds-checked variant that `launch` runs.
        `line_sizes={"x": 4}` gives Line parameters their line size (default 1).
        """
        if target not in source_targets():
            raise OptionError(f"unknown target {target!r}: expected one of "
                              f"{', '.join(source_targets())}")
        self._require_kernel("source")
        spec = self._specialization(cube_dim, specialization, line_sizes)
        return self._compile(spec, target, checked).source

    @public_entry
    def ir(self, cube_dim=(1, 1, 1), target: str | None = None,
           line_sizes: dict[str, int] | None = None, checked: bool = True,
           **specialization) -> str:
        """The IR as text, after the target-independent passes (or after the passes for
        `target` when given). `line_sizes` and `checked` as for source()."""
        self._require_kernel("ir")
        spec = self._specialization(cube_dim, specialization, line_sizes)
        parsed = self._parse()
        from .ir.printer import print_kernel
        return call_deep(lambda: print_kernel(run_pipeline(
            build_kernel(parsed, spec, checked), target)), self._too_deep)

    @public_entry
    def explore(self, cube_dim=(1, 1, 1), checked: bool = True,
                line_sizes: dict[str, int] | None = None, **specialization):
        """The Python source beside the IR, CUDA, WGSL and Metal it becomes, line by line
        (arguments as for source()). In Jupyter it shows as a page; `.save("k.html")`
        writes one self-contained HTML file. Needs pygments."""
        self._require_kernel("explore")
        from .explore import explore
        return explore(self, cube_dim, checked, line_sizes, **specialization)

    def _require_kernel(self, what: str) -> None:
        if not self.is_kernel:
            raise OptionError(f"{self.__name__} is a device function (@cube without "
                              f"launch=True); {what}() needs a kernel")

    # -- launching --------------------------------------------------------------------
    def launch(self, client, cube_count, cube_dim, *args, **kwargs) -> None:
        """Launches the kernel with bounds-checked buffer accesses: an out-of-range read
        gives 0 and an out-of-range write is dropped. `shared_mem=<bytes>` (a keyword)
        sizes the kernel's DynamicSharedMemory. A cube count of 0 on any axis runs
        nothing (the arguments are still checked)."""
        try:  # free unless raised (zero-cost try): the user sees only their own frames
            self._launch(client, cube_count, cube_dim, args, kwargs, True)
        except CubepyError as exc:
            hide_internal_frames(exc)
            raise

    def launch_unchecked(self, client, cube_count, cube_dim, *args, **kwargs) -> None:
        """Launches without bounds checks: faster, and the caller guarantees every access
        is in range."""
        try:
            self._launch(client, cube_count, cube_dim, args, kwargs, False)
        except CubepyError as exc:
            hide_internal_frames(exc)
            raise

    def prepare(self, client, cube_count, cube_dim, *args, **kwargs) -> None:
        """Does what `launch` with these arguments does before anything runs: checks
        them, compiles the kernel (or reads it from the disk cache) and loads it. A
        launch with arguments of the same kinds then starts at once; nothing runs on the
        device."""
        try:
            self._prepare(client, cube_count, cube_dim, args, kwargs, True)
        except CubepyError as exc:
            hide_internal_frames(exc)
            raise

    def prepare_unchecked(self, client, cube_count, cube_dim, *args, **kwargs) -> None:
        """`prepare` for `launch_unchecked`."""
        try:
            self._prepare(client, cube_count, cube_dim, args, kwargs, False)
        except CubepyError as exc:
            hide_internal_frames(exc)
            raise

    def _prepare(self, client, cube_count, cube_dim, args: tuple, kwargs: dict,
                 checked: bool) -> None:
        args, count, dim, shared_mem = self._launch_inputs(client, cube_count, cube_dim,
                                                           args, kwargs)
        key_of = self._key_of or self._make_key_of()
        try:
            key = (id(client), count, dim, checked, shared_mem) + key_of(args)
        except (AttributeError, TypeError, IndexError, struct.error):
            key = None  # (a wrong argument: _plan raises the LaunchError naming it)
        with self._lock:
            plan = self._plan(client, count, dim, args, checked, shared_mem)
            if key is not None:
                self._plans.put(key, plan)
                self._newest_plan = plan

    def _compile_ahead(self, checked: bool, client, cube_count, cube_dim, /,
                       *args, **kwargs) -> None:
        """Generates the code a launch with these arguments runs and hands it to the
        client's `compile_ahead`, so that (on cuda) NVRTC compiles it on another thread
        while the caller goes on; the launch, or `prepare`, takes the result. Used by
        autotune to compile its configs side by side."""
        args, count, dim, shared_mem = self._launch_inputs(client, cube_count, cube_dim,
                                                           args, kwargs)
        with self._lock:
            compiled = self._specialise(client, count, dim, args, checked, shared_mem)
        if compiled.executables.get(client) is None:
            client.compile_ahead(compiled.artefact)

    def _launch_inputs(self, client, cube_count, cube_dim, args: tuple,
                       kwargs: dict) -> tuple[tuple, tuple, tuple, int | None]:
        """The arguments as `_launch` reads them (keywords merged, structs flattened,
        other libraries' arrays imported), the dims and `shared_mem`: for `prepare`,
        off the launch's path, which inlines the same steps."""
        if not self.is_kernel:
            raise LaunchError(f"{self.__name__} is a device function (@cube without "
                              f"launch=True) and cannot be launched")
        shared_mem = None
        if kwargs:
            if SHARED_MEM in kwargs and not any(p.name == SHARED_MEM for p in self.params):
                kwargs = dict(kwargs)
                shared_mem = _shared_mem_bytes(kwargs.pop(SHARED_MEM), LaunchError)
            args = self._merge_kwargs(args, kwargs) if kwargs else args
        if self._has_structs:
            args = self._flatten_structs(args)
        count = _dim3_cached(cube_count, "cube_count")
        dim = _dim3_cached(cube_dim, "cube_dim")
        foreign = self._foreign_of or self._make_foreign_of()
        try:
            has_foreign = foreign(args)
        except IndexError:  # too few arguments: _plan names the missing one
            has_foreign = False
        if has_foreign:
            importer = self._importer or self._make_importer()
            args, _ = importer(client, args, self._foreign_memo)
        return args, count, dim, shared_mem

    def _launch(self, client, cube_count, cube_dim, args: tuple, kwargs: dict,
                checked: bool) -> None:
        if not self.is_kernel:
            raise LaunchError(f"{self.__name__} is a device function (@cube without "
                              f"launch=True) and cannot be launched")
        shared_mem = None
        if kwargs:
            if SHARED_MEM in kwargs and not any(p.name == SHARED_MEM for p in self.params):
                kwargs = dict(kwargs)  # an int from here on (True is not 1 bytes)
                shared_mem = _shared_mem_bytes(kwargs.pop(SHARED_MEM), LaunchError)
            args = self._merge_kwargs(args, kwargs) if kwargs else args
        if self._has_structs:
            args = self._flatten_structs(args)
        try:  # validated dims by value: _dim3 costs ~2 us, a dict hit ~0.1 us
            count = _DIMS[cube_count]
            dim = _DIMS[cube_dim]
        except (KeyError, TypeError):
            count = _dim3_cached(cube_count, "cube_count")
            dim = _dim3_cached(cube_dim, "cube_dim")
        stream = None
        foreign = self._foreign_of or self._make_foreign_of()
        try:
            has_foreign = foreign(args)
        except IndexError:  # too few arguments: _plan names the missing one
            has_foreign = False
        if has_foreign:
            importer = self._importer or self._make_importer()
            args, stream = importer(client, args, self._foreign_memo)
        key_of = self._key_of or self._make_key_of()
        plans = self._plans
        try:
            key = (id(client), count, dim, checked, shared_mem) + key_of(args)
            plan = plans[key]  # the LRU's plain lookup; refreshed below when needed
            if plan is not self._newest_plan:  # (a refresh hashes the key again)
                plans.move_to_end(key)
                self._newest_plan = plan
            if plan.client is not client:  # a reused id()
                plan = None
        except KeyError:
            plan = None
        except (AttributeError, TypeError, IndexError, struct.error):  # _plan says which
            key = plan = None
        if plan is None:
            with self._lock:
                plan = plans.get(key) if key is not None else None
                if plan is None or plan.client is not client:
                    plan = self._plan(client, count, dim, args, checked, shared_mem)
                    if key is not None:
                        plans.put(key, plan)
                        self._newest_plan = plan
        buffers = [args[i] for i in plan.buffer_args]
        for b in buffers:
            if b.client is not client:  # re-plan: raises the LaunchError naming it
                self._plan(client, count, dim, args, checked, shared_mem)
                raise LaunchError("a tensor argument belongs to another client")
        if plan.aligned_args:
            _check_tile_alignment(self.__name__, args, plan.aligned_args)
        try:
            info = plan.pack(args, count)
        except (struct.error, TypeError, ValueError, OverflowError):
            # raises the precise LaunchError
            self._plan(client, count, dim, args, checked, shared_mem)
            raise
        if not (count[0] and count[1] and count[2]):
            return  # no cube to run: a no-op, as in CubeCL (arguments were checked)
        if stream is None:
            client.dispatch(plan.executable, count, dim, buffers, info)
        else:
            client.dispatch(plan.executable, count, dim, buffers, info, stream=stream)

    def _make_foreign_of(self) -> Callable[[tuple], bool]:
        """A generated function args -> whether a buffer argument is not a DeviceTensor
        (an array of another library to import, or a wrong argument): one `type(..) is`
        test per buffer parameter, so launches with cubepy tensors pay almost nothing."""
        from .runtime.base import DeviceTensor
        self._buffer_params = tuple((i, p.name) for i, p in enumerate(self.params)
                                    if p.kind in ("tensor", "array"))
        tests = [f"type(a[{i}]) is not _T" for i, _ in self._buffer_params] or ["False"]
        self._foreign_of = eval(f"lambda a: {' or '.join(tests)}", {"_T": DeviceTensor})
        return self._foreign_of

    def _make_importer(self) -> Callable:
        """interop's importer of this kernel's foreign arrays, generated at the first
        launch given one (0.3-0.5 ms: a launch with cubepy tensors never needs it)."""
        if self._foreign_of is None:
            self._make_foreign_of()  # (sets _buffer_params)
        self._importer = make_importer(self._buffer_params, len(self.params))
        return self._importer

    def _make_key_of(self) -> Callable[[tuple], tuple]:
        """A generated function args -> what decides the launch plan: the argument count,
        each buffer's dtype, line size, line alignment and rank, each scalar's Python type and each
        comptime's type and value (one call, no per-argument dispatch). A comptime float
        counts by its bit pattern: -0.0 gets its own plan, and NaN finds its plan again."""
        parts = ["len(a)"]
        for i, p in enumerate(self.params):
            if p.kind in ("tensor", "array"):
                parts += [f"a[{i}].dtype", f"a[{i}].line_size", f"a[{i}].line_aligned",
                          f"len(a[{i}].shape)"]
            elif p.kind == "comptime" and p.pytype is float:
                # Non-zero, non-NaN floats are equal exactly when their bits are: only
                # zeros and NaNs pay for the bit pattern.
                parts += [f"type(a[{i}])",
                          f"(a[{i}] if a[{i}] == a[{i}] and a[{i}] else _bits(a[{i}]))"]
            elif p.kind == "comptime":
                parts += [f"type(a[{i}])", f"a[{i}]"]
            else:
                parts.append(f"type(a[{i}])")
        self._key_of = eval(f"lambda a: ({', '.join(parts)},)",
                            {"_bits": struct.Struct("<d").pack})
        return self._key_of

    def _flatten_structs(self, args: tuple) -> tuple:
        """The arguments with each struct replaced by its leaf fields (records.py), in
        the order of `params`; LaunchError naming a missing or wrong field."""
        from .records import flatten_value
        parsed = self._parse()
        names = parsed.arg_names
        if len(args) != len(names) or any(a is _MISSING for a in args):
            missing = [p for p, a in zip(names, args + (_MISSING,) * len(names))
                       if a is _MISSING]
            detail = (f"missing {', '.join(repr(m) for m in missing)}" if missing
                      else f"got {len(args)}")
            raise LaunchError(f"{self.__name__}() takes {len(names)} arguments "
                              f"({', '.join(names)}); {detail}", missing[0] if missing else None)
        out: list = []
        for name, a in zip(names, args):
            cls = parsed.structs.get(name)
            if cls is None:
                out.append(a)
            else:
                flatten_value(cls, a, name, self.__name__, out)
        return tuple(out)

    def _merge_kwargs(self, args: tuple, kwargs: dict) -> tuple:
        names = list(self.arg_names)
        merged = list(args) + [_MISSING] * (len(names) - len(args))
        for name, value in kwargs.items():
            if name not in names:
                raise LaunchError(f"{self.__name__}() got an unexpected argument {name!r}",
                                  name)
            i = names.index(name)
            if i < len(args):
                raise LaunchError(f"{self.__name__}() got two values for parameter "
                                  f"{name!r}", name)
            merged[i] = value
        return tuple(merged)

    def _plan(self, client, count, dim, args: tuple, checked: bool,
              shared_mem=None) -> _LaunchPlan:
        """Checks arguments against the signature and the device; compiles.
        `shared_mem`: the bytes of the kernel's DynamicSharedMemory (None: not given)."""
        compiled = self._specialise(client, count, dim, args, checked, shared_mem)
        executable = compiled.executables.get(client)
        if executable is None:
            start = time.perf_counter()
            executable = call_deep(
                lambda: client.compile(compiled.kernel, compiled.abi, checked,
                                       compiled=compiled.artefact), self._too_deep)
            compiled.executables[client] = executable
            logger.info("built the %s executable of %s in %.1f ms", client.runtime,
                        self.__name__, elapsed_ms(start))
        params = self.params
        index = {p.ir_name: i for i, p in enumerate(params)}
        buffer_args = tuple(index[b.name] for b in compiled.abi.buffers)
        aligned = (direct_tile_params(compiled.kernel, params)
                   if client.target == "cuda" and not checked else ())
        return _LaunchPlan(client, executable, buffer_args, _make_packer(compiled.abi, index),
                           aligned)

    def _specialise(self, client, count, dim, args: tuple, checked: bool,
                    shared_mem=None) -> Specialised:
        """`_plan`'s checks of the arguments against the signature and the device, and
        the code generated for them (the frontend's part, before the runtime's)."""
        from .runtime.base import Client
        if not isinstance(client, Client):
            raise LaunchError(f"the first argument of launch must be a client "
                              f"(cubepy.client()), not {type(client).__name__}", "client")
        params = self.params
        if len(args) != len(params) or any(a is _MISSING for a in args):
            missing = [p.name for p, a in zip(params, args + (_MISSING,) * len(params))
                       if a is _MISSING]
            detail = (f"missing {', '.join(repr(m) for m in missing)}" if missing
                      else f"got {len(args)}")
            raise LaunchError(f"{self.__name__}() takes {len(params)} arguments "
                              f"({', '.join(p.name for p in params)}); {detail}",
                              missing[0] if missing else None)
        _check_dims(client, count, dim)
        generics: dict[str, tuple[DType, str]] = {}
        comptime: dict[str, Any] = {}
        line_sizes: dict[str, int] = {}
        deferred: list[tuple[ParamInfo, Any]] = []
        for p, a in zip(params, args):
            if p.kind in ("tensor", "array"):
                _bind_buffer(self.__name__, client, p, a, generics, line_sizes)
            elif p.kind == "comptime":
                comptime[p.name] = _convert_comptime(p, a)
            else:
                deferred.append((p, a))
        for p, a in deferred:  # scalars: bind placeholders still open from the value
            _bind_scalar(client, p, a, generics)
        if shared_mem is not None:
            shared_mem = _shared_mem_bytes(shared_mem, LaunchError)
        # A line buffer whose address is not a multiple of its line's bytes (a view from
        # an odd offset) gets element accesses: its own specialisation, still correct.
        misaligned = [p.name for p, a in zip(params, args)
                      if p.name in line_sizes and not a.line_aligned]
        spec = Specialization.make({k: v for k, (v, _) in generics.items()}, comptime, dim,
                                   line_sizes, shared_mem, self.fast_math, misaligned)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("launch plan miss: %s on %s (%s)", self.__name__, client.runtime,
                         describe(spec))
        compiled = self._compile(spec, client.target, checked,
                                 getattr(client, "_compile_coming", None))
        _check_shared_memory(self.__name__, client, compiled.kernel, shared_mem,
                             compiled.artefact.shared_bytes)
        _check_index_ranks(compiled.kernel, params, args)
        return compiled


_MISSING = object()


def parse_function(fn: Callable, is_kernel: bool) -> ParsedFunction:
    """frontend.parse_function, loaded at first use (inside the compiler's GC pause)."""
    from .frontend.parse import parse_function as parse
    return parse(fn, is_kernel)


def build_kernel(parsed: ParsedFunction, spec: Specialization,
                 checked: bool = True) -> ir.Kernel:
    """frontend.build_kernel, loaded at first use so that `import cubepy` stays light."""
    from .frontend.build import build_kernel as build
    return build(parsed, spec, checked)


def run_pipeline(kernel: ir.Kernel, target: str | None) -> ir.Kernel:
    """ir.passes.run_pipeline, loaded at first use."""
    from .ir.passes import run_pipeline as run
    return run(kernel, target)


def _compile_spec(parsed: ParsedFunction, spec: Specialization, target: str,
                  checked: bool) -> Specialised:
    """Builds, runs the passes and generates the code of one specialisation (once: the
    runtimes take the generated record)."""
    kernel = run_pipeline(build_kernel(parsed, spec, checked), target)
    from .codegen import generate
    from .targets import get_target
    abi = compute_abi(kernel, checked, needs_cube_count=get_target(target).needs_cube_count)
    artefact = generate(kernel, target, abi, checked)
    if not spec.fast_math:
        from .codegen.float_mode import strict_floats
        artefact = strict_floats(artefact)
    return Specialised(kernel, abi, artefact, checked)


_DIMS: dict = {}  # cube counts/dims already validated, keyed by the value given


def _dim3_cached(value, what: str) -> tuple[int, int, int]:
    """_dim3, remembered for hashable values (CubeCount, CubeDim, tuples, ints)."""
    try:
        return _DIMS[value]
    except (KeyError, TypeError):
        pass
    dims = _dim3(value, what)
    # A zero size is valid only as a cube count: kept out of the table that both share.
    if len(_DIMS) < 4096 and all(dims):
        try:
            _DIMS[value] = dims
        except TypeError:  # a list: fine, just not cached
            pass
    return dims


def _dim3(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, (str, bytes, float)):
        raise LaunchError(f"{what} must be a CubeDim/CubeCount or up to three ints, "
                          f"not {value!r}", what)
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be a CubeDim/CubeCount or up to three ints, "
                          f"not {value!r}", what) from None
    # A cube count of 0 on some axis launches nothing (CubeCL); a cube dim needs units.
    low = 0 if what == "cube_count" else 1
    if not 1 <= len(dims) <= 3 or any(d < low for d in dims):
        sizes = "sizes >= 0" if low == 0 else "positive sizes"
        raise LaunchError(f"{what} {value!r} must have 1 to 3 {sizes}", what)
    return dims + (1,) * (3 - len(dims))


def _check_dims(client, count, dim) -> None:
    lim = client.limits
    for axis, size, top in zip("xyz", dim, lim.max_cube_dim):
        if size > top:
            raise LaunchError(f"cube_dim.{axis} = {size} exceeds the device's limit {top} "
                              f"({client.device})", "cube_dim")
    units = dim[0] * dim[1] * dim[2]
    if units > lim.max_units_per_cube:
        raise LaunchError(f"cube_dim {dim} has {units} units per cube; the device allows "
                          f"{lim.max_units_per_cube} ({client.device})", "cube_dim")
    for axis, size, top in zip("xyz", count, lim.max_cube_count):
        if size > top:
            raise LaunchError(f"cube_count.{axis} = {size} exceeds the device's limit {top} "
                              f"({client.device})", "cube_count")


def tiled_global_buffers(kernel: ir.Kernel) -> frozenset[str]:
    """The global buffers some cmma load or store of the kernel accesses (read from the
    facts of a kernel loaded from the disk cache, which keep no body)."""
    if kernel.body is None:
        return kernel.tiled
    from .ir.visit import matrix_buffers
    return matrix_buffers(kernel, "global")


def direct_tile_params(kernel: ir.Kernel, params) -> tuple[tuple[int, str], ...]:
    """(position, name) of the buffer parameters whose memory cmma loads and stores
    access directly (an unchecked CUDA launch), in parameter order."""
    tiled = tiled_global_buffers(kernel)
    return tuple((i, p.name) for i, p in enumerate(params) if p.ir_name in tiled)


def _check_tile_alignment(kernel_name: str, args: tuple,
                          aligned: tuple[tuple[int, str], ...]) -> None:
    """A LaunchError naming the first buffer wmma would access misaligned: its start
    (a foreign tensor's pointer, a view's offset) not on a 32-byte boundary. The tile
    offsets and strides inside it are the kernel's to keep aligned (docs/LANGUAGE.md)."""
    for i, name in aligned:
        ptr = args[i].handle.ptr
        if ptr % WMMA_TILE_ALIGN:
            raise LaunchError(
                f"{kernel_name}: the buffer {name!r} starts at device address {ptr:#x}, "
                f"not a multiple of {WMMA_TILE_ALIGN} bytes; its cmma tiles need that in "
                f"an unchecked launch on CUDA (launch() stages tiles and takes any "
                f"buffer)", name)


def _check_shared_memory(kernel_name: str, client, kernel: ir.Kernel,
                         shared_mem: int | None = None, total: int | None = None) -> None:
    """Refuses a kernel whose SharedMemory exceeds the device's per-cube limit before it
    reaches the driver (some drivers hang on such a pipeline instead of rejecting it).
    With `shared_mem` (DynamicSharedMemory's bytes) the error names that argument.
    `total`: the bytes the generated code declares (its record's `shared_bytes`), which
    counts what the compiler adds beyond the SharedMemory (a checked CUDA launch's cmma
    staging tiles)."""
    sizes = []
    for decl in kernel.shared:
        elem = decl.buffer.elem
        # WGSL stores bools in 4-byte words; CUDA and cpu use the dtype's size.
        itemsize = (get_target(client.target).bool_storage_bytes if elem.is_bool
                    else elem.itemsize)
        sizes.append((decl.buffer.name, decl.size * itemsize))
    declared = sum(n for _, n in sizes)
    staging = 0 if total is None else total - declared
    total = declared + staging
    if not total:
        return
    limit = client.limits.max_shared_bytes
    if total > limit:
        detail = ", ".join(f"{name}: {n} bytes" for name, n in sizes)
        if staging:
            detail += (", " if detail else "") + (
                f"cmma staging tiles of the checked launch: {staging} bytes")
        param = sizes[0][0] if len(sizes) == 1 else None
        if shared_mem is not None:
            param = SHARED_MEM
            detail += f"; the DynamicSharedMemory takes {SHARED_MEM}={shared_mem}"
        raise LaunchError(f"{kernel_name} uses {total} bytes of SharedMemory ({detail}); "
                          f"the {client.runtime} device {client.device!r} allows "
                          f"{limit} bytes per cube (max_shared_bytes)", param)


SHARED_MEM = "shared_mem"  # the launch keyword sizing DynamicSharedMemory, in bytes


def _shared_mem_bytes(value, error: type) -> int:
    """`shared_mem=` as an int of bytes >= 0, else `error` (LaunchError at launch,
    OptionError in source()/ir()) naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        message = (f"{SHARED_MEM} is the byte size of the kernel's DynamicSharedMemory: an "
                   f"int >= 0, not {value!r}")
        raise error(message, SHARED_MEM) if error is LaunchError else error(message)
    return int(value)


def _bind_generic(placeholder: Generic, dtype: DType, param: str,
                  generics: dict[str, tuple[DType, str]]) -> None:
    if not placeholder.accepts(dtype):
        raise LaunchError(f"parameter {param!r}: {dtype.name} is not a valid "
                          f"{placeholder.name} (expected one of "
                          f"{', '.join(t.name for t in placeholder.bound)})", param)
    bound = generics.get(placeholder.name)
    if bound is None:
        generics[placeholder.name] = (dtype, param)
    elif bound[0] is not dtype:
        raise LaunchError(f"parameter {param!r} binds {placeholder.name} to {dtype.name}, "
                          f"but parameter {bound[1]!r} already bound it to {bound[0].name}",
                          param)


def _bind_buffer(kernel: str, client, p: ParamInfo, a, generics, line_sizes) -> None:
    from .runtime.base import DeviceTensor
    if not isinstance(a, DeviceTensor):
        raise LaunchError(f"parameter {p.name!r} of {kernel} is {p.kind.capitalize()}[...]: "
                          f"pass a device tensor (client.tensor(...)), not "
                          f"{type(a).__name__}", p.name)
    if a.client is not client:
        raise LaunchError(f"parameter {p.name!r}: the tensor belongs to another client "
                          f"({a.client.runtime}: {a.client.device})", p.name)
    if len(a.shape) > abi_mod.MAX_RANK:
        raise LaunchError(f"parameter {p.name!r} has rank {len(a.shape)}; at most "
                          f"{abi_mod.MAX_RANK} dimensions are supported", p.name)
    if a.buffer_len > _U32_MAX or a.len > _U32_MAX:
        raise LaunchError(f"parameter {p.name!r} has {max(a.buffer_len, a.len)} elements; "
                          f"kernels index with u32, so at most {_U32_MAX} fit", p.name)
    elem = p.elem
    if isinstance(elem, LineOf):
        elem = elem.elem
        sizes = line_sizes_for(a.dtype)
        if a.line_size not in sizes:
            raise LaunchError(f"parameter {p.name!r}: line size {a.line_size} is not "
                              f"supported (one of {', '.join(map(str, sizes))})", p.name)
        line_sizes[p.name] = a.line_size
    elif a.line_size != 1:
        raise LaunchError(f"parameter {p.name!r} is not a Line tensor; it cannot take "
                          f"line size {a.line_size}", p.name)
    if isinstance(elem, Generic):
        _bind_generic(elem, a.dtype, p.name, generics)
    elif a.dtype is not elem:
        raise LaunchError(f"parameter {p.name!r} expects {elem.name} elements, got "
                          f"{a.dtype.name}", p.name)


_U32_MAX = int_range(u32)[1]


def _check_index_ranks(kernel, params, args) -> None:
    """LaunchError when a tensor the kernel indexes as t[i, j, ...] has another rank than
    the number of indices (the rank is part of the launch plan's key: checked once)."""
    ranks = {p.name: p.rank for p in kernel.params if p.rank is not None}
    for p, a in zip(params, args):
        want = ranks.get(p.name)
        if want is not None and len(a.shape) != want:
            raise LaunchError(f"parameter {p.name!r} has rank {len(a.shape)} (shape "
                              f"{a.shape}), but the kernel indexes it with {want} indices "
                              f"({p.name}[{', '.join('ijklmnop'[:want])}])", p.name)


def _bind_scalar(client, p: ParamInfo, a, generics) -> None:
    if isinstance(a, np.generic):
        dtype = _as_dtype(a.dtype.name)
        a_kind = "float" if isinstance(a, np.floating) else "int"
    elif isinstance(a, bool):
        dtype, a_kind = None, "bool"
    elif isinstance(a, int):
        dtype, a_kind = None, "int"
    elif isinstance(a, float):
        dtype, a_kind = None, "float"
    else:
        raise LaunchError(f"parameter {p.name!r} is a scalar: pass a Python number, not "
                          f"{type(a).__name__}", p.name)
    elem = p.elem
    if isinstance(elem, Generic):
        if elem.name in generics:
            elem = generics[elem.name][0]
        else:
            default = dtype or {"float": f32, "int": i32, "bool": i32}[a_kind]
            if not elem.accepts(default):
                default = elem.bound[0] if a_kind != "float" or not elem.accepts(f32) else f32
            _bind_generic(elem, default, p.name, generics)
            elem = default
    if elem.is_bool:
        if a_kind != "bool":
            raise LaunchError(f"parameter {p.name!r} expects a bool, got {a!r}", p.name)
    elif elem.is_int:
        if a_kind == "float":
            raise LaunchError(f"parameter {p.name!r} expects {elem.name}, got the float "
                              f"{a!r}", p.name)
        if not fits(int(a), elem):
            raise LaunchError(f"parameter {p.name!r}: {a} does not fit in {elem.name}",
                              p.name)
    elif elem.is_float:
        _check_float_fits(p.name, a, elem)
    if elem not in client.limits.dtypes:
        raise LaunchError(f"parameter {p.name!r}: the {client.runtime} device does not "
                          f"support {elem.name}", p.name)


def _check_float_fits(param: str, value, dtype: DType) -> None:
    """LaunchError when a finite number overflows the float type it is passed as (the
    info struct would otherwise fail to pack). inf and nan are values like any other."""
    try:
        x = float(value)
    except OverflowError:  # an int beyond every float
        x = None
    if x is not None and (not math.isfinite(x) or dtype.name == "f64"):
        return
    # bf16 and the 8-bit floats travel as f32 (the kernel converts them on entry, an
    # 8-bit float with its cast's saturation), so f32's range is what must hold
    wide = dtype in F32_ON_HOST
    if x is not None:
        with np.errstate(over="ignore"):
            rounded = (np.float32 if wide else dtype.numpy.type)(x)
        if np.isfinite(rounded):
            return
    shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}... (an int)"
    top = np.finfo(np.float32 if wide else dtype.numpy).max
    raise LaunchError(f"parameter {param!r}: {shown} does not fit in {dtype.name} (its "
                      f"largest finite value is about {float(top):g})", param)


def _convert_comptime(p: ParamInfo, value) -> Any:
    want = p.pytype
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if want is int and isinstance(value, np.integer):
        return int(value)
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise LaunchError(f"comptime parameter {p.name!r} expects {want.__name__}, got "
                          f"{value!r}", p.name)
    return value


def _as_dtype(value) -> DType | None:
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        try:
            return dtype_from_name(value)
        except KeyError:
            return None
    try:
        from .ir.types import dtype_from_numpy
        return dtype_from_numpy(value)
    except TypeError:
        return None


def _make_packer(abi: KernelABI, index: dict[str, int]) -> Callable[[tuple, tuple], bytes]:
    """A fast function (args, cube_count) -> info bytes, generated once per plan."""
    if not abi.has_info:
        return lambda args, count: b""
    parts = []
    for f in abi.fields:
        if f.kind == "scalar":
            conv = "int" if f.dtype.is_int else "float"
            parts.append(f"{conv}(a[{index[f.param]}])")
        elif f.kind == "cube_count":
            parts.append("*c")
        elif f.kind == "rank":
            parts.append(f"len(a[{index[f.param]}].shape)")
        elif f.kind in ("shape", "stride"):
            attr = "shape" if f.kind == "shape" else "strides"
            parts.append(f"*(a[{index[f.param]}].{attr} + _Z)[:{abi_mod.MAX_RANK}]")
        else:
            parts.append(f"a[{index[f.param]}].{f.kind}")
    code = f"lambda a, c: _pack({', '.join(parts)})"
    return eval(code, {"_pack": struct.Struct(abi.struct_format).pack,
                       "_Z": (0,) * abi_mod.MAX_RANK})


def _require_function(fn: Any) -> None:
    """Raises a CompileError, at the user's line, unless `fn` is a function written
    with `def` (what @cube compiles from its source)."""
    if inspect.isfunction(fn) and fn.__name__ != "<lambda>":
        return
    if inspect.isfunction(fn):
        what = "a lambda: define the function with def"
    elif isinstance(fn, CubeFunction):
        what = f"{fn.__name__}, which is already a @cube function"
    elif isinstance(fn, functools.partial):
        what = "a functools.partial: bind the values as Comptime parameters instead"
    elif inspect.isclass(fn):
        what = f"the class {fn.__name__}"
    elif inspect.isbuiltin(fn) or inspect.ismethoddescriptor(fn):
        what = f"the builtin {getattr(fn, '__name__', fn)!r}"
    elif inspect.ismethod(fn):
        what = f"the method {fn.__name__}: decorate a module-level function"
    else:
        what = f"a {type(fn).__name__} object"
    raise CompileError(f"@cube compiles a Python function defined with def, not {what}",
                       *_user_position())


def _user_position() -> tuple[str, int, int, int | None]:
    """(file, line, column, end column) of the innermost call outside the cubepy
    package: the user's decoration."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", 0, 0, None
    lineno, col, end = frame.f_lineno, 0, None
    try:  # the call's columns (Python 3.11+)
        line, end_line, start, stop = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        if line == lineno and start is not None:
            col, end = start, (stop if end_line == line else None)
    except (AttributeError, IndexError, ValueError):
        pass
    return frame.f_code.co_filename, lineno, col, end


def cube(fn: Callable | None = None, *, launch: bool = False, fast_math: bool = True):
    """Compiles a Python function for the GPU.

    `@cube(launch=True)` makes a kernel (`.launch`, `.source`, `.ir`); plain `@cube` makes
    a device function that other cube functions call (it is inlined).

    `fast_math=False` (kernels only) evaluates float chains as written: no fused
    multiply-add contraction on CUDA (`--fmad=false`), safe math on Metal, so a cuda
    result equals the cpu runtime's bit for bit; WGSL cannot promise it. The default,
    as in CubeCL and Triton, lets the GPU compiler contract `a * b + c`.
    """
    if not isinstance(fast_math, bool):
        raise OptionError(f"fast_math must be True or False, not {fast_math!r}")
    if not fast_math and not launch:
        raise OptionError("fast_math is an option of kernels (@cube(launch=True, "
                          "fast_math=False)); a device function follows the kernel that "
                          "calls it")
    if fn is None:
        return public_entry(lambda f: CubeFunction(f, launch, fast_math))
    try:
        return CubeFunction(fn, launch, fast_math)
    except CubepyError as exc:
        hide_internal_frames(exc)
        raise


# The frontend inlines calls to CubeFunction and accepts `@cube` through this hook, so it
# never imports this module (nor, through it, the runtimes).
from .frontend.inlinable import register_inlinable  # noqa: E402

register_inlinable(CubeFunction, decorator=cube)


build_pending()  # (the dataclasses above)
