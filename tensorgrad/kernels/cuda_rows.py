"""Row kernels for CUDA: one thread block per row, the row's sums and maxima taken in shared memory.

Layernorm, the attention softmax and cross-entropy all reduce along a row and then write the
row.  Here a block of `ROW_BLOCK` threads owns a row: thread `t` reads elements `t, t + ROW_BLOCK, ...`
(neighbouring threads read neighbouring elements, so the loads coalesce), keeps a partial sum in
a register, and the block adds the partials in a fixed tree in shared memory (`block_sum`).  The
tree never depends on timing, so every run gives the same bits.  The style follows the shared
memory kernels of llm.c's dev/cuda (`layernorm_forward_kernel2`, `softmax_forward_kernel4`).

Warp shuffles would be faster than shared memory for the last 32 partials, but Numba's CUDA
simulator (the tests' GPU-free check) has no shuffles, so every reduction here is in shared memory.

Arithmetic stays in the arrays' dtype: constants are made with `x.dtype.type(...)`, and scalars
arrive in that dtype (see cuda.py), so a float32 kernel compiles to float32 instructions only
(tests/test_cuda_kernels.py checks the PTX for that).

Sums over rows (layernorm's dweight and dbias) are columns, not rows: `column_partials` sums
fixed chunks of rows into a `(chunks, C)` array and `sum_partials` adds the chunks in order.  The
chunking depends only on the shape, so the result does not depend on the GPU or on timing (no
float atomics).
"""

from __future__ import annotations

import math

from numba import cuda

from .cuda_launch import ROW_BLOCK, SIMULATOR

# The chunks of rows summed separately by column_partials (fewer on the simulator, whose blocks
# are Python threads).  A constant, so a sum over rows is always split the same way.
ROW_CHUNKS = 4 if SIMULATOR else 256


# --------------------------------------------------------------------------- block reductions
@cuda.jit(device=True)
def block_sum(shared, value):
    """The sum of `value` over the block's threads (every thread gets it).  A fixed tree:
    `shared[t] += shared[t + half]` for `half = ROW_BLOCK/2, ..., 1`."""
    t = cuda.threadIdx.x
    shared[t] = value
    cuda.syncthreads()
    half = ROW_BLOCK // 2
    while half > 0:
        if t < half:
            shared[t] += shared[t + half]
        cuda.syncthreads()
        half //= 2
    total = shared[0]
    cuda.syncthreads()  # every thread has read shared[0] before the next reduction writes it
    return total


@cuda.jit(device=True)
def block_max(shared, value):
    """The maximum of `value` over the block's threads (every thread gets it)."""
    t = cuda.threadIdx.x
    shared[t] = value
    cuda.syncthreads()
    half = ROW_BLOCK // 2
    while half > 0:
        if t < half and shared[t + half] > shared[t]:
            shared[t] = shared[t + half]
        cuda.syncthreads()
        half //= 2
    total = shared[0]
    cuda.syncthreads()
    return total


# --------------------------------------------------------------------------- layernorm
@cuda.jit(cache=True)
def layernorm_forward_rows(x, weight, bias, eps, y, mean, rstd):
    r"""Row `n` of `x` `(N, C)` -> `y`, `mean[n]`, `rstd[n]`.  Must equal `ops.layernorm.LayerNorm.forward`:

    $$
    \begin{aligned}
    \mathrm{mean} &= \textstyle\sum x / C, \quad
    \mathrm{var} = \textstyle\sum (x - \mathrm{mean})^2 / C, \quad
    \mathrm{rstd} = 1 / \sqrt{\mathrm{var} + \varepsilon} \\
    y &= (x - \mathrm{mean})\, \mathrm{rstd}\, w + b \qquad (w, b \text{ left out when None})
    \end{aligned}
    $$

    Grid: one block per row."""
    shared = cuda.shared.array(ROW_BLOCK, dtype=x.dtype)
    n = cuda.blockIdx.x
    t = cuda.threadIdx.x
    C = x.shape[1]
    zero = x.dtype.type(0)
    one = x.dtype.type(1)
    count = x.dtype.type(C)

    s = zero
    for j in range(t, C, ROW_BLOCK):
        s += x[n, j]
    m = block_sum(shared, s) / count

    s = zero
    for j in range(t, C, ROW_BLOCK):
        d = x[n, j] - m
        s += d * d
    r = one / math.sqrt(block_sum(shared, s) / count + eps)

    for j in range(t, C, ROW_BLOCK):
        v = (x[n, j] - m) * r  # xhat
        if weight is not None:
            v = v * weight[j]
        if bias is not None:
            v = v + bias[j]
        y[n, j] = v
    if t == 0:
        mean[n] = m
        rstd[n] = r


