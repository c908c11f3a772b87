"""The kernel ops of the CPU: kernels/functions.py's ops on kernels/cpu.py's Numba kernels, and the
Linear whose large products run on the CPU's threads (kernels/cpu_linear.py).

One subclass per kernel op, binding it to this device's kernel module; kernels/__init__.py hands
`KERNEL_OPS` to the engine's registry on the device's first op."""

from __future__ import annotations

import numpy as np

from .. import backend
from . import cpu, cpu_attention, cpu_threads
from . import functions as f
from .cpu_linear import Linear

_FUSED = "fused"  # first of the saved values when the forward took the fused path
_PARTS = "parts"  # ... when it ran the batch in parts


class LayerNorm(f.LayerNorm):
    __slots__ = ()
    kernels = cpu


class ScaledDotProductAttention(f.ScaledDotProductAttention):
    __slots__ = ()
    kernels = cpu
    query_block = 64  # benchmarks/NOTES-timing.md: the block size against the large step's attention
    threads = cpu_threads  # a large attention's (batch, head) rows in parts, spread over the BLAS library's threads


class PackedSelfAttention(f.PackedSelfAttention):
    """Two CPU paths beside the inherited one (contiguous heads, then the attention kernel op):
    - short sequences (`T <= fused_max_len`): cpu_attention.py's fused path, which reads q, k and v
      in place in the packed qkv and writes the output and dqkv in their packed layouts (no copies);
    - long ones, large enough to split: the batch in parts (`cpu_threads.row_parts`, about `PART_WORK`
      scores each), every part start to end on one thread: its heads' contiguous copies, the
      attention kernel op's lines on them (`_attend`, `_attend_backward`, query blocks and all), and
      its rows of the packed output, or of dqkv, written back.  The inherited path makes those
      copies and writes on the calling thread, over the whole batch, before and after the parts.
      With one thread the parts run one after the other on the calling thread.
    Elsewhere (other dtypes, masks that are not `T * T` bools, empty arrays, `dropout_p = 1`, a batch
    too small to split): the inherited path."""

    __slots__ = ()
    kernels = cpu
    threads = cpu_threads  # row_parts(rows, work), run_parts(fn, parts)
    # The fused path runs for sequences of at most this many positions.  Its loops (q k^T, g v^T,
    # the softmax's passes) cost about the same per (query, key) pair at any T, while the inherited
    # path's GEMMs get more efficient as T grows: against it, forward + backward on one thread
    # (benchmarks/NOTES-timing.md), the fused path takes 27-41% less time at T = 8 (head sizes 8 to
    # 128), 11-23% less at T = 16, 6-17% at T = 24, 0-10% at T = 28, and 4-8% more at T = 32 (35%
    # at T = 64, 44% at the `large` preset's shape); the head size changes little.  16 keeps a
    # margin: the `small` preset's T = 8 is under it, the `large` preset's T = 256 far over.
    fused_max_len = 16

    @classmethod
    def takes(cls, qkv, mask, num_heads, dropout_p=0.0) -> bool:
        """Whether the CPU's own paths take these inputs: qkv of one kernel dtype with no zero-size
        dim, a mask of `T * T` bools or none, `dropout_p < 1`."""
        B, T, three_hd = qkv.shape
        if qkv.size == 0 or three_hd % (3 * num_heads) or qkv.dtype not in f._FLOATS or not dropout_p < 1:
            return False
        return mask is None or (mask.dtype == backend.bool_ and mask.ndim >= 2 and mask.size == T * T)

    @classmethod
    def fuses(cls, qkv, mask, num_heads, dropout_p=0.0) -> bool:
        """Whether the fused path takes these inputs: the CPU's own, and `T <= fused_max_len`."""
        return cls.takes(qkv, mask, num_heads, dropout_p) and qkv.shape[1] <= cls.fused_max_len

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0, device="cpu"):
        if not self.takes(qkv, mask, num_heads, dropout_p):
            return super().forward(qkv, mask, num_heads, scale, dropout_p, device)
        B, T = qkv.shape[:2]
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, T))  # (1, 1, T, T) and the like
        if T > self.fused_max_len:
            parts = self.threads.row_parts(B, B * num_heads * T * T)
            if len(parts) < 2:
                return super().forward(qkv, mask, num_heads, scale, dropout_p, device)
            return self._forward_in_parts(qkv, mask, num_heads, scale, dropout_p, device, parts)
        qkv = f._contiguous(qkv)
        keep = None
        if dropout_p > 0:  # the reference's draw over its (B, H, T, T) weights: the same masks from a seed
            keep = self.kernels.keep_mask(backend.rng(device), (B, num_heads, T, T), dropout_p).reshape(-1, T, T)
        out, p, pd, n_keys = cpu_attention.packed_attention_forward(qkv, num_heads, scale, mask, keep, 1 - dropout_p)
        self.save_for_backward(_FUSED, qkv, p, pd, n_keys, keep, num_heads, scale, 1 - dropout_p)
        return out

    def backward(self, g):
        if self.saved[0] is _PARTS:
            return self._backward_in_parts(g)
        if self.saved[0] is not _FUSED:  # the forward took the inherited path
            return super().backward(g)
        _, qkv, p, pd, n_keys, keep, num_heads, scale, keep_prob = self.saved
        g = f._contiguous(g)
        dqkv = cpu_attention.packed_attention_backward(g, qkv, p, pd, n_keys, num_heads, scale, keep, keep_prob)
        return dqkv, None

    def graph_params(self):
        """The reference formula's parameters from this op's saved layouts (the fused path's keep
        mask is `(B * H, T, T)`; the parts path keeps its masks per part, so dropout there raises)."""
        if self.saved[0] is _FUSED:
            _, qkv, _, _, _, keep, H, scale, keep_prob = self.saved
            B, T = qkv.shape[:2]
            return H, qkv.shape[-1] // (3 * H), (None if keep is None else keep.reshape(B, H, T, T), scale, keep_prob)
        if self.saved[0] is _PARTS:
            _, _, _, _, H, scale, keep_prob, _ = self.saved
            hd = self.parents[0].shape[-1] // 3
            return (H, hd // H, (None, scale, keep_prob)) if keep_prob == 1 else None
        return super().graph_params()

    def _forward_in_parts(self, qkv, mask, H, scale, dropout_p, device, parts):
        r"""The inherited forward, each part of the batch on one thread: $q$, $k^\top$ and $v$ of its heads
        contiguous (as the inherited path lays out the whole batch), the attention kernel op's
        lines, its rows of the output."""
        B, T, three_hd = qkv.shape
        d = three_hd // (3 * H)
        attention = ScaledDotProductAttention(self.xp)  # this device's kernel op, for its per-part lines
        blocks = attention._query_blocks(mask, T, T)
        # the reference's draw over its (B * H, T, T) weights, each part drawing its own rows
        keeps = self.kernels.KeepRows(backend.rng(device), B * H, T * T, dropout_p) if dropout_p > 0 else None
        heads = qkv.reshape(B, T, 3, H, d)
        out = np.empty((B, T, H, d), dtype=qkv.dtype)

        def part(b):
            rows = (b.stop - b.start) * H  # its (batch, head) rows
            q = f._contiguous(heads[b, :, 0].transpose(0, 2, 1, 3)).reshape(rows, T, d)
            k = f._contiguous(heads[b, :, 1].transpose(0, 2, 3, 1)).reshape(rows, d, T).swapaxes(-1, -2)  # k^T laid out
            v = f._contiguous(heads[b, :, 2].transpose(0, 2, 1, 3)).reshape(rows, T, d)
            keep = keeps.rows(b.start * H, b.stop * H).reshape(rows, T, T) if keeps is not None else None
            out_b, saved_b = attention._attend(q, k, v, mask, keep, scale, 1 - dropout_p, blocks)
            out[b] = out_b.reshape(-1, H, T, d).transpose(0, 2, 1, 3)  # (b, T, H, d): heads side by side
            return q, k, v, saved_b

        saved = self.threads.run_parts(part, parts)
        self.save_for_backward(_PARTS, attention, parts, saved, H, scale, 1 - dropout_p, blocks)
        return out.reshape(B, T, H * d)

    def _backward_in_parts(self, g):
        """The inherited backward, each part of the batch on one thread: its rows of g as heads, the
        attention kernel op's backward lines, its rows of dqkv."""
        _, attention, parts, saved, H, scale, keep_prob, blocks = self.saved
        B, T, hd = g.shape
        d = hd // H
        g_heads = g.reshape(B, T, H, d)
        dqkv = np.empty((B, T, 3, H, d), dtype=g.dtype)

        def part(part_and_saved):
            b, (q, k, v, saved_b) = part_and_saved
            g_b = f._contiguous(g_heads[b].transpose(0, 2, 1, 3)).reshape(-1, T, d)
            grads = attention._attend_backward(g_b, q, k, v, saved_b, scale, keep_prob, blocks)
            for i, grad in enumerate(grads):  # dq, dk, dv
                dqkv[b, :, i] = grad.reshape(-1, H, T, d).transpose(0, 2, 1, 3)

        self.threads.run_parts(part, list(zip(parts, saved)))
        return dqkv.reshape(B, T, 3 * H * d), None


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
    """A large input on several threads: each thread draws its own rows of the reference's mask
    (cpu.KeepRows: the same bits as keep_mask's one draw, which runs on one thread) and applies them
    to its rows, the kernels serial meanwhile (cpu_threads.run_parts).  Rows are the last dim's."""

    __slots__ = ()
    kernels = cpu
    threads = cpu_threads

    def forward(self, x, p, device):
        n = x.shape[-1] if x.ndim else 1
        rows = x.size // n if n else 0
        parts = self.threads.thread_parts(rows) if x.size >= self.threads.MIN_SPLIT_WORK else [slice(0, rows)]
        if len(parts) <= 1:
            return super().forward(x, p, device)
        keeps = self.kernels.KeepRows(backend.rng(device), rows, n, p)  # the generator advanced past the draw now
        x2 = f._contiguous(x).reshape(rows, n)
        keep = np.empty((rows, n), dtype=np.bool_)
        y = np.empty_like(x2)
        scale = 1.0 / (1.0 - p)

        def part(r):
            self.kernels.dropout_forward_into(x2[r], keeps.rows(r.start, r.stop, out=keep[r]), scale, y[r])

        self.threads.run_parts(part, parts)
        self.save_for_backward(keep.reshape(x.shape), scale)
        return y.reshape(x.shape)


class Embedding(f.Embedding):
    __slots__ = ()
    kernels = cpu


class AdamWUpdate(f.AdamWUpdate):
    __slots__ = ()
    kernels = cpu


class AdamWParamsUpdate(f.AdamWParamsUpdate):
    __slots__ = ()
    kernels = cpu


KERNEL_OPS = (
    Linear, LayerNorm, ScaledDotProductAttention, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, Dropout,
    Embedding, AdamWUpdate, AdamWParamsUpdate,
)  # fmt: skip
