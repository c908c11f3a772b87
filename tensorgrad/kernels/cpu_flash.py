r"""Attention on the CPU without the scores of a whole head: flash attention in Numba.

The CPU's kernel path (kernels/functions.py's ScaledDotProductAttention) forms the scores `(R, T, S)`
with a batched GEMM, softmaxes them in place and multiplies them by $v$: for the GPT's `large`
preset ($R$ = 64 batches $\times$ 6 heads, $T = S = 256$) that is 25M scores, a hundred MB in
float32, written and read by every pass, forward and backward.  Here each thread takes whole
(batch, head) rows $r$ and walks the row's query blocks and key tiles (`BLOCK` $\times$ `BLOCK`):
a tile's scores live in a small buffer in the core's cache, from the product that makes them to
the one that uses them, and only the output, the row's logsumexp $L$ and the gradients reach memory.
It is `kernels/cuda_flash.py`'s algorithm, with tiles where the GPU has one thread per row.

The math, per row $i$ of $(r, i)$, with $s_{ij} = (q_i \cdot k_j)\, \mathrm{scale}$ ($-\infty$ where
`mask[i, j]` is False), $R$ the dropout keep mask (drawn by the caller with `kernels.keep_mask`,
the reference's draw: the same masks from a seed) and $k_p = 1 - \mathrm{dropout\_p}$ (without
dropout read $R = 1$, $k_p = 1$).  Each line names the reference op's line it comes from
(`ops.attention.ScaledDotProductAttention`, whose softmax backward is `ops.softmax.Softmax`'s).

Forward (the online softmax: one pass over the key tiles of a query block, each tile's scores
$s_{ij}$ from one tile product $Q_b K_t^\top$):

$$
\begin{aligned}
m &= \text{running } \max_j s_{ij}, \qquad \ell = \text{running } \textstyle\sum_j \exp(s_{ij} - m)
  && \text{(the reference's } P = \operatorname{softmax}(S)\text{: its max and its sum)} \\
o &= \text{running } \textstyle\sum_j \exp(s_{ij} - m)\, R_{ij} / k_p\; v_j
  && (\mathit{out} = P_d\, v,\ P_d = P \odot R / k_p) \\
&\text{a new tile with row max } m_t\text{:} \quad m' = \max(m, m_t), \quad \alpha = \exp(m - m'), \\
&\quad \ell \leftarrow \ell\, \alpha + \textstyle\sum_{j \in t} \exp(s_{ij} - m'), \qquad
  o \leftarrow o\, \alpha + \textstyle\sum_{j \in t} \exp(s_{ij} - m')\, R_{ij} / k_p\; v_j \\
\mathit{out}_i &= o / \ell, \qquad L_i = m + \log \ell
  && (L\text{: the row's logsumexp, kept for the backward})
\end{aligned}
$$

Once the rescalings by $\alpha$ are multiplied out every term is
$\exp(s_{ij} - m) / \sum_j \exp(s_{ij} - m)$ with the row's final $m$: $\mathit{out} = P_d\, v$.

Backward, from $g = d\mathit{out}$, the weights recomputed tile by tile from $q$, $k$ and $L$
($P_{ij} = \exp(s_{ij} - L_i)$, $P^d_{ij} = P_{ij} R_{ij} / k_p$):

$$
\begin{aligned}
D_i &= \textstyle\sum_c g_{ic}\, \mathit{out}_{ic}
  && (= \textstyle\sum_j dP_{ij} P_{ij}\text{: the row sum of } \texttt{ops.softmax.Softmax}\text{'s backward}) \\
dv_j &= \textstyle\sum_i P^d_{ij}\, g_i && (dv = P_d^\top g) \\
dP_{ij} &= (g_i \cdot v_j)\, R_{ij} / k_p && (dP_d = g\, v^\top,\ dP = dP_d \odot R / k_p) \\
dS_{ij} &= P_{ij}\, (dP_{ij} - D_i) && (\text{the softmax backward}) \\
dq_i &= \mathrm{scale} \textstyle\sum_j dS_{ij}\, k_j && (dq = dS\, k \cdot \mathit{scale}) \\
dk_j &= \mathrm{scale} \textstyle\sum_i dS_{ij}\, q_i && (dk = dS^\top q \cdot \mathit{scale})
\end{aligned}
$$

with $D_i = \sum_j dP_{ij} P_{ij} = \sum_j P^d_{ij} (g_i \cdot v_j) = g_i \cdot \mathit{out}_i$, so the
backward needs neither $P$ nor $P_d$ of the whole row at once.  Per key tile $t$ (its $dk$, $dv$
accumulated in the cache) the query blocks $b$ that see it are visited in order, each adding
$dS_{bt} K_t$ to its rows of $dq$: the thread that owns row $r$ writes all of $dq_r$, $dk_r$,
$dv_r$, so the results do not depend on the number of threads.

Tiles: the products are `BLOCK`-sized tile GEMMs by BLAS, called in place on the rows of $q$, $k$,
$v$ and the gradients (leading dims), the scale as GEMM's alpha, the sums into $dq$, $dk$, $dv$ as
its beta = 1 (`_gemm`: Numba's own `numba_xxgemm`, the SciPy BLAS entry that `np.dot` uses in
nopython mode; `np.dot` takes neither, and explicit loops ran at a third of its rate); the row
passes between them (mask, max, exp, sums, dropout) are loops over a tile's rows.  A tile product
is at most `BLOCK` x `BLOCK` x the head size: at up to $64^3$ OpenBLAS runs it on the calling
thread (above that it would start its own threads from inside each of ours).  Key tiles that no row of a query block may
attend are skipped: with the causal mask (`tril(ones(T, S))`) about half of them (the block's keys
end at its last row), with another mask those after the block's last attended key and before its
first.  Inside a tile the causal mask is a bound on $j$ per row, another mask is read per element.
A causal tile on the diagonal is multiplied in two halves of rows: the first `BLOCK / 2` rows see
only the first `BLOCK / 2` keys, so the corner after them (a quarter of the tile) is not computed
(its scores are set to $-\infty$, its $dS$ to 0, before they are read).

Threads: each kernel is compiled twice, as kernels/cpu.py's loops are (`cpu._jit`): parallel over
the rows $r$ (`prange`), and serial, which `cpu._run` picks for small work and inside
`cpu.serial_kernels()` (an op splitting its own work over threads).  A row is computed start to end
by one thread, so the results are the same bits either way.  The row max of a tile's scores is
`_row_max`, compiled without NaN (so that it keeps one max per SIMD lane).

The exponentials are a polynomial in float32 (`_exp32`: Cody and Waite's range reduction
$x = n \ln 2 + r$ and Cephes' degree-6 polynomial for $e^r$, $2^n$ made by its exponent bits; within
2 ulp of the true $e^x$, and in SIMD registers, where Numba's `math.exp` calls the C library once
per element, about ten times slower); float64 uses `math.exp`.

Masked places are left out of every sum (not added as $0 \cdot v_j$), and skipped tiles are not
read: a NaN or inf in a key or value that no query attends stays out of the results, where the
reference's $P v$ adds $0 \cdot \mathrm{NaN} = \mathrm{NaN}$.  A row with every key masked comes
out NaN, as in the reference, and its NaN reaches the gradients as the reference's does: its row
of $dq$, and every row of $dk$ and $dv$ of its (batch, head) row (`attention_backward` writes them).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange
from numba.core import types as nb_types
from numba.extending import intrinsic, overload
from numba.np.linalg import ensure_blas

from . import cpu

ensure_blas()  # SciPy's BLAS, which Numba's `numba_xxgemm` calls (a clear error here where it is missing)

BLOCK = 64  # query rows of a block, keys of a tile
_FAST = {"reassoc", "contract"}  # as kernels/cpu.py: reassociation and fused multiply-add only


# --------------------------------------------------------------------------- exp
@intrinsic
def _f32_from_bits(typingctx, bits):
    """The float32 whose bits are the int32 `bits` (a bitcast)."""
    sig = nb_types.float32(nb_types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


_EXP32_LO = np.float32(-87.33654)  # below it exp(x) is under float32's smallest normal: 0


@njit(fastmath=_FAST)
def _exp32(x):
    r"""$e^x$ for float32 $x \le 0$ (the shifted scores), branch-free: $x = n \ln 2 + r$,
    $|r| \le \ln 2 / 2$ ($\ln 2$ in two parts, Cody and Waite), $e^r$ by Cephes' `expf` polynomial,
    times $2^n$ built as float bits.  0 below `_EXP32_LO` (and for $-\infty$), NaN for NaN."""
    xc = x if x > _EXP32_LO else _EXP32_LO
    n = np.floor(xc * np.float32(1.44269504088896341) + np.float32(0.5))
    r = xc - n * np.float32(0.693359375)
    r = r - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    p = p * r * r + r + np.float32(1.0)
    e = p * _f32_from_bits((np.int32(n) + np.int32(127)) << 23)
    e = np.float32(0.0) if x < _EXP32_LO else e
    return x if x != x else e


def _exp(x):
    """The exponential of a score, in its dtype (overloaded below)."""
    return math.exp(x)


@overload(_exp, fastmath=_FAST)
def _exp_overload(x):
    if x == nb_types.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


@njit(fastmath={"reassoc", "contract", "nnan"})
def _row_max(x, n, neg_inf):
    """`max(x[:n])` (`neg_inf` for n = 0).  Compiled assuming no NaN (`nnan`), so that the compiler
    keeps a max per SIMD lane (a NaN is passed over here; it still makes its exp, and so the row's
    sum and output, NaN)."""
    m = neg_inf
    for j in range(n):
        m = x[j] if x[j] > m else m
    return m


# --------------------------------------------------------------------------- tile products
def _gemm_signature(dtype):
    return nb_types.intc(
        nb_types.char, nb_types.char, nb_types.char, nb_types.intp, nb_types.intp, nb_types.intp,
        nb_types.CPointer(dtype), nb_types.CPointer(dtype), nb_types.intp, nb_types.CPointer(dtype), nb_types.intp,
        nb_types.CPointer(dtype), nb_types.CPointer(dtype), nb_types.intp,
    )  # fmt: skip


# Numba's own BLAS entry (`numba_xxgemm`, SciPy's `?gemm`, the one `np.dot` calls in nopython mode),
# reached by name so that the compiled kernels stay cacheable, with what `np.dot` does not take:
# transposes, leading dims (tiles of the rows in place), alpha (the scale) and beta = 1 (accumulate).
_GEMM32 = nb_types.ExternalFunction("numba_xxgemm", _gemm_signature(nb_types.float32))
_GEMM64 = nb_types.ExternalFunction("numba_xxgemm", _gemm_signature(nb_types.float64))


@njit(inline="always")
def _gemm(ta, tb, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc, scal):
    """Row-major `c (m, n) = alpha op(a) op(b) + beta c` (op: transpose where `ta` / `tb`), the arrays
    by their first element and leading dims; BLAS is column-major, so it computes the transpose,
    `c^T = alpha op(b)^T op(a)^T + beta c^T`.  `scal`: 2 elements of the dtype, for alpha and beta."""
    scal[0] = alpha
    scal[1] = beta
    trans_b = 116 if tb else 110  # "t", "n"
    trans_a = 116 if ta else 110
    _xxgemm(trans_b, trans_a, n, m, kk, scal[0:].ctypes, b.ctypes, ldb, a.ctypes, lda, scal[1:].ctypes, c.ctypes, ldc)


def _xxgemm(trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc):
    """Column-major BLAS `?gemm` of `c`'s dtype (overloaded below)."""
    raise NotImplementedError  # nopython mode only


