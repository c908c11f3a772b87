"""Kernel-backed ops: subclasses of the reference ops whose forward and backward call a kernel
module (kernels/cpu.py or kernels/cuda.py, the contract in kernels/__init__.py).

`build(module)` makes one subclass per op the module has kernels for; `Function.apply` runs it in
place of the reference class on that module's device.  The subclasses prepare arrays for the
contract (fold batch axes into rows, make inputs contiguous, draw dropout masks from the same
generator as the reference) and leave the math to the kernels; GEMMs stay with the array library
(BLAS, cuBLAS).  Inputs outside a kernel's contract (integer dtypes, float16, an attention mask
that is not (T, S), batch dims that broadcast, GELU's tanh form) run the reference op: `plain`
records which path a node took, so its backward takes the same one.
"""

from __future__ import annotations

import math

from .. import backend
from ..ops import attention as ref_attention
from ..ops import dropout as ref_dropout
from ..ops import elementwise as ref_elementwise
from ..ops import embedding as ref_embedding
from ..ops import layernorm as ref_layernorm
from ..ops import loss as ref_loss
from ..ops import softmax as ref_softmax

_FLOATS = (backend.float32, backend.float64)


def _contiguous(a):
    """a itself when C-contiguous, else a C-contiguous copy (keeps 0-d arrays 0-d, which
    ascontiguousarray does not)."""
    return a if a.flags.c_contiguous else a.copy()


def _fits(*arrays) -> bool:
    """Every array floating point of a kernel dtype (float32, float64), all one dtype."""
    return all(a.dtype == arrays[0].dtype for a in arrays) and arrays[0].dtype in _FLOATS


class _KernelOp:
    """Mixin of the kernel ops: `kernels` is the kernel module, `plain` True where this node ran
    the reference op (inputs outside the contract)."""

    __slots__ = ()
    kernels = None


class LayerNorm(_KernelOp, ref_layernorm.LayerNorm):
    __slots__ = ("plain",)

    def forward(self, x, weight, bias, k, eps=1e-5):
        self.plain = (weight is None) != (bias is None) or not _fits(x, *(a for a in (weight, bias) if a is not None))
        if self.plain:
            return super().forward(x, weight, bias, k, eps)
        n = math.prod(x.shape[x.ndim - k :])
        x2 = _contiguous(x.reshape(-1, n))  # (rows, N)
        w = _contiguous(weight.reshape(-1)) if weight is not None else None
        b = _contiguous(bias.reshape(-1)) if bias is not None else None
        y, mean, rstd = self.kernels.layernorm_forward(x2, w, b, eps)
        self.save_for_backward(x2, mean, rstd, w, x.shape, x.shape[x.ndim - k :])
        return y.reshape(x.shape)

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        x2, mean, rstd, w, shape, norm_shape = self.saved
        dy = _contiguous(g.reshape(x2.shape))
        dx, dw, db = self.kernels.layernorm_backward(dy, x2, mean, rstd, w)
        if dw is not None:
            dw, db = dw.reshape(norm_shape), db.reshape(norm_shape)
        return dx.reshape(shape), dw, db


class ScaledDotProductAttention(_KernelOp, ref_attention.ScaledDotProductAttention):
    """The GEMMs by the array library, the scale, mask, softmax and dropout by one kernel pass
    over the scores (forward), and the dropout and softmax backward by another."""

    __slots__ = ("plain",)

    def forward(self, q, k, v, mask, scale, dropout_p=0.0, device="cpu"):
        xp = self.xp
        T, S = q.shape[-2], k.shape[-2]
        if mask is not None and mask.ndim >= 2 and mask.size == T * S:
            mask = _contiguous(mask.reshape(T, S))  # (1, 1, T, S) and the like
        self.plain = not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]) or not _fits(q, k, v)
        self.plain = self.plain or (mask is not None and mask.shape != (T, S))
        if self.plain:
            return super().forward(q, k, v, mask, scale, dropout_p, device)
        batch = q.shape[:-2]
        R = math.prod(batch)
        keep = None
        if dropout_p > 0:
            keep = backend.rng(device).keep_mask(batch + (T, S), dropout_p)  # as the reference draws it
            keep = keep.reshape(R, T, S)
        scores = xp.matmul(q, k.swapaxes(-1, -2)).reshape(R, T, S)  # q k^T, unscaled
        p, pd = self.kernels.attention_softmax_forward(scores, scale, mask, keep, 1 - dropout_p)
        weights = pd if pd is not None else p
        out = xp.matmul(weights.reshape(batch + (T, S)), v)  # Pd v
        self.save_for_backward(q, k, v, p, weights, keep, scale, 1 - dropout_p)
        return out

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        q, k, v, p, pd, keep, scale, keep_prob = self.saved
        xp = self.xp
        batch, (R, T, S) = q.shape[:-2], p.shape
        pd = pd.reshape(batch + (T, S))
        dv = xp.matmul(pd.swapaxes(-1, -2), g)  # Pd^T g
        dpd = xp.matmul(g, v.swapaxes(-1, -2)).reshape(R, T, S)  # g v^T
        ds = self.kernels.attention_softmax_backward(dpd, p, keep, keep_prob).reshape(batch + (T, S))
        dq = xp.matmul(ds, k)
        dq *= scale  # dS k * scale
        dk = xp.matmul(ds.swapaxes(-1, -2), q)
        dk *= scale  # dS^T q * scale
        return dq, dk, dv, None