@cuda.jit(cache=True)
def layernorm_backward_rows(dy, x, mean, rstd, weight, dx):
    r"""Row `n` of `dx`.  Must equal the $dx$ of `ops.layernorm.LayerNorm.backward`:

    $$
    \begin{aligned}
    \hat x &= (x - \mathrm{mean})\, \mathrm{rstd}, \quad d\hat x = dy\, w
      \quad (dy \text{ when } w \text{ is None}) \\
    dx &= \mathrm{rstd}\, \big(d\hat x - \operatorname{mean}(d\hat x)
      - \hat x \operatorname{mean}(d\hat x\, \hat x)\big)
    \end{aligned}
    $$

    Grid: one block per row."""
    sum_dxhat = cuda.shared.array(ROW_BLOCK, dtype=x.dtype)
    sum_dxhat_xhat = cuda.shared.array(ROW_BLOCK, dtype=x.dtype)
    n = cuda.blockIdx.x
    t = cuda.threadIdx.x
    C = x.shape[1]
    zero = x.dtype.type(0)
    count = x.dtype.type(C)
    m = mean[n]
    r = rstd[n]

    a = zero
    b = zero
    for j in range(t, C, ROW_BLOCK):
        dxhat = dy[n, j]
        if weight is not None:
            dxhat = dxhat * weight[j]
        a += dxhat
        b += dxhat * ((x[n, j] - m) * r)
    mean_dxhat = block_sum(sum_dxhat, a) / count
    mean_dxhat_xhat = block_sum(sum_dxhat_xhat, b) / count

    for j in range(t, C, ROW_BLOCK):
        dxhat = dy[n, j]
        if weight is not None:
            dxhat = dxhat * weight[j]
        xhat = (x[n, j] - m) * r
        dx[n, j] = r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)


@cuda.jit(cache=True)
def layernorm_param_partials(dy, x, mean, rstd, rows_per_chunk, dweight_part, dbias_part):
    r"""`dweight_part[k, c]` = sum of $dy\, \hat x$ over chunk $k$ of the rows, `dbias_part[k, c]` = sum of
    $dy$: the first half of `LayerNorm.backward`'s $dw = \sum_n g\, \hat x$, $db = \sum_n g$.
    Grid: `(column blocks, chunks)`; thread `c` of a block walks its chunk's rows in order."""
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    N, C = x.shape
    if c >= C:
        return
    zero = x.dtype.type(0)
    dw = zero
    db = zero
    start = k * rows_per_chunk
    for n in range(start, min(N, start + rows_per_chunk)):
        g = dy[n, c]
        dw += g * ((x[n, c] - mean[n]) * rstd[n])
        db += g
    dweight_part[k, c] = dw
    dbias_part[k, c] = db


@cuda.jit(cache=True)
def sum_partials(part, out):
    """`out[c] = part[0, c] + part[1, c] + ...` in that order (the second half of a column sum).
    Grid: enough threads for the columns."""
    c = cuda.grid(1)
    if c >= out.shape[0]:
        return
    s = part[0, c]
    for k in range(1, part.shape[0]):
        s += part[k, c]
    out[c] = s


# --------------------------------------------------------------------------- attention softmax
@cuda.jit(cache=True)
def attention_softmax_forward_rows(scores, scale, mask, keep, keep_prob, p, pd):
    r"""Row `(r, i)` of `scores` `(R, T, S)` -> `p` (may be `scores` itself) and `pd`.  Must equal the
    $S$, $P$, $P^d$ lines of `ops.attention.ScaledDotProductAttention.forward`:

    $$
    \begin{aligned}
    S &= \mathrm{scores} \cdot \mathrm{scale}, \quad -\infty \text{ where not } \mathrm{mask}[i, j] \\
    P &= \exp(S - \max_j S) \,/\, \textstyle\sum_j \exp(S - \max_j S) \\
    P^d &= P \odot \mathrm{keep} / \mathrm{keep\_prob} && (\text{only when } \texttt{keep} \text{ is not None})
    \end{aligned}
    $$

    Grid: one block per row, `R * T` blocks; row `b` is `(r, i) = divmod(b, T)`."""
    shared = cuda.shared.array(ROW_BLOCK, dtype=scores.dtype)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    T = scores.shape[1]
    S = scores.shape[2]
    r = b // T
    i = b - r * T
    zero = scores.dtype.type(0)
    neg_inf = scores.dtype.type(-math.inf)

    hi = neg_inf
    for j in range(t, S, ROW_BLOCK):
        if mask is None or mask[i, j]:
            s = scores[r, i, j] * scale
            if s > hi:
                hi = s
    hi = block_max(shared, hi)

    total = zero
    for j in range(t, S, ROW_BLOCK):
        e = zero
        if mask is None or mask[i, j]:
            e = math.exp(scores[r, i, j] * scale - hi)
        p[r, i, j] = e  # p may be scores: this thread has read its element
        total += e
    total = block_sum(shared, total)

    for j in range(t, S, ROW_BLOCK):
        v = p[r, i, j] / total
        p[r, i, j] = v
        if keep is not None:
            pd[r, i, j] = v / keep_prob if keep[r, i, j] else zero


