"""`@cubepy.autotune`: launch a kernel with the fastest of several configurations.

    @cubepy.autotune(configs=[{"cube_dim": CubeDim(16, 16), "bk": 8},
                              {"cube_dim": CubeDim(16, 16), "bk": 16}],
                     key=["a", "b"])
    @cube(launch=True)
    def matmul(a: Tensor[f32], b: Tensor[f32], c: Tensor[f32], bk: Comptime[int]): ...

    matmul.launch(client, lambda cfg: CubeCount(...), a, b, c)

A config is a dict holding `cube_dim` and values for comptime parameters. The first
launch for a new (device, key) times every config (`cubepy.bench`; a tqdm progress bar
when tqdm is installed), times again, in turns, the configs within `RECHECK` of the
fastest (a GPU's clock and power state drift while dozens of configs are timed, and two
configs a few percent apart swap places from one timing to the next), keeps the fastest
by the median of all their times, and stores the choice on disk (the
`autotune/` cache, docs/CACHE.md), so later processes launch it at once. Before timing,
every config's code is generated and handed to the runtime to compile in the background
(on cuda, NVRTC on several threads while the next config's code is generated), so the
configs compile side by side rather than one at its first launch after another. The key values
are the named arguments' shapes (tensors) or values (scalars). `CUBEPY_AUTOTUNE=0` turns
tuning off: every launch uses the first config. A config the device rejects (a cube dim
beyond its limits, too much shared memory) is skipped.

Tuning launches the kernel several times with the caller's arguments, so the kernel must
give the same result when it runs again on its own output (true of kernels that only
write their outputs; not of one that accumulates with atomics into a buffer it reads).
"""
from __future__ import annotations

import functools
import inspect
import os
from typing import Any, Callable, Sequence

from .cache import DiskCache, cache_key
from .errors import LaunchError
from .kernel import CubeFunction
from .launch_config import CubeDim
from .timing import bench

__all__ = ["autotune", "Autotuned", "AUTOTUNE_ENV"]

AUTOTUNE_ENV = "CUBEPY_AUTOTUNE"
RECHECK = 0.05  # configs within 5% of the fastest first time are timed again
RECHECK_ROUNDS = 3  # turns of the re-check: each finalist timed once per turn
_DISK = DiskCache("autotune", suffix=".json")


def autotune(configs: Sequence[dict], key: Sequence[str] = (), warmup: int = 2,
             reps: int = 10) -> Callable[[CubeFunction], "Autotuned"]:
    """Decorates a `@cube(launch=True)` kernel; see the module doc. `warmup` and `reps`
    are the untimed and timed launches per config while tuning."""
    def wrap(kernel: CubeFunction) -> Autotuned:
        return Autotuned(kernel, configs, key, warmup, reps)
    return wrap


def _source_hash(kernel: CubeFunction) -> str:
    try:
        text = inspect.getsource(kernel.fn)
    except (OSError, TypeError):  # defined where the source cannot be read back
        text = repr((kernel.fn.__code__.co_code, kernel.fn.__code__.co_consts))
    import hashlib  # hashlib, json: loaded at first tuning, not by `import cubepy`
    return hashlib.sha256(text.encode()).hexdigest()


def _describe(value: Any) -> Any:
    """What a key argument contributes: a tensor's shape and dtype, else the value."""
    shape = getattr(value, "shape", None)
    if shape is not None:
        return [list(shape), str(getattr(value, "dtype", ""))]
    return repr(value)


