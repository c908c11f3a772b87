"""Layer normalisation as one op with its own backward, and its relatives: the standardisation
over any axes (batch, instance and group norm) and the RMS norm.

As PyTorch's, each computes float16 in float32 (`backend.widen`), statistics and gradients, and
rounds its outputs once: the variance of float16 values in the thousands overflows float16.  The
means go through `backend.mean` / `sum`, so the sums over the rows ($dw$, $db$) and `batch_norm`'s
over the batch are blocked, as accurate as PyTorch's.
"""

from __future__ import annotations

import math

from .. import backend
from ..autograd import Function
from .scan import widened as _widened


def layer_norm_graph(ctx, g, norm_shape, eps):
    r"""LayerNorm's backward (see `LayerNorm`) as Tensor ops, for `create_graph`: $\mathrm{mean}$,
    $\mathrm{rstd}$ and $\hat x$ are recomputed from the input tensor as recorded ops (what the forward
    saved as arrays), so the second pass differentiates through them too; the reference op and its
    kernel both use it."""
    x, weight = ctx.parents[0], ctx.parents[1]
    n = math.prod(norm_shape)
    x2 = x.reshape(-1, n)
    xc = x2 - x2.mean(-1, keepdim=True)
    rstd = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    g2 = g.reshape(-1, n)
    db = g2.sum(0).reshape(norm_shape) if ctx.needs_grad(2) else None
    dw = (g2 * xhat).sum(0).reshape(norm_shape) if ctx.needs_grad(1) else None
    dx = None
    if ctx.needs_grad(0):
        dxhat = g2 * weight.reshape(-1) if weight is not None else g2
        dx = rstd * (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        dx = dx.reshape(x.shape)
    return dx, dw, db


class LayerNorm(Function):
    r"""Normalise over the last `k` axes, then scale and shift:

    $$
    \begin{aligned}
    \mathrm{mean} &= \mathbb{E}[x], \qquad \mathrm{rstd} = \frac{1}{\sqrt{\mathrm{Var}[x] + \epsilon}}, \\
    \hat x &= (x - \mathrm{mean})\, \mathrm{rstd}, \\
    y &= \hat x\, w + b,
    \end{aligned}
    $$

    the variance biased, $\mathbb{E}$ and $\mathrm{Var}$ over the $k$ axes.

    Backward ($N$ = number of normalised elements, means taken over the $k$ axes, sums over the
    batch axes):

    $$
    \begin{aligned}
    db &= \sum_{\text{batch}} g, \\
    dw &= \sum_{\text{batch}} g\, \hat x, \\
    d\hat x &= g\, w, \\
    dx &= \mathrm{rstd}\, \Big(d\hat x - \mathrm{mean}(d\hat x) - \hat x\, \mathrm{mean}(d\hat x\, \hat x)\Big).
    \end{aligned}
    $$

    The last line is $\partial \hat x / \partial x$ applied to $d\hat x$: $\hat x$ depends on $x$ directly
    ($\mathrm{rstd}$), through the mean ($-\mathrm{mean}(d\hat x)$) and through the variance
    ($-\hat x\, \mathrm{mean}(d\hat x\, \hat x)$).

    The $k$ normalised axes are folded into one, $x$ of shape (rows, $N$), so every mean is a row mean.
    """

    def forward(self, x, weight, bias, k, eps=1e-5):
        xp = self.xp
        n = math.prod(x.shape[x.ndim - k :])
        x2 = backend.widen(x.reshape(-1, n))  # (rows, N)
        mean = backend.mean(xp, x2, -1, keepdims=True)  # (rows, 1)
        var = backend.mean(xp, (x2 - mean) ** 2, -1, keepdims=True)
        rstd = 1 / xp.sqrt(var + eps)
        xhat = (x2 - mean) * rstd
        y = xhat
        if weight is not None:
            y = y * weight.reshape(-1)
        if bias is not None:
            y = y + bias.reshape(-1)
        self.save_for_backward(xhat, rstd, weight, x.shape, x.dtype, x.shape[x.ndim - k :], eps)
        return backend.narrow(y.reshape(x.shape), x.dtype)  # weight and bias have x's dtype

    def backward(self, g):
        xp = self.xp
        xhat, rstd, weight, shape, dtype, norm_shape, _ = self.saved
        g2 = backend.widen(g.reshape(xhat.shape))  # (rows, N)
        db = backend.narrow(backend.sum(xp, g2, 0).reshape(norm_shape), dtype) if self.needs_grad(2) else None
        dw = backend.narrow(backend.sum(xp, g2 * xhat, 0).reshape(norm_shape), dtype) if self.needs_grad(1) else None
        dx = None
        if self.needs_grad(0):
            dxhat = g2 * weight.reshape(-1) if weight is not None else g2
            mean_dxhat = backend.mean(xp, dxhat, -1, keepdims=True)
            mean_dxhat_xhat = backend.mean(xp, dxhat * xhat, -1, keepdims=True)
            dx = backend.narrow((rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)).reshape(shape), dtype)
        return dx, dw, db

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the backward above written with Tensor ops
        (`layer_norm_graph`), $\hat x$ and $\mathrm{rstd}$ recomputed from the input tensor in the graph:
        a second pass differentiates the mean, the variance and the scale as well."""
        norm_shape, eps = self.saved[-2:]
        return layer_norm_graph(self, g, norm_shape, eps)


class Standardize(Function):
    r"""$\hat x = (x - \mathrm{mean})\, \mathrm{rstd}$ over the given axes, with
    $\mathrm{rstd} = 1 / \sqrt{\mathrm{Var}[x] + \epsilon}$ (biased variance): LayerNorm's normalisation on
    any set of axes -- `batch_norm`'s (all but the channels), `instance_norm`'s (the spatial ones) and
    `group_norm`'s (each group of channels with its pixels).
    The affine weight and bias that follow are an ordinary multiply and add.

    Backward, $N$ the number of elements each mean is over (means over the axes):

    $$
    dx = \mathrm{rstd}\, \Big(g - \mathrm{mean}(g) - \hat x\, \mathrm{mean}(g\, \hat x)\Big),
    $$

    the same three paths as in `LayerNorm`: directly, through the mean, through the variance.
    """

    def forward(self, x, axes, eps):
        xp = self.xp
        w = backend.widen(x)
        mean = backend.mean(xp, w, axes, keepdims=True)
        var = backend.mean(xp, (w - mean) ** 2, axes, keepdims=True)
        rstd = 1 / xp.sqrt(var + eps)
        xhat = (w - mean) * rstd
        self.save_for_backward(xhat, rstd, axes, x.dtype, eps)  # eps: for the formula below
        return backend.narrow(xhat, x.dtype)

    def backward(self, g):
        xp = self.xp
        xhat, rstd, axes, dtype, _ = self.saved
        g = backend.widen(g)
        mean_g = backend.mean(xp, g, axes, keepdims=True)
        mean_g_xhat = backend.mean(xp, g * xhat, axes, keepdims=True)
        return backend.narrow(rstd * (g - mean_g - xhat * mean_g_xhat), dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): the backward above with Tensor ops, $\mathrm{mean}$, $\mathrm{rstd}$
        and $\hat x$ recomputed from the input tensor as recorded ops (in the widened dtype, cast back
        once): a second pass differentiates the mean, the variance and the scale as well (as
        `layer_norm_graph`, on these axes)."""
        axes, eps = self.saved[2], self.saved[4]
        dtype, x, g = g.dtype, _widened(self.parents[0]), _widened(g)
        xc = x - x.mean(axes, keepdim=True)
        rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
        xhat = xc * rstd
        dx = rstd * (g - g.mean(axes, keepdim=True) - xhat * (g * xhat).mean(axes, keepdim=True))
        return dx if dx.dtype == dtype else dx.to(dtype)