@overload(_xxgemm)
def _xxgemm_overload(trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc):
    if c.dtype == nb_types.float32:
        return lambda trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc: _GEMM32(
            115, trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)  # fmt: skip
    return lambda trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc: _GEMM64(
        100, trans_a, trans_b, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)  # fmt: skip


# --------------------------------------------------------------------------- forward
@njit(inline="always")
def _ld(a):
    """The leading dim of a 2-D view whose rows are `a.strides[0]` bytes apart (its last dim
    contiguous); of a view of one row, its width: NumPy gives a dim of size 1 any stride, 0 among
    them, and BLAS takes no leading dim under the width."""
    if a.shape[0] <= 1:
        return max(a.shape[1], 1)
    return a.strides[0] // a.itemsize


@cpu._jit
def _forward(q, k, v, mask, causal, keep, inv_keep_prob, scale, key_lo, key_hi, block, out, lse):
    B, H, T, d = q.shape
    S, dv = k.shape[2], v.shape[3]
    has_mask = mask.shape[0] > 0 and not causal
    has_keep = keep.shape[0] > 0
    nblocks = (T + block - 1) // block
    h = block // 2
    zero = q.dtype.type(0.0)
    neg_inf = q.dtype.type(-np.inf)
    for r in prange(B * H):
        # this (batch, head) row's (T, d) blocks of q, k, v and out, as views with their leading dims
        # (the packed qkv's heads are read where they lie)
        bb, hh = r // H, r % H
        qr, kr, vr, outr = q[bb, hh], k[bb, hh], v[bb, hh], out[bb, hh]
        ldq, ldk, ldv = _ld(qr), _ld(kr), _ld(vr)
        # this row's tile buffers: the tile's scores (then its weights P_d); the block's running
        # max m, sum l and output o
        st = np.empty((block, block), q.dtype)
        m = np.empty(block, q.dtype)
        l = np.empty(block, q.dtype)
        o = np.empty((block, dv), q.dtype)
        scal = np.empty(2, q.dtype)
        for b in range(nblocks):
            i0 = b * block
            nq = min(block, T - i0)
            m[:] = neg_inf
            l[:] = zero
            o[:] = zero
            for j0 in range(key_lo[b] - key_lo[b] % block, key_hi[b], block):
                nk = min(block, S - j0)
                # a causal tile on the diagonal: its first h rows see only its first h keys
                diag = causal and j0 == i0 and nq > h and nk > h
                # s = q_b k_t^T * scale (on the diagonal: without the h x (nk - h) corner no row sees)
                if diag:
                    _gemm(False, True, h, h, d, scale, qr[i0:], ldq, kr[j0:], ldk, 0.0, st, block, scal)
                    _gemm(False, True, nq - h, nk, d, scale, qr[i0 + h :], ldq, kr[j0:], ldk, 0.0, st[h:], block, scal)
                else:
                    _gemm(False, True, nq, nk, d, scale, qr[i0:], ldq, kr[j0:], ldk, 0.0, st, block, scal)
                for i in range(nq):
                    srow = st[i]
                    # keys of this row in the tile: all, or with the causal mask those j <= i
                    n_j = max(0, min(nk, i0 + i - j0 + 1)) if causal else nk
                    # pass 1: the mask; the tile's row max m_t
                    if has_mask:
                        mrow = mask[i0 + i, j0:]
                        for j in range(nk):
                            srow[j] = srow[j] if mrow[j] else neg_inf
                    else:
                        for j in range(n_j, nk):
                            srow[j] = neg_inf
                    m_t = _row_max(srow, nk if has_mask else n_j, neg_inf)
                    m_new = max(m[i], m_t)
                    if m_new == neg_inf:  # every key so far masked: nothing to add yet
                        srow[:nk] = zero
                        continue
                    # pass 2: exp(s - m'), the sum, the dropout on the weights (after the sum:
                    # l normalises P, not P_d)
                    total = zero
                    for j in range(nk):
                        p = _exp(srow[j] - m_new)
                        total += p
                        srow[j] = p
                    if has_keep:
                        krow = keep[r, i0 + i, j0:]
                        for j in range(nk):
                            srow[j] = srow[j] * (inv_keep_prob * krow[j])  # P R / k_p
                    alpha = _exp(m[i] - m_new)
                    l[i] = l[i] * alpha + total
                    m[i] = m_new
                    if alpha != 1:
                        for c in range(dv):
                            o[i, c] *= alpha
                # o += P_d v_t
                if diag:
                    _gemm(False, False, h, dv, h, 1.0, st, block, vr[j0:], ldv, 1.0, o, dv, scal)
                    _gemm(False, False, nq - h, dv, nk, 1.0, st[h:], block, vr[j0:], ldv, 1.0, o[h:], dv, scal)
                else:
                    _gemm(False, False, nq, dv, nk, 1.0, st, block, vr[j0:], ldv, 1.0, o, dv, scal)
            # out = o / l; L = m + log(l) (a row with every key masked: NaN, and L = -inf)
            for i in range(nq):
                if l[i] == zero:
                    outr[i0 + i, :] = np.nan
                    lse[r, i0 + i] = neg_inf
                else:
                    inv = 1.0 / l[i]
                    for c in range(dv):
                        outr[i0 + i, c] = o[i, c] * inv
                    lse[r, i0 + i] = m[i] + math.log(l[i])


