"""The implementations cubepy's kernels are compared with, each imported only if present:
torch (cuBLAS with TF32 off, torch.softmax, layer_norm, sum, elementwise, copy), Triton
(the tutorials' fused softmax and layernorm forward), CuPy (sum, copy, hand-written CUDA
for the elementwise kernel), numpy (on the cpu), and a raw wgpu-py copy shader.

Each `*_peers(...)` function returns {name: zero-argument callable} on device data made
from the numpy inputs; `time_cuda` times such callables with CUDA events.
"""
from __future__ import annotations

import importlib.util
from typing import Callable

import numpy as np

from cubepy import BenchResult
from cubepy.timing import FLUSH_BYTES


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def torch_cuda():
    """torch when it is installed and sees a CUDA device, else None."""
    if not have("torch"):
        return None
    import torch
    return torch if torch.cuda.is_available() else None


def cupy_cuda():
    if not have("cupy"):
        return None
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # no driver or device
        return None


def time_cuda(fn: Callable[[], object], warmup: int, reps: int) -> BenchResult:
    """CUDA-event times of `fn` on the current stream (torch's, else CuPy's), each after
    reading a zeroed scratch buffer whole (a sum), every repetition queued before the
    one wait, like `cubepy.bench` on a GPU."""
    torch = torch_cuda()
    if torch is not None:
        make, sync = (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize
        scratch = torch.zeros(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    else:
        cupy = cupy_cuda()
        make, sync = cupy.cuda.Event, cupy.cuda.runtime.deviceSynchronize
        scratch = cupy.zeros(FLUSH_BYTES // 4, dtype=cupy.int32)
    for _ in range(warmup):
        fn()
    sync()
    events = [(make(), make()) for _ in range(reps)]
    for start, end in events:  # all queued, then one wait: as cubepy.bench
        scratch.sum()  # as cubepy.bench: a cold, clean L2; the launch queued before `start` runs
        start.record()
        fn()
        end.record()
    events[-1][1].synchronize()
    return BenchResult(tuple(_elapsed(start, end) for start, end in events), "cuda-events")


def _elapsed(start, end) -> float:
    if hasattr(start, "elapsed_time"):
        return float(start.elapsed_time(end))  # torch
    import cupy
    return float(cupy.cuda.get_elapsed_time(start, end))


# -- per kernel ---------------------------------------------------------------------------
def copy_peers(x: np.ndarray) -> dict[str, Callable]:
    peers: dict[str, Callable] = {}
    torch = torch_cuda()
    if torch is not None:
        src = torch.from_numpy(x).cuda()
        dst = torch.empty_like(src)
        peers["torch copy_"] = lambda: dst.copy_(src)
    cupy = cupy_cuda()
    if cupy is not None:
        csrc = cupy.asarray(x)
        cdst = cupy.empty_like(csrc)
        peers["cupy copyto"] = lambda: cupy.copyto(cdst, csrc)
    return peers


def matmul_peers(a: np.ndarray, b: np.ndarray) -> dict[str, Callable]:
    torch = torch_cuda()
    if torch is None:
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False  # true fp32 on the SIMT units
    torch.backends.cudnn.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.empty((a.shape[0], b.shape[1]), device="cuda", dtype=torch.float32)
    return {"torch (cuBLAS, TF32 off)": lambda: torch.mm(ta, tb, out=tc)}


def matmul_half_peers(a: np.ndarray, b: np.ndarray, dtype_name: str) -> dict[str, Callable]:
    """torch.mm in f16 or bf16 (cuBLAS on the tensor cores, f32 accumulation)."""
    torch = torch_cuda()
    if torch is None:
        return {}
    dtype = torch.float16 if dtype_name == "f16" else torch.bfloat16
    ta, tb = torch.from_numpy(a).cuda().to(dtype), torch.from_numpy(b).cuda().to(dtype)
    tc = torch.empty((a.shape[0], b.shape[1]), device="cuda", dtype=dtype)
    return {"torch (cuBLAS)": lambda: torch.mm(ta, tb, out=tc)}


FP8_SCALES = (0.5, 0.25)  # scale_a, scale_b of the fp8 matmul case: per-tensor, on device


def matmul_fp8_peers(a: np.ndarray, b: np.ndarray, sa: np.ndarray,
                     sb: np.ndarray) -> dict[str, Callable]:
    """torch._scaled_mm on e4m3 (cuBLAS's fp8 GEMM, f32 accumulation, bf16 out) of A and
    B.T, B given with K contiguous as cubepy's matmul_fp8 takes it, with the scales:
    per tensor (1 x 1, given to torch as 0-d tensors), or row-wise (M x 1 and 1 x N)."""
    torch = torch_cuda()
    if torch is None or not hasattr(torch, "_scaled_mm") \
            or torch.cuda.get_device_capability() < (8, 9):
        return {}
    ta = torch.from_numpy(a).cuda().to(torch.float8_e4m3fn)
    tb = torch.from_numpy(b).cuda().to(torch.float8_e4m3fn)
    sa, sb = (torch.from_numpy(s.reshape(()) if s.size == 1 else s).cuda() for s in (sa, sb))
    return {"torch._scaled_mm (cuBLAS)": lambda: torch._scaled_mm(
        ta, tb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)}


SAME_SIZE_COPY = "torch copy_ (same size)"
SAME_SIZE_WGPU_COPY = "raw wgpu-py copy (same size)"  # benchmarks/wgpu_copy.py


def softmax_peers(x: np.ndarray) -> dict[str, Callable]:
    torch = torch_cuda()
    if torch is None:
        return {}
    tx = torch.from_numpy(x).cuda()
    copy = torch.empty_like(tx)
    # A copy of the same bytes: the bandwidth a kernel of this size can reach (launch
    # and tail weigh more on a small matrix than on the 128M copy case).
    peers = {"torch.softmax": lambda: torch.softmax(tx, dim=1),
             SAME_SIZE_COPY: lambda: copy.copy_(tx)}
    if have("triton"):
        from . import triton_kernels
        out = torch.empty_like(tx)
        peers["triton (tutorial)"] = lambda: triton_kernels.softmax(tx, out)
    return peers


def layernorm_peers(x: np.ndarray, w: np.ndarray, b: np.ndarray,
                    eps: float) -> dict[str, Callable]:
    torch = torch_cuda()
    if torch is None:
        return {}
    import torch.nn.functional as F
    tx, tw, tb = (torch.from_numpy(v).cuda() for v in (x, w, b))
    shape = (x.shape[1],)
    peers = {"torch layer_norm": lambda: F.layer_norm(tx, shape, tw, tb, eps)}
    if have("triton"):
        from . import triton_kernels
        out = torch.empty_like(tx)
        peers["triton (tutorial)"] = lambda: triton_kernels.layernorm(tx, tw, tb, out, eps)
    return peers


def sum_peers(x: np.ndarray) -> dict[str, Callable]:
    peers: dict[str, Callable] = {}
    torch = torch_cuda()
    if torch is not None:
        tx = torch.from_numpy(x).cuda()
        peers["torch.sum"] = lambda: torch.sum(tx)
    cupy = cupy_cuda()
    if cupy is not None:
        cx = cupy.asarray(x)
        peers["cupy.sum"] = lambda: cupy.sum(cx)
    return peers


HAND_ADD_RELU = r"""
extern "C" __global__ void add_relu(const float4* x, const float4* y, float4* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float4 a = x[i], b = y[i];
        out[i] = make_float4(fmaxf(a.x + b.x, 0.f), fmaxf(a.y + b.y, 0.f),
                             fmaxf(a.z + b.z, 0.f), fmaxf(a.w + b.w, 0.f));
    }
}
"""


def elementwise_peers(x: np.ndarray, y: np.ndarray) -> dict[str, Callable]:
    peers: dict[str, Callable] = {}
    torch = torch_cuda()
    if torch is not None:
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        to = torch.empty_like(tx)

        def torch_add_relu():  # two kernels: an add, then an in-place ReLU
            torch.add(tx, ty, out=to)
            to.relu_()
        peers["torch (add, relu_)"] = torch_add_relu
    cupy = cupy_cuda()
    if cupy is not None and x.size % 4 == 0 and x.dtype == np.float32:  # a float4 kernel
        kernel = cupy.RawKernel(HAND_ADD_RELU, "add_relu")
        cx, cy = cupy.asarray(x), cupy.asarray(y)
        co = cupy.empty_like(cx)
        n4 = x.size // 4
        grid = (-(-n4 // 256),)
        peers["hand CUDA (float4)"] = lambda: kernel(grid, (256,), (cx, cy, co,
                                                                    np.uint64(n4)))
    return peers


def cpu_peers(kernel: str, *inputs: np.ndarray) -> dict[str, Callable]:
    """numpy doing the same work, the peer on the cpu runtime."""
    if kernel == "copy":
        (x,) = inputs
        dst = np.empty_like(x)
        return {"numpy copyto": lambda: np.copyto(dst, x)}
    if kernel == "matmul":
        a, b = inputs
        return {"numpy matmul": lambda: a @ b}
    if kernel == "sum":
        (x,) = inputs
        return {"numpy sum": lambda: x.sum()}
    if kernel == "elementwise":
        x, y = inputs
        return {"numpy": lambda: np.maximum(x + y, 0)}
    return {}
