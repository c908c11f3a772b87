"""tg.cuda: is_available(), as torch.cuda.is_available(), and the TF32 switch."""

from __future__ import annotations

from . import backend


def is_available() -> bool:
    """True when CuPy is installed, sees a usable NVIDIA GPU and can run kernels on it."""
    return backend.cuda_is_available()


def allow_tf32(enabled: bool = True):
    """Let float32 matrix products on the GPU use TF32 tensor cores (10-bit mantissa inputs,
    float32 accumulation): several times the float32 rate on Ampere and later GPUs, at about
    1e-3 relative error per product.  PyTorch's torch.backends.cuda.matmul.allow_tf32.

    It can be called at any time, before or after the first CUDA tensor, and covers 2-d and
    batched products (CuPy's compute type for float32 and the cuBLAS handle's math mode; see
    backend/cuda_setup.py).  Off by default, as in PyTorch; allow_tf32(False) turns it off again.
    On GPUs older than Ampere (compute capability 8.0) it changes nothing.
    """
    backend.set_allow_tf32(enabled)
