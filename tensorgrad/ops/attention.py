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

    The (..., T, T) arrays are the big ones, so the softmax backward is written with Pd, which
    the forward keeps:  P * dP = P * dPd * R / (1 - p) = Pd * dPd,  so with r = sum_j(Pd * dPd)
        dS = Pd * dPd - P * r
    (three passes over the scores instead of seven).  The forward keeps P' = P / (1 - p) rather
    than P: the 1 / (1 - p) rides along the softmax's division, and P * r = P' * (r (1 - p)).
    Without dropout, Pd = P' = P is one array.
    """

    def forward(self, q, k, v, mask, scale, dropout_p=0.0, device="cpu"):
        xp = self.xp
        add = None
        if mask is not None:
            add = xp.where(mask, 0.0, -xp.inf).astype(q.dtype)  # the mask as 0 / -inf, broadcast
        batch = q.shape[:-2]
        if not batch == k.shape[:-2] == v.shape[:-2]:
            batch = _broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        scores_shape = batch + (q.shape[-2], k.shape[-2])  # (..., T, S)
        keep = None  # R, drawn for the whole batch first: the same draws however the work is split
        if dropout_p > 0:
            keep = backend.rng(device).keep_mask(scores_shape, dropout_p)
        p = xp.empty(scores_shape, dtype=q.dtype)  # P' = P / (1 - p)
        pd = p if keep is None else xp.empty(scores_shape, dtype=q.dtype)  # Pd = P' * R
        out = xp.empty(batch + (q.shape[-2], v.shape[-1]), dtype=q.dtype)

        def rows(sl):  # the whole forward for a slice of the leading (batch) dim
            s = p[sl]
            backend.matmul(q[sl] * scale, k[sl].swapaxes(-1, -2), out=s)  # S = q k^T * scale
            if add is not None:
                s += _rows_of(add, sl, p.ndim)
            s -= backend.max_last(xp, s)
            xp.exp(s, out=s)  # in place: the scores are not needed any more
            total = backend.sum_last(xp, s)
            if keep is not None:
                total *= 1.0 - dropout_p
            s /= total  # P' (P itself without dropout)
            if keep is not None:
                xp.multiply(s, keep[sl], out=pd[sl])  # Pd
            backend.matmul(pd[sl], v[sl], out=out[sl])

        self._split(rows, q, k, v, p.size)
        self.save_for_backward(q, k, v, p, pd, scale, 1.0 - dropout_p)
        return out  # (..., T, dv)

    def backward(self, g):
        q, k, v, p, pd, scale, keep_prob = self.saved  # p is P' = P / keep_prob
        xp = self.xp
        batch = p.shape[:-2]  # gradients come out with the broadcast batch shape; the engine sums them back
        dq = xp.empty(batch + q.shape[-2:], q.dtype)
        dk = xp.empty(batch + k.shape[-2:], k.dtype)
        dv = xp.empty(batch + v.shape[-2:], v.dtype)

        def rows(sl):
            pd_ = pd[sl]
            backend.matmul(pd_.swapaxes(-1, -2), g[sl], out=dv[sl])  # dv = Pd^T g
            ds = backend.matmul(g[sl], v[sl].swapaxes(-1, -2))  # dPd = g v^T
            ds *= pd_  # Pd * dPd
            r = backend.sum_last(xp, ds)  # r = sum_j Pd * dPd, (..., T, 1)
            if keep_prob != 1.0:
                r *= keep_prob
            ds -= p[sl] * r  # dS = Pd * dPd - P' * (r * keep_prob)
            backend.matmul(ds, k[sl], out=dq[sl])
            dq[sl] *= scale  # dq = dS k * scale
            backend.matmul(ds.swapaxes(-1, -2), q[sl], out=dk[sl])
            dk[sl] *= scale  # dk = dS^T q * scale

        self._split(rows, q, k, v, p.size)
        return dq, dk, dv, None

    def _split(self, rows, q, k, v, work):
        """Run rows(slice) over the batch: in two halves on two threads for large NumPy arrays
        (backend.parallel) when q, k and v share their leading dims, else once over everything."""
        if q.ndim > 2 and q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
            backend.parallel(self.xp, q.shape[0], work, rows)
        else:
            rows(slice(None))


class PackedSelfAttention(Function):
    """Multi-head self-attention on packed projections: the layout of a GPT's fused q/k/v matmul.

    qkv (B, T, 3 * H * d) holds, along its last dim, every head's query, then every head's key,
    then every head's value.  The output (B, T, H * d) has the heads side by side (the lecture's
    torch.cat over heads).  It computes exactly

        q, k, v = qkv.view(B, T, 3, H, d).permute(2, 0, 3, 1, 4)          each (B, H, T, d)
        out = scaled_dot_product_attention(q, k, v, mask, scale, dropout)  (B, H, T, d)
        out = out.transpose(1, 2).reshape(B, T, H * d)

    as one node instead of eight, and lays q, k^T and v out contiguously for the batched
    products (NumPy's stacked matmul is ~1.5x slower on a transposed view of small matrices).

    Backward: the split, permutes and reshapes only move elements, so their adjoints move the
    gradients back the same way (a permutation's adjoint is the inverse permutation):
        g (B, T, H * d) -> (B, H, T, d) -> ScaledDotProductAttention.backward -> dq, dk, dv
        dqkv[:, :, 0] = dq^T,  dqkv[:, :, 1] = dk^T,  dqkv[:, :, 2] = dv^T   (each (B, T, H, d))
    """

    def forward(self, qkv, mask, num_heads, scale, dropout_p=0.0, device="cpu"):
        xp = self.xp
        B, T, three_hd = qkv.shape
        H, d = num_heads, three_hd // (3 * num_heads)
        parts = qkv.reshape(B, T, 3, H, d)
        q = xp.ascontiguousarray(parts[:, :, 0].transpose(0, 2, 1, 3))  # (B, H, T, d)
        k_t = xp.ascontiguousarray(parts[:, :, 1].transpose(0, 2, 3, 1))  # (B, H, d, T): k^T, contiguous
        v = xp.ascontiguousarray(parts[:, :, 2].transpose(0, 2, 1, 3))  # (B, H, T, d)
        attention = ScaledDotProductAttention(xp)
        out = attention.forward(q, k_t.swapaxes(-1, -2), v, mask, scale, dropout_p, device)  # (B, H, T, d)
        self.save_for_backward(attention, H, d)
        return out.transpose(0, 2, 1, 3).reshape(B, T, H * d)  # (B, T, H * d)

    def backward(self, g):
        attention, H, d = self.saved
        xp = self.xp
        B, T = g.shape[:2]
        g_heads = xp.ascontiguousarray(g.reshape(B, T, H, d).transpose(0, 2, 1, 3))  # (B, H, T, d)
        dq, dk, dv, _ = attention.backward(g_heads)  # each (B, H, T, d)
        dqkv = xp.empty((B, T, 3, H, d), dtype=dq.dtype)
        for i, part in enumerate((dq, dk, dv)):
            dqkv[:, :, i] = part.transpose(0, 2, 1, 3)  # (B, T, H, d)
        return dqkv.reshape(B, T, 3 * H * d), None


def _broadcast(*shapes):
    """NumPy's broadcast of batch shapes (checked by the caller)."""
    n = max(len(s) for s in shapes)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    return tuple(max(dims) for dims in zip(*padded))


def _rows_of(add, sl, ndim):
    """The part of the (broadcast) additive mask that goes with rows `sl` of the batch."""
    if add.ndim == ndim and add.shape[0] != 1:
        return add[sl]
    return add