class PackedSelfAttention(_KernelOp, ref_attention.PackedSelfAttention):
    """The reference op with the kernel attention, and q, k^T and v laid out contiguously for the
    batched products (NumPy's stacked matmul of small matrices is slower on transposed views)."""

    __slots__ = ("plain",)
    attention = None  # build() sets the kernel ScaledDotProductAttention of the same module

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0, device="cpu"):
        self.plain = False
        xp = self.xp
        B, T, three_hd = qkv.shape
        H, d = num_heads, three_hd // (3 * num_heads)
        parts = qkv.reshape(B, T, 3, H, d)
        q = _contiguous(parts[:, :, 0].transpose(0, 2, 1, 3))  # (B, H, T, d)
        k_t = _contiguous(parts[:, :, 1].transpose(0, 2, 3, 1))  # (B, H, d, T): k^T, contiguous
        v = _contiguous(parts[:, :, 2].transpose(0, 2, 1, 3))  # (B, H, T, d)
        attention = self.attention(xp)
        out = attention.forward(q, k_t.swapaxes(-1, -2), v, mask, scale, dropout_p, device)  # (B, H, T, d)
        self.save_for_backward(attention, H, d)
        return out.transpose(0, 2, 1, 3).reshape(B, T, H * d)

    def backward(self, g):
        attention, H, d = self.saved
        xp = self.xp
        B, T = g.shape[:2]
        g_heads = _contiguous(g.reshape(B, T, H, d).transpose(0, 2, 1, 3))  # (B, H, T, d)
        dq, dk, dv, _ = attention.backward(g_heads)
        dqkv = xp.empty((B, T, 3, H, d), dtype=dq.dtype)
        for i, part in enumerate((dq, dk, dv)):
            dqkv[:, :, i] = part.transpose(0, 2, 1, 3)  # (B, T, H, d)
        return dqkv.reshape(B, T, 3 * H * d), None


class Softmax(_KernelOp, ref_softmax.Softmax):
    """Softmax along the last dim: the attention softmax kernels with scale 1, no mask and no
    dropout, every row of x as one row of scores.  Other dims run the reference."""

    __slots__ = ("plain",)

    def forward(self, x, dim):
        self.plain = x.ndim == 0 or x.size == 0 or dim % x.ndim != x.ndim - 1 or not _fits(x)
        if self.plain:
            return super().forward(x, dim)
        scores = x.copy().reshape(1, -1, x.shape[-1])  # one C-ordered copy: the kernel writes P over it
        p, _ = self.kernels.attention_softmax_forward(scores, 1.0, None, None, 1.0)
        y = p.reshape(x.shape)
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        y, _ = self.saved
        rows = (1, -1, y.shape[-1])
        dy = g.copy().reshape(rows)  # one C-ordered copy: the kernel writes dx over it
        return self.kernels.attention_softmax_backward(dy, y.reshape(rows), None, 1.0).reshape(y.shape)


