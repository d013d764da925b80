"""The comparisons `python -m benchmarks` runs: each case makes numpy inputs, runs cubepy's
kernel on every runtime asked for (checked once against numpy, then timed with
`cubepy.bench`) and every peer present (timed with CUDA events, or as their module says).
"""
from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import cubepy
from cubepy import f16, f32, fp8

from . import peers
from .kernels import (elementwise, layernorm, matmul, matmul_fp8, matmul_tc, matmul_wgmma,
                      reduce_sum, softmax)

# Problem sizes per tier: "full" is the (for an H200), "quick" a smaller run of
# the same kernels, "tiny" what the cpu runtime and a software adapter finish in seconds.
SIZES = {
    "full": {"matmul": [4096], "matmul_tc": [4096, 8192], "matmul_fp8": [4096, 8192],
             "softmax": [(4096, 1024), (4096, 4096), (4096, 16384)],
             "layernorm": [(4096, 1024), (4096, 4096), (4096, 8192)],
             "sum": [1 << 28], "elementwise": [1 << 26], "copy": [1 << 27]},
    "quick": {"matmul": [2048], "matmul_tc": [4096], "matmul_fp8": [4096],
              "softmax": [(4096, 4096)], "layernorm": [(4096, 4096)],
              "sum": [1 << 26], "elementwise": [1 << 24], "copy": [1 << 26]},
    # Softmax and layernorm at the row widths of common models (768: BERT-base, GPT-2;
    # 1600: GPT-2 XL; 3584: Qwen2-7B; 5120: Llama-2-13B; 12288: GPT-3 175B), most of
    # which a power-of-two cube does not split evenly; 1000 as a plain ragged width.
    "widths": {"matmul": [], "matmul_tc": [], "matmul_fp8": [], "sum": [], "elementwise": [],
               "copy": [],
               "softmax": [(4096, w) for w in (768, 1000, 1600, 5120, 12288)],
               "layernorm": [(4096, w) for w in (768, 1600, 3584, 5120, 12288)]},
    "tiny": {"matmul": [128], "matmul_tc": [256], "matmul_fp8": [256],
             "softmax": [(64, 1024)], "layernorm": [(64, 1024)],
             "sum": [1 << 16], "elementwise": [1 << 16], "copy": [1 << 16]},
}
REPS = {"full": (3, 30), "quick": (2, 10), "widths": (3, 30), "tiny": (1, 3)}  # (warmup, reps)
EPS = 1e-5


@dataclass
class Case:
    """One kernel at one size: inputs, the work it does, cubepy's runner and the peers."""

    kernel: str
    size: str
    inputs: Callable[[], tuple]
    metric: str  # "GB/s" or "TFLOP/s"
    amount: int  # bytes moved or floating-point operations
    # (client, inputs) -> {impl name: (zero-argument launch, check[, plan])}, for cubepy;
    # `plan()` names the kernel plan the launch took, for the report
    cubepy: Callable | None = None
    peers: Callable[..., dict] = field(default=lambda *inputs: {})


def _rng():
    return np.random.default_rng(0)


def _matmul_case(n: int) -> Case:
    def inputs():
        r = _rng()
        return (r.standard_normal((n, n), dtype=np.float32),
                r.standard_normal((n, n), dtype=np.float32))

    def cubepy_runs(client, a_h, b_h):
        a, b, c = client.tensor(a_h), client.tensor(b_h), client.zeros((n, n), f32)

        def check():  # a few rows: a full float64 product of 4096^3 takes too long
            want = a_h[:8].astype(np.float64) @ b_h.astype(np.float64)
            np.testing.assert_allclose(c.numpy()[:8], want, rtol=1e-3, atol=1e-3 * n ** 0.5)
        return {"cubepy": (lambda: matmul.run(client, a, b, c, checked=False), check)}
    return Case("matmul", f"{n}x{n}x{n}", inputs, "TFLOP/s", 2 * n ** 3, cubepy_runs,
                peers.matmul_peers)


