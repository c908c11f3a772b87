"""Softmax and log-softmax as single, numerically stable ops.

Both subtract the row maximum first: softmax(x) = softmax(x - c) for any c, and with
c = max(x) every exponent is <= 0, so huge logits cannot overflow and -inf entries
(masked positions) become exp(-inf) = 0 exactly.

float16 is computed in float32 (backend.widen) and rounded once, forward and backward, as
PyTorch's: a float16 sum of 70,000 exponentials would be inf, and every probability 0.
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


class LogSoftmax(Function):
    """y_i = x_i - m - log sum_j exp(x_j - m) along `dim`.

    dy_i/dx_j = delta_ij - softmax(x)_j, so
        dx_j = g_j - softmax(x)_j * sum_i g_i,   softmax(x) = exp(y).
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
