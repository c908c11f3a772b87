r"""Scans along one dim: cumsum, cumprod, logcumsumexp.  (cummax and cummin read values at
positions, so they are a `TakeAlongDim` of the running arg-max: ops/selection.py.)

Notation: along the scanned dim, $z_j$ is built from $x_0, \dots, x_j$, so $x_i$ reaches every $z_j$
with $j \ge i$, and its gradient is a sum over $j \ge i$: a scan run backwards.

The running sums and products accumulate as PyTorch's (`backend.cumsum` / `cumprod`: float16 in
float32, and on the host float32 in float64), rounded once; logcumsumexp and the backward of
cumprod, loops of their own, run in `backend.widen(x)` (float32 for float16) and round once.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .rearrange import Flip
from .shape import Cat, Stack


def reverse_cumsum(xp, a, dim):
    r"""$r_i = \sum_{j \ge i} a_j$ along `dim`."""
    return xp.flip(backend.cumsum(xp, xp.flip(a, axis=dim), dim), axis=dim)


def _slice(dim, s):
    return (slice(None),) * dim + (s,)


def exclusive_cumprod(xp, x, dim):
    r"""$E_i = \prod_{k < i} x_k$ along `dim` ($E_0 = 1$): the products before each position, no division."""
    n = x.shape[dim]
    ones = xp.ones_like(x[_slice(dim, slice(0, 1))])
    return backend.cumprod(xp, xp.concatenate([ones, x[_slice(dim, slice(0, n - 1))]], axis=dim), dim)


def flip_graph(t, dim):
    """`t` reversed along `dim`, a recorded Flip (rearrange.py; its formula is a Flip again)."""
    return Flip.apply(t, dims=(dim,))


def exclusive_cumprod_graph(x, dim):
    """`exclusive_cumprod` as Tensor ops of the Tensor `x`: a recorded Cat of a constant 1 and `x`
    without its last slice, then a recorded Cumprod (whose formula is Cumprod's, below)."""
    n = x.shape[dim]
    ones = graph_constant(x, backend.namespace(x.device).ones_like(x._data[_slice(dim, slice(0, 1))]))
    return Cumprod.apply(Cat.apply(ones, x[_slice(dim, slice(0, n - 1))], axis=dim), dim=dim)


def widened(t):
    """`t` in the dtype its array's `backend.widen` gives (float32 for float16), a recorded Cast."""
    dtype = backend.widen(t._data[:0] if t._data.ndim else t._data).dtype
    return t if dtype == t._data.dtype else t.to(dtype)


class Cumsum(Function):
    r"""$z_j = \sum_{i \le j} x_i$.  $\partial z_j/\partial x_i = 1$ for $j \ge i$, so

    $$
    dx_i = \sum_{j \ge i} g_j
    $$
    """

    def forward(self, x, dim):
        self.save_for_backward(dim)
        return backend.cumsum(self.xp, x, dim)

    def backward(self, g):
        (dim,) = self.saved
        return reverse_cumsum(self.xp, g, dim)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = \operatorname{flip}(\operatorname{cumsum}(\operatorname{flip}(g)))$
        as recorded ops: linear in $g$, free of $x$ (each op's formula is again a flip or a cumsum)."""
        (dim,) = self.saved
        return flip_graph(Cumsum.apply(flip_graph(g, dim), dim=dim), dim)


class Cumprod(Function):
    r"""$z_j = \prod_{i \le j} x_i$.

    $\partial z_j/\partial x_i = \prod_{k \le j,\, k \ne i} x_k$ for $j \ge i$
    $= E_i \prod_{i < k \le j} x_k$, where $E_i = \prod_{k < i} x_k$ (the exclusive product).
    So, with no division (zeros are fine):

    $$
    dx_i = E_i\, S_i, \qquad S_i = \sum_{j \ge i} g_j \prod_{i < k \le j} x_k
    $$

    and $S$ runs backwards: $S_{n-1} = g_{n-1}$, $S_i = g_i + x_{i+1} S_{i+1}$.
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

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = E\, S$ as recorded ops of the input tensor and $g$, in the
        array backward's order: $E$ by `exclusive_cumprod_graph` (a Cat and a Cumprod), $S$ slice by
        slice ($S_{n-1} = g_{n-1}$, $S_i = g_i + x_{i+1} S_{i+1}$: recorded Index, Mul and Add, joined
        by a recorded Stack), in the widened dtype (float32 for float16) and cast back once.  No
        division, so a second pass differentiates at zeros too ($\partial(dx)/\partial x$ through $E$
        and $S$, $\partial(dx)/\partial g$ = $E$ times the products in $S$)."""
        x, dim = self.parents[0], self.saved[1]
        n = x.shape[dim]
        if n == 0:
            return graph_constant(g, self.xp.zeros_like(g._data))
        dtype, x, g = g.dtype, widened(x), widened(g)
        parts = [g[_slice(dim, n - 1)]]
        for i in range(n - 2, -1, -1):
            parts.append(g[_slice(dim, i)] + x[_slice(dim, i + 1)] * parts[-1])
        s = Stack.apply(*reversed(parts), axis=dim)
        dx = exclusive_cumprod_graph(x, dim) * s
        return dx if dx.dtype == dtype else dx.to(dtype)


class Logcumsumexp(Function):
    r"""$z_j = \log \sum_{i \le j} \exp(x_i)$, computed as $z_j = \operatorname{logaddexp}(z_{j-1}, x_j)$
    (no overflow).

    $\partial z_j/\partial x_i = \exp(x_i - z_j)$ for $j \ge i$, so
    $dx_i = \sum_{j \ge i} g_j \exp(x_i - z_j)$.
    Kept in log space: with the positive and negative parts of $g$ separately,

    $$
    \begin{aligned}
    \sum_{j \ge i} g_j \exp(x_i - z_j) &= \exp(x_i + L^+_i) - \exp(x_i + L^-_i), \\
    L^\pm_i = \log \sum_{j \ge i} g^\pm_j \exp(-z_j)
      &= \text{a reverse logcumsumexp of } \log(g^\pm_j) - z_j.
    \end{aligned}
    $$
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

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): the array backward's log-space sum as recorded ops: for the
        positive and the negative part of $g$, $\log(g^\pm)$ (a recorded Log of $g$ with the places
        where the part is $\le 0$ set to 1 before and to the lowest finite number after, constant
        masks), minus $z$ (the output tensor, in the graph), a reverse logcumsumexp (recorded Flip,
        Logcumsumexp, Flip: this formula again at the next order), plus $x$, exp.  The lowest
        finite number stands for $\log 0 = -\infty$, as in PyTorch's `logcumsumexp_backward`: exp of
        it plus a finite $x$ is 0 as $\exp(-\infty)$ is (the same first-order values), while
        $-\infty$ would reach the inner Logcumsumexp as an input, whose own backward would then take
        $-\infty - (-\infty) = \mathrm{nan}$.  A second pass differentiates each part:
        $\partial(dx)/\partial g$, $\partial(dx)/\partial x$ and, through $z$, the terms of
        $\partial z_j / \partial x_i$."""
        x, dim = self.parents[0], self.saved[2]
        dtype, x, g, z = g.dtype, widened(x), widened(g), widened(z)
        lowest = float(self.xp.finfo(g._data.dtype).min)
        dx = None
        for sign in (1, -1):
            part = g * sign
            off = graph_constant(g, part._data <= 0)
            log_part = part.masked_fill(off, 1.0).log().masked_fill(off, lowest)
            rev = flip_graph(Logcumsumexp.apply(flip_graph(log_part - z, dim), dim=dim), dim)
            term = sign * (x + rev).exp()
            dx = term if dx is None else dx + term
        return dx if dx.dtype == dtype else dx.to(dtype)
