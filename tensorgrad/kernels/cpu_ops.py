"""The kernel ops of the CPU: kernels/functions.py's ops on kernels/cpu.py's Numba kernels, the CPU's
own paths of some of them, and the Linear whose large products run on the CPU's threads
(kernels/cpu_linear.py).

`KERNEL_OPS` lists them in the order the engine asks them (kernel_registry.py): of the kernel ops
of one reference op, the first whose `accepts` holds runs, so each of the CPU's own paths comes
before the kernel op it stands in for elsewhere.  kernels/__init__.py hands the list to the
engine's registry on the device's first op."""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from . import cpu, cpu_attention, cpu_threads
from . import functions as f
from .cpu_linear import Linear

# the kernel ops as they are, on cpu.py's kernels
(LayerNorm, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, Dropout, Embedding, AdamWUpdate,
 AdamWParamsUpdate) = f.bind(cpu, __name__, f.LayerNorm, f.PackedSelfAttention, f.Softmax, f.CrossEntropy, f.ReLU,
                             f.GELU, f.Dropout, f.Embedding, f.AdamWUpdate, f.AdamWParamsUpdate)  # fmt: skip


class ScaledDotProductAttention(f.ScaledDotProductAttention):
    """The attention kernel op on the CPU, with the query blocks of a mask that leaves keys out
    (the blocks need the mask on the host)."""

    __slots__ = ()
    kernels = cpu
    query_block = 64  # benchmarks/NOTES-timing.md: the block size against the large step's attention


class ScaledDotProductAttentionInParts(ScaledDotProductAttention):
    """Row parts (kernels/cpu_threads.py): the (batch, head) rows are independent, so a large
    attention runs in parts of a few rows, forward and backward, each part's scores kept in the
    cache and the parts spread over the threads; every part is computed as the whole would be
    (`_attend`, `_attend_backward` on its rows).  Work too small for two parts: the next kernel op
    (ScaledDotProductAttention)."""

    __slots__ = ()
    threads = cpu_threads  # row_parts(rows, work), run_parts(fn, parts)

    @classmethod
    def accepts(cls, q, k, v, mask, scale, dropout_p=0.0):
        if not f.ScaledDotProductAttention.accepts(q, k, v, mask, scale, dropout_p):
            return False
        R = math.prod(q.shape[:-2])
        return len(cls.threads.row_parts(R, R * q.shape[-2] * k.shape[-2])) > 1

    def forward(self, q, k, v, mask, scale, dropout_p=0.0):
        T, S = q.shape[-2], k.shape[-2]
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, S))  # (1, 1, T, S) and the like
        batch = q.shape[:-2]
        R = math.prod(batch)
        blocks = self._query_blocks(mask, T, S)
        parts = self.threads.row_parts(R, R * T * S)
        q, k, v = (a.reshape((R,) + a.shape[-2:]) for a in (q, k, v))  # (R, T, d): the batch as rows
        out = np.empty((R, T, v.shape[-1]), dtype=q.dtype)
        # the reference's draw, each part drawing its own rows (kernels/cpu.py's KeepRows)
        rng = backend.rng(backend.device_of(q))
        keeps = self.kernels.KeepRows(rng, R, T * S, dropout_p) if dropout_p > 0 else None

        def part(rows):
            keep_rows = keeps.rows(rows.start, rows.stop).reshape(-1, T, S) if keeps is not None else None
            out_rows, saved_rows = self._attend(q[rows], k[rows], v[rows], mask, keep_rows, scale, 1 - dropout_p,
                                                blocks)  # fmt: skip
            out[rows] = out_rows
            return saved_rows

        saved = self.threads.run_parts(part, parts)
        self.save_for_backward(q, k, v, saved, parts, scale, 1 - dropout_p, blocks)
        return out.reshape(batch + out.shape[-2:])

    def backward(self, g):
        q, k, v, saved, parts, scale, keep_prob, blocks = self.saved
        batch = g.shape[:-2]
        g = g.reshape(q.shape[:1] + g.shape[-2:])  # (R, T, dv)
        dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)

        def part(rows_and_saved):
            rows, saved_rows = rows_and_saved
            dq[rows], dk[rows], dv[rows] = self._attend_backward(g[rows], q[rows], k[rows], v[rows], saved_rows, scale,
                                                                 keep_prob, blocks)  # fmt: skip

        self.threads.run_parts(part, list(zip(parts, saved)))
        return tuple(d.reshape(batch + d.shape[1:]) for d in (dq, dk, dv)) + (None,)