@cuda.jit(cache=True)
def attention_softmax_backward_rows(dpd, p, keep, keep_prob, ds):
    r"""Row `(r, i)` of `ds` (may be `dpd` itself).  Must equal the $dP$, $dS$ lines of
    `ops.attention.ScaledDotProductAttention.backward`:

    $$
    \begin{aligned}
    dP &= dP^d \odot \mathrm{keep} / \mathrm{keep\_prob} && (dP^d \text{ when } \texttt{keep} \text{ is None}) \\
    dS &= P \odot \big(dP - \textstyle\sum_j (dP \odot P)\big) && (\text{the softmax backward})
    \end{aligned}
    $$

    Grid: one block per row, `R * T` blocks."""
    shared = cuda.shared.array(ROW_BLOCK, dtype=p.dtype)
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    T = p.shape[1]
    S = p.shape[2]
    r = b // T
    i = b - r * T
    zero = p.dtype.type(0)

    total = zero
    for j in range(t, S, ROW_BLOCK):
        g = dpd[r, i, j]
        if keep is not None:
            g = g / keep_prob if keep[r, i, j] else zero
        total += g * p[r, i, j]
    total = block_sum(shared, total)

    for j in range(t, S, ROW_BLOCK):
        g = dpd[r, i, j]
        if keep is not None:
            g = g / keep_prob if keep[r, i, j] else zero
        ds[r, i, j] = p[r, i, j] * (g - total)  # ds may be dpd: this thread has read its element


# --------------------------------------------------------------------------- cross-entropy
@cuda.jit(cache=True)
def cross_entropy_forward_rows(logits, targets, ignore_index, losses, lse):
    r"""Row `n` of `logits` `(N, C)` -> `losses[n]`, `lse[n]`.  Must equal
    `ops.cross_entropy.CrossEntropy.forward` with `reduction="none"`:

    $$
    \begin{aligned}
    \mathrm{lse} &= \max + \log \textstyle\sum_c \exp(x_c - \max) && (\text{logsumexp}) \\
    \mathrm{loss} &= \mathrm{lse} - x_t, \quad 0 \text{ where } t = \mathtt{ignore\_index}
    \end{aligned}
    $$

    A target outside $[0, C)$ (not ignored) gives NaN rather than a read outside the row; the
    caller reports bad ids.  Grid: one block per row."""
    shared = cuda.shared.array(ROW_BLOCK, dtype=logits.dtype)
    n = cuda.blockIdx.x
    t = cuda.threadIdx.x
    C = logits.shape[1]
    zero = logits.dtype.type(0)
    hi = logits.dtype.type(-math.inf)

    for j in range(t, C, ROW_BLOCK):
        if logits[n, j] > hi:
            hi = logits[n, j]
    hi = block_max(shared, hi)

    total = zero
    for j in range(t, C, ROW_BLOCK):
        total += math.exp(logits[n, j] - hi)
    total = block_sum(shared, total)

    if t == 0:
        out = hi + math.log(total)
        lse[n] = out
        target = targets[n]
        if target == ignore_index:
            losses[n] = zero
        elif target >= 0 and target < C:
            losses[n] = out - logits[n, target]
        else:
            losses[n] = logits.dtype.type(math.nan)


@cuda.jit(cache=True)
def cross_entropy_backward_rows(logits, lse, targets, ignore_index, gscale, dlogits):
    r"""Row `n` of `dlogits`.  Must equal `ops.cross_entropy.CrossEntropy.backward`:

    $$
    dx = \big(\operatorname{softmax}(x) - \operatorname{onehot}(t)\big)\, \mathrm{gscale}_n, \quad
    \operatorname{softmax}(x) = \exp(x - \mathrm{lse}); \quad 0 \text{ on ignored rows}
    $$

    Grid: one block per row (no reduction: the row's lse comes from the forward)."""
    n = cuda.blockIdx.x
    t = cuda.threadIdx.x
    C = logits.shape[1]
    zero = logits.dtype.type(0)
    one = logits.dtype.type(1)
    target = targets[n]
    ignored = target == ignore_index
    g = gscale[n]
    m = lse[n]
    for j in range(t, C, ROW_BLOCK):
        if ignored:
            dlogits[n, j] = zero
        else:
            v = math.exp(logits[n, j] - m)
            if j == target:
                v -= one
            dlogits[n, j] = v * g