def _matmul_tc_case(n: int, dtype_name: str) -> Case:
    """f16 or bf16 inputs (bf16 made by torch, which numpy lacks; cubepy uses torch's
    tensors in place), f32 accumulation; C has the inputs' type."""
    def inputs():
        r = _rng()
        return (r.standard_normal((n, n), dtype=np.float32),
                r.standard_normal((n, n), dtype=np.float32))

    def cubepy_runs(client, a_h, b_h):
        if dtype_name == "f16":
            a = client.tensor(a_h.astype(np.float16))
            b = client.tensor(b_h.astype(np.float16))
            c = client.zeros((n, n), f16)
            a_in, b_in = a_h.astype(np.float16), b_h.astype(np.float16)
        else:
            torch = peers.torch_cuda()
            if torch is None or client.runtime != "cuda":
                return {}
            ta = torch.from_numpy(a_h).cuda().bfloat16()
            tb = torch.from_numpy(b_h).cuda().bfloat16()
            a, b = client.from_dlpack(ta), client.from_dlpack(tb)
            c = client.from_dlpack(torch.zeros((n, n), device="cuda", dtype=torch.bfloat16))
            a_in, b_in = ta.float().cpu().numpy(), tb.float().cpu().numpy()
        if not {a.dtype} <= set(client.limits.dtypes):
            return {}
        a8, b8, c8 = a.with_line_size(8), b.with_line_size(8), c.with_line_size(8)

        def check():  # a few rows against float64
            want = a_in[:8].astype(np.float64) @ b_in.astype(np.float64)
            got = _as_f64(c, 8)
            np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * n ** 0.5)
        runs = {"cubepy": (lambda: matmul_tc.run(client, a8, b8, c8), check)}
        if _has_wgmma(client):  # C with line size 1: the warpgroup store is per element
            runs["cubepy (wgmma)"] = (lambda: matmul_wgmma.run(client, a8, b8, c), check)
        return runs
    return Case(f"matmul_tc_{dtype_name}", f"{n}x{n}x{n}", inputs, "TFLOP/s", 2 * n ** 3,
                cubepy_runs, lambda a, b: peers.matmul_half_peers(a, b, dtype_name))


