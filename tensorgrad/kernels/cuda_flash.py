r"""Attention on the GPU without the scores in memory: flash-attention-style Numba-CUDA kernels.

The plain CUDA path (kernels/functions.py's ScaledDotProductAttention) writes the scores
`(R, T, S)` to global memory, softmaxes them there and multiplies them by $v$: for the GPT's large
preset (batch 64, 6 heads, $T = 256$) that is 25M scores, written and read several times per step.
These kernels never form the scores outside a thread's registers: keys and values stream through
shared memory one tile at a time, and each thread keeps its own row's softmax as it goes.

The math, per row $i$ of $(r, i)$, with $s_{ij} = (q_i \cdot k_j)\, \mathrm{scale}$ ($-\infty$ where
`mask[i, j]` is False), $R$ the dropout keep mask (drawn by `kernels.keep_mask` from the generator the
reference draws from: the same masks from a seed) and $k_p = 1 - \mathrm{dropout\_p}$ (without
dropout read $R = 1$, $k_p = 1$):

Forward (the online softmax: one pass over the keys, tile by tile):

$$
\begin{aligned}
m &= \text{running } \max_j s_{ij}, \qquad \ell = \text{running } \textstyle\sum_j \exp(s_{ij} - m), \\
o &= \text{running } \textstyle\sum_j \exp(s_{ij} - m)\, R_{ij} / k_p\; v_j \\
&\text{a new tile with max } m_t\text{:} \quad m' = \max(m, m_t), \quad \alpha = \exp(m - m'), \\
&\quad \ell \leftarrow \ell\, \alpha + \textstyle\sum_j \exp(s_{ij} - m'), \\
&\quad o \leftarrow o\, \alpha + \textstyle\sum_j \exp(s_{ij} - m')\, R_{ij} / k_p\; v_j \\
\mathrm{out}_i &= o / \ell, \qquad L_i = m + \log \ell
  \qquad (L\text{: the row's logsumexp, kept for the backward})
\end{aligned}
$$

This equals $P^d v$ with $P = \operatorname{softmax}(s)$, $P^d = P R / k_p$: every term is
$\exp(s_{ij} - m_{\mathrm{final}}) / \sum_j \exp(s_{ij} - m_{\mathrm{final}})$ once the rescalings by
$\alpha$ have been multiplied out.

Backward (the scores recomputed from $q$, $k$ and $L$; $P_{ij} = \exp(s_{ij} - L_i)$,
$P^d_{ij} = P_{ij} R_{ij} / k_p$):

$$
\begin{aligned}
D_i &= \textstyle\sum_c d\mathrm{out}_{ic}\, \mathrm{out}_{ic}
  && (= \textstyle\sum_j dP_{ij} P_{ij}\text{, the softmax backward's row sum}) \\
dP_{ij} &= (d\mathrm{out}_i \cdot v_j)\, R_{ij} / k_p \\
dS_{ij} &= P_{ij}\, (dP_{ij} - D_i) \\
dq_i &= \mathrm{scale} \textstyle\sum_j dS_{ij}\, k_j
  && (\text{pass over query rows: } \texttt{flash\_backward\_dq\_rows}) \\
dk_j &= \mathrm{scale} \textstyle\sum_i dS_{ij}\, q_i, \quad dv_j = \textstyle\sum_i P^d_{ij}\, d\mathrm{out}_i
  && (\text{pass over key rows: } \texttt{flash\_backward\_dkdv\_rows})
\end{aligned}
$$

These are the lines of `ops.attention.ScaledDotProductAttention.backward`, with
$D_i = \sum_j dP_{ij} P_{ij} = \sum_j P^d_{ij} (d\mathrm{out}_i \cdot v_j) = d\mathrm{out}_i \cdot \mathrm{out}_i$.
Two passes, each thread owning the rows it writes: no atomics, the same bits every run.

Where it applies (kernels/cuda_ops.py decides): float32 or float64, head dims 1 to `D_MAX`, no
zero-size dim, no mask or a `(T, S)` mask, with or without dropout.  The mask is read per element
(`T * S` bools, not the scores); when it is the causal one, `tril(ones(T, S))` (checked on the GPU:
the `causal` flag, a one-element array, so the host never waits), tiles that lie wholly after the
diagonal are skipped.  The dropout keep mask (`R * T * S` bools, a quarter of the float32 scores)
is read per element too; it is drawn as on the plain path (CuPy's generator makes `R * T * S`
float32 uniforms for the draw, for a moment), and kept for the backward instead of $P$ and $P^d$.

Masked places are left out of every sum (not added as $0 \cdot v_j$): so a NaN or inf in a masked
key's $k$ or $v$ stays out of the result, whether or not its tile is skipped (the reference's $P v$
adds $0 \cdot \mathrm{NaN} = \mathrm{NaN}$).  A row with every key masked comes out NaN, as in the
reference, and gives no gradient (the reference's NaN spreads from it to every $dk$ and $dv$).

Layout: one thread per row (llm.c's first attention kernels), `ROWS` threads a block; the streamed
tile of `TILE` rows sits in shared memory, read by every thread of the block (a broadcast).  A
thread's own row (its $q$, its accumulators) sits in a local array of `D_MAX`.  Arithmetic stays in
the arrays' dtype (constants by `q.dtype.type`, scale passed in that dtype).

The host functions at the end (`attention_forward`, `attention_backward`) allocate the results and
launch the kernels on CuPy's current stream (cuda_launch.py).
"""