class Autotuned:
    """A kernel launched with the fastest of its configs (see `autotune`)."""

    def __init__(self, kernel: CubeFunction, configs: Sequence[dict], key: Sequence[str],
                 warmup: int, reps: int):
        if not isinstance(kernel, CubeFunction) or not kernel.is_kernel:
            raise TypeError("@autotune goes above @cube(launch=True)")
        if not configs:
            raise ValueError(f"@autotune on {kernel.__name__}: configs is empty")
        names = list(kernel.arg_names)
        for i, cfg in enumerate(configs):
            if not isinstance(cfg.get("cube_dim"), CubeDim):
                raise ValueError(f"@autotune on {kernel.__name__}: config {i} needs a "
                                 f"'cube_dim' (a CubeDim)")
            unknown = [k for k in cfg if k != "cube_dim" and k not in names]
            if unknown:
                raise ValueError(f"@autotune on {kernel.__name__}: config {i} names "
                                 f"{unknown}, which are not parameters of the kernel")
        missing = [k for k in key if k not in names]
        if missing:
            raise ValueError(f"@autotune on {kernel.__name__}: key names {missing}, "
                             f"which are not parameters of the kernel")
        self.kernel = kernel
        self.configs = [dict(c) for c in configs]
        self.key = tuple(key)
        self.warmup, self.reps = warmup, reps
        self.__name__ = kernel.__name__
        self.__doc__ = kernel.__doc__
        self._names = names
        self._chosen: dict[tuple, int] = {}  # (runtime, device, key) -> config index
        self.last_timings: list[float | None] = []  # ms per config of the last tuning

    def __getattr__(self, name: str):
        """The kernel's other methods and attributes (`source`, `ir`, `params`, ...)."""
        if name == "kernel":  # not set yet: during __init__
            raise AttributeError(name)
        return getattr(self.kernel, name)

    # -- public -----------------------------------------------------------------------
    def launch(self, client, cube_count, *args, **kwargs) -> None:
        """Launches (checked) with the best config; `cube_count` is a CubeCount or a
        function of the config that returns one."""
        self._launch(self.kernel.launch, client, cube_count, args, kwargs)

    def launch_unchecked(self, client, cube_count, *args, **kwargs) -> None:
        """Like `launch`, without bounds checks."""
        self._launch(self.kernel.launch_unchecked, client, cube_count, args, kwargs)

    def best_config(self, client, cube_count, *args, **kwargs) -> dict:
        """The config launches with these arguments would use (tuning if needed)."""
        return self.configs[self._choose(self.kernel.launch, client, cube_count, args,
                                         kwargs)]

    def prepare(self, client, cube_count, *args, **kwargs) -> None:
        """Compiles and loads every config for these arguments (`CubeFunction.prepare`)
        without running any, the compiles side by side where the runtime can; a config
        beyond the device's limits is passed over, as tuning passes it over."""
        self._prepare_all(self.kernel.prepare, client, cube_count, args, kwargs, True)

    def prepare_unchecked(self, client, cube_count, *args, **kwargs) -> None:
        """`prepare` for `launch_unchecked`."""
        self._prepare_all(self.kernel.prepare_unchecked, client, cube_count, args, kwargs,
                          False)

    # -- internals --------------------------------------------------------------------
    def _launch(self, launcher, client, cube_count, args, kwargs) -> None:
        index = self._choose(launcher, client, cube_count, args, kwargs)
        self._run(launcher, client, cube_count, self.configs[index], args, kwargs)

    def _prepare_all(self, preparer, client, cube_count, args, kwargs,
                     checked: bool) -> None:
        self._compile_ahead(client, cube_count, args, kwargs, checked)
        self._each_config(preparer, client, cube_count, args, kwargs)

    def _compile_ahead(self, client, cube_count, args, kwargs, checked: bool) -> None:
        """Every config's code, each handed to the runtime to compile meanwhile."""
        self._each_config(functools.partial(self.kernel._compile_ahead, checked), client,
                          cube_count, args, kwargs)

    def _each_config(self, launcher, client, cube_count, args, kwargs) -> None:
        """`launcher` with every config, passing over those beyond this device's limits
        (their timed launch raises the LaunchError again, and tuning skips them)."""
        for cfg in self.configs:
            try:
                self._run(launcher, client, cube_count, cfg, args, kwargs)
            except LaunchError:
                pass

    def _run(self, launcher, client, cube_count, cfg: dict, args, kwargs) -> None:
        count = cube_count(cfg) if callable(cube_count) else cube_count
        extra = {k: v for k, v in cfg.items() if k != "cube_dim"}
        launcher(client, count, cfg["cube_dim"], *args, **kwargs, **extra)

    def _key_values(self, args: tuple, kwargs: dict) -> str:
        bound = dict(zip(self._names, args))
        bound.update(kwargs)
        import json
        return json.dumps([_describe(bound.get(k)) for k in self.key])

    def _choose(self, launcher, client, cube_count, args, kwargs) -> int:
        if os.environ.get(AUTOTUNE_ENV, "1").strip() == "0":
            return 0
        key_values = self._key_values(args, kwargs)
        memo = (client.runtime, client.device, key_values)
        if memo in self._chosen:
            return self._chosen[memo]
        disk_key = cache_key("autotune", _source_hash(self.kernel), self.__name__,
                             client.runtime, client.device, key_values,
                             repr(self.configs))
        index = self._from_disk(disk_key)
        if index is None:
            index = self._tune(launcher, client, cube_count, args, kwargs, key_values)
            import json
            _DISK.put(disk_key, json.dumps({"config": index,
                                            "times_ms": self.last_timings}).encode())
        self._chosen[memo] = index
        return index

    def _from_disk(self, disk_key: str) -> int | None:
        data = _DISK.get(disk_key)
        if data is None:
            return None
        import json
        try:
            index = json.loads(data)["config"]
        except (ValueError, KeyError, TypeError):
            return None
        return index if isinstance(index, int) and 0 <= index < len(self.configs) else None

    def _tune(self, launcher, client, cube_count, args, kwargs, key_values: str) -> int:
        import statistics  # (not at import: `import cubepy` stays light)
        self._compile_ahead(client, cube_count, args, kwargs,
                            checked=launcher != self.kernel.launch_unchecked)
        samples: dict[int, list[float]] = {}  # config index -> every time measured
        first_error: LaunchError | None = None
        for i, cfg in enumerate(_progress(self.configs,
                                          f"autotune {self.__name__} {key_values}")):
            try:
                samples[i] = list(self._time(launcher, client, cube_count, cfg, args,
                                             kwargs, self.warmup))
            except LaunchError as e:  # beyond this device's limits: not a candidate
                first_error = first_error or e
        if not samples:
            raise first_error  # type: ignore[misc]
        first = {i: statistics.median(times) for i, times in samples.items()}
        best = min(first.values())
        finalists = [i for i, t in first.items() if t <= best * (1 + RECHECK)]
        if len(finalists) > 1:
            for _ in range(RECHECK_ROUNDS):  # in turns, so a drift touches them all
                for i in finalists:
                    samples[i] += self._time(launcher, client, cube_count,
                                             self.configs[i], args, kwargs, 1)
        medians = {i: statistics.median(times) for i, times in samples.items()}
        self.last_timings = [medians.get(i) for i in range(len(self.configs))]
        return min(medians, key=lambda i: (medians[i], i))

    def _time(self, launcher, client, cube_count, cfg: dict, args, kwargs,
              warmup: int) -> tuple[float, ...]:
        """`reps` times (ms) of launches with `cfg`, after `warmup` untimed ones."""
        return bench(self._run, launcher, client, cube_count, cfg, args, kwargs,
                     client=client, warmup=warmup, reps=self.reps).times_ms


def _progress(items: list, desc: str):
    """A tqdm bar over `items` when tqdm is installed (it is optional), else `items`."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc, leave=False)