def _own_path(qkv, mask, num_heads, dropout_p) -> bool:
    """Whether the CPU's own packed-attention paths take these inputs: qkv of one kernel dtype with
    no zero-size dim, a mask of T * T bools or none, dropout_p < 1."""
    B, T, three_hd = qkv.shape
    if qkv.size == 0 or three_hd % (3 * num_heads) or qkv.dtype not in f._FLOATS or not dropout_p < 1:
        return False
    return mask is None or (mask.dtype == backend.bool_ and mask.ndim >= 2 and mask.size == T * T)


class FusedPackedSelfAttention(PackedSelfAttention):
    """Short sequences (T <= fused_max_len): cpu_attention.py's fused path, which reads q, k and v
    in place in the packed qkv and writes the output and dqkv in their packed layouts (no copies).
    Elsewhere (other dtypes, masks that are not T * T bools, empty arrays, dropout_p = 1, longer
    sequences) the next of the CPU's packed-attention kernel ops."""

    __slots__ = ()
    # The fused path runs for sequences of at most this many positions.  Its loops (q k^T, g v^T,
    # the softmax's passes) cost about the same per (query, key) pair at any T, while the general
    # kernel op's GEMMs get more efficient as T grows: against it, forward + backward on one thread
    # (benchmarks/NOTES-timing.md), the fused path takes 27-41% less time at T = 8 (head sizes 8 to
    # 128), 11-23% less at T = 16, 6-17% at T = 24, 0-10% at T = 28, and 4-8% more at T = 32 (35%
    # at T = 64, 44% at the `large` preset's shape); the head size changes little.  16 keeps a
    # margin: the `small` preset's T = 8 is under it, the `large` preset's T = 256 far over.
    fused_max_len = 16

    @classmethod
    def accepts(cls, qkv, mask, num_heads, scale, dropout_p=0.0):
        return _own_path(qkv, mask, num_heads, dropout_p) and qkv.shape[1] <= cls.fused_max_len

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0):
        B, T = qkv.shape[:2]
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, T))  # (1, 1, T, T) and the like
        qkv = f._contiguous(qkv)
        keep = None
        if dropout_p > 0:  # the reference's draw over its (B, H, T, T) weights: the same masks from a seed
            keep = self.kernels.keep_mask(backend.rng(backend.device_of(qkv)), (B, num_heads, T, T), dropout_p)
            keep = keep.reshape(-1, T, T)
        out, p, pd, n_keys = cpu_attention.packed_attention_forward(qkv, num_heads, scale, mask, keep, 1 - dropout_p)
        self.save_for_backward(qkv, p, pd, n_keys, keep, num_heads, scale, 1 - dropout_p)
        return out

    def backward(self, g):
        qkv, p, pd, n_keys, keep, num_heads, scale, keep_prob = self.saved
        g = f._contiguous(g)
        dqkv = cpu_attention.packed_attention_backward(g, qkv, p, pd, n_keys, num_heads, scale, keep, keep_prob)
        return dqkv, None

    def graph_params(self):
        """The reference formula's parameters from this op's saved layout (its keep mask is (B * H, T, T))."""
        qkv, _, _, _, keep, H, scale, keep_prob = self.saved
        B, T = qkv.shape[:2]
        return H, qkv.shape[-1] // (3 * H), (None if keep is None else keep.reshape(B, H, T, T), scale, keep_prob)


