"""The kernel ops of CUDA: kernels/functions.py's ops on kernels/cuda.py's Numba-CUDA kernels.

One subclass per kernel op, binding it to this device's kernel module; kernels/__init__.py hands
`KERNEL_OPS` to the engine's registry on the device's first op."""

from __future__ import annotations

from . import cuda
from . import functions as f


class LayerNorm(f.LayerNorm):
    __slots__ = ()
    kernels = cuda


class ScaledDotProductAttention(f.ScaledDotProductAttention):
    __slots__ = ()
    kernels = cuda


class PackedSelfAttention(f.PackedSelfAttention):
    __slots__ = ()
    kernels = cuda


class Softmax(f.Softmax):
    __slots__ = ()
    kernels = cuda


class CrossEntropy(f.CrossEntropy):
    __slots__ = ()
    kernels = cuda


class ReLU(f.ReLU):
    __slots__ = ()
    kernels = cuda


class GELU(f.GELU):
    __slots__ = ()
    kernels = cuda


class Dropout(f.Dropout):
    __slots__ = ()
    kernels = cuda


class Embedding(f.Embedding):
    __slots__ = ()
    kernels = cuda


class AdamWUpdate(f.AdamWUpdate):
    __slots__ = ()
    kernels = cuda


KERNEL_OPS = (
    LayerNorm, ScaledDotProductAttention, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, Dropout, Embedding,
    AdamWUpdate,
)  # fmt: skip