from __future__ import annotations

import math

from numba import cuda

from .cuda_launch import SIMULATOR, array_namespace, launch, scalar

D_MAX = 128  # the largest head dim taken (q, k and v rows live in local arrays of this length)
ROWS = 4 if SIMULATOR else 64  # threads a block, one row each (the simulator's blocks are Python threads)
TILE = 3 if SIMULATOR else 16  # rows of the streamed tile in shared memory (2 tiles of TILE x D_MAX:
#                                32 KiB in float64, inside the 48 KiB of static shared memory)


# --------------------------------------------------------------------------- helpers
@cuda.jit(device=True)
def load_tile(tile, a, r, start, n, width, t):
    """`tile[jj, c] = a[r, start + jj, c]` for `jj < n`, `c < width`: the block's threads share the
    `n * width` elements, neighbouring threads reading neighbouring elements (coalesced)."""
    for e in range(t, n * width, ROWS):
        jj = e // width
        c = e - jj * width
        tile[jj, c] = a[r, start + jj, c]


@cuda.jit(device=True)
def last_key(causal, first_row, T, S):
    r"""The end of the keys a block of query rows from `first_row` on may attend: $S$, or with the
    causal mask (key $j \le$ query $i$) one past its last row."""
    if causal is not None and causal[0]:
        return min(S, first_row + ROWS, T)
    return S


