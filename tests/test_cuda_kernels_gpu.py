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
