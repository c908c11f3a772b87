r"""Packed self-attention for short sequences: the CPU's fused path for small heads.

At the `small` GPT's sizes ($B = 32$, $T = 8$, 4 heads of size 8) one attention is 128 products of
$8 \times 8$ matrices, and the plain path's time is mostly overhead: contiguous copies of $q$,
$k^\top$ and $v$ out of the packed `qkv`, the transposes back, the strided copies into `dqkv`, and
the softmax kernels.  This path works on `qkv` `(B, T, 3 * H * d)` where it lies, laid out as
`qkv.reshape(B, T, 3, H, d)`, writes the output in its `(B, T, H * d)` layout and the gradient
`dqkv` in `qkv`'s: no copies.

The six products split by what each needs of the packed layout:

- $q k^\top$ and $g v^\top$ contract two row-major `(T, d)` blocks along $d$; BLAS would want one of
  them transposed (a copy).  Here they are Numba loops (`_packed_attention_scores`,
  `_packed_attention_dscores`), fused with the mask, the softmax's shift and its backward.
- $P^d v$, $P^{d\top} g$, $dS\, k$ and $dS^\top q$ contract along $T$ against a `(T, d)` block of
  `qkv` or $g$ as it lies: BLAS reads the strided view in place (NumPy's matmul with a row stride,
  `out=` a strided view of the output or of `dqkv`).  Its small-matrix GEMMs take about half the time of Numba loops at
  these sizes (benchmarks/NOTES-timing.md), so these stay with BLAS.

The loops follow kernels/cpu.py's conventions (`_jit`: serial and parallel compilations,
`cache=True`, fastmath reassoc and contract only; sums in float64 accumulators; exp by NumPy, whose
exp runs in SIMD registers).  Each loop runs over the (batch, head) pairs (`prange`), and each pair
is computed from start to end by one thread, so the results do not depend on the thread count.

Key prefixes: `n_keys[t]` is 1 + the position of the last key row `t` may attend ($T$ for a row that
attends none: its softmax is NaN over all $T$ keys, as in the reference).  The keys after it are
masked, so their weights $P$ are exactly 0 and they add nothing to the output or to any gradient:
the loops skip them and write 0 there, which changes no value but the order of the sums (the query
blocks of kernels/functions.py rest on the same argument).  A causal mask leaves $T (T + 1) / 2$ of
the $T^2$ pairs.

kernels/cpu_ops.py's FusedPackedSelfAttention decides where this path runs (`fused_max_len`:
short sequences); elsewhere the plain path runs.  The math is the reference's:
`ops.attention.ScaledDotProductAttention` on the heads of `qkv` (`ops.attention.PackedSelfAttention`).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .cpu import _attention_softmax_normalize, _jit, _run


@_jit
def _packed_attention_scores(qkv, H, scale, neg_inf, mask, n_keys, rowmax, s):
    r"""The reference's $S = q k^\top \cdot \mathrm{scale}$, $S = -\infty$ where not $M$, and
    $S - \max(S)$ (softmax's shift), per (batch, head), into `s` `(B * H, T, T)`, reading $q$ and $k$
    in the packed `qkv`; exp is taken after, by NumPy.  Writes `n_keys` `(T,)`; `rowmax` `(B * H, T)`
    is scratch."""
    B, T, three_hd = qkv.shape
    d = three_hd // (3 * H)
    has_mask = mask.shape[0] > 0
    for t in range(T):  # the key prefixes (T for a row without a mask or with every key masked)
        n_keys[t] = T
        if has_mask:
            last = T - 1
            while last >= 0 and not mask[t, last]:
                last -= 1
            n_keys[t] = last + 1 if last >= 0 else T
    for bh in prange(B * H):
        b = bh // H
        h = bh - b * H
        q0, k0 = h * d, (H + h) * d  # this head's query and key columns in a packed row
        # pass 1, every row: S[t, j] = (q_t . k_j) * scale, -inf where masked; the row's maximum
        for t in range(T):
            q = qkv[b, t, q0 : q0 + d]
            row = s[bh, t]
            maxval = neg_inf
            for j in range(n_keys[t]):
                k = qkv[b, j, k0 : k0 + d]
                acc = 0.0
                for c in range(d):
                    acc += q[c] * k[c]
                x = row.dtype.type(acc) * scale
                if has_mask and not mask[t, j]:
                    x = neg_inf
                row[j] = x
                maxval = max(maxval, x)
            rowmax[bh, t] = maxval
        # pass 2, every row (once pass 1 is done: reading a row right after writing it element by
        # element stalls on the store buffer): S - max.  A masked score stays -inf (exp gives 0);
        # a fully masked row is -inf - (-inf) = NaN, and so its softmax, as in the reference
        for t in range(T):
            row = s[bh, t]
            maxval = rowmax[bh, t]
            for j in range(n_keys[t]):
                row[j] -= maxval
            for j in range(n_keys[t], T):
                row[j] = neg_inf  # the keys after the prefix: masked


def _heads(a, part, H):
    """The `(B, H, T, d)` view of one part (0 q, 1 k, 2 v) of a packed `(B, T, 3 * H * d)` array, or
    of a `(B, T, H * d)` one (`part` None): strided, no copy."""
    B, T, width = a.shape
    if part is None:
        return a.reshape(B, T, H, width // H).transpose(0, 2, 1, 3)
    return a.reshape(B, T, 3, H, width // (3 * H))[:, :, part].transpose(0, 2, 1, 3)


def packed_attention_forward(qkv, num_heads, scale, mask, keep, keep_prob):
    """Reference: `ops.attention.PackedSelfAttention.forward` (the $S$, $P$, $P^d$ and out lines of
    `ScaledDotProductAttention.forward`, on the heads of `qkv`).

    `qkv` `(B, T, 3 * H * d)` C-contiguous; `mask` None or bool `(T, T)`, True = may attend; `keep`
    None or the dropout keep mask `(B * H, T, T)`, bool, as drawn by `keep_mask`;
    `keep_prob = 1 - dropout_p`.  -> (`out` `(B, T, H * d)`, `p` `(B * H, T, T)`, `pd`
    `(B * H, T, T)` or None without `keep`, `n_keys` `(T,)`)."""
    B, T, three_hd = qkv.shape
    H = num_heads
    f = qkv.dtype.type  # the scalars in qkv's dtype: float32 scores stay float32
    p = np.empty((B * H, T, T), qkv.dtype)
    n_keys = np.empty(T, np.int64)
    mask_ = mask if mask is not None else np.empty((0, 0), np.bool_)
    _run(
        "packed_attention_forward", _packed_attention_scores, p.size, qkv, H, f(scale), f(-np.inf), mask_, n_keys,
        np.empty((B * H, T), qkv.dtype), p,
    )  # fmt: skip
    np.exp(p, out=p)
    # P = e / sum(e), Pd = P * R / keep_prob: kernels/cpu.py's pass over the softmax's rows
    pd = np.empty_like(p) if keep is not None else np.empty((0, 0, 0), qkv.dtype)
    keep_ = keep if keep is not None else np.empty((0, 0, 0), np.bool_)
    _run("packed_attention_forward", _attention_softmax_normalize, p.size, p, keep_, f(1.0 / keep_prob), pd)
    pd = pd if keep is not None else None
    weights = pd if pd is not None else p
    out = np.empty((B, T, three_hd // 3), qkv.dtype)
    np.matmul(weights.reshape(B, H, T, T), _heads(qkv, 2, H), out=_heads(out, None, H))  # out = Pd v
    return out, p, pd, n_keys


@_jit
def _packed_attention_dscores(qkv, g, H, n_keys, p, keep, inv_keep_prob, scale, rowsum, ds):
    r"""The reference's $dP^d = g v^\top$, $dP = dP^d \odot R / (1 - p)$,
    $dS = P \odot (dP - \sum_j (dP \odot P))$, per (batch, head), reading $g$ `(B, T, H * d)` and $v$
    in the packed `qkv`; `ds` `(B * H, T, T)` gets $dS \cdot \mathrm{scale}$ (the factor of both
    $dq = dS\, k \cdot \mathrm{scale}$ and $dk = dS^\top q \cdot \mathrm{scale}$), 0 after the key
    prefixes.  `rowsum` `(B * H, T)` is scratch."""
    B, T, three_hd = qkv.shape
    d = three_hd // (3 * H)
    has_keep = keep.shape[0] > 0
    for bh in prange(B * H):
        b = bh // H
        h = bh - b * H
        v0, o0 = (2 * H + h) * d, h * d  # this head's value columns in qkv, gradient columns in g
        P, dS = p[bh], ds[bh]
        # pass 1, every row: dP[t, j] = (g_t . v_j) * R / keep_prob, and sum_j(dP * P)
        for t in range(T):
            gt = g[b, t, o0 : o0 + d]
            total = 0.0
            for j in range(n_keys[t]):
                v = qkv[b, j, v0 : v0 + d]
                acc = 0.0
                for c in range(d):
                    acc += gt[c] * v[c]
                dp = dS.dtype.type(acc)
                if has_keep:
                    dp = dp * keep[bh, t, j] * inv_keep_prob
                dS[t, j] = dp
                total += dp * P[t, j]
            rowsum[bh, t] = total
        # pass 2, every row (once pass 1 is done, as in the forward): dS = P * (dP - sum) * scale
        for t in range(T):
            total = rowsum[bh, t]
            for j in range(n_keys[t]):
                dS[t, j] = P[t, j] * (dS[t, j] - total) * scale
            for j in range(n_keys[t], T):
                dS[t, j] = 0.0  # P = 0 after the prefix


def packed_attention_backward(g, qkv, p, pd, n_keys, num_heads, scale, keep, keep_prob):
    """Reference: `ops.attention.PackedSelfAttention.backward` (`ScaledDotProductAttention.backward`
    on the heads, and the heads' gradients packed as `qkv` is).

    `g` `(B, T, H * d)` C-contiguous; `qkv`, `p`, `pd`, `n_keys` and `keep` as
    `packed_attention_forward` took and gave them.  -> `dqkv` `(B, T, 3 * H * d)`."""
    B, T, three_hd = qkv.shape
    H = num_heads
    f = qkv.dtype.type
    dqkv = np.empty_like(qkv)
    weights = (pd if pd is not None else p).reshape(B, H, T, T)
    g_heads = _heads(g, None, H)
    np.matmul(weights.swapaxes(-1, -2), g_heads, out=_heads(dqkv, 2, H))  # dv = Pd^T g
    ds = np.empty_like(p)
    keep_ = keep if keep is not None else np.empty((0, 0, 0), np.bool_)
    _run(
        "packed_attention_backward", _packed_attention_dscores, p.size, qkv, g, H, n_keys, p,
        keep_, f(1.0 / keep_prob), f(scale), np.empty((B * H, T), np.float64), ds,
    )  # fmt: skip
    ds = ds.reshape(B, H, T, T)  # dS * scale
    np.matmul(ds, _heads(qkv, 1, H), out=_heads(dqkv, 0, H))  # dq = dS k * scale
    np.matmul(ds.swapaxes(-1, -2), _heads(qkv, 0, H), out=_heads(dqkv, 1, H))  # dk = dS^T q * scale
    return dqkv