# --------------------------------------------------------------------------- forward
@cuda.jit(cache=True)
def flash_forward_rows(q, k, v, mask, causal, keep, keep_prob, scale, out, lse):
    r"""Rows of `out` `(R, T, dv)` and `lse` `(R, T)`.  Must equal
    `ops.attention.ScaledDotProductAttention.forward`:
    $\mathrm{out} = (P \odot \mathrm{keep} / \mathrm{keep\_prob})\, v$ with
    $P = \operatorname{softmax}(\operatorname{where}(\mathrm{mask}, q k^\top \mathrm{scale}, -\infty))$
    (`keep` None: no dropout), and $\mathrm{lse}_i = \operatorname{logsumexp}_j s_{ij}$ (without
    dropout: it normalises $P$).
    Grid: `(R, ceil(T / ROWS))`; thread `t` owns query row `i = blockIdx.y * ROWS + t` of batch `r`."""
    k_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    v_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    q_row = cuda.local.array(D_MAX, dtype=q.dtype)
    o = cuda.local.array(D_MAX, dtype=q.dtype)
    s_tile = cuda.local.array(TILE, dtype=q.dtype)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    first = cuda.blockIdx.y * ROWS
    i = first + t
    T, d = q.shape[1], q.shape[2]
    S, dv = k.shape[1], v.shape[2]
    live = i < T  # a thread past the last row only helps load the tiles
    zero = q.dtype.type(0)
    neg_inf = q.dtype.type(-math.inf)

    # Pass 0: this row's query, and empty accumulators m, l, o.
    if live:
        for c in range(d):
            q_row[c] = q[r, i, c]
    for c in range(dv):
        o[c] = zero
    m = neg_inf
    l = zero

    for j0 in range(0, last_key(causal, first, T, S), TILE):
        n = min(TILE, S - j0)
        # Pass 1: the block loads the tile's keys and values into shared memory.
        load_tile(k_tile, k, r, j0, n, d, t)
        load_tile(v_tile, v, r, j0, n, dv, t)
        cuda.syncthreads()
        if live:
            # Pass 2: the row's scores against the tile, and their max m_t.
            m_t = neg_inf
            for jj in range(n):
                s_tile[jj] = neg_inf
                if mask is not None and not mask[i, j0 + jj]:
                    continue  # a masked key: left out of the sums
                s = zero
                for c in range(d):
                    s += q_row[c] * k_tile[jj, c]
                s *= scale
                s_tile[jj] = s
                if s > m_t:
                    m_t = s
            # Pass 3: the online softmax: rescale l and o to the new max, then add the tile.
            m_new = max(m, m_t)
            if m_new != neg_inf:  # else every key so far is masked: nothing to add yet
                alpha = math.exp(m - m_new)
                l *= alpha
                for c in range(dv):
                    o[c] *= alpha
                for jj in range(n):
                    if mask is not None and not mask[i, j0 + jj]:
                        continue
                    p = math.exp(s_tile[jj] - m_new)
                    l += p
                    if keep is not None:  # dropout on the weights (after l: it normalises P, not Pd)
                        p = p / keep_prob if keep[r, i, j0 + jj] else zero
                    for c in range(dv):
                        o[c] += p * v_tile[jj, c]
                m = m_new
        cuda.syncthreads()  # every thread is done with the tile before the next one is loaded

    # Pass 4: normalise, and keep the logsumexp for the backward.
    if live:
        if l == zero:  # every key masked: no softmax (NaN, as the reference), and L = -inf
            for c in range(dv):
                out[r, i, c] = q.dtype.type(math.nan)
            lse[r, i] = neg_inf
        else:  # (a NaN score makes l NaN, and the row NaN, as the reference)
            for c in range(dv):
                out[r, i, c] = o[c] / l
            lse[r, i] = m + math.log(l)


# --------------------------------------------------------------------------- backward
@cuda.jit(cache=True)
def flash_backward_dq_rows(q, k, v, out, dout, lse, mask, causal, keep, keep_prob, scale, dq, delta):
    r"""Rows of `dq` `(R, T, d)` and `delta` `(R, T)`: $D_i = \sum_c d\mathrm{out}_{ic}\, \mathrm{out}_{ic}$,
    and $dq_i = \mathrm{scale} \sum_j P_{ij} (dP_{ij} - D_i)\, k_j$ with $P_{ij} = \exp(s_{ij} - L_i)$
    recomputed and $dP_{ij} = (d\mathrm{out}_i \cdot v_j)\, \mathrm{keep}_{ij} / \mathrm{keep\_prob}$
    (`keep` None: $d\mathrm{out}_i \cdot v_j$).
    Must equal the $dq$ of `ops.attention.ScaledDotProductAttention.backward`.
    Grid: `(R, ceil(T / ROWS))`; thread `t` owns query row `i`, as in `flash_forward_rows`."""
    k_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    v_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    q_row = cuda.local.array(D_MAX, dtype=q.dtype)
    do_row = cuda.local.array(D_MAX, dtype=q.dtype)
    dq_acc = cuda.local.array(D_MAX, dtype=q.dtype)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    first = cuda.blockIdx.y * ROWS
    i = first + t
    T, d = q.shape[1], q.shape[2]
    S, dv = k.shape[1], v.shape[2]
    live = i < T
    zero = q.dtype.type(0)

    # Pass 0: this row's q and dout, L_i, and D_i = dout_i . out_i (written for the dk/dv pass).
    L = zero
    D = zero
    if live:
        for c in range(d):
            q_row[c] = q[r, i, c]
            dq_acc[c] = zero
        for c in range(dv):
            do_row[c] = dout[r, i, c]
            D += do_row[c] * out[r, i, c]
        delta[r, i] = D
        L = lse[r, i]

    for j0 in range(0, last_key(causal, first, T, S), TILE):
        n = min(TILE, S - j0)
        # Pass 1: the tile's keys and values into shared memory.
        load_tile(k_tile, k, r, j0, n, d, t)
        load_tile(v_tile, v, r, j0, n, dv, t)
        cuda.syncthreads()
        if live:
            # Pass 2: per key, P_ij again from the score and L_i; dP_ij; dS_ij; dq_i += dS_ij k_j.
            for jj in range(n):
                if mask is not None and not mask[i, j0 + jj]:
                    continue  # a masked key: P_ij = 0, nothing to add
                s = zero
                for c in range(d):
                    s += q_row[c] * k_tile[jj, c]
                s *= scale
                p = math.exp(s - L)
                dp = zero
                for c in range(dv):
                    dp += do_row[c] * v_tile[jj, c]
                if keep is not None:  # dP = dPd * keep / keep_prob
                    dp = dp / keep_prob if keep[r, i, j0 + jj] else zero
                ds = p * (dp - D)
                for c in range(d):
                    dq_acc[c] += ds * k_tile[jj, c]
        cuda.syncthreads()

    # Pass 3: the scale of s = q k^T * scale.
    if live:
        for c in range(d):
            dq[r, i, c] = dq_acc[c] * scale


