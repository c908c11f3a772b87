"""Scaled dot-product attention as one op: the attention scores, the mask, the softmax, the
dropout on the weights and the weighted sum of values, with one hand-derived backward."""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .dropout import keep_mask
from .shape import Stack


def attention_graph(g, q, k, v, mask, keep, scale, keep_prob):
    """ScaledDotProductAttention's backward (see there) as Tensor ops, for `create_graph`: $S$, $P$ and
    $P_d$ are recomputed from the query and key tensors as recorded ops (what the forward saved as
    arrays), with the bool mask and the dropout keep mask (`keep`, None without dropout) as
    constants, so a second pass differentiates the softmax and both products as well.  Returns
    $dq$, $dk$, $dv$ (Tensors)."""
    S = (q @ k.transpose(-1, -2)) * scale
    if mask is not None:
        S = S.masked_fill(graph_constant(g, ~mask._data), float("-inf"))
    P = S.softmax(-1)
    drop = graph_constant(g, keep.astype(g.dtype) / keep_prob) if keep is not None else None
    Pd = P * drop if drop is not None else P
    dv = Pd.transpose(-1, -2) @ g
    dP = g @ v.transpose(-1, -2)
    if drop is not None:
        dP = dP * drop
    dS = P * (dP - (dP * P).sum(-1, keepdim=True))
    return (dS @ k) * scale, (dS.transpose(-1, -2) @ q) * scale, dv


class ScaledDotProductAttention(Function):
    r"""$\mathit{out} = D\big(\mathrm{softmax}(\mathrm{mask}(q k^\top \cdot \mathit{scale}))\big)\, v$,
    with $q, k$ of shape $(\ldots, T, d)$ and $v$ of shape $(\ldots, S, d_v)$ ($S = T$ for self-attention).

    Forward, with $M$ the boolean mask (True = may attend) and $D$ inverted dropout (keep mask $R$, drawn
    with probability $1 - p$ of keeping, the kept weights rescaled by $1 / (1 - p)$):

    $$
    \begin{aligned}
    S &= q k^\top \cdot \mathit{scale}, \quad S = -\infty \text{ where not } M && (\ldots, T, S) \\
    P &= \mathrm{softmax}(S) && \text{(row-wise, along the last dim)} \\
    P_d &= P \odot R / (1 - p) \\
    \mathit{out} &= P_d\, v
    \end{aligned}
    $$

    Backward, from $g = \partial L / \partial\, \mathit{out}$ of shape $(\ldots, T, d_v)$:

    $$
    \begin{aligned}
    dv &= P_d^\top g \\
    dP_d &= g\, v^\top \\
    dP &= dP_d \odot R / (1 - p) \\
    dS &= P \odot \Big(dP - \sum_j (dP \odot P)\Big) && \text{(the softmax backward, per row)} \\
    dq &= dS\, k \cdot \mathit{scale} \\
    dk &= dS^\top q \cdot \mathit{scale}
    \end{aligned}
    $$

    Masked places have $P = 0$, so $dS = 0$ there: no gradient flows through a masked score.
    A row with every key masked has no softmax: it comes out NaN, as in PyTorch.
    float16 is computed in float32 (`backend.widen`) and rounded once, forward and backward, as
    PyTorch's CPU attention accumulates it (its softmax's sums in float16 would overflow).
    """

    def forward(self, q, k, v, mask, scale, dropout_p=0.0):
        xp = self.xp
        dtype = backend.result_type(backend.result_type(q.dtype, k.dtype), v.dtype)
        q, k, v = backend.widen(q), backend.widen(k), backend.widen(v)
        S = (q @ k.swapaxes(-1, -2)) * scale  # (..., T, S)
        if mask is not None:
            S = xp.where(mask, S, -xp.inf)
        E = xp.exp(S - S.max(axis=-1, keepdims=True))  # softmax(S) = softmax(S - max): no overflow
        P = E / backend.sum(xp, E, -1, keepdims=True)
        R, Pd = None, P
        if dropout_p > 0:
            R = keep_mask(backend.device_of(q), P.shape, dropout_p)  # True = kept
            Pd = P * R / (1 - dropout_p)
        out = Pd @ v  # (..., T, dv)
        self.save_for_backward(q, k, v, P, Pd, R, scale, 1 - dropout_p, dtype)
        return backend.narrow(out, dtype)

    def backward(self, g):
        q, k, v, P, Pd, R, scale, keep_prob, dtype = self.saved
        g = backend.widen(g)
        dv = Pd.swapaxes(-1, -2) @ g
        dPd = g @ v.swapaxes(-1, -2)
        dP = dPd * R / keep_prob if R is not None else dPd
        dS = P * (dP - backend.sum(self.xp, dP * P, -1, keepdims=True))
        dq = (dS @ k) * scale
        dk = (dS.swapaxes(-1, -2) @ q) * scale
        # Where q, k and v had different batch shapes, these come out with the broadcast batch
        # shape; the engine sums them back to each input's shape.
        return backend.narrow(dq, dtype), backend.narrow(dk, dtype), backend.narrow(dv, dtype), None

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): the backward above as Tensor ops (`attention_graph`): $P$
        recomputed from $q$ and $k$ in the graph, the masks constant: a second pass sees the
        softmax's second derivative and every cross term of the two products."""
        params = self.graph_params()
        if params is None:  # a kernel's dropout mask: the lazy error (Function.backward_graph)
            return Function.backward_graph(self, g, z)
        q, k, v, mask = self.parents[:4]
        return (*attention_graph(g, q, k, v, mask, *params), None)

    def graph_params(self):
        """(dropout keep mask or None, scale, keep probability) for `attention_graph`, or None where
        they are not kept (a kernel overrides this for its own saved layout)."""
        _, _, _, _, _, keep, scale, keep_prob, _ = self.saved
        return keep, scale, keep_prob


