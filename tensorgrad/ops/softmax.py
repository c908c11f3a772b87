"""Softmax and log-softmax as single, numerically stable ops.

Both subtract the row maximum first: softmax(x) = softmax(x - c) for any c, and with
c = max(x) every exponent is <= 0, so huge logits cannot overflow and -inf entries
(masked positions) become exp(-inf) = 0 exactly.
"""

from __future__ import annotations

from ..autograd import Function


class Softmax(Function):
    """y_i = exp(x_i - m) / sum_j exp(x_j - m) along `dim`.

    dy_i/dx_j = y_i (delta_ij - y_j), so
        dx_j = sum_i g_i y_i (delta_ij - y_j) = y_j (g_j - sum_i g_i y_i).
    """

    def forward(self, x, dim):
        if x.size:
            e = self.xp.exp(x - x.max(axis=dim, keepdims=True))
            y = e / e.sum(axis=dim, keepdims=True)
        else:  # empty: nothing to normalise (and no max to shift by)
            y = x.copy()
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        return y * (g - (g * y).sum(axis=dim, keepdims=True))


class LogSoftmax(Function):
    """y_i = x_i - m - log sum_j exp(x_j - m) along `dim`.

    dy_i/dx_j = delta_ij - softmax(x)_j, so
        dx_j = g_j - softmax(x)_j * sum_i g_i,   softmax(x) = exp(y).
    """

    def forward(self, x, dim):
        xp = self.xp
        if x.size:
            shifted = x - x.max(axis=dim, keepdims=True)
            y = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        else:  # empty: nothing to normalise (no max, and the log of an empty sum)
            y = x.copy()
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        return g - self.xp.exp(y) * g.sum(axis=dim, keepdims=True)