# --------------------------------------------------------------------------- backward
@cpu._jit
def _backward(q, k, v, out, dout, lse, mask, causal, keep, inv_keep_prob, scale, key_lo, key_hi, block, dq, dk, dv):
    B, H, T, d = q.shape
    S, dvs = k.shape[2], v.shape[3]
    has_mask = mask.shape[0] > 0 and not causal
    has_keep = keep.shape[0] > 0
    nblocks = (T + block - 1) // block
    h = block // 2
    zero = q.dtype.type(0.0)
    for r in prange(B * H):
        # this (batch, head) row's blocks, as views with their leading dims (as in the forward)
        bb, hh = r // H, r % H
        qr, kr, vr, outr, gr = q[bb, hh], k[bb, hh], v[bb, hh], out[bb, hh], dout[bb, hh]
        dqr, dkr, dvr = dq[bb, hh], dk[bb, hh], dv[bb, hh]
        ldq, ldk, ldv, ldg = _ld(qr), _ld(kr), _ld(vr), _ld(gr)
        lddq, lddk, lddv = _ld(dqr), _ld(dkr), _ld(dvr)
        pt = np.empty((block, block), q.dtype)  # the tile's P, then P_d
        dpt = np.empty((block, block), q.dtype)  # the tile's dP_d, then dS
        scal = np.empty(2, q.dtype)
        # D_i = g_i . out_i
        delta = np.empty(T, q.dtype)
        for i in range(T):
            acc = zero
            for c in range(dvs):
                acc += gr[i, c] * outr[i, c]
            delta[i] = acc
        dqr[:, :] = zero
        dkr[:, :] = zero
        dvr[:, :] = zero
        for j0 in range(0, S, block):
            nk = min(block, S - j0)
            for b in range(nblocks):
                if key_hi[b] <= j0 or key_lo[b] >= j0 + nk:
                    continue  # no row of this block attends a key of this tile
                i0 = b * block
                nq = min(block, T - i0)
                # a causal tile on the diagonal: its first h rows see only its first h keys
                diag = causal and j0 == i0 and nq > h and nk > h
                # s = q_b k_t^T * scale; dP_d = g_b v_t^T (on the diagonal: without the corner no row sees)
                if diag:
                    _gemm(False, True, h, h, d, scale, qr[i0:], ldq, kr[j0:], ldk, 0.0, pt, block, scal)
                    _gemm(False, True, nq - h, nk, d, scale, qr[i0 + h :], ldq, kr[j0:], ldk, 0.0, pt[h:], block, scal)
                    _gemm(False, True, h, h, dvs, 1.0, gr[i0:], ldg, vr[j0:], ldv, 0.0, dpt, block, scal)
                    _gemm(False, True, nq - h, nk, dvs, 1.0, gr[i0 + h :], ldg, vr[j0:], ldv, 0.0, dpt[h:], block, scal)
                else:
                    _gemm(False, True, nq, nk, d, scale, qr[i0:], ldq, kr[j0:], ldk, 0.0, pt, block, scal)
                    _gemm(False, True, nq, nk, dvs, 1.0, gr[i0:], ldg, vr[j0:], ldv, 0.0, dpt, block, scal)
                for i in range(nq):
                    prow, dprow = pt[i], dpt[i]
                    n_j = max(0, min(nk, i0 + i - j0 + 1)) if causal else nk
                    L = lse[r, i0 + i]
                    D = delta[i0 + i]
                    # P = exp(s - L), 0 where masked; dS = P (dP - D); the tile keeps dS in dpt
                    if has_mask:
                        mrow = mask[i0 + i, j0:]
                        for j in range(nk):
                            prow[j] = _exp(prow[j] - L) if mrow[j] else zero
                    else:
                        for j in range(n_j):
                            prow[j] = _exp(prow[j] - L)
                        for j in range(n_j, nk):
                            prow[j] = zero
                    if has_keep:
                        # dP = dP_d R / k_p; P_d = P R / k_p, kept in pt for dv
                        krow = keep[r, i0 + i, j0:]
                        for j in range(nk):
                            p = prow[j]
                            kept = inv_keep_prob * krow[j]  # R_j / k_p: 1 / k_p or 0
                            dprow[j] = p * (dprow[j] * kept - D)
                            prow[j] = p * kept
                    else:
                        for j in range(nk):
                            dprow[j] = prow[j] * (dprow[j] - D)
                    for j in range(n_j, nk):  # (where the corner was not computed, dP_d was not either)
                        dprow[j] = zero
                # dv_t += P_d^T g_b; dk_t += scale dS^T q_b; dq_b += scale dS k_t (on the diagonal: the
                # first h keys from every row, the others from the last nq - h rows)
                if diag:
                    _gemm(True, False, h, dvs, nq, 1.0, pt, block, gr[i0:], ldg, 1.0, dvr[j0:], lddv, scal)
                    _gemm(True, False, nk - h, dvs, nq - h, 1.0, pt[h:, h:], block, gr[i0 + h :], ldg, 1.0,
                          dvr[j0 + h :], lddv, scal)  # fmt: skip
                    _gemm(True, False, h, d, nq, scale, dpt, block, qr[i0:], ldq, 1.0, dkr[j0:], lddk, scal)
                    _gemm(True, False, nk - h, d, nq - h, scale, dpt[h:, h:], block, qr[i0 + h :], ldq, 1.0,
                          dkr[j0 + h :], lddk, scal)  # fmt: skip
                    _gemm(False, False, h, d, h, scale, dpt, block, kr[j0:], ldk, 1.0, dqr[i0:], lddq, scal)
                    _gemm(False, False, nq - h, d, nk, scale, dpt[h:], block, kr[j0:], ldk, 1.0, dqr[i0 + h :], lddq,
                          scal)  # fmt: skip
                else:
                    _gemm(True, False, nk, dvs, nq, 1.0, pt, block, gr[i0:], ldg, 1.0, dvr[j0:], lddv, scal)
                    _gemm(True, False, nk, d, nq, scale, dpt, block, qr[i0:], ldq, 1.0, dkr[j0:], lddk, scal)
                    _gemm(False, False, nq, d, nk, scale, dpt, block, kr[j0:], ldk, 1.0, dqr[i0:], lddq, scal)


