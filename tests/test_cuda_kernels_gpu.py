"""The CUDA kernels on a real GPU: the checks of tests/cuda_kernel_checks.py (every kernel against
its reference op) on CuPy arrays, with the kernels compiled for this GPU and launched on CuPy's
current stream.  Skipped without CuPy and an NVIDIA GPU (the simulator runs the same checks
without one: tests/test_cuda_kernels.py).  benchmarks/gpu_check.sh runs this file.
"""

from __future__ import annotations

import pytest
from cuda_kernel_checks import (  # noqa: F401  (collected here, under this file's marks)
    test_adamw_step,
    test_attention_softmax,
    test_cross_entropy,
    test_dropout,
    test_embedding_backward,
    test_flash_attention,
    test_flash_attention_leaves_long_heads_to_the_plain_path,
    test_gelu,
    test_layernorm,
    test_relu,
)

import tensorgrad as tg

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU"),
]


def test_kernels_run_on_cupys_current_stream():
    """A kernel queued on a non-default CuPy stream sees the work queued before it on that stream
    and is finished when that stream is."""
    import cupy  # noqa: PLC0415

    from tensorgrad.kernels import cuda as kernels  # noqa: PLC0415

    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.arange(1 << 20, dtype=cupy.float32) - (1 << 19)
        y = kernels.relu_forward(x)
        total = y.sum()
    stream.synchronize()
    n = 1 << 19
    assert float(total) == pytest.approx((n - 1) * n / 2, rel=1e-6)  # float32 sum of 0..n-1: ~1e-7 relative error


@pytest.mark.parametrize("dropout_p", [0.0, 0.2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_flash_attention_at_the_large_presets_shape(dtype, dropout_p):
    """The GPT's large preset (batch 64, 6 heads, T = 256, head dim 64), causal, through CUDA's
    packed attention op: its heads take the flash path (kernels/cuda_flash.py) and equal the
    reference op, computed in float64 from the same inputs (and the same dropout draw)."""
    import cupy  # noqa: PLC0415

    from tensorgrad.kernels.cuda_ops import FlashAttention  # noqa: PLC0415
    from tensorgrad.kernels.cuda_ops import PackedSelfAttention as KernelPacked  # noqa: PLC0415
    from tensorgrad.ops.attention import PackedSelfAttention  # noqa: PLC0415

    B, H, T, d = 64, 6, 256, 64
    rng = cupy.random.default_rng(0)
    qkv = rng.standard_normal((B, T, 3 * H * d)).astype(dtype)
    g = rng.standard_normal((B, T, H * d)).astype(dtype)
    mask = cupy.tril(cupy.ones((T, T), dtype=bool))
    scale = d**-0.5

    ker = KernelPacked(cupy)
    tg.manual_seed(1)
    out = ker.forward(qkv, mask, H, scale, dropout_p)
    heads = ker.saved[0]  # the heads' attention op, dispatched to CUDA's kernel ops
    assert type(heads) is FlashAttention  # the flash path
    assert bool(heads.saved[6][0])  # the mask is found causal: the tiles past the diagonal are skipped
    (dqkv, _) = ker.backward(g)

    ref = PackedSelfAttention(cupy)
    tg.manual_seed(1)
    want = ref.forward(qkv.astype(cupy.float64), mask, H, scale, dropout_p)
    (dwant, _) = ref.backward(g.astype(cupy.float64))
    # float64: sums of up to 256 terms of size <= ~10 in another order (and with fused multiply-adds):
    # ~1e-13.  float32: the reference op itself in float32 is off from float64 by up to 1e-6 (out) and
    # 5e-6 (dqkv) at this shape (measured on the CPU); the kernels' other order, FMAs and expf's 2 ulps
    # are of the same size: 1e-4 leaves a factor of ~20.
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype == "float64" else {"rtol": 1e-4, "atol": 1e-4}
    assert out.dtype == dqkv.dtype == cupy.dtype(dtype)
    cupy.testing.assert_allclose(out, want, **tol)
    cupy.testing.assert_allclose(dqkv, dwant, **tol)
