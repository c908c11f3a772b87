"""Scaled dot-product attention as one op: the attention scores, the mask, the softmax, the
dropout on the weights and the weighted sum of values, with one hand-derived backward.

The (..., T, T) arrays are the largest of a GPT step (64 x 6 x 256 x 256 floats = 100 MB per
layer for the large model), so this op touches them as few times as it can: scores are scaled,
masked and normalised in place, and only the softmax output P (and the dropout mask) is kept.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class ScaledDotProductAttention(Function):
    """out = D(softmax(mask(q k^T * scale))) v,  q, k (..., T, d), v (..., T, dv).

    Forward, with M the boolean mask (True = may attend) and D inverted dropout (mask R, keep 1-p):
        S  = q k^T * scale,  S = -inf where not M
        P  = softmax(S)                           (row-wise, along the last dim)
        Pd = P * R / (1 - p)
        out = Pd v

    Backward, from g = dL/dout (..., T, dv):
        dv  = Pd^T g
        dPd = g v^T
        dP  = dPd * R / (1 - p)
        dS  = P * (dP - sum_j(dP * P))           (the softmax backward, per row)
        dq  = dS k * scale
        dk  = dS^T q * scale
    Masked places have P = 0, so dS = 0 there: no gradient flows through a masked score.
    """

    def forward(self, q, k, v, mask, scale, dropout_p=0.0, device="cpu"):
        xp = self.xp
        s = backend.matmul(q * scale, k.swapaxes(-1, -2))  # (..., T, T); scaling q is T/d times cheaper
        if mask is not None:
            s += xp.where(mask, 0.0, -xp.inf).astype(s.dtype)  # the mask as 0 / -inf, broadcast
        s -= backend.max_last(xp, s)
        p = xp.exp(s, out=s)  # in place: s is not needed any more
        p /= backend.sum_last(xp, p)  # P (..., T, T)
        keep = None
        pd = p
        if dropout_p > 0:
            keep = backend.rng(device).keep_mask(p.shape, dropout_p)  # R
            pd = p * keep
            pd *= 1.0 / (1.0 - dropout_p)
        self.save_for_backward(q, k, v, p, keep, scale, dropout_p)
        return backend.matmul(pd, v)  # (..., T, dv)

    def backward(self, g):
        q, k, v, p, keep, scale, dropout_p = self.saved
        pd = p
        if keep is not None:
            pd = p * keep
            pd *= 1.0 / (1.0 - dropout_p)
        dv = backend.matmul(pd.swapaxes(-1, -2), g) if self.needs_grad(2) else None  # (..., T, dv)
        dp = backend.matmul(g, v.swapaxes(-1, -2))  # (..., T, T)
        if keep is not None:
            dp *= keep
            dp *= 1.0 / (1.0 - dropout_p)
        row = backend.sum_last(self.xp, dp * p)  # sum_j dP_ij P_ij   (..., T, 1)
        dp -= row
        dp *= p  # dS
        dq = backend.matmul(dp, k) * scale if self.needs_grad(0) else None  # (..., T, d)
        dk = backend.matmul(dp.swapaxes(-1, -2), q) * scale if self.needs_grad(1) else None  # (..., T, d)
        return dq, dk, dv, None
