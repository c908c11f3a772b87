r"""Softmax and log-softmax as single, numerically stable ops.

Both subtract the row maximum first: $\mathrm{softmax}(x) = \mathrm{softmax}(x - c)$ for any $c$, and with
$c = \max(x)$ every exponent is $\le 0$, so huge logits cannot overflow and $-\infty$ entries
(masked positions) become $e^{-\infty} = 0$ exactly.

float16 is computed in float32 (`backend.widen`) and rounded once, forward and backward, as
PyTorch's: a float16 sum of 70,000 exponentials would be `inf`, and every probability 0.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Softmax(Function):
    r"""$y_i = e^{x_i - m} / \sum_j e^{x_j - m}$ along `dim`.

    $$
    \frac{\partial y_i}{\partial x_j} = y_i\,(\delta_{ij} - y_j),
    $$

    so

    $$
    dx_j = \sum_i g_i\, y_i\,(\delta_{ij} - y_j) = y_j \Big(g_j - \sum_i g_i\, y_i\Big).
    $$
    """

    def forward(self, x, dim):
        xp = self.xp
        if x.size:
            w = backend.widen(x)
            e = xp.exp(w - w.max(axis=dim, keepdims=True))
            y = backend.narrow(e / backend.sum(xp, e, dim, keepdims=True), x.dtype)
        else:  # empty: nothing to normalise (and no max to shift by)
            y = x.copy()
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        w, g = backend.widen(y), backend.widen(g)
        return backend.narrow(w * (g - backend.sum(self.xp, g * w, dim, keepdims=True)), y.dtype)

    def backward_graph(self, g, y):
        r"""Tensor-level (`create_graph`): $dx = y \big(g - \sum g\, y\big)$ as recorded ops, with $y$ the
        output tensor (in the graph: $y$'s node carries $d/dy$ on to $x$).  A second pass with
        gradient $v$ of $dx$:

        $$
        \begin{aligned}
        dg &= y\, v - y \sum y\, v, \\
        dy &= v \Big(g - \sum g\, y\Big) - g \sum v\, y,
        \end{aligned}
        $$

        $dg$ being softmax's own backward of $v$ (linear in $g$), $dy$ going on to $x$ through $y$'s
        node: PyTorch's `softmax_double_backward`.  Only `dim` is read from what the forward saved."""
        dim = self.saved[1]
        return y * (g - (g * y).sum(dim=dim, keepdim=True))


class LogSoftmax(Function):
    r"""$y_i = x_i - m - \log \sum_j e^{x_j - m}$ along `dim`.

    $$
    \frac{\partial y_i}{\partial x_j} = \delta_{ij} - \mathrm{softmax}(x)_j,
    $$

    so

    $$
    dx_j = g_j - \mathrm{softmax}(x)_j \sum_i g_i, \qquad \mathrm{softmax}(x) = e^{y}.
    $$
    """

    def forward(self, x, dim):
        xp = self.xp
        if x.size:
            w = backend.widen(x)
            shifted = w - w.max(axis=dim, keepdims=True)
            y = backend.narrow(shifted - xp.log(backend.sum(xp, xp.exp(shifted), dim, keepdims=True)), x.dtype)
        else:  # empty: nothing to normalise (no max, and the log of an empty sum)
            y = x.copy()
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        w, g = backend.widen(y), backend.widen(g)
        return backend.narrow(g - self.xp.exp(w) * backend.sum(self.xp, g, dim, keepdims=True), y.dtype)

    def backward_graph(self, g, y):
        r"""Tensor-level (`create_graph`): $dx = g - e^{y} \sum g$ as recorded ops, with $y$ the output
        tensor (in the graph).  A second pass with gradient $v$ of $dx$ sees
        $dg = v - \sum v\, e^{y}$ and $dy = -v\, e^{y} \sum g$, carried on to $x$ by $y$'s node."""
        dim = self.saved[1]
        return g - y.exp() * g.sum(dim=dim, keepdim=True)
