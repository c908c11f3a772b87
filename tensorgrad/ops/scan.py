"""Scans along one dim: cumsum, cumprod, logcumsumexp.  (cummax and cummin read values at
positions, so they are a `TakeAlongDim` of the running arg-max: ops/selection.py.)

Notation: along the scanned dim, z_j is built from x_0..x_j, so x_i reaches every z_j with
j >= i, and its gradient is a sum over j >= i: a scan run backwards.

The running sums and products accumulate as PyTorch's (backend.cumsum / cumprod: float16 in
float32, and on the host float32 in float64), rounded once; logcumsumexp and the backward of
cumprod, loops of their own, run in `backend.widen(x)` (float32 for float16) and round once.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


def reverse_cumsum(xp, a, dim):
    """r_i = sum_{j >= i} a_j along dim."""
    return xp.flip(backend.cumsum(xp, xp.flip(a, axis=dim), dim), axis=dim)


def _slice(dim, s):
    return (slice(None),) * dim + (s,)


def exclusive_cumprod(xp, x, dim):
    """E_i = prod_{k < i} x_k along dim (E_0 = 1): the products before each position, no division."""
    n = x.shape[dim]
    ones = xp.ones_like(x[_slice(dim, slice(0, 1))])
    return backend.cumprod(xp, xp.concatenate([ones, x[_slice(dim, slice(0, n - 1))]], axis=dim), dim)


class Cumsum(Function):
    """z_j = sum_{i <= j} x_i.   dz_j/dx_i = 1 for j >= i   =>   dx_i = sum_{j >= i} g_j."""

    def forward(self, x, dim):
        self.save_for_backward(dim)
        return backend.cumsum(self.xp, x, dim)

    def backward(self, g):
        (dim,) = self.saved
        return reverse_cumsum(self.xp, g, dim)


class Cumprod(Function):
    """z_j = prod_{i <= j} x_i.

    dz_j/dx_i = prod_{k <= j, k != i} x_k for j >= i = E_i * prod_{i < k <= j} x_k, where
    E_i = prod_{k < i} x_k (the exclusive product).  So, with no division (zeros are fine):
        dx_i = E_i * S_i,   S_i = sum_{j >= i} g_j prod_{i < k <= j} x_k,
    and S runs backwards:  S_{n-1} = g_{n-1},   S_i = g_i + x_{i+1} S_{i+1}.
    """

    def forward(self, x, dim):
        self.save_for_backward(x, dim)
        return backend.cumprod(self.xp, x, dim)

    def backward(self, g):
        xp = self.xp
        x, dim = self.saved
        n = x.shape[dim]
        if n == 0:  # an empty scan: no S_{n-1} to start from, and no gradient to give
            return xp.zeros_like(g)
        dtype, x, g = x.dtype, backend.widen(x), backend.widen(g)
        exclusive = exclusive_cumprod(xp, x, dim)  # E
        s = xp.zeros_like(g)
        s[_slice(dim, n - 1)] = g[_slice(dim, n - 1)]
        for i in range(n - 2, -1, -1):
            s[_slice(dim, i)] = g[_slice(dim, i)] + x[_slice(dim, i + 1)] * s[_slice(dim, i + 1)]
        return backend.narrow(exclusive * s, dtype)


class Logcumsumexp(Function):
    """z_j = log sum_{i <= j} exp(x_i), computed as z_j = logaddexp(z_{j-1}, x_j) (no overflow).

    dz_j/dx_i = exp(x_i - z_j) for j >= i   =>   dx_i = sum_{j >= i} g_j exp(x_i - z_j).
    Kept in log space: with the positive and negative parts of g separately,
        sum_{j >= i} g_j exp(x_i - z_j) = exp(x_i + L+_i) - exp(x_i + L-_i),
        L+-_i = log sum_{j >= i} g+-_j exp(-z_j) = a reverse logcumsumexp of log(g+-_j) - z_j.
    """

    def forward(self, x, dim):
        z = self._scan(backend.widen(x), dim)
        self.save_for_backward(x, z, dim)
        return backend.narrow(z, x.dtype)

    def _scan(self, x, dim):
        xp = self.xp
        z = x.copy()
        for j in range(1, x.shape[dim]):
            z[_slice(dim, j)] = xp.logaddexp(z[_slice(dim, j - 1)], x[_slice(dim, j)])
        return z

    def _reverse_scan(self, a, dim):
        xp = self.xp
        return xp.flip(self._scan(xp.flip(a, axis=dim), dim), axis=dim)

    def backward(self, g):
        xp = self.xp
        x, z, dim = self.saved  # z in the accumulation dtype
        dtype, x, g = x.dtype, backend.widen(x), backend.widen(g)
        dx = xp.zeros_like(g)
        for sign in (1, -1):
            part = g * sign
            log_part = xp.where(part > 0, xp.log(xp.where(part > 0, part, 1)), -xp.inf)  # log(g+-), -inf at 0
            dx = dx + sign * xp.exp(x + self._reverse_scan(log_part - z, dim))
        return backend.narrow(dx, dtype)
