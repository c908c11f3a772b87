"""tg.cuda: is_available(), as torch.cuda.is_available(), and the TF32 switch."""

from __future__ import annotations

import os
import sys

from . import backend


def is_available() -> bool:
    """True when CuPy is installed and sees a usable NVIDIA GPU."""
    return backend.cuda_is_available()


def allow_tf32(enabled: bool = True):
    """Let float32 matrix products on the GPU use TF32 tensor cores (10-bit mantissa inputs,
    float32 accumulation): several times the float32 rate on Ampere and later GPUs, at about
    1e-3 relative error per product.  PyTorch's torch.backends.cuda.matmul.allow_tf32.

    CuPy reads this once, when it is imported (its CUPY_TF32 variable), so call this before
    the first CUDA tensor is made; afterwards it raises rather than silently doing nothing.
    """
    if "cupy" in sys.modules:
        raise RuntimeError("tg.cuda.allow_tf32() must be called before CuPy is imported (before any CUDA tensor)")
    os.environ["CUPY_TF32"] = "1" if enabled else "0"
