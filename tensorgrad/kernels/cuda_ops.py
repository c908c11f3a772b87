"""The kernel ops of CUDA: kernels/functions.py's ops on kernels/cuda.py's Numba-CUDA kernels, and
CUDA's own attention: the flash kernels of cuda_flash.py, which never write the (T, S) scores to
memory (FlashAttention below).

`KERNEL_OPS` lists them in the order the engine asks them (kernel_registry.py): of the kernel ops
of one reference op, the first whose `accepts` holds runs.  kernels/__init__.py hands the list to
the engine's registry on the device's first op."""

from __future__ import annotations

from . import cuda, cuda_flash
from . import functions as f

# the kernel ops as they are, on cuda.py's kernels
(LayerNorm, ScaledDotProductAttention, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, Dropout, Embedding,
 AdamWUpdate) = f.bind(cuda, __name__, f.LayerNorm, f.ScaledDotProductAttention, f.PackedSelfAttention, f.Softmax,
                       f.CrossEntropy, f.ReLU, f.GELU, f.Dropout, f.Embedding, f.AdamWUpdate)  # fmt: skip


class FlashAttention(ScaledDotProductAttention):
    r"""The flash kernels (cuda_flash.py): one pass over the keys with the online softmax forward,
    saving `out` and the rows' logsumexp $L$ instead of the `(T, S)` weights, and a backward that
    recomputes the weights from $q$, $k$ and $L$; no mask or any `(T, S)` mask (the causal one
    skipping the tiles past the diagonal), and dropout with the keep mask drawn as the plain path
    draws it.  A head dim over `D_MAX` or a zero-size dim: the next kernel op
    (`ScaledDotProductAttention`: GEMMs and the softmax kernels).

    The flash path saves its output (for $D_i = d\mathrm{out}_i \cdot \mathrm{out}_i$), as PyTorch's
    fused attention does: writing the output in place before the backward raises there, as in
    PyTorch (the plain path saves the weights and does not)."""

    __slots__ = ()

    @staticmethod
    def accepts(q, k, v, mask, scale, dropout_p=0.0):
        """The kernel op's inputs (one kernel dtype, one batch shape, no mask or a mask of T * S
        elements) with head dims 1 to cuda_flash.D_MAX and no zero-size dim (those keep the plain
        path's behaviour)."""
        return (
            1 <= q.shape[-1] <= cuda_flash.D_MAX and 1 <= v.shape[-1] <= cuda_flash.D_MAX and q.size != 0
            and k.size != 0 and f.ScaledDotProductAttention.accepts(q, k, v, mask, scale, dropout_p)
        )  # fmt: skip

    def forward(self, q, k, v, mask, scale, dropout_p=0.0):
        batch = q.shape[:-2]
        q3, k3, v3 = (f._contiguous(a.reshape((-1,) + a.shape[-2:])) for a in (q, k, v))  # (R, rows, dim)
        mask, keep = self._mask_and_keep(q, k, mask, dropout_p)  # the reference's dropout draw
        out, lse, causal = cuda_flash.attention_forward(q3, k3, v3, mask, keep, 1 - dropout_p, scale)
        self.save_for_backward(q3, k3, v3, out, lse, mask, causal, keep, 1 - dropout_p, scale, batch)
        return out.reshape(batch + out.shape[1:])

    def backward(self, g):
        q3, k3, v3, out, lse, mask, causal, keep, keep_prob, scale, batch = self.saved
        dout = f._contiguous(g.reshape(out.shape))
        dq, dk, dv = cuda_flash.attention_backward(q3, k3, v3, out, lse, dout, mask, causal, keep, keep_prob, scale)
        return tuple(a.reshape(batch + a.shape[1:]) for a in (dq, dk, dv)) + (None,)

    def graph_params(self):
        """The reference's formula needs the dropout mask as an array: without dropout there is none."""
        *_, keep_prob, scale, _ = self.saved
        return (None, scale, keep_prob) if keep_prob == 1 else None


KERNEL_OPS = (
    LayerNorm, FlashAttention, ScaledDotProductAttention, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU,
    Dropout, Embedding, AdamWUpdate,
)  # fmt: skip