class CrossEntropy(_KernelOp, ref_loss.CrossEntropy):
    __slots__ = ("plain",)

    def forward(self, x, targets, reduction="mean", ignore_index=-100):
        self.plain = not _fits(x)
        if self.plain:
            return super().forward(x, targets, reduction, ignore_index)
        x = _contiguous(x)
        targets = _contiguous(targets.astype(backend.int64, copy=False))
        losses, lse = self.kernels.cross_entropy_forward(x, targets, ignore_index)
        keep = targets != ignore_index
        count = None
        if reduction == "mean":
            count = keep.sum().astype(x.dtype)
            out = losses.sum() / count
        elif reduction == "sum":
            out = losses.sum()
        else:
            out = losses
        self.save_for_backward(x, lse, targets, keep, reduction, count, ignore_index)
        return out

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        x, lse, targets, keep, reduction, count, ignore_index = self.saved
        xp = self.xp
        if reduction == "none":
            gscale = _contiguous(g.astype(x.dtype, copy=False))
        else:
            gscale = xp.empty(x.shape[0], x.dtype)
            gscale[...] = g / count if reduction == "mean" else g  # one factor for every row
        return self.kernels.cross_entropy_backward(x, lse, targets, ignore_index, gscale), None


class ReLU(_KernelOp, ref_elementwise.ReLU):
    __slots__ = ("plain",)

    def forward(self, x):
        self.plain = not _fits(x)
        if self.plain:
            return super().forward(x)
        z = self.kernels.relu_forward(_contiguous(x))
        self.save_for_backward(z)
        return z

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        (z,) = self.saved
        return self.kernels.relu_backward(_contiguous(g), z)


class GELU(_KernelOp, ref_elementwise.GELU):
    __slots__ = ("plain",)

    def forward(self, x, approximate="none"):
        self.plain = approximate != "none" or not _fits(x)
        if self.plain:
            return super().forward(x, approximate)
        x = _contiguous(x)
        self.save_for_backward(x)
        return self.kernels.gelu_forward(x)

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        (x,) = self.saved
        return self.kernels.gelu_backward(_contiguous(g), x)


class Dropout(_KernelOp, ref_dropout.Dropout):
    __slots__ = ("plain",)

    def forward(self, x, p, device):
        self.plain = not _fits(x)
        if self.plain:
            return super().forward(x, p, device)
        mask = backend.rng(device).keep_mask(x.shape, p)  # the reference's draw
        scale = 1.0 / (1.0 - p)
        self.save_for_backward(mask, scale)
        return self.kernels.dropout_forward(_contiguous(x), mask, scale)

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        mask, scale = self.saved
        return self.kernels.dropout_forward(_contiguous(g), mask, scale)


class Embedding(_KernelOp, ref_embedding.Embedding):
    __slots__ = ("plain",)

    def forward(self, idx, weight):
        self.plain = not _fits(weight)
        return super().forward(idx, weight)  # a gather: no kernel needed

    def backward(self, g):
        if self.plain:
            return super().backward(g)
        idx, num_embeddings = self.saved
        ids = _contiguous(idx.reshape(-1).astype(backend.int64, copy=False))
        dout = _contiguous(g.reshape(-1, g.shape[-1]))
        return None, self.kernels.embedding_backward(ids, dout, num_embeddings)


# reference class -> (kernel class, the kernel functions it needs)
_OPS = {
    ref_layernorm.LayerNorm: (LayerNorm, ("layernorm_forward", "layernorm_backward")),
    ref_attention.ScaledDotProductAttention: (
        ScaledDotProductAttention, ("attention_softmax_forward", "attention_softmax_backward"),
    ),
    ref_softmax.Softmax: (Softmax, ("attention_softmax_forward", "attention_softmax_backward")),
    ref_loss.CrossEntropy: (CrossEntropy, ("cross_entropy_forward", "cross_entropy_backward")),
    ref_elementwise.ReLU: (ReLU, ("relu_forward", "relu_backward")),
    ref_elementwise.GELU: (GELU, ("gelu_forward", "gelu_backward")),
    ref_dropout.Dropout: (Dropout, ("dropout_forward",)),
    ref_embedding.Embedding: (Embedding, ("embedding_backward",)),
}  # fmt: skip


def build(module) -> dict:
    """{reference class: kernel class} for the ops whose kernels `module` has, each kernel class
    a subclass bound to `module` (named as the reference class, so errors read the same)."""
    table = {}
    for ref_cls, (kernel_cls, needs) in _OPS.items():
        if all(hasattr(module, name) for name in needs):
            table[ref_cls] = type(kernel_cls.__name__, (kernel_cls,), {"__slots__": (), "kernels": module})
    sdpa = table.get(ref_attention.ScaledDotProductAttention)
    if sdpa is not None:
        packed = (PackedSelfAttention,)
        table[ref_attention.PackedSelfAttention] = type(
            "PackedSelfAttention", packed, {"__slots__": (), "kernels": module, "attention": sdpa}
        )
    return table