class RMSNorm(Function):
    r"""$y = x\, r$ over the last $k$ axes (folded into one of $N$ elements),
    $r = 1 / \sqrt{\mathrm{mean}(x^2) + \epsilon}$: LayerNorm without the centring.  (The weight that
    follows is an ordinary multiply.)

    With $\hat x = x\, r$ and $\partial r / \partial x_j = -r^3 x_j / N$:

    $$
    dx_j = g_j\, r + \sum_i g_i\, x_i \Big(\frac{-r^3 x_j}{N}\Big)
    = r \Big(g_j - \hat x_j\, \mathrm{mean}(g\, \hat x)\Big).
    $$
    """

    def forward(self, x, k, eps):
        xp = self.xp
        x2 = backend.widen(x.reshape(-1, math.prod(x.shape[x.ndim - k :])))  # (rows, N)
        r = 1 / xp.sqrt(backend.mean(xp, x2 * x2, -1, keepdims=True) + eps)
        xhat = x2 * r
        self.save_for_backward(xhat, r, x.shape, x.dtype, eps)  # eps: for the formula below
        return backend.narrow(xhat.reshape(x.shape), x.dtype)

    def backward(self, g):
        xhat, r, shape, dtype, _ = self.saved
        g2 = backend.widen(g.reshape(xhat.shape))
        dx = r * (g2 - xhat * backend.mean(self.xp, g2 * xhat, -1, keepdims=True))
        return backend.narrow(dx.reshape(shape), dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = r\, \big(g - \hat x\, \mathrm{mean}(g\, \hat x)\big)$ with $r$ and
        $\hat x$ recomputed from the input tensor as recorded ops (rows of $N$, widened, cast back once):
        a second pass sees $r$'s dependence on $x$ ($\partial r / \partial x_j = -r^3 x_j / N$) as well."""
        xhat_array, _, shape, _, eps = self.saved
        dtype = g.dtype
        x2 = _widened(self.parents[0].reshape(xhat_array.shape))
        g2 = _widened(g.reshape(xhat_array.shape))
        r = ((x2 * x2).mean(-1, keepdim=True) + eps).rsqrt()
        xhat = x2 * r
        dx = (r * (g2 - xhat * (g2 * xhat).mean(-1, keepdim=True))).reshape(shape)
        return dx if dx.dtype == dtype else dx.to(dtype)