class PackedSelfAttentionInParts(PackedSelfAttention):
    """Long sequences, large enough to split: the batch in parts (cpu_threads.row_parts, about
    PART_WORK scores each), every part start to end on one thread: its heads' contiguous copies, the
    attention kernel op's lines on them (`_attend`, `_attend_backward`, query blocks and all), and
    its rows of the packed output, or of dqkv, written back.  The general kernel op
    (PackedSelfAttention) makes those copies and writes on the calling thread, over the whole batch,
    before and after the parts.  With one thread the parts run one after the other on the calling
    thread.  Inputs of the CPU's own paths only (as FusedPackedSelfAttention's), in two parts or more."""

    __slots__ = ()
    threads = cpu_threads  # row_parts(rows, work), run_parts(fn, parts)

    @classmethod
    def accepts(cls, qkv, mask, num_heads, scale, dropout_p=0.0):
        if not _own_path(qkv, mask, num_heads, dropout_p):
            return False
        B, T = qkv.shape[:2]
        return len(cls.threads.row_parts(B, B * num_heads * T * T)) > 1

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0):
        """The general kernel op's forward, each part of the batch on one thread: q, k^T and v of its
        heads contiguous (as that op lays out the whole batch), the attention kernel op's lines, its
        rows of the output."""
        B, T, three_hd = qkv.shape
        H = num_heads
        d = three_hd // (3 * H)
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, T))  # (1, 1, T, T) and the like
        parts = self.threads.row_parts(B, B * H * T * T)
        attention = ScaledDotProductAttention(self.xp)  # this device's kernel op, for its per-part lines
        blocks = attention._query_blocks(mask, T, T)
        # the reference's draw over its (B * H, T, T) weights, each part drawing its own rows
        rng = backend.rng(backend.device_of(qkv))
        keeps = self.kernels.KeepRows(rng, B * H, T * T, dropout_p) if dropout_p > 0 else None
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
        self.save_for_backward(attention, parts, saved, H, scale, 1 - dropout_p, blocks)
        return out.reshape(B, T, H * d)

    def backward(self, g):
        """The general kernel op's backward, each part of the batch on one thread: its rows of g as
        heads, the attention kernel op's backward lines, its rows of dqkv."""
        attention, parts, saved, H, scale, keep_prob, blocks = self.saved
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

    def graph_params(self):
        """The reference formula's parameters: this op keeps its dropout masks per part, so with
        dropout there are none (the lazy error)."""
        _, _, _, H, scale, keep_prob, _ = self.saved
        hd = self.parents[0].shape[-1] // 3
        return (H, hd // H, (None, scale, keep_prob)) if keep_prob == 1 else None


class DropoutOnThreads(Dropout):
    """A large input on several threads: each thread draws its own rows of the reference's mask
    (cpu.KeepRows: the same bits as keep_mask's one draw, which runs on one thread) and applies them
    to its rows, the kernels serial meanwhile (cpu_threads.run_parts).  Rows are the last dim's.
    Inputs too small to split, or one thread: the general kernel op (Dropout)."""

    __slots__ = ()
    threads = cpu_threads

    @classmethod
    def accepts(cls, x, p):
        return x.size >= cls.threads.MIN_SPLIT_WORK and f._fits(x) and len(cls._parts(x)) > 1

    @staticmethod
    def _rows(x):
        """(rows, n): x as rows of its last dim's n elements (a 0-d x is one row of one)."""
        n = x.shape[-1] if x.ndim else 1
        return (x.size // n if n else 0), n

    @classmethod
    def _parts(cls, x):
        """One run of the rows per thread."""
        return cls.threads.thread_parts(cls._rows(x)[0])

    def forward(self, x, p):
        rows, n = self._rows(x)
        # the generator advanced past the whole draw now, each thread drawing its rows below
        keeps = self.kernels.KeepRows(backend.rng(backend.device_of(x)), rows, n, p)
        x2 = f._contiguous(x).reshape(rows, n)
        keep = np.empty((rows, n), dtype=np.bool_)
        y = np.empty_like(x2)
        scale = 1.0 / (1.0 - p)

        def part(r):
            self.kernels.dropout_forward_into(x2[r], keeps.rows(r.start, r.stop, out=keep[r]), scale, y[r])

        self.threads.run_parts(part, self._parts(x))
        self.save_for_backward(keep.reshape(x.shape), scale)
        return y.reshape(x.shape)


KERNEL_OPS = (
    Linear, LayerNorm, ScaledDotProductAttentionInParts, ScaledDotProductAttention, FusedPackedSelfAttention,
    PackedSelfAttentionInParts, PackedSelfAttention, Softmax, CrossEntropy, ReLU, GELU, DropoutOnThreads, Dropout,
    Embedding, AdamWUpdate, AdamWParamsUpdate,
)  # fmt: skip
