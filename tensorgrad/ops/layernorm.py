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
        w = weight.reshape(-1) if weight is not None else None
        b = bias.reshape(-1) if bias is not None else None
        xhat = xp.empty(x2.shape, x.dtype)
        rstd = xp.empty((x2.shape[0], 1), x.dtype)
        y = xp.empty(x2.shape, x.dtype)

        def rows(sl):  # each row is normalised on its own: halves of the rows can run on two threads
            xc = x2[sl] - backend.mean_last(xp, x2[sl])  # x - mean
            r = rstd[sl]
            xp.add(backend.mean_last(xp, xc * xc), eps, out=r)  # var + eps
            xp.sqrt(r, out=r)
            xp.divide(1.0, r, out=r)  # rstd
            xh = xhat[sl]
            xp.multiply(xc, r, out=xh)  # xhat
            if w is None:
                y[sl] = xh
            else:
                xp.multiply(xh, w, out=y[sl])
            if b is not None:
                y[sl] += b

        backend.parallel(xp, x2.shape[0], x2.size, rows)
        self.save_for_backward(xhat, rstd, weight, x.shape)
        return y.reshape(x.shape)

    def backward(self, g):
        xhat, rstd, weight, shape = self.saved
        xp = self.xp
        n = xhat.shape[1]
        g2 = g.reshape(-1, n)  # (rows, N)
        w = weight.reshape(-1) if weight is not None else None
        want_dx, want_dw, want_db = self.needs_grad(0), self.needs_grad(1), self.needs_grad(2)
        dx = xp.empty(xhat.shape, xhat.dtype) if want_dx else None
        partial_dw, partial_db = {}, {}  # per half: the sums over its rows

        def rows(sl):
            gs, xs = g2[sl], xhat[sl]
            if want_db:
                partial_db[sl.start] = backend.sum_first(xp, gs)
            if want_dw:
                partial_dw[sl.start] = backend.sum_first(xp, gs * xs)
            if want_dx:
                dxhat = gs * w if w is not None else gs
                mean_dxhat_xhat = backend.mean_last(xp, dxhat * xs)  # (rows, 1)
                d = dx[sl]
                xp.subtract(dxhat, backend.mean_last(xp, dxhat), out=d)  # dxhat - mean(dxhat)
                d -= xs * mean_dxhat_xhat
                d *= rstd[sl]

        backend.parallel(xp, xhat.shape[0], xhat.size, rows)
        wshape = shape[len(shape) - len(weight.shape) :] if weight is not None else None
        dw = sum(partial_dw[k] for k in sorted(partial_dw)).reshape(wshape) if want_dw else None
        db = sum(partial_db[k] for k in sorted(partial_db)).reshape(wshape) if want_db else None
        return (dx.reshape(shape) if want_dx else None), dw, db
