r"""The GPT of "Let's build GPT" fused by hand for training on the CPU, llm.c's way: the whole
model's forward as one compiled function (`forward_parts`; `logits_parts` where no backward
follows) and its backward as another (`backward_parts`), each made of one function per piece:
the embeddings, a transformer block's forward and backward, the head.  Arrays in, arrays out
(NumPy, float32); kernels/fused_gpt.py's op calls these and gpt/fused.py decides when it runs.

The math is the reference ops' (tensorgrad/ops/), composed: every line below names the op whose
derivation it follows.  The block is the lecture's pre-norm residual block with all heads packed.

Forward, $x$ `(N, C)`, $N = B \cdot T$ rows ($D$ is dropout):

$$
\begin{aligned}
\mathrm{xn1} &= \mathrm{LayerNorm}(x;\ \mathrm{ln1}), \\
\mathrm{qkv} &= \mathrm{xn1}\, W_{qkv}^\top, \\
\mathrm{att} &= \mathrm{attention}(\mathrm{qkv}), \\
y &= D(\mathrm{att}\, W_p^\top + b_p), \\
\mathrm{xm} &= x + y, \\
\mathrm{xn2} &= \mathrm{LayerNorm}(\mathrm{xm};\ \mathrm{ln2}), \\
\mathrm{hr} &= \mathrm{relu}(\mathrm{xn2}\, W_1^\top + b_1), \\
\mathrm{out} &= \mathrm{xm} + D(\mathrm{hr}\, W_2^\top + b_2),
\end{aligned}
$$

line by line from these ops' derivations:

- $\mathrm{xn1}$: `LayerNorm.forward` (ops/layernorm.py);
- $\mathrm{qkv}$: `Linear.forward` (ops/linear.py);
- $\mathrm{att}$: `PackedSelfAttention` (ops/attention.py);
- $y$: `Linear`, `Dropout` (ops/dropout.py);
- $\mathrm{xm}$: `Add` (ops/arithmetic.py);
- $\mathrm{xn2}$: `LayerNorm`;
- $\mathrm{hr}$: `Linear`, `ReLU` (ops/activation.py);
- $\mathrm{out}$: `Linear`, `Dropout`, `Add`.

Backward, from $\mathrm{dout} = \partial L / \partial\, \mathrm{out}$ `(N, C)`: the same ops' backward
lines in reverse; the residual adds pass their gradient to both operands (`Add.backward`), so each
LayerNorm's $dx$ is added onto the gradient of the stream it read.

The residual stream is `(N, C)`, $N = B \cdot T$ rows in time-major order (row $t B + b$:
position $t$ of batch row $b$); the model's ids and logits keep its `(B, T)` order, and
`_embed_into` and `_head_forward_into` change between the two.  Every op but the attention works row
by row, so the order is free there; the attention reads $\mathrm{qkv}^\top$ `(3C, N)`, in which a
head's channel at one position is a contiguous run over the batch, and so its loops, over heads,
positions and channels, end in one over the batch, which the compiler vectorises (a head of 8
channels and 8 positions would leave loops too short for it).

Products go to BLAS (`np.dot` in nopython mode: sgemm on float32, transposes as BLAS flags, no
copies); the rest are plain loops over rows, sums in float64 accumulators, as kernels/cpu.py's.
The attention's cost grows as $T^2$ per head, so the caller takes short sequences only.
The model's functions run the batch in parts of rows, each call a run of consecutive parts (the
caller gives each of its threads a run: kernels/cpu_threads.py), and write into arrays the caller
allocates once per step, llm.c's way, rather than each piece allocating its own.

Dropout keep masks come in as arrays drawn by the caller with kernels/cpu.py's `keep_mask` (the
reference's bits); an empty mask means no dropout there.

Compiled code is cached on disk (`cache=True`), one signature per function (float32 arrays,
int64 ids; the blocks' parameters stacked, so the number of blocks is not part of it).  That is
why the layer norm's loops are written here again rather than called from kernels/cpu.py (whose
forward is the same loop; its backward writes $dx$ where this one adds it into the residual's
gradient), and why the whole model lives in this one file, over 600 lines: Numba's cache of a
function is invalidated by changes to its own file only, so a cached caller would keep an old
copy of a callee edited in another file.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types as nb_types
from numba.extending import intrinsic

# As kernels/cpu.py: reassociation and contraction only (infinities and NaNs keep their meaning),
# division by zero as in NumPy, no Python lock held.
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})


# --------------------------------------------------------------------------- pieces
@intrinsic
def _float64_from_bits(typingctx, bits):
    """The float64 whose IEEE bits are the int64 `bits` (a bit cast, no conversion)."""
    sig = nb_types.float64(nb_types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


@njit(inline="always", **_OPTIONS)
def _exp_nonpositive(x):
    r"""$e^x$ for $x \le 0$ (the softmax's shifted scores), in float64 arithmetic that the compiler
    vectorises (Numba's `math.exp` calls the C library once per element, and without SVML cannot be
    vectorised):

    $$
    e^x = 2^n e^r, \qquad n = \mathrm{round}(x / \ln 2), \qquad
    r = x - n \ln 2 \in [-\tfrac{\ln 2}{2}, \tfrac{\ln 2}{2}],
    $$

    $e^r$ by its Taylor series to $r^{12} / 12!$ (relative error $< 10^{-14}$: far below float32's
    rounding, which the result gets), $2^n$ by its bits.  Below $-708$ ($-\infty$ included) it is
    $e^{-708} \approx 3 \cdot 10^{-308}$, which is 0 in float32, as the reference's exp there; NaN
    stays NaN."""
    if x != x:
        return x
    x = max(x, -708.0)
    n = math.floor(x * _LOG2E + 0.5)
    r = x - n * _LN2
    e = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 + r * (
        1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
            1.0 / 479001600))))))))))))  # fmt: skip
    return e * _float64_from_bits((np.int64(n) + 1023) << 52)


@njit(**_OPTIONS)
def _layernorm(x, w, b, eps, y, mean, rstd):
    r"""`LayerNorm.forward` (ops/layernorm.py), per row: $\mathrm{mean} = \mathbb{E}[x]$,
    $\mathrm{rstd} = 1 / \sqrt{\mathrm{Var}[x] + \epsilon}$ (biased),
    $y = (x - \mathrm{mean})\, \mathrm{rstd}\, w + b$."""
    N, C = x.shape
    for i in range(N):
        s = 0.0
        for j in range(C):
            s += x[i, j]
        m = s / C
        v = 0.0
        for j in range(C):
            d = x[i, j] - m
            v += d * d
        r = 1.0 / math.sqrt(v / C + eps)
        for j in range(C):
            y[i, j] = (x[i, j] - m) * r * w[j] + b[j]
        mean[i] = m
        rstd[i] = r


@njit(**_OPTIONS)
def _layernorm_backward(dy, x, mean, rstd, w, dx, dw, db):
    r"""`LayerNorm.backward` (ops/layernorm.py), its $dx$ ADDED into `dx` (the residual stream's
    gradient); `dw`, `db` `(C,)` float64 accumulators, added into:

    $$
    \begin{aligned}
    db &\mathrel{+}= \sum_{\text{rows}} dy, \qquad dw \mathrel{+}= \sum_{\text{rows}} dy\, \hat x,
    \qquad d\hat x = dy\, w, \\
    dx &\mathrel{+}= \mathrm{rstd}\, \Big(d\hat x - \mathrm{mean}(d\hat x)
    - \hat x\, \mathrm{mean}(d\hat x\, \hat x)\Big).
    \end{aligned}
    $$
    """
    N, C = x.shape
    for i in range(N):
        m, r = mean[i], rstd[i]
        sum_dxhat = 0.0
        sum_dxhat_xhat = 0.0
        for j in range(C):
            xhat = (x[i, j] - m) * r
            dxhat = dy[i, j] * w[j]
            sum_dxhat += dxhat
            sum_dxhat_xhat += dxhat * xhat
            db[j] += dy[i, j]
            dw[j] += dy[i, j] * xhat
        mean_dxhat = sum_dxhat / C
        mean_dxhat_xhat = sum_dxhat_xhat / C
        for j in range(C):
            xhat = (x[i, j] - m) * r
            dxhat = dy[i, j] * w[j]
            dx[i, j] += r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)


@njit(**_OPTIONS)
def _column_sums(g, out):
    r"""`Linear.backward`'s $db = \mathbf{1}^\top G$ (ops/linear.py): the sum over rows, in float64,
    into `out`."""
    N, M = g.shape
    acc = np.zeros(M, np.float64)
    for i in range(N):
        for j in range(M):
            acc[j] += g[i, j]
    for j in range(M):
        out[j] = acc[j]


@njit(**_OPTIONS)
def _attention(qkvT, B, T, H, scale, mask, keep, inv_keep_prob, p, pd, attT):
    r"""`ScaledDotProductAttention.forward` (ops/attention.py) on the packed heads
    (`PackedSelfAttention`), every batch row (of a part) at once: `qkvT` `(3C, T B)` is $\mathrm{qkv}^\top$ in
    the stream's time-major order, so for a head $h$, a channel $c$ and a position $t$ the
    batch's values are one contiguous run (column $t B + b$), and every loop below ends in a
    loop over the batch that the compiler vectorises.  Per head and query position $t$:

    $$
    \begin{aligned}
    S_{tj} &= q_t \cdot k_j\, \mathrm{scale}, \quad -\infty \text{ where not } \mathrm{mask}_{tj}, \\
    P_t &= \mathrm{softmax}(S_t) = \frac{e^{S_t - \max S_t}}{\sum_j e^{S_{tj} - \max S_t}}, \\
    P^d_t &= P_t \odot \mathrm{keep} / \mathrm{keep\_prob} \qquad \text{(only with dropout)}, \\
    \mathrm{out}_t &= \sum_j P^d_{tj}\, v_j \;\to\; \mathrm{attT}[h d : (h + 1) d,\ t B : (t + 1) B].
    \end{aligned}
    $$

    `p`, `pd` `(H, T, T, B)` (row $j$ of `p[h, t]`: $P_{tj}$ over the batch) are written for the
    backward, at the unmasked places only (`pd` empty without dropout); `keep` is the reference's
    `(B H, T, T)` draw.  Masked places get $P = e^{-\infty} = 0$: they are skipped (they would add
    $0 \cdot v_j$).  Every row has an unmasked place (`FusedGPT.accepts`)."""
    C = qkvT.shape[0] // 3
    d = C // H
    has_keep = keep.shape[0] > 0
    top = np.empty(B, qkvT.dtype)  # max_j S_tj per batch row (a float32 max is one of the float32 scores)
    total = np.empty(B, np.float64)
    qkv_heads, out_heads = qkvT.reshape(3, H, d, B * T), attT.reshape(H, d, B * T)  # [q/k/v, head, channel]
    for h in range(H):
        Q, K, V, O = qkv_heads[0, h], qkv_heads[1, h], qkv_heads[2, h], out_heads[h]
        for t in range(T):
            m = mask[t]
            P = p[h, t]
            W = pd[h, t] if has_keep else P
            t0 = t * B
            for b in range(B):
                top[b] = -np.inf
            for j in range(T):
                if m[j]:
                    j0 = j * B
                    for b in range(B):
                        P[j, b] = 0.0
                    for c in range(d):  # S_tj = q_t . k_j, in float32 as the reference's BLAS product
                        for b in range(B):
                            P[j, b] += Q[c, t0 + b] * K[c, j0 + b]
                    for b in range(B):
                        P[j, b] = P[j, b] * scale
                        top[b] = max(top[b], P[j, b])
            for b in range(B):
                total[b] = 0.0
            for j in range(T):
                if m[j]:
                    for b in range(B):
                        P[j, b] = _exp_nonpositive(P[j, b] - top[b])  # S - max in the scores' dtype, as the reference
                        total[b] += P[j, b]  # the sum of the rounded exps, as the reference's
            for b in range(B):
                total[b] = 1.0 / total[b]
            for j in range(T):
                if m[j]:
                    for b in range(B):
                        P[j, b] = P[j, b] * total[b]
                    if has_keep:
                        for b in range(B):
                            W[j, b] = P[j, b] * inv_keep_prob if keep[b * H + h, t, j] else 0.0
            for c in range(d):  # out_t = sum_j Pd_tj v_j, in float32 as the reference's product
                for b in range(B):
                    O[c, t0 + b] = 0.0
                for j in range(T):
                    if m[j]:
                        j0 = j * B
                        for b in range(B):
                            O[c, t0 + b] += W[j, b] * V[c, j0 + b]


@njit(**_OPTIONS)
def _attention_backward(dattT, qkvT, B, T, H, scale, mask, keep, inv_keep_prob, p, pd, dqkvT):
    r"""`ScaledDotProductAttention.backward` (ops/attention.py) on the packed heads, from
    $g = d\,\mathrm{att}$ given as `dattT` `(C, T B)` (transposed, time-major, as `_attention`'s
    arrays), into `dqkvT` `(3C, T B)`, zeroed by the caller; per head and query position $t$,
    vectorised over the batch:

    $$
    \begin{aligned}
    dv_j &\mathrel{+}= P^d_{tj}\, g_t && (dv = P^{d\top} g), \\
    dP^d_{tj} &= g_t \cdot v_j && (dP^d = g\, v^\top), \\
    dP &= dP^d \odot \mathrm{keep} / \mathrm{keep\_prob} && (\text{Dropout.backward, only with dropout}), \\
    dS_t &= P_t \odot \Big(dP_t - \sum_j dP_{tj}\, P_{tj}\Big) && (\text{the softmax backward, per row}), \\
    dq_t &\mathrel{+}= \sum_j dS_{tj}\, k_j\, \mathrm{scale}, \qquad dk_j \mathrel{+}= dS_{tj}\, q_t\, \mathrm{scale}.
    \end{aligned}
    $$

    Masked places have $P = 0$, so $dS = 0$ there: they are skipped."""
    C = qkvT.shape[0] // 3
    d = C // H
    has_keep = keep.shape[0] > 0
    ds = np.empty((T, B), p.dtype)  # dP, then dS * scale, in the scores' dtype as the reference's
    total = np.empty(B, np.float64)
    qkv_heads, grad_heads = qkvT.reshape(3, H, d, B * T), dqkvT.reshape(3, H, d, B * T)  # [q/k/v, head, channel]
    out_heads = dattT.reshape(H, d, B * T)
    for h in range(H):
        Q, K, V, G = qkv_heads[0, h], qkv_heads[1, h], qkv_heads[2, h], out_heads[h]
        dQ, dK, dV = grad_heads[0, h], grad_heads[1, h], grad_heads[2, h]
        for t in range(T):
            m = mask[t]
            P = p[h, t]
            W = pd[h, t] if has_keep else P
            t0 = t * B
            for b in range(B):
                total[b] = 0.0
            for j in range(T):
                if m[j]:
                    j0 = j * B
                    for b in range(B):
                        ds[j, b] = 0.0
                    for c in range(d):  # dPd_tj = g_t . v_j
                        for b in range(B):
                            ds[j, b] += G[c, t0 + b] * V[c, j0 + b]
                    if has_keep:  # Dropout.backward
                        for b in range(B):
                            ds[j, b] = ds[j, b] * inv_keep_prob if keep[b * H + h, t, j] else 0.0
                    for b in range(B):
                        total[b] += ds[j, b] * P[j, b]
            for j in range(T):
                if m[j]:
                    for b in range(B):
                        ds[j, b] = P[j, b] * (ds[j, b] - total[b]) * scale  # dS_tj * scale
            for c in range(d):
                for j in range(T):
                    if m[j]:
                        j0 = j * B
                        for b in range(B):
                            dV[c, j0 + b] += W[j, b] * G[c, t0 + b]  # dv_j += Pd_tj g_t
                            dQ[c, t0 + b] += ds[j, b] * K[c, j0 + b]  # dq_t += dS_tj k_j scale
                            dK[c, j0 + b] += ds[j, b] * Q[c, t0 + b]  # dk_j += dS_tj q_t scale


@njit(**_OPTIONS)
def _bias_dropout_add(x, y, bias, keep, inv_keep_prob, B, T, out):
    r"""$\mathrm{out} = x + D(y + \mathrm{bias})$: `Linear.forward`'s bias, `Dropout.forward`
    ($x \cdot \mathrm{keep} \cdot \mathrm{scale}$) and the residual `Add`, per element.  The rows
    are the stream's (time-major, $t B + b$); `keep` is the reference's `(B T, C)` draw (row $b T + t$)."""
    M = y.shape[1]
    has_keep = keep.shape[0] > 0
    for t in range(T):
        for b in range(B):
            i = t * B + b
            for j in range(M):
                v = y[i, j] + bias[j]
                if has_keep:
                    v = v * keep[b * T + t, j] * inv_keep_prob
                out[i, j] = x[i, j] + v


@njit(**_OPTIONS)
def _dropout_backward(g, keep, inv_keep_prob, B, T):
    r"""`Dropout.backward` (ops/dropout.py): $g \cdot \mathrm{keep} \cdot \mathrm{scale}$, a new array
    (`g` itself without dropout); rows and `keep` as in `_bias_dropout_add`."""
    if keep.shape[0] == 0:
        return g
    out = np.empty_like(g)
    M = g.shape[1]
    for t in range(T):
        for b in range(B):
            i = t * B + b
            for j in range(M):
                out[i, j] = g[i, j] * keep[b * T + t, j] * inv_keep_prob
    return out


# --------------------------------------------------------------------------- embeddings
@njit(**_OPTIONS)
def _embed_into(idx, tok, pos, x):
    r"""`Embedding.forward` (ops/embedding.py) twice and the `Add` of the model:
    $x[t B + b] = \mathrm{tok}[\mathrm{idx}[b, t]] + \mathrm{pos}[t]$ (the stream's time-major rows),
    into `x` `(B T, C)`.  `idx` `(B, T)` int64 in range."""
    B, T = idx.shape
    C = tok.shape[1]
    for t in range(T):
        for b in range(B):
            v = idx[b, t]
            for c in range(C):
                x[t * B + b, c] = tok[v, c] + pos[t, c]


@njit(**_OPTIONS)
def _embed_backward_into(idx, dx, dtok, dpos):
    r"""`Embedding.backward` (ops/embedding.py): $dW[v]$ = the sum of the rows whose id is $v$, for the
    token table (ids `idx`) and the position table (ids $0 \ldots T-1$ in every batch row: the `Add`'s
    gradient, summed over the batch by unbroadcast, then the embedding's).  `dx` in the stream's
    time-major rows; into `dtok` `(V, C)` and `dpos` `(block_size, C)`, overwritten."""
    B, T = idx.shape
    C = dx.shape[1]
    dtok[...] = 0.0
    dpos[...] = 0.0
    acc = np.zeros(C, np.float64)
    for t in range(T):
        acc[:] = 0.0
        for b in range(B):
            r = t * B + b
            v = idx[b, t]
            for c in range(C):
                dtok[v, c] += dx[r, c]
                acc[c] += dx[r, c]
        for c in range(C):
            dpos[t, c] = acc[c]


@njit(**_OPTIONS)
def _block_forward_into(x, ln1_w, ln1_b, eps1, w_qkv, w_proj, b_proj, ln2_w, ln2_b, eps2, w_fc, b_fc, w_out, b_out,
                        B, T, H, scale, mask, keep_att, inv_att, keep_proj, inv_proj, keep_ffn, inv_ffn,
                        out, mean1, rstd1, xn1, qkvT, p, pd, attT, xm, mean2, rstd2, xn2, hr):  # fmt: skip
    """One `Block.forward` (gpt/model.py, residual, pre-norm, packed heads, MLP) on `x` `(N, C)`
    (time-major rows), into `out` and what `_block_backward_into` needs (`mean1` ... `hr`: the
    caller's arrays, `forward_parts`' slices).  `w_qkv` `(3C, C)`: every head's query, then key,
    then value weights (`MultiHeadAttention`'s stack).  `keep_*`: the dropout keep masks as the
    reference draws them (empty: none there) and `inv_*` $= 1 / (1 - p)$."""
    _layernorm(x, ln1_w, ln1_b, eps1, xn1, mean1, rstd1)  # LayerNorm.forward (ln1)
    np.dot(w_qkv, xn1.T, qkvT)  # Linear.forward, no bias: (xn1 Wqkv^T)^T (3C, N), for the attention's loops
    _attention(qkvT, B, T, H, scale, mask, keep_att, inv_att, p, pd, attT)  # PackedSelfAttention.forward
    y = np.dot(attT.T, w_proj.T)  # Linear.forward (proj): att Wp^T, + bp below
    _bias_dropout_add(x, y, b_proj, keep_proj, inv_proj, B, T, xm)  # xm = x + Dropout(y + bp)
    _layernorm(xm, ln2_w, ln2_b, eps2, xn2, mean2, rstd2)  # LayerNorm.forward (ln2)
    np.dot(xn2, w_fc.T, hr)  # Linear.forward (ffwd.net.0): xn2 W1^T + b1 ...
    N, F = hr.shape
    for i in range(N):
        for j in range(F):
            v = hr[i, j] + b_fc[j]
            hr[i, j] = 0.0 if v < 0 else v  # ... ReLU.forward: max(v, 0), NaN stays NaN
    y2 = np.dot(hr, w_out.T)  # Linear.forward (ffwd.net.2): hr W2^T, + b2 below
    _bias_dropout_add(xm, y2, b_out, keep_ffn, inv_ffn, B, T, out)  # out = xm + Dropout(y2 + b2)


@njit(**_OPTIONS)
def _block_backward_into(dout, x, mean1, rstd1, xn1, qkvT, p, pd, attT, xm, mean2, rstd2, xn2, hr,
                         ln1_w, w_qkv, w_proj, ln2_w, w_fc, w_out, B, T, H, scale, mask,
                         keep_att, inv_att, keep_proj, inv_proj, keep_ffn, inv_ffn,
                         dx, dln1_w, dln1_b, dw_qkv, dw_proj, db_proj, dln2_w, dln2_b, dw_fc, db_fc, dw_out,
                         db_out):  # fmt: skip
    """`Block.backward`: `_block_forward_into`'s lines in reverse, from `dout` `(N, C)`, into `dx`
    (another array than `dout`) and the block's parameters' gradients."""
    C = dout.shape[1]
    # out = xm + Dropout(hr W2^T + b2): Add.backward gives dout to xm and to the branch;
    # Dropout.backward: dy2 = dout * keep / (1 - p)
    dy2 = _dropout_backward(dout, keep_ffn, inv_ffn, B, T)
    # Linear.backward (ffwd.net.2): dW2 = dy2^T hr, db2 = 1^T dy2, dhr = dy2 W2
    np.dot(dy2.T, hr, dw_out)
    _column_sums(dy2, db_out)
    dh = np.dot(dy2, w_out)
    # ReLU.backward (ops/activation.py): 0 where the output hr <= 0
    N, F = dh.shape
    for i in range(N):
        for j in range(F):
            if hr[i, j] <= 0:
                dh[i, j] = 0.0
    # Linear.backward (ffwd.net.0): dW1 = dh^T xn2, db1 = 1^T dh, dxn2 = dh W1
    np.dot(dh.T, xn2, dw_fc)
    _column_sums(dh, db_fc)
    dxn2 = np.dot(dh, w_fc)
    # LayerNorm.backward (ln2), its dx added onto dout (Add.backward: xm feeds both ln2 and the sum)
    dxm = dx
    dxm[...] = dout
    acc_w, acc_b = np.zeros(C, np.float64), np.zeros(C, np.float64)
    _layernorm_backward(dxn2, xm, mean2, rstd2, ln2_w, dxm, acc_w, acc_b)
    dln2_w[:] = acc_w
    dln2_b[:] = acc_b
    # xm = x + Dropout(att Wp^T + bp): Add.backward, Dropout.backward
    dy = _dropout_backward(dxm, keep_proj, inv_proj, B, T)
    # Linear.backward (proj): dWp = dy^T att, dbp = 1^T dy, datt = dy Wp (as datt^T = Wp^T dy^T, for the loops)
    np.dot(dy.T, attT.T, dw_proj)
    _column_sums(dy, db_proj)
    dattT = np.dot(w_proj.T, dy.T)
    # PackedSelfAttention.backward -> dqkv^T (3C, N)
    dqkvT = np.zeros_like(qkvT)
    _attention_backward(dattT, qkvT, B, T, H, scale, mask, keep_att, inv_att, p, pd, dqkvT)
    # Linear.backward (the stacked query, key, value weights): dWqkv = dqkv^T xn1, dxn1 = dqkv Wqkv
    np.dot(dqkvT, xn1, dw_qkv)
    dxn1 = np.dot(dqkvT.T, w_qkv)
    # LayerNorm.backward (ln1), its dx added onto dxm (Add.backward: x feeds both ln1 and the sum)
    acc_w[:] = 0.0
    acc_b[:] = 0.0
    _layernorm_backward(dxn1, x, mean1, rstd1, ln1_w, dx, acc_w, acc_b)
    dln1_w[:] = acc_w
    dln1_b[:] = acc_b


@njit(**_OPTIONS)
def _head_forward_into(x, lnf_w, lnf_b, eps, w_lm, b_lm, B, T, logits, mean, rstd, xn):
    """`ln_f` then `lm_head`: `LayerNorm.forward`, `Linear.forward`, on the stream's time-major
    rows, into `logits` in the model's `(B, T, V)`, and `mean`, `rstd`, `xn` for the backward."""
    _layernorm(x, lnf_w, lnf_b, eps, xn, mean, rstd)
    z = np.dot(xn, w_lm.T)
    V = z.shape[1]
    for t in range(T):
        for b in range(B):
            zr, lr = z[t * B + b], logits[b, t]
            for j in range(V):
                lr[j] = zr[j] + b_lm[j]


@njit(**_OPTIONS)
def _head_backward_into(dlogits, x, mean, rstd, xn, lnf_w, w_lm, dx, dlnf_w, dlnf_b, dw_lm, db_lm):
    """`Linear.backward` (`lm_head`), then `LayerNorm.backward` (`ln_f`); `dlogits` `(B, T, V)`, the
    rest in the stream's time-major rows; into `dx` (overwritten) and the parameters' gradients."""
    N, C = x.shape
    B, T, V = dlogits.shape
    g = np.empty((N, V), dlogits.dtype)  # G in the stream's rows
    for t in range(T):
        for b in range(B):
            g[t * B + b] = dlogits[b, t]
    np.dot(g.T, xn, dw_lm)  # dW = G^T xn
    _column_sums(g, db_lm)  # db = 1^T G
    dxn = np.dot(g, w_lm)  # dxn = G W
    dx[...] = 0.0
    dw, db = np.zeros(C, np.float64), np.zeros(C, np.float64)
    _layernorm_backward(dxn, x, mean, rstd, lnf_w, dx, dw, db)
    dlnf_w[:] = dw
    dlnf_b[:] = db


# --------------------------------------------------------------------------- the model, in parts of the batch
@njit(**_OPTIONS)
def _part_keeps(keep_att, keep_proj, keep_ffn, inv, l, i, b, T, H):
    r"""Block `l`'s keep masks for part `i` (batch rows $i b$ to $(i + 1) b - 1$), with their
    $1 / (1 - p)$, as `_block_forward_into` and `_block_backward_into` take them: the attention's
    `(B H, T, T)` has a row per (batch row, head), $b' H + h$, and the stream's `(B T, C)` a row
    per (batch row, position), $b' T + t$, so a part's rows are one run of each.  A size-0 mask
    (no dropout there) stays size 0."""
    n = b * T
    return (keep_att[l, i * b * H : (i + 1) * b * H], inv[l, 0], keep_proj[l, i * n : (i + 1) * n], inv[l, 1],
            keep_ffn[l, i * n : (i + 1) * n], inv[l, 2])  # fmt: skip


@njit(**_OPTIONS)
def forward_parts(first, last, idx, P, tok, pos, ln1_w, ln1_b, eps1, w_qkv, w_proj, b_proj, ln2_w, ln2_b, eps2, w_fc,
                  b_fc, w_out, b_out, H, scale, mask, keep_att, keep_proj, keep_ffn, inv, lnf_w, lnf_b, eps_f, w_lm,
                  b_lm, logits, saved):  # fmt: skip
    r"""The model's forward, `GPTLanguageModel.forward` to its logits, on parts `first` to `last - 1`
    of the batch's `P` parts of rows (`P` divides `B`; part $i$: rows $i b$ to $(i + 1) b - 1$,
    $b = B / P$): the embeddings (`_embed_into`), each block (`_block_forward_into`), the head
    (`_head_forward_into`).  A row's logits depend on that row alone (the attention mixes
    positions, never rows), so the parts change no value, and threads may take runs of them.

    The blocks' parameters come stacked, one row per block (`ln1_w` `(L, C)`, `w_qkv` `(L, 3C, C)`:
    each block's heads' query, key and value weights, ...), `eps1`, `eps2` `(L,)`; the keep masks
    too, as the reference draws them (`keep_att` `(L, B H, T, T)`, `keep_proj`, `keep_ffn`
    `(L, B T, C)`; a size-0 second dim: no dropout there), and `inv` `(L, 3)` their
    $1 / (1 - p)$.  A part's stream is its own `(b T, C)`, time-major.  Into `logits` `(B, T, V)`
    (the parts' rows) and `saved` (each part's slot): each block's input and saved arrays
    `(L, P, ...)` (`xs` has the head's input as its block `L`), the head's `(P, ...)`."""
    xs, mean1, rstd1, xn1, qkvT, p, pd, attT, xm, mean2, rstd2, xn2, hr, hmean, hrstd, hxn = saved
    B, T = idx.shape
    L = w_qkv.shape[0]
    b = B // P
    for i in range(first, last):
        _embed_into(idx[i * b : (i + 1) * b], tok, pos, xs[0, i])
        for l in range(L):
            _block_forward_into(
                xs[l, i], ln1_w[l], ln1_b[l], eps1[l], w_qkv[l], w_proj[l], b_proj[l], ln2_w[l], ln2_b[l], eps2[l],
                w_fc[l], b_fc[l], w_out[l], b_out[l], b, T, H, scale, mask,
                *_part_keeps(keep_att, keep_proj, keep_ffn, inv, l, i, b, T, H),
                xs[l + 1, i], mean1[l, i], rstd1[l, i], xn1[l, i], qkvT[l, i], p[l, i], pd[l, i], attT[l, i], xm[l, i],
                mean2[l, i], rstd2[l, i], xn2[l, i], hr[l, i],
            )  # fmt: skip
        _head_forward_into(xs[L, i], lnf_w, lnf_b, eps_f, w_lm, b_lm, b, T, logits[i * b : (i + 1) * b], hmean[i],
                           hrstd[i], hxn[i])  # fmt: skip


@njit(**_OPTIONS)
def logits_parts(first, last, idx, P, tok, pos, ln1_w, ln1_b, eps1, w_qkv, w_proj, b_proj, ln2_w, ln2_b, eps2, w_fc,
                 b_fc, w_out, b_out, H, scale, mask, keep_att, keep_proj, keep_ffn, inv, lnf_w, lnf_b, eps_f, w_lm,
                 b_lm, logits):  # fmt: skip
    """`forward_parts`' logits alone (the same calls on the same parts: the same values), for a
    forward no backward follows (evaluation, generation): one block's arrays, reused from block
    to block and part to part, instead of every block's of every part, so a large batch's forward
    holds a few small arrays, which the allocator reuses, rather than fresh memory at every call."""
    B, T = idx.shape
    L, C, F = w_qkv.shape[0], tok.shape[1], w_fc.shape[1]
    dt = tok.dtype
    b = B // P
    n = b * T
    nd = b if keep_att.shape[1] > 0 else 0  # the dropped weights' arrays: empty without dropout
    x, out = np.empty((n, C), dt), np.empty((n, C), dt)
    mean1, rstd1, mean2, rstd2 = np.empty(n, dt), np.empty(n, dt), np.empty(n, dt), np.empty(n, dt)
    xn1, xm, xn2, hr = np.empty((n, C), dt), np.empty((n, C), dt), np.empty((n, C), dt), np.empty((n, F), dt)
    qkvT, attT = np.empty((3 * C, n), dt), np.empty((C, n), dt)
    p, pd = np.empty((H, T, T, b), dt), np.empty((H if nd else 0, T, T, nd), dt)
    for i in range(first, last):
        _embed_into(idx[i * b : (i + 1) * b], tok, pos, x)
        for l in range(L):
            _block_forward_into(
                x, ln1_w[l], ln1_b[l], eps1[l], w_qkv[l], w_proj[l], b_proj[l], ln2_w[l], ln2_b[l], eps2[l],
                w_fc[l], b_fc[l], w_out[l], b_out[l], b, T, H, scale, mask,
                *_part_keeps(keep_att, keep_proj, keep_ffn, inv, l, i, b, T, H),
                out, mean1, rstd1, xn1, qkvT, p, pd, attT, xm, mean2, rstd2, xn2, hr,
            )  # fmt: skip
            x, out = out, x
        _head_forward_into(x, lnf_w, lnf_b, eps_f, w_lm, b_lm, b, T, logits[i * b : (i + 1) * b], mean1, rstd1, xn1)


@njit(**_OPTIONS)
def backward_parts(first, last, dlogits, idx, P, saved, ln1_w, w_qkv, w_proj, ln2_w, w_fc, w_out, H, scale, mask,
                   keep_att, keep_proj, keep_ffn, inv, lnf_w, w_lm, grads):  # fmt: skip
    r"""`forward_parts`' backward on parts `first` to `last - 1`, from
    $\partial L / \partial\, \mathrm{logits}$ `dlogits` `(B, T, V)`: the head's
    (`_head_backward_into`), each block's in reverse (`_block_backward_into`), the embeddings'
    (`_embed_backward_into`), into each part's slot of the parameters' gradients `grads`
    (`(P, ...)` each: `dtok`, `dpos`; the blocks' `(P, L, ...)`: `dln1_w`, `dln1_b`, `dw_qkv`,
    `dw_proj`, `db_proj`, `dln2_w`, `dln2_b`, `dw_fc`, `db_fc`, `dw_out`, `db_out`; then `dlnf_w`,
    `dlnf_b`, `dw_lm`, `db_lm`).  A parameter's gradient is the sum of its parts' (every row reads
    the same parameters: `Add.backward`), which the caller adds in the parts' order."""
    xs, mean1, rstd1, xn1, qkvT, p, pd, attT, xm, mean2, rstd2, xn2, hr, hmean, hrstd, hxn = saved
    dtok, dpos, dln1_w, dln1_b, dw_qkv, dw_proj, db_proj, dln2_w, dln2_b, dw_fc, db_fc, dw_out, db_out = grads[:13]
    dlnf_w, dlnf_b, dw_lm, db_lm = grads[13:]
    B, T = idx.shape
    L, C = w_qkv.shape[0], w_qkv.shape[2]
    dt = dlogits.dtype
    b = B // P
    n = b * T
    dx, dx_in = np.empty((n, C), dt), np.empty((n, C), dt)  # the stream's gradient, after and before a block
    for i in range(first, last):
        _head_backward_into(dlogits[i * b : (i + 1) * b], xs[L, i], hmean[i], hrstd[i], hxn[i], lnf_w, w_lm, dx,
                            dlnf_w[i], dlnf_b[i], dw_lm[i], db_lm[i])  # fmt: skip
        for l in range(L - 1, -1, -1):
            _block_backward_into(
                dx, xs[l, i], mean1[l, i], rstd1[l, i], xn1[l, i], qkvT[l, i], p[l, i], pd[l, i], attT[l, i], xm[l, i],
                mean2[l, i], rstd2[l, i], xn2[l, i], hr[l, i], ln1_w[l], w_qkv[l], w_proj[l], ln2_w[l], w_fc[l],
                w_out[l], b, T, H, scale, mask,
                *_part_keeps(keep_att, keep_proj, keep_ffn, inv, l, i, b, T, H),
                dx_in, dln1_w[i, l], dln1_b[i, l], dw_qkv[i, l], dw_proj[i, l], db_proj[i, l], dln2_w[i, l],
                dln2_b[i, l], dw_fc[i, l], db_fc[i, l], dw_out[i, l], db_out[i, l],
            )  # fmt: skip
            dx, dx_in = dx_in, dx
        _embed_backward_into(idx[i * b : (i + 1) * b], dx, dtok[i], dpos[i])
