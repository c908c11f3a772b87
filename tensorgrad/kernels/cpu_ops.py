"""The kernel ops of the CPU: kernels/functions.py's ops on kernels/cpu.py's Numba kernels.

One subclass per kernel op, binding it to this device's kernel module; kernels/__init__.py hands
`KERNEL_OPS` to the engine's registry on the device's first op."""

from __future__ import annotations

from . import cpu, cpu_threads
from . import functions as f


class LayerNorm(f.LayerNorm):
    __slots__ = ()
    kernels = cpu


class ScaledDotProductAttention(f.ScaledDotProductAttention):
    __slots__ = ()
    kernels = cpu
    query_block = 64  # benchmarks/NOTES-timing.md: the block size against the large step's attention
    threads = cpu_threads  # a large attention's (batch, head) rows split over the BLAS library's threads


class PackedSelfAttention(f.PackedSelfAttention):
    __slots__ = ()
    kernels = cpu


class Softmax(f.Softmax):
    __slots__ = ()
    kernels = cpu


class CrossEntropy(f.CrossEntropy):
    __slots__ = ()
    kernels = cpu


class ReLU(f.ReLU):
    __slots__ = ()
    kernels = cpu


class GELU(f.GELU):
    __slots__ = ()
    kernels = cpu


class Dropout(f.Dropout):
    __slots__ = ()
    kernels = cpu


class Embedding(f.Embedding):
    __slots__ = ()
    kernels = cpu


class AdamWUpdate(f.AdamWUpdate):
    __slots__ = ()
    kernels = cpu


KERNEL_OPS = (
    LayerNorm, ScaledDotProductAttention, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, Dropout, Embedding,
    AdamWUpdate,
)  # fmt: skip
