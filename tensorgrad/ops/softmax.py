"""Softmax and log-softmax as single, numerically stable ops.

Both subtract the row maximum first: softmax(x) = softmax(x - c) for any c, and with
c = max(x) every exponent is <= 0, so huge logits cannot overflow and -inf entries
(masked positions) become exp(-inf) = 0 exactly.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Softmax(Function):
    """y_i = exp(x_i - m) / sum_j exp(x_j - m) along `dim`.

    dy_i/dx_j = y_i (delta_ij - y_j), so
        dx_j = sum_i g_i y_i (delta_ij - y_j) = y_j (g_j - sum_i g_i y_i).
    """

    def forward(self, x, dim):
        y = x - _max(self.xp, x, dim)
        self.xp.exp(y, out=y)
        y /= _sum(self.xp, y, dim)
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        gy = g * y
        gy -= y * _sum(self.xp, gy, dim)
        return gy


class LogSoftmax(Function):
    """y_i = x_i - m - log sum_j exp(x_j - m) along `dim`.

    dy_i/dx_j = delta_ij - softmax(x)_j, so
        dx_j = g_j - softmax(x)_j * sum_i g_i,   softmax(x) = exp(y).
    """

    def forward(self, x, dim):
        xp = self.xp
        shifted = x - _max(xp, x, dim)
        y = shifted - xp.log(_sum(xp, xp.exp(shifted), dim))
        self.save_for_backward(y, dim)
        return y

    def backward(self, g):
        y, dim = self.saved
        return g - self.xp.exp(y) * _sum(self.xp, g, dim)


def _max(xp, x, dim):
    """x.max(axis=dim, keepdims=True), by the backend's fast row reduction when dim is the last."""
    return backend.max_last(xp, x) if dim == x.ndim - 1 else x.max(axis=dim, keepdims=True)


def _sum(xp, x, dim):
    return backend.sum_last(xp, x) if dim == x.ndim - 1 else x.sum(axis=dim, keepdims=True)