def _matmul_fp8_case(n: int, rowwise: bool = False) -> Case:
    """e4m3 A (n x n) and B given n x n with K contiguous (C = scale_a * scale_b * A @ B.T,
    torch._scaled_mm's layout), f32 accumulation; C bf16 (f32 on the cpu runtime, which
    has no bf16). Per-tensor scales `peers.FP8_SCALES`, or (`rowwise`, the case
    matmul_fp8_rowwise) one per row of A and one per column of C."""
    def inputs():
        r = _rng()
        a, b = (r.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        if rowwise:
            sa = r.uniform(0.25, 1.0, (n, 1)).astype(np.float32)
            sb = r.uniform(0.25, 1.0, (1, n)).astype(np.float32)
        else:
            sa, sb = (np.full((1, 1), v, np.float32) for v in peers.FP8_SCALES)
        return a, b, sa, sb

    def cubepy_runs(client, a_h, b_h, sa_h, sb_h):
        if not _has_wgmma(client):
            return {}
        a = client.tensor(a_h, cubepy.e4m3).with_line_size(16)
        b = client.tensor(b_h, cubepy.e4m3).with_line_size(16)
        c = client.zeros((n, n), cubepy.bf16 if client.runtime == "cuda" else f32)
        a_in, b_in = fp8.round_to(a_h, "e4m3"), fp8.round_to(b_h, "e4m3")
        sa, sb = client.tensor(sa_h), client.tensor(sb_h)

        def check():  # a few rows against float64
            scale = sa_h[:8].astype(np.float64) * sb_h.astype(np.float64)
            want = matmul_fp8.reference(a_in[:8], b_in) * scale
            np.testing.assert_allclose(_as_f64(c, 8), want, rtol=2e-2,
                                       atol=2e-2 * float(scale.max()) * n ** 0.5)
        return {"cubepy (wgmma)": (lambda: matmul_fp8.run(client, a, b, c, scale_a=sa,
                                                          scale_b=sb), check)}
    name = "matmul_fp8_rowwise" if rowwise else "matmul_fp8"
    return Case(name, f"{n}x{n}x{n}", inputs, "TFLOP/s", 2 * n ** 3, cubepy_runs,
                peers.matmul_fp8_peers)


def _has_wgmma(client) -> bool:
    """Whether the client runs the warpgroup matmul: CUDA on sm_90, or the cpu runtime's
    emulation."""
    if client.runtime == "cpu":
        return True
    compiler = getattr(client, "compiler", None)
    return client.runtime == "cuda" and getattr(compiler, "arch", "") == "sm_90"


def _as_f64(t, rows: int) -> np.ndarray:
    """The first rows of a cubepy tensor of f16/bf16/f32 as float64 (bf16 via torch)."""
    if t.dtype == cubepy.bf16:
        import torch
        return torch.from_dlpack(t)[:rows].double().cpu().numpy()
    return t.numpy()[:rows].astype(np.float64)


def _softmax_case(rows: int, cols: int) -> Case:
    def inputs():
        return (_rng().standard_normal((rows, cols), dtype=np.float32),)

    def cubepy_runs(client, x_h):
        x, out = client.tensor(x_h), client.zeros((rows, cols), f32)

        def check():
            np.testing.assert_allclose(out.numpy()[:64], softmax.reference(x_h[:64]),
                                       rtol=1e-4, atol=1e-7)
        return {"cubepy": (lambda: softmax.run(client, x, out, checked=False), check,
                           lambda: softmax.chosen_plan(client, x),
                           lambda: softmax.plan_times(client, x))}
    return Case("softmax", f"{rows}x{cols}", inputs, "GB/s", 2 * 4 * rows * cols,
                cubepy_runs, peers.softmax_peers)


def _layernorm_case(rows: int, cols: int, dtype) -> Case:
    np_dtype = dtype.numpy

    def inputs():
        r = _rng()
        return (r.standard_normal((rows, cols)).astype(np_dtype),
                r.standard_normal(cols).astype(np_dtype),
                r.standard_normal(cols).astype(np_dtype))

    def cubepy_runs(client, x_h, w_h, b_h):
        if dtype not in client.limits.dtypes:
            return {}
        x, w, b = client.tensor(x_h), client.tensor(w_h), client.tensor(b_h)
        y = client.zeros((rows, cols), dtype)

        def check():
            tol = 1e-4 if dtype == f32 else 2e-2
            want = layernorm.reference(x_h[:64], w_h, b_h, EPS).astype(np.float64)
            np.testing.assert_allclose(y.numpy()[:64].astype(np.float64), want,
                                       rtol=tol, atol=tol)
        return {"cubepy": (lambda: layernorm.run(client, x, w, b, y, EPS, checked=False),
                           check, lambda: layernorm.chosen_plan(client, x),
                           lambda: layernorm.plan_times(client, x))}
    return Case(f"layernorm_{dtype}", f"{rows}x{cols}", inputs, "GB/s",
                2 * np.dtype(np_dtype).itemsize * rows * cols, cubepy_runs,
                lambda x, w, b: peers.layernorm_peers(x, w, b, EPS))


def _sum_case(n: int) -> Case:
    def inputs():
        return (_rng().random(n, dtype=np.float32),)

    def cubepy_runs(client, x_h):
        x, total = client.tensor(x_h), client.zeros((1,), f32)

        def check():  # right after the first launch, before the timed ones add more
            np.testing.assert_allclose(total.numpy()[0], reduce_sum.reference(x_h),
                                       rtol=1e-4)
        return {"cubepy": (lambda: reduce_sum.run(client, x, total, checked=False), check)}
    return Case("sum", f"{n >> 20}M" if n >= 1 << 20 else str(n), inputs, "GB/s", 4 * n,
                cubepy_runs, peers.sum_peers)


def _elementwise_case(n: int, dtype=f32) -> Case:
    """out = max(x + y, 0) over lines of 16 bytes (4 f32, 8 f16: one vector access)."""
    np_dtype = dtype.numpy

    def inputs():
        r = _rng()
        return (r.standard_normal(n, dtype=np.float32).astype(np_dtype),
                r.standard_normal(n, dtype=np.float32).astype(np_dtype))

    def cubepy_runs(client, x_h, y_h):
        x, y, out = client.tensor(x_h), client.tensor(y_h), client.zeros((n,), dtype)

        def check():
            np.testing.assert_array_equal(out.numpy(), elementwise.reference(x_h, y_h))
        return {f"cubepy {kind}": (lambda c=checked: elementwise.run(client, x, y, out, c),
                                   check)
                for kind, checked in (("checked", True), ("unchecked", False))}
    name = "elementwise" if dtype == f32 else f"elementwise_{dtype}"
    return Case(name, f"{n >> 20}M" if n >= 1 << 20 else str(n), inputs, "GB/s",
                3 * dtype.itemsize * n, cubepy_runs, peers.elementwise_peers)


def _copy_case(n: int) -> Case:
    def inputs():
        return (_rng().random(n, dtype=np.float32),)
    return Case("copy", f"{n >> 20}M" if n >= 1 << 20 else str(n), inputs, "GB/s", 2 * 4 * n,
                None, peers.copy_peers)


def cases(tier: str, only: set[str] | None = None) -> list[Case]:
    """Every case of a tier (`only`: kernel names to keep, e.g. {"softmax"})."""
    s = SIZES[tier]
    out = [_copy_case(n) for n in s["copy"]]
    out += [_matmul_case(n) for n in s["matmul"]]
    out += [_matmul_tc_case(n, dt) for dt in ("f16", "bf16") for n in s["matmul_tc"]]
    out += [_matmul_fp8_case(n, rowwise) for rowwise in (False, True)
            for n in s["matmul_fp8"]]
    out += [_softmax_case(r, c) for r, c in s["softmax"]]
    out += [_layernorm_case(r, c, dt) for dt in (f16, f32) for r, c in s["layernorm"]]
    out += [_sum_case(n) for n in s["sum"]]
    out += [_elementwise_case(n, dt) for dt in (f32, f16) for n in s["elementwise"]]
    if only:
        out = [c for c in out
               if c.kernel in only or any(c.kernel.startswith(o + "_") for o in only)]
    return out


def _row(case: Case, impl: str, runtime: str, device: str, result=None,
         error: str | None = None, check: str = "") -> dict:
    row = {"kernel": case.kernel, "size": case.size, "impl": impl, "runtime": runtime,
           "device": device, "metric": case.metric, "check": check, "error": error}
    if result is not None:
        value = (result.tflops(case.amount) if case.metric == "TFLOP/s"
                 else result.bandwidth_gbs(case.amount))
        row.update(median_ms=result.median_ms, iqr_ms=result.iqr_ms, min_ms=result.min_ms,
                   max_ms=result.max_ms, reps=len(result.times_ms), method=result.method,
                   value=value)
    return row


def _run_cubepy(case: Case, client, inputs: tuple, warmup: int, reps: int,
                log: Callable[[str], None]) -> list[dict]:
    rows = []
    try:
        runs = case.cubepy(client, *inputs)
    except cubepy.CubepyError as e:
        return [_row(case, "cubepy", client.runtime, client.device, error=str(e))]
    for impl, (launch, check, *plan) in runs.items():
        try:
            launch()
            client.sync()
            try:
                check()
                verdict = "ok"
            except AssertionError as e:
                verdict = "MISMATCH: " + str(e).strip().splitlines()[0][:120]
            result = cubepy.bench(launch, client=client, warmup=warmup, reps=reps)
            rows.append(_row(case, impl, client.runtime, client.device, result,
                             check=verdict))
            if plan:  # (the plan taken, and what choosing it measured of each)
                rows[-1]["plan"] = plan[0]()
                if len(plan) > 1 and plan[1]():
                    rows[-1]["plan_ms"] = plan[1]()
        except cubepy.CubepyError as e:  # e.g. beyond this device's buffer limits
            rows.append(_row(case, impl, client.runtime, client.device, error=str(e)))
        log(_describe(rows[-1]))
    return rows


def _describe(row: dict) -> str:
    head = f"{row['kernel']:>14} {row['size']:>16} {row['impl']:>26} [{row['runtime']}]"
    if row.get("error"):
        return f"{head}  error: {row['error'].splitlines()[0][:100]}"
    check = "" if row["check"] in ("", "ok") else f"  {row['check']}"
    return f"{head}  {row['median_ms']:9.4f} ms  {row['value']:9.4g} {row['metric']}{check}"


def _peer_rows(case: Case, inputs: tuple, runtimes: set[str], warmup: int, reps: int,
               log: Callable[[str], None]) -> list[dict]:
    """The peers' rows: CUDA libraries where a CUDA device is visible to them, numpy when
    the cpu runtime is benchmarked, the raw wgpu-py copy when wgpu is."""
    rows = []
    timed: list[tuple[str, str, str, Callable]] = []
    if peers.torch_cuda() is not None or peers.cupy_cuda() is not None:
        device = _cuda_device_name()
        timed += [(name, "cuda", device, fn) for name, fn in _safe_peers(case, inputs, log)]
    if "cpu" in runtimes:
        timed += [(name, "cpu", "numpy", fn)
                  for name, fn in peers.cpu_peers(case.kernel, *inputs).items()]
    for name, runtime, device, fn in timed:
        try:
            if runtime == "cuda":
                result = peers.time_cuda(fn, warmup, reps)
            else:
                result = cubepy.bench(fn, client=cubepy.client("cpu"), warmup=warmup,
                                      reps=reps)
            rows.append(_row(case, name, runtime, device, result))
        except Exception as e:  # a peer library failing is reported, not fatal
            rows.append(_row(case, name, runtime, device, error=f"{type(e).__name__}: {e}"))
        log(_describe(rows[-1]))
    if case.kernel.startswith(("softmax", "layernorm")) and "wgpu" in runtimes:
        # the copy of the kernel's own bytes on wgpu: what Vulkan gives a memory-bound
        # kernel of this size (the counterpart of torch's same-size copy on CUDA)
        try:
            from .wgpu_copy import WgpuCopy
            copier = WgpuCopy(inputs[0].nbytes // 4)
            rows.append(_row(case, peers.SAME_SIZE_WGPU_COPY, "wgpu", "wgpu",
                             copier.bench(warmup, reps)))
        except Exception as e:
            rows.append(_row(case, peers.SAME_SIZE_WGPU_COPY, "wgpu", "wgpu",
                             error=f"{type(e).__name__}: {e}"))
        log(_describe(rows[-1]))
    if case.kernel == "copy" and "wgpu" in runtimes:
        try:
            from .wgpu_copy import WgpuCopy
            copier = WgpuCopy(inputs[0].size)
            rows.append(_row(case, "raw wgpu-py copy", "wgpu", "wgpu", copier.bench(warmup,
                                                                                  reps)))
        except Exception as e:
            rows.append(_row(case, "raw wgpu-py copy", "wgpu", "wgpu",
                             error=f"{type(e).__name__}: {e}"))
        log(_describe(rows[-1]))
    return rows


def _safe_peers(case: Case, inputs: tuple, log) -> list[tuple[str, Callable]]:
    try:
        return list(case.peers(*inputs).items())
    except Exception as e:  # e.g. out of memory, a broken install
        log(f"{case.kernel} {case.size}: peers unavailable ({type(e).__name__}: {e})")
        return []


def _cuda_device_name() -> str:
    torch = peers.torch_cuda()
    if torch is not None:
        return torch.cuda.get_device_name()
    cupy = peers.cupy_cuda()
    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def run_all(case_list: list[Case], clients: list, warmup: int, reps: int,
            log: Callable[[str], None] = print) -> list[dict]:
    """Runs every case on every client and every peer present; one row per measurement."""
    rows: list[dict] = []
    runtimes = {c.runtime for c in clients}
    for case in case_list:
        inputs = case.inputs()
        case_reps = _reps_for(case, reps)
        if case.cubepy is not None:
            for client in clients:
                rows += _run_cubepy(case, client, inputs, warmup, case_reps, log)
        rows += _peer_rows(case, inputs, runtimes, warmup, case_reps, log)
        del inputs
        _free_memory()
    return rows


def _reps_for(case: Case, reps: int) -> int:
    """Repetitions for a case: a third for the f32 matmul (milliseconds per run); all of
    them for the tensor-core matmul, whose runs of a quarter of a millisecond at 4096^3
    spread by 10% and more (GPU clocks, the L2 flush before each), where 10 repetitions
    left the median moving by several percent between runs."""
    return max(3, reps // 3) if case.kernel == "matmul" else reps


def _free_memory() -> None:
    gc.collect()
    torch = peers.torch_cuda()
    if torch is not None:
        torch.cuda.empty_cache()
