"""Triton's tutorial kernels (fused softmax, layernorm forward, autotuned matmul), the
peers of cubepy's softmax, layernorm and (for a cold autotune's time,
probe_compile_ahead.py) matmul. Imported only where Triton is installed."""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


def softmax(x, out):
    """One program per row holding the whole row in registers, as in the tutorial."""
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    num_warps = 4 if block < 2048 else (8 if block < 4096 else 16)
    _softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block,
                             num_warps=num_warps)
    return out


@triton.jit
def _layer_norm_fwd(X, Y, W, B, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


def layernorm(x, w, b, out, eps):
    """The tutorial's launch: a block of up to 64 KiB of the row, warps by block size."""
    rows, cols = x.shape
    block = min(65536 // x.element_size(), triton.next_power_of_2(cols))
    num_warps = min(max(block // 256, 1), 8)
    _layer_norm_fwd[(rows,)](x, out, w, b, x.stride(0), cols, eps, BLOCK_SIZE=block,
                             num_warps=num_warps)
    return out


def _matmul_config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                         num_stages=stages, num_warps=warps)


# The tutorial's eight configs for NVIDIA GPUs and f16.
MATMUL_CONFIGS = [_matmul_config(128, 256, 64, 3, 8), _matmul_config(64, 256, 32, 4, 4),
                  _matmul_config(128, 128, 32, 4, 4), _matmul_config(128, 64, 32, 4, 4),
                  _matmul_config(64, 128, 32, 4, 4), _matmul_config(128, 32, 32, 4, 4),
                  _matmul_config(64, 32, 32, 5, 2), _matmul_config(32, 64, 32, 5, 2)]


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # tiles taken in groups of GROUP_M rows, so neighbouring programs share B's columns
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % (GROUP_M * tiles_n)) % group_rows
    tile_n = (pid % (GROUP_M * tiles_n)) // group_rows
    rows = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    ks = tl.arange(0, BLOCK_K)
    a_at = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_at = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_at, mask=ks[None, :] < left, other=0.0)
        b = tl.load(b_at, mask=ks[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_at += BLOCK_K * stride_ak
        b_at += BLOCK_K * stride_bk
    out_rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    out_cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_at = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    tl.store(c_at, acc.to(tl.float16),
             mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


def matmul(a, b, c):
    """c = a @ b (f16 torch tensors), the tutorial's kernel tuned over its configs."""
    m, k = a.shape
    n = b.shape[1]

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
    _matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                         b.stride(1), c.stride(0), c.stride(1))
    return c
