"""Layer normalisation as one op with its own backward."""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function


class LayerNorm(Function):
    """Normalise over the last `k` axes, then scale and shift:

        mean = E[x],  rstd = 1 / sqrt(Var[x] + eps)   (biased variance, over the k axes)
        xhat = (x - mean) * rstd
        y    = xhat * w + b

    Backward (N = number of normalised elements, means taken over the k axes):
        db    = sum over the batch axes of g
        dw    = sum over the batch axes of g * xhat
        dxhat = g * w
        dx    = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))

    The last line is d/dx of xhat applied to dxhat: xhat depends on x directly (rstd), through
    the mean (-mean(dxhat)) and through the variance (-xhat * mean(dxhat * xhat)).

    The k normalised axes are folded into one (rows, N) so every mean is a row reduction.
    """

    def forward(self, x, weight, bias, k, eps=1e-5):
        xp = self.xp
        n = math.prod(x.shape[x.ndim - k :])
        x2 = x.reshape(-1, n)  # (rows, N)
        mean = backend.sum_last(xp, x2) * (1.0 / n)  # (rows, 1)
        xc = x2 - mean
        var = backend.sum_last(xp, xc * xc) * (1.0 / n)
        rstd = 1.0 / xp.sqrt(var + eps)  # (rows, 1)
        xhat = xc
        xhat *= rstd  # in place: xc is not needed any more
        self.save_for_backward(xhat, rstd, weight, x.shape)
        y = xhat * weight.reshape(-1) if weight is not None else xhat.copy()  # a new array: xhat is kept
        if bias is not None:
            y += bias.reshape(-1)
        return y.reshape(x.shape)

    def backward(self, g):
        xhat, rstd, weight, shape = self.saved
        n = xhat.shape[1]
        g2 = g.reshape(-1, n)  # (rows, N)
        wshape = shape[len(shape) - len(weight.shape) :] if weight is not None else None
        db = g2.sum(axis=0).reshape(wshape) if self.needs_grad(2) else None
        dw = (g2 * xhat).sum(axis=0).reshape(wshape) if self.needs_grad(1) else None
        dx = None
        if self.needs_grad(0):
            dxhat = g2 * weight.reshape(-1) if weight is not None else g2
            mean_dxhat = backend.sum_last(self.xp, dxhat) * (1.0 / n)  # (rows, 1)
            mean_dxhat_xhat = backend.sum_last(self.xp, dxhat * xhat) * (1.0 / n)  # (rows, 1)
            dx = dxhat - mean_dxhat
            dx -= xhat * mean_dxhat_xhat
            dx *= rstd
            dx = dx.reshape(shape)
        return dx, dw, db