@cuda.jit(cache=True)
def flash_backward_dkdv_rows(q, k, v, dout, lse, delta, mask, causal, keep, keep_prob, scale, dk, dv):
    r"""Rows of `dk` `(R, S, d)` and `dv` `(R, S, dv)`: $dv_j = \sum_i P^d_{ij}\, d\mathrm{out}_i$ and
    $dk_j = \mathrm{scale} \sum_i P_{ij} (dP_{ij} - D_i)\, q_i$, $P_{ij} = \exp(s_{ij} - L_i)$
    recomputed, $P^d_{ij}$ and $dP_{ij}$ with the keep mask as in `flash_backward_dq_rows`, $D$ from
    it.  Must equal the $dk$, $dv$ of `ops.attention.ScaledDotProductAttention.backward`.  Grid:
    `(R, ceil(S / ROWS))`; thread `t` owns key row `j = blockIdx.y * ROWS + t`, and the query rows
    stream through shared memory."""
    q_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    do_tile = cuda.shared.array((TILE, D_MAX), dtype=q.dtype)
    l_tile = cuda.shared.array(TILE, dtype=q.dtype)
    d_tile = cuda.shared.array(TILE, dtype=q.dtype)
    k_row = cuda.local.array(D_MAX, dtype=q.dtype)
    v_row = cuda.local.array(D_MAX, dtype=q.dtype)
    dk_acc = cuda.local.array(D_MAX, dtype=q.dtype)
    dv_acc = cuda.local.array(D_MAX, dtype=q.dtype)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    first = cuda.blockIdx.y * ROWS
    j = first + t
    T, d = q.shape[1], q.shape[2]
    S, dvs = k.shape[1], v.shape[2]
    live = j < S
    zero = q.dtype.type(0)

    # Pass 0: this key's k and v, and empty accumulators.
    if live:
        for c in range(d):
            k_row[c] = k[r, j, c]
            dk_acc[c] = zero
        for c in range(dvs):
            v_row[c] = v[r, j, c]
            dv_acc[c] = zero

    # With the causal mask only queries i >= j see key j: the queries before this block's first key are skipped.
    start = 0
    if causal is not None and causal[0]:
        start = min(first, T)
    for i0 in range(start, T, TILE):
        n = min(TILE, T - i0)
        # Pass 1: the tile's queries, their output gradients, L and D into shared memory.
        load_tile(q_tile, q, r, i0, n, d, t)
        load_tile(do_tile, dout, r, i0, n, dvs, t)
        for ii in range(t, n, ROWS):
            l_tile[ii] = lse[r, i0 + ii]
            d_tile[ii] = delta[r, i0 + ii]
        cuda.syncthreads()
        if live:
            # Pass 2: per query, P_ij again; dv_j += Pd_ij dout_i; dS_ij; dk_j += dS_ij q_i.
            for ii in range(n):
                if mask is not None and not mask[i0 + ii, j]:
                    continue  # a masked pair: P_ij = 0, nothing to add
                s = zero
                for c in range(d):
                    s += q_tile[ii, c] * k_row[c]
                s *= scale
                p = math.exp(s - l_tile[ii])
                dp = zero
                for c in range(dvs):
                    dp += do_tile[ii, c] * v_row[c]
                pd = p
                if keep is not None:  # Pd = P * keep / keep_prob, dP = dPd * keep / keep_prob
                    pd = p / keep_prob if keep[r, i0 + ii, j] else zero
                    dp = dp / keep_prob if keep[r, i0 + ii, j] else zero
                for c in range(dvs):
                    dv_acc[c] += pd * do_tile[ii, c]
                ds = p * (dp - d_tile[ii])
                for c in range(d):
                    dk_acc[c] += ds * q_tile[ii, c]
        cuda.syncthreads()

    # Pass 3: write dk (with the scale of s) and dv.
    if live:
        for c in range(d):
            dk[r, j, c] = dk_acc[c] * scale
        for c in range(dvs):
            dv[r, j, c] = dv_acc[c]


