"""Cross-entropy fused with log-softmax."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


def cross_entropy_graph(g, x, safe_t, keep, reduction, count):
    r"""CrossEntropy's $dx = (\mathrm{softmax}(x) - \mathrm{onehot}(t)) \cdot \mathit{scale}$ (see `CrossEntropy`) as
    Tensor ops, for `create_graph`: $\mathrm{softmax}(x)$ is a recorded `Softmax` of the input tensor (what
    the forward saved as an array), $\mathrm{onehot}(t)$ and the row mask are constants, and
    $\mathit{scale}$ is $g$ (in the graph) times `keep` (divided by `count` for `"mean"`).  The reference
    op and its kernel both use it."""
    xp = backend.namespace(x.device)
    onehot = xp.zeros(x.shape, dtype=x.dtype)
    onehot[xp.arange(x.shape[0]), safe_t] = 1
    const = type(g)._make
    if reduction == "none":
        scale = (g * const(keep.astype(x.dtype), g.device, False)).reshape(-1, 1)
    else:
        rows = keep.astype(x.dtype)[:, None]
        scale = g * const(rows / count if reduction == "mean" else rows, g.device, False)
    return (x.softmax(-1) - const(onehot, g.device, False)) * scale, None


class CrossEntropy(Function):
    r"""$\ell_n = -\log \mathrm{softmax}(x_n)_{t_n} = \mathrm{logsumexp}(x_n) - x_{n,t_n}$, for logits $x$ of
    shape $(N, C)$ and class ids $t$ of shape $(N,)$; reduced by mean (over the rows whose target is
    not `ignore_index`) or sum.

    $$
    \frac{\partial \ell_n}{\partial x_{nc}} = \mathrm{softmax}(x_n)_c - [c = t_n],
    $$

    so the whole backward is

    $$
    dx = \big(p - \mathrm{onehot}(t)\big)\, \frac{g}{N}
    $$

    for `reduction="mean"` (no $1/N$ for `"sum"`), where $p = \mathrm{softmax}(x)$ is kept from the
    forward.  Rows whose $t_n$ is `ignore_index` get 0.
    float16 is computed in float32 (`backend.widen`), its loss and gradient rounded once, as PyTorch's.
    """

    def forward(self, x, targets, reduction="mean", ignore_index=-100):
        xp = self.xp
        n = x.shape[0]
        dtype, x = x.dtype, backend.widen(x)
        shifted = x - x.max(axis=-1, keepdims=True)
        e = xp.exp(shifted)
        s = backend.sum(xp, e, -1, keepdims=True)
        keep = targets != ignore_index  # (N,)
        safe_t = xp.where(keep, targets, 0)
        rows = xp.arange(n)
        picked = shifted[rows, safe_t]  # (N,)
        losses = (xp.log(s[:, 0]) - picked) * keep  # (N,)
        count = None
        if reduction == "mean":
            count = keep.sum().astype(x.dtype)  # in x's dtype: no float64 upcast downstream
            out = backend.sum(xp, losses) / count
        elif reduction == "sum":
            out = backend.sum(xp, losses)
        else:
            out = losses
        self.save_for_backward(e / s, safe_t, keep, reduction, count, dtype)
        return backend.narrow(out, dtype)

    def backward(self, g):
        p, t, keep, reduction, count, dtype = self.saved
        xp = self.xp
        dx = p.copy()
        dx[xp.arange(dx.shape[0]), t] -= 1
        g = backend.widen(g)
        if reduction == "none":
            scale = (g * keep)[:, None]
        else:
            scale = keep[:, None] * (g / count if reduction == "mean" else g)
        return backend.narrow(dx * scale, dtype), None

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = (\mathrm{softmax}(x) - \mathrm{onehot}(t)) \cdot \mathit{scale}$
        with $\mathrm{softmax}(x)$ a recorded `Softmax` of the input tensor (`cross_entropy_graph`): its
        second derivative is softmax's, scaled per row."""
        _, safe_t, keep, reduction, count, _ = self.saved
        return cross_entropy_graph(g, self.parents[0], safe_t, keep, reduction, count)
