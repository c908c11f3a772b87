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
from . import cpu, cpu_attention, cpu_flash, cpu_threads
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


def _finite(*arrays) -> bool:
    """Whether every element of the arrays is finite, by one sum each (no array of flags): a NaN or
    inf makes the sum NaN or inf.  Finite values whose sum overflows read as not finite, which only
    sends them to the next kernel op."""
    with np.errstate(over="ignore", invalid="ignore"):
        return all(bool(np.isfinite(a.sum())) for a in arrays)


class FlashAttention(ScaledDotProductAttention):
    r"""Long sequences ($T, S \ge$ `min_len`): kernels/cpu_flash.py's flash attention, which never
    holds the `(T, S)` scores of a whole (batch, head) row: the online softmax forward saving the
    output and the rows' logsumexp $L$, a backward recomputing the weights from $q$, $k$ and $L$
    tile by tile, the causal mask's tiles past the diagonal skipped, the tile products by BLAS.  The
    dropout keep mask is the reference's draw (`kernels.keep_mask` over the weights' shape
    `batch + (T, S)`, from the inputs' device's generator): a seed gives the same masks on both paths.

    Inputs: one kernel dtype (float32, float64) and one batch shape, no mask or a bool one of
    $T \cdot S$ elements, no zero-size dim, head dims up to `max_head`, $0 \le p < 1$, and every
    element of $q$, $k$, $v$ finite.  The last because flash skips the tiles no query of a block
    attends (and the corner of a causal diagonal tile), so a NaN or inf that reaches the reference's
    results only through a masked weight, $0 \cdot \mathrm{NaN}$ (a value no query attends, in
    $P v$; a key, in the backward's $dS\, k$; a query, whose NaN weights row reaches every $dk$, $dv$),
    stays out of the rows and gradients whose tiles flash skips.  PyTorch's CPU attention does either,
    depending on its own tiling (torch 2.13, causal, a NaN in the last value: every row at
    $T = 256$, a quarter of them at $T = 2048$; a NaN in the last key: only the last row), so there
    is no contract to match but the reference's.  Checking is one sum over each input, about
    $1 / T$ of the attention's work.  Other inputs: the next kernel ops (the GEMM paths below).

    Shorter sequences go to those too: against them (forward + backward, float32, causal, head
    size 64, one thread) flash took about 0.73x their time at the `large` preset's $T = 256$ and
    more than theirs below $T \approx 64$ (benchmarks/bench_attention.py), where a tile is mostly
    padding.  Work large enough to split goes first to the row parts spread over the threads
    (`ScaledDotProductAttentionInParts`, listed before this op): this op copies the inputs to
    contiguous rows, draws the keep mask on one thread and runs its rows in Numba's parallel loop
    beside the BLAS library's own threads.  The GPT's packed attention runs flash without those
    costs, ahead of its row parts (`FlashPackedSelfAttention`, see `KERNEL_OPS`).

    The flash path saves its output (for $D_i = g_i \cdot \mathit{out}_i$), as PyTorch's fused
    attention does: writing the output in place before the backward raises, as in PyTorch (the
    reference saves the weights instead).  Its dropout mask is kept as the reference's array, so
    `create_graph` differentiates it twice with dropout as well (`graph_params`)."""

    __slots__ = ()
    min_len = 64  # T and S from here on (benchmarks/bench_attention.py: the measured crossover)
    max_head = 256  # head dims up to this: a tile's rows and products stay in the cache (cpu_flash.block_size)

    @classmethod
    def accepts(cls, q, k, v, mask, scale, dropout_p=0.0):
        T, S, d, dv = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
        return (
            T >= cls.min_len and S >= cls.min_len and 1 <= min(d, dv) and max(d, dv) <= cls.max_head
            and k.shape[-1] == d and v.shape[-2] == S and q.size != 0 and 0 <= dropout_p < 1
            and (mask is None or mask.dtype == backend.bool_)
            and f.ScaledDotProductAttention.accepts(q, k, v, mask, scale, dropout_p) and _finite(q, k, v)
        )  # fmt: skip

    def forward(self, q, k, v, mask, scale, dropout_p=0.0):
        batch = q.shape[:-2]
        q3, k3, v3 = (f._contiguous(a.reshape((-1,) + a.shape[-2:])) for a in (q, k, v))  # (R, rows, dim)
        mask, keep = self._mask_and_keep(q, k, mask, dropout_p)  # the reference's dropout draw
        out, lse = cpu_flash.attention_forward(q3, k3, v3, mask, keep, 1 - dropout_p, scale)
        self.save_for_backward(q3, k3, v3, out, lse, mask, keep, 1 - dropout_p, scale, batch)
        return out.reshape(batch + out.shape[1:])

    def backward(self, g):
        q3, k3, v3, out, lse, mask, keep, keep_prob, scale, batch = self.saved
        dout = f._contiguous(g.reshape(out.shape))
        dq, dk, dv = cpu_flash.attention_backward(q3, k3, v3, out, lse, dout, mask, keep, keep_prob, scale)
        return tuple(a.reshape(batch + a.shape[1:]) for a in (dq, dk, dv)) + (None,)

    def graph_params(self):
        """The reference formula's parameters: the keep mask (None without dropout) in the weights' shape."""
        _, _, _, _, _, mask, keep, keep_prob, scale, batch = self.saved
        if keep is not None:
            keep = keep.reshape(batch + keep.shape[1:])
        return keep, scale, keep_prob


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


