"""The kernel ops of CUDA: kernels/functions.py's ops on kernels/cuda.py's Numba-CUDA kernels.

One subclass per kernel op, binding it to this device's kernel module; kernels/__init__.py hands
`KERNEL_OPS` to the engine's registry on the device's first op.

Attention has a second path here, CUDA's own: the flash kernels of cuda_flash.py, which never
write the (T, S) scores to memory (ScaledDotProductAttention below)."""

from __future__ import annotations

from .. import backend
from . import cuda, cuda_flash
from . import functions as f

_FLASH = "flash"  # first of the saved values when the forward took the flash path


def _flash_applies(q, k, v) -> bool:
    """Whether the flash kernels take these inputs (the op's `accepts` has already held: one
    kernel dtype, one batch shape, no mask or a mask of `T * S` elements): head dims 1 to
    cuda_flash.D_MAX, and no zero-size dim (those keep the plain path's behaviour)."""
    return 1 <= q.shape[-1] <= cuda_flash.D_MAX and 1 <= v.shape[-1] <= cuda_flash.D_MAX and q.size != 0 and k.size != 0


class LayerNorm(f.LayerNorm):
    __slots__ = ()
    kernels = cuda


class ScaledDotProductAttention(f.ScaledDotProductAttention):
    r"""The flash kernels (cuda_flash.py): one pass over the keys with the online softmax forward,
    saving out and the rows' logsumexp $L$ instead of the `(T, S)` weights, and a backward that
    recomputes the weights from $q$, $k$ and $L$; no mask or any (T, S) mask (the causal one skipping the
    tiles past the diagonal), and dropout with the keep mask drawn as the plain path draws it.  A
    head dim over D_MAX or a zero-size dim: the inherited path (GEMMs and the softmax kernels).

    The flash path saves its output (for $D_i = d\mathrm{out}_i \cdot \mathrm{out}_i$), as PyTorch's
    fused attention does: writing the output in place before the backward raises there, as in
    PyTorch (the plain path saves the weights and does not)."""

    __slots__ = ()
    kernels = cuda

    def forward(self, q, k, v, mask, scale, dropout_p=0.0, device="cpu"):
        if not _flash_applies(q, k, v):
            return super().forward(q, k, v, mask, scale, dropout_p, device)
        T, S = q.shape[-2], k.shape[-2]
        batch = q.shape[:-2]
        q3, k3, v3 = (f._contiguous(a.reshape((-1,) + a.shape[-2:])) for a in (q, k, v))  # (R, rows, dim)
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, S))  # (1, 1, T, S) and the like
        keep = None
        if dropout_p > 0:  # the plain path's draw, from the same generator: the same masks from a seed
            keep = self.kernels.keep_mask(backend.rng(device), batch + (T, S), dropout_p).reshape(-1, T, S)
        out, lse, causal = cuda_flash.attention_forward(q3, k3, v3, mask, keep, 1 - dropout_p, scale)
        self.save_for_backward(_FLASH, q3, k3, v3, out, lse, mask, causal, keep, 1 - dropout_p, scale, batch)
        return out.reshape(batch + out.shape[1:])

    def backward(self, g):
        if self.saved[0] is not _FLASH:  # the forward took the inherited path
            return super().backward(g)
        _, q3, k3, v3, out, lse, mask, causal, keep, keep_prob, scale, batch = self.saved
        dout = f._contiguous(g.reshape(out.shape))
        dq, dk, dv = cuda_flash.attention_backward(q3, k3, v3, out, lse, dout, mask, causal, keep, keep_prob, scale)
        return tuple(a.reshape(batch + a.shape[1:]) for a in (dq, dk, dv)) + (None,)


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