# --------------------------------------------------------------------------- host functions
def causal_flag(mask):
    """A one-element bool array on the mask's device: whether `mask` `(T, S)` is `tril(ones(T, S))`.
    It stays on the device (the kernels read it), so asking never waits for the GPU."""
    xp = array_namespace()
    T, S = mask.shape
    return xp.asarray(xp.all(mask == xp.tri(T, S, dtype=bool))).reshape(1)


def attention_forward(q, k, v, mask, keep, keep_prob, scale):
    """`(out, lse, causal)` from `q` `(R, T, d)`, `k` `(R, S, d)`, `v` `(R, S, dv)`, `mask` None or bool
    `(T, S)`, `keep` None or the dropout keep mask, bool `(R, T, S)` (drawn by `kernels.keep_mask`),
    `keep_prob = 1 - dropout_p`; all C-contiguous, `d` and `dv` in `1..D_MAX`.  `out` `(R, T, dv)`,
    `lse` `(R, T)`; `causal`: the mask's causal flag (None without a mask), for `attention_backward`."""
    xp = array_namespace()
    R, T, _ = q.shape
    causal = None if mask is None else causal_flag(mask)
    out = xp.empty((R, T, v.shape[2]), q.dtype)
    lse = xp.empty((R, T), q.dtype)
    launch("flash_attention_forward", flash_forward_rows, (R, -(-T // ROWS)), ROWS,
           q, k, v, mask, causal, keep, scalar(q.dtype, keep_prob), scalar(q.dtype, scale), out, lse)  # fmt: skip
    return out, lse, causal


def attention_backward(q, k, v, out, lse, dout, mask, causal, keep, keep_prob, scale):
    """`(dq, dk, dv)` from the forward's inputs and results and `dout` `(R, T, dv)`, C-contiguous."""
    xp = array_namespace()
    R, T, _ = q.shape
    S = k.shape[1]
    scale = scalar(q.dtype, scale)
    keep_prob = scalar(q.dtype, keep_prob)
    dq = xp.empty_like(q)
    dk = xp.empty_like(k)
    dv = xp.empty_like(v)
    delta = xp.empty((R, T), q.dtype)
    launch("flash_attention_backward", flash_backward_dq_rows, (R, -(-T // ROWS)), ROWS,
           q, k, v, out, dout, lse, mask, causal, keep, keep_prob, scale, dq, delta)  # fmt: skip
    launch("flash_attention_backward", flash_backward_dkdv_rows, (R, -(-S // ROWS)), ROWS,
           q, k, v, dout, lse, delta, mask, causal, keep, keep_prob, scale, dk, dv)  # fmt: skip
    return dq, dk, dv