class PackedSelfAttention(Function):
    r"""Multi-head self-attention on packed projections: the layout of a GPT's fused q/k/v matmul.

    `qkv` $(B, T, 3 H d)$ holds, along its last dim, every head's query, then every head's key,
    then every head's value.  The output $(B, T, H d)$ has the heads side by side (the lecture's
    `torch.cat` over heads).  It computes exactly

    ```python
    q, k, v = qkv.view(B, T, 3, H, d).permute(2, 0, 3, 1, 4)          # each (B, H, T, d)
    out = scaled_dot_product_attention(q, k, v, mask, scale, dropout)  # (B, H, T, d)
    out = out.transpose(1, 2).reshape(B, T, H * d)
    ```

    as one node instead of eight.

    Backward: the split, permutes and reshapes only move elements, so their adjoints move the
    gradients back the same way (a permutation's adjoint is the inverse permutation):
    $g$ $(B, T, H d) \to (B, H, T, d) \to$ `ScaledDotProductAttention.backward` $\to dq, dk, dv$, and

    $$
    dqkv_{:,:,0} = dq^\top, \quad dqkv_{:,:,1} = dk^\top, \quad dqkv_{:,:,2} = dv^\top
    \qquad \text{(each } (B, T, H, d)\text{)}.
    $$
    """

    double_backward_reason = (
        "its attention ran as a kernel with dropout, whose mask the kernel keeps in its own form; with "
        "dropout_p > 0 differentiate twice under tg.kernels.use('reference')"
    )

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0):
        B, T, three_hd = qkv.shape
        H, d = num_heads, three_hd // (3 * num_heads)
        parts = qkv.reshape(B, T, 3, H, d)
        q = parts[:, :, 0].transpose(0, 2, 1, 3)  # (B, H, T, d)
        k = parts[:, :, 1].transpose(0, 2, 1, 3)
        v = parts[:, :, 2].transpose(0, 2, 1, 3)
        attention = ScaledDotProductAttention(self.xp)
        out = attention.forward(q, k, v, mask, scale, dropout_p)  # (B, H, T, d)
        self.save_for_backward(attention, H, d)
        return out.transpose(0, 2, 1, 3).reshape(B, T, H * d)  # (B, T, H * d)

    def backward(self, g):
        attention, H, d = self.saved
        B, T = g.shape[:2]
        g_heads = g.reshape(B, T, H, d).transpose(0, 2, 1, 3)  # (B, H, T, d)
        dq, dk, dv, _ = attention.backward(g_heads)  # each (B, H, T, d)
        dqkv = self.xp.stack([part.transpose(0, 2, 1, 3) for part in (dq, dk, dv)], axis=2)  # (B, T, 3, H, d)
        return dqkv.reshape(B, T, 3 * H * d), None

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): the split and permutes of `qkv` as recorded ops, then
        `attention_graph` per head, the three gradients stacked back: every step in the graph."""
        params = self.graph_params()
        if params is None:  # a kernel's dropout mask: the lazy error (Function.backward_graph)
            return Function.backward_graph(self, g, z)
        H, d, params = params
        qkv, mask = self.parents[:2]
        B, T = qkv.shape[:2]
        parts = qkv.reshape(B, T, 3, H, d).permute(2, 0, 3, 1, 4)  # (3, B, H, T, d)
        g_heads = g.reshape(B, T, H, d).permute(0, 2, 1, 3)  # (B, H, T, d)
        grads = attention_graph(g_heads, parts[0], parts[1], parts[2], mask, *params)
        dqkv = Stack.apply(*(part.permute(0, 2, 1, 3) for part in grads), axis=2)  # (B, T, 3, H, d)
        return dqkv.reshape(B, T, 3 * H * d), None

    def graph_params(self):
        """(H, d, the heads' attention's `graph_params()`) for the formula, or None where the dropout
        mask is not kept as an array (a kernel overrides this for its own saved layouts)."""
        attention, H, d = self.saved
        params = attention.graph_params()
        return None if params is None else (H, d, params)
