"""Layer normalisation as one op with its own backward."""

from __future__ import annotations

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
    """

    def forward(self, x, weight, bias, k, eps=1e-5):
        axes = tuple(range(x.ndim - k, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = (xc * xc).mean(axis=axes, keepdims=True)
        rstd = 1.0 / self.xp.sqrt(var + eps)
        xhat = xc * rstd
        self.save_for_backward(xhat, rstd, weight, axes)
        y = xhat
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y

    def backward(self, g):
        xhat, rstd, weight, axes = self.saved
        batch_axes = tuple(range(g.ndim - len(axes)))
        db = g.sum(axis=batch_axes) if self.needs_grad(2) else None
        dw = (g * xhat).sum(axis=batch_axes) if self.needs_grad(1) else None
        dxhat = g * weight if weight is not None else g
        dx = None
        if self.needs_grad(0):
            mean_dxhat = dxhat.mean(axis=axes, keepdims=True)
            mean_dxhat_xhat = (dxhat * xhat).mean(axis=axes, keepdims=True)
            dx = rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)
        return dx, dw, db