class FlashPackedSelfAttention(PackedSelfAttention):
    r"""Long sequences ($T \ge$ `FlashAttention.min_len`): kernels/cpu_flash.py's flash attention on
    the heads of the packed qkv where they lie (`heads_forward`, `heads_backward`: each head's $q$,
    $k$, $v$ a `(T, d)` view of qkv, its rows $3 H d$ apart, read by the tile products through their
    leading dims), the output written in its `(B, T, H d)` layout and the gradients in dqkv's
    `(B, T, 3, H, d)` (the reference's adjoints of the split and permutes): no copies of the heads.
    The batch runs in one run of consecutive batches per thread (`cpu_threads.thread_parts`), each
    drawing its own rows of the dropout keep mask, the reference's draw over its weights' shape
    `(B, H, T, T)` (`KeepRows`: the same bits as one draw); with one thread, one part.  Inputs of
    the CPU's own paths (as FusedPackedSelfAttention's) with head sizes up to
    `FlashAttention.max_head` and every element of qkv finite (see FlashAttention); others: the
    next kernel ops."""

    __slots__ = ()
    threads = cpu_threads  # thread_parts(rows), run_parts(fn, parts)

    @classmethod
    def accepts(cls, qkv, mask, num_heads, scale, dropout_p=0.0):
        if not _own_path(qkv, mask, num_heads, dropout_p):
            return False
        B, T, three_hd = qkv.shape
        return (
            T >= FlashAttention.min_len and three_hd // (3 * num_heads) <= FlashAttention.max_head
            and 0 <= dropout_p and _finite(qkv)
        )  # fmt: skip

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0):
        B, T, three_hd = qkv.shape
        H = num_heads
        d = three_hd // (3 * H)
        if mask is not None:
            mask = f._contiguous(mask.reshape(T, T))  # (1, 1, T, T) and the like
        qkv = f._contiguous(qkv)
        q, k, v = (cpu_attention._heads(qkv, i, H) for i in range(3))  # (B, H, T, d) views
        out = np.empty((B, T, H * d), dtype=qkv.dtype)
        out_heads = cpu_attention._heads(out, None, H)
        lse = np.empty((B * H, T), dtype=qkv.dtype)
        keep = keeps = None
        if dropout_p > 0:  # the reference's draw over its (B, H, T, T) weights: the same masks from a seed
            keeps = self.kernels.KeepRows(backend.rng(backend.device_of(qkv)), B * H, T * T, dropout_p)
            keep = np.empty((B * H, T, T), dtype=np.bool_)

        def part(b):
            rows = slice(b.start * H, b.stop * H)  # its (batch, head) rows
            if keeps is not None:
                keeps.rows(rows.start, rows.stop, out=keep[rows])
            cpu_flash.heads_forward(q[b], k[b], v[b], mask, None if keep is None else keep[rows], 1 - dropout_p,
                                    scale, out_heads[b], lse[rows])  # fmt: skip

        self.threads.run_parts(part, self.threads.thread_parts(B))
        self.save_for_backward(qkv, out, lse, mask, keep, H, scale, 1 - dropout_p)
        return out

    def backward(self, g):
        qkv, out, lse, mask, keep, H, scale, keep_prob = self.saved
        B = g.shape[0]
        q, k, v = (cpu_attention._heads(qkv, i, H) for i in range(3))
        out_heads, g_heads = cpu_attention._heads(out, None, H), cpu_attention._heads(f._contiguous(g), None, H)
        dqkv = np.empty_like(qkv)
        dq, dk, dv = (cpu_attention._heads(dqkv, i, H) for i in range(3))

        def part(b):
            rows = slice(b.start * H, b.stop * H)
            keep_rows = None if keep is None else keep[rows]
            cpu_flash.heads_backward(q[b], k[b], v[b], out_heads[b], lse[rows], g_heads[b], mask, keep_rows,
                                     keep_prob, scale, dq[b], dk[b], dv[b])  # fmt: skip

        self.threads.run_parts(part, self.threads.thread_parts(B))
        return dqkv, None

    def graph_params(self):
        """The reference formula's parameters: its keep mask (None without dropout) as (B, H, T, T)."""
        qkv, _, _, _, keep, H, scale, keep_prob = self.saved
        T = qkv.shape[1]
        if keep is not None:
            keep = keep.reshape(-1, H, T, T)
        return H, qkv.shape[-1] // (3 * H), (keep, scale, keep_prob)


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


# The order is the choice: an op's first kernel that accepts the inputs runs.  The packed attention
# (the GPT's) asks flash before the row parts: on the heads in place, a run of batches per thread,
# it took 0.82x the parts' time alone at the `large` preset's shape (forward + backward, dropout
# 0.2, 2 threads), the same time in the `large` step, and 1.0 GB less peak memory (docs/results.md).
# The scaled-dot-product op still asks the row parts first (its flash op does not run in parts of
# the threads, see FlashAttention; the GPT does not run it in training).
KERNEL_OPS = (
    Linear, LayerNorm, ScaledDotProductAttentionInParts, FlashAttention, ScaledDotProductAttention,
    FusedPackedSelfAttention, FlashPackedSelfAttention, PackedSelfAttentionInParts, PackedSelfAttention, Softmax,
    CrossEntropy, ReLU, GELU, DropoutOnThreads, Dropout, Embedding, AdamWUpdate, AdamWParamsUpdate,
)  # fmt: skip