# --------------------------------------------------------------------------- host functions
def is_causal(mask) -> bool:
    """Whether the bool `mask` `(T, S)` is the causal one, `tril(ones(T, S))` (key $j \\le$ query $i$)."""
    T, S = mask.shape
    return bool(np.array_equal(mask, np.tri(T, S, dtype=np.bool_)))


def key_ranges(mask, causal, T, S, block):
    """Per query block of `block` rows, `(key_lo, key_hi)` (int64 arrays): the keys from `key_lo` to
    `key_hi` hold every key a row of the block may attend; tiles outside them are skipped."""
    nblocks = -(-T // block)
    starts = np.arange(nblocks) * block
    if mask is None:
        return np.zeros(nblocks, np.int64), np.full(nblocks, S, np.int64)
    if causal:
        return np.zeros(nblocks, np.int64), np.minimum(starts + block, S).astype(np.int64)
    lo, hi = np.zeros(nblocks, np.int64), np.zeros(nblocks, np.int64)
    for b, i0 in enumerate(starts):
        cols = np.flatnonzero(mask[i0 : i0 + block].any(axis=0))
        if cols.size:
            lo[b], hi[b] = cols[0], cols[-1] + 1
    return lo, hi


def block_size(d, dv):
    """Rows of a query block and keys of a tile: `BLOCK`, halved until a tile product
    (`block` x `block` x the head size) is at most `BLOCK`^3, the size OpenBLAS runs on one thread."""
    block = BLOCK
    while block > 8 and block * block * max(d, dv, 1) > BLOCK**3:
        block //= 2
    return block


def _plan(mask, T, S, d, dv):
    """(causal, block, key_lo, key_hi, mask as the kernels take it) for a mask `(T, S)` or None."""
    causal = mask is not None and is_causal(mask)
    block = block_size(d, dv)
    key_lo, key_hi = key_ranges(mask, causal, T, S, block)
    mask_ = np.ascontiguousarray(mask) if mask is not None else np.empty((0, 0), np.bool_)
    return causal, block, key_lo, key_hi, mask_


def _check_rows(*arrays):
    """ValueError unless the tile products can read each array's rows by a leading dim: its last dim
    contiguous, its rows (the next-to-last dim) a row's width or more apart, forwards."""
    for a in arrays:
        cols_apart = a.shape[-1] > 1 and a.strides[-1] != a.itemsize
        rows_overlap = a.shape[-2] > 1 and a.strides[-2] < max(a.shape[-1], 1) * a.itemsize
        if cols_apart or rows_overlap:
            raise ValueError(f"flash attention reads rows by a leading dim: a view of shape {a.shape} and strides "
                             f"{a.strides} has no such rows (copy it with np.ascontiguousarray)")  # fmt: skip


def heads_forward(q, k, v, mask, keep, keep_prob, scale, out, lse):
    """The forward on `(B, H, T, d)` views (`k` `(B, H, S, d)`, `v` `(B, H, S, dv)`), read where they
    lie: any strides but a contiguous last dim (the heads of a packed qkv, say).  Writes `out`, a
    `(B, H, T, dv)` view of the same kind, and `lse` `(B * H, T)`; `keep` None or bool `(B * H, T, S)`;
    the rest as `attention_forward`."""
    B, H, T, d = q.shape
    S = k.shape[2]
    if out.size == 0 and lse.size == 0:
        return
    _check_rows(q, k, v, out)
    causal, block, key_lo, key_hi, mask_ = _plan(mask, T, S, d, v.shape[3])
    f = q.dtype.type
    keep_ = np.ascontiguousarray(keep) if keep is not None else np.empty((0, 0, 0), np.bool_)
    cpu._run("flash_attention_forward", _forward, B * H * T * S, q, k, v, mask_, causal, keep_, f(1.0 / keep_prob),
             f(scale), key_lo, key_hi, block, out, lse)  # fmt: skip


def heads_backward(q, k, v, out, lse, dout, mask, keep, keep_prob, scale, dq, dk, dv):
    """The backward on views as `heads_forward` took and gave them, `dout` a `(B, H, T, dv)` view;
    writes `dq`, `dk`, `dv`, views of `q`'s, `k`'s and `v`'s shapes (a packed dqkv's heads, say)."""
    B, H, T, d = q.shape
    S = k.shape[2]
    _check_rows(q, k, v, out, dout, dq, dk, dv)
    causal, block, key_lo, key_hi, mask_ = _plan(mask, T, S, d, v.shape[3])
    f = q.dtype.type
    keep_ = np.ascontiguousarray(keep) if keep is not None else np.empty((0, 0, 0), np.bool_)
    if q.size or k.size or v.size:
        cpu._run("flash_attention_backward", _backward, B * H * T * S, q, k, v, out, dout, lse, mask_, causal, keep_,
              f(1.0 / keep_prob), f(scale), key_lo, key_hi, block, dq, dk, dv)  # fmt: skip
    if mask is not None and T and S:
        dead = ~mask.any(axis=1)  # rows with every key masked: the reference's NaN spreads from them
        if dead.any():
            dq[:, :, dead] = np.nan
            dk[...] = np.nan
            dv[...] = np.nan


def attention_forward(q, k, v, mask, keep, keep_prob, scale):
    """`(out, lse)` from `q` `(R, T, d)`, `k` `(R, S, d)`, `v` `(R, S, dv)` (float32 or float64, one
    dtype), `mask` None or bool `(T, S)` (True = may attend), `keep` None or the dropout keep mask,
    bool `(R, T, S)` (drawn by `kernels.keep_mask`), `keep_prob = 1 - dropout_p`.  `out` `(R, T, dv)`;
    `lse` `(R, T)`: each row's logsumexp of its scores, for `attention_backward` (-inf for a row with
    every key masked).  Must equal `ops.attention.ScaledDotProductAttention.forward`."""
    q, k, v = (np.ascontiguousarray(a) for a in (q, k, v))
    R, T, _ = q.shape
    out = np.empty((R, T, v.shape[2]), q.dtype)
    lse = np.empty((R, T), q.dtype)
    heads_forward(q[:, None], k[:, None], v[:, None], mask, keep, keep_prob, scale, out[:, None], lse)
    return out, lse


def attention_backward(q, k, v, out, lse, dout, mask, keep, keep_prob, scale):
    """`(dq, dk, dv)` from the forward's inputs, its `out` and `lse`, and `dout` `(R, T, dv)`, as in
    `attention_forward`.  Must equal `ops.attention.ScaledDotProductAttention.backward`, a row with
    every key masked included: NaN in its row of `dq` and in all of its (batch, head) row's `dk`, `dv`."""
    q, k, v, out, dout = (np.ascontiguousarray(a) for a in (q, k, v, out, dout))
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    heads_backward(q[:, None], k[:, None], v[:, None], out[:, None], lse, dout[:, None], mask, keep, keep_prob, scale,
                   dq[:, None], dk[:, None], dv[:, None])  # fmt: skip
    return dq, dk, dv
