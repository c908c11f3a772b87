"""Reductions over one or several dims.  `dim` here is always a normalised tuple of
non-negative axes (the Tensor method validates it); `keepdim` as in PyTorch."""

from __future__ import annotations

from .. import backend
from ..autograd import Function, graph_constant
from .scan import exclusive_cumprod


def _expand_back(g, shape, axes, keepdim):
    """Reinsert the reduced axes as size 1 so g broadcasts against the input."""
    if keepdim:
        return g
    kept = list(g.shape)
    for a in sorted(axes):
        kept.insert(a, 1)
    return g.reshape(kept)


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


class Sum(Function):
    """z = sum_i x_i over `dim`.   dz/dx_i = 1   =>   dx = g broadcast back to x's shape."""

    def forward(self, x, dim, keepdim=False):
        self.save_for_backward(x.shape, dim, keepdim)
        return x.sum(axis=dim, keepdims=keepdim)

    def backward(self, g):
        shape, dim, keepdim = self.saved
        return self.xp.broadcast_to(_expand_back(g, shape, dim, keepdim), shape)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g with the reduced axes put back (a recorded reshape),
        broadcast to x's shape (a recorded expand): linear in g, free of x."""
        shape, dim, keepdim = self.saved
        return _expand_back(g, shape, dim, keepdim).expand(*shape)


class Mean(Function):
    """z = (1/N) sum_i x_i over `dim`.   dx = g / N broadcast back."""

    def forward(self, x, dim, keepdim=False):
        self.save_for_backward(x.shape, dim, keepdim)
        return x.mean(axis=dim, keepdims=keepdim)

    def backward(self, g):
        shape, dim, keepdim = self.saved
        g = _expand_back(g, shape, dim, keepdim) / _count(shape, dim)
        return self.xp.broadcast_to(g, shape)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g / N, the reduced axes put back and broadcast to x's
        shape, as recorded ops: linear in g, free of x."""
        shape, dim, keepdim = self.saved
        return (_expand_back(g, shape, dim, keepdim) / _count(shape, dim)).expand(*shape)


class Amax(Function):
    """z = max_i x_i over `dim`.

    dz/dx_i = 1 for the maximal element, 0 elsewhere.  When several elements tie for the
    maximum the gradient is split evenly between them (PyTorch's amax does the same):
        dx = g * [x == z] / count(x == z).
    """

    @staticmethod
    def extreme(x, dim):
        return x.max(axis=dim, keepdims=True)

    def forward(self, x, dim, keepdim=False):
        z = self.extreme(x, dim)
        self.save_for_backward(x, z, dim, keepdim)
        return z if keepdim else z.reshape([n for i, n in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        x, z, dim, keepdim = self.saved
        hit = (x == z).astype(x.dtype)
        hit /= hit.sum(axis=dim, keepdims=True)
        return _expand_back(g, x.shape, dim, keepdim) * hit

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * [x == z] / count(x == z), the tie-sharing weights a
        constant (piecewise constant in x): linear in g, d(dx)/dx = 0.  Amin inherits it."""
        x, z, dim, keepdim = self.saved
        hit = (x == z).astype(x.dtype)
        hit /= hit.sum(axis=dim, keepdims=True)
        return _expand_back(g, x.shape, dim, keepdim) * graph_constant(g, hit)


class Amin(Amax):
    """z = min_i x_i over `dim`.   As Amax: dx = g * [x == z] / count(x == z) (ties share)."""

    @staticmethod
    def extreme(x, dim):
        return x.min(axis=dim, keepdims=True)


class Var(Function):
    """v = sum_i (x_i - m)^2 / (N - c), m the mean over `dim`, c the correction (1: unbiased).

    dv/dx_j = 2 (x_j - m) / (N - c)   (the terms through m sum to zero, since sum_i (x_i - m) = 0)
    =>  dx = g * 2 (x - m) / (N - c).
    """

    def forward(self, x, dim, correction=1, keepdim=False):
        m = x.mean(axis=dim, keepdims=True)
        d = x - m
        denom = max(_count(x.shape, dim) - correction, 0)
        self.save_for_backward(d, dim, keepdim, denom)
        with backend.quiet():  # N <= c: a division by 0, nan (PyTorch warns once, a UserWarning, not NumPy's)
            return (d * d).sum(axis=dim, keepdims=keepdim) / denom

    def backward(self, g):
        d, dim, keepdim, denom = self.saved
        return _expand_back(g, d.shape, dim, keepdim) * (2 / denom if denom else float("nan")) * d

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g * 2 (x - m) / (N - c) with x - m recomputed as
        recorded ops of the input tensor: a second pass sees d(dx)/dx = 2 g (I - 1/N) / (N - c)."""
        x = self.parents[0]
        _, dim, keepdim, denom = self.saved
        d = x - x.mean(dim=dim, keepdim=True)
        return _expand_back(g, x.shape, dim, keepdim) * (2 / denom if denom else float("nan")) * d


class Std(Function):
    """s = sqrt(v), v the variance as in Var (correction c).

    ds/dx = dv/dx / (2 s) = 2 (x - m) / (N - c) / (2 s)   =>   dx = g (x - m) / ((N - c) s).
    Where s = 0 the derivative is infinite; as in PyTorch the gradient is nan there.
    """

    def forward(self, x, dim, correction=1, keepdim=False):
        xp = self.xp
        m = x.mean(axis=dim, keepdims=True)
        d = x - m
        denom = max(_count(x.shape, dim) - correction, 0)
        s = xp.sqrt((d * d).sum(axis=dim, keepdims=True) / denom) if denom else xp.full(m.shape, xp.nan, x.dtype)
        self.save_for_backward(d, s, dim, keepdim, denom)
        return s if keepdim else s.reshape([n for i, n in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        xp = self.xp
        d, s, dim, keepdim, denom = self.saved
        inv = xp.where(s > 0, 1 / xp.where(s > 0, s, 1), xp.nan)  # 1 / s, nan where s = 0
        return _expand_back(g, d.shape, dim, keepdim) * d * inv / (denom if denom else xp.nan)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g (x - m) / ((N - c) s) with x - m recomputed and s the
        output tensor, both in the graph (s = 0 gives inf or nan, as the array backward's nan there
        and PyTorch's)."""
        x = self.parents[0]
        _, _, dim, keepdim, denom = self.saved
        d = x - x.mean(dim=dim, keepdim=True)
        s = _expand_back(z, x.shape, dim, keepdim)
        return _expand_back(g, x.shape, dim, keepdim) * d / (s * (denom if denom else float("nan")))


class Prod(Function):
    """z = prod_i x_i along `dim` (an int), or over every element (dim None).

    dz/dx_i = prod_{k != i} x_k = L_i R_i, with L_i = prod_{k < i} x_k and R_i = prod_{k > i} x_k
    (exclusive products from each side).  No division by x_i, so zeros get their true gradient:
        dx = g * L * R.
    """

    def forward(self, x, dim=None, keepdim=False):
        self.save_for_backward(x, dim, keepdim)
        return x.prod() if dim is None else x.prod(axis=dim, keepdims=keepdim)

    def backward(self, g):
        xp = self.xp
        x, dim, keepdim = self.saved
        shape = x.shape
        if dim is None:
            x, dim, g = x.reshape(-1), 0, g.reshape(1)
        elif not keepdim:
            g = xp.expand_dims(g, dim)
        left = exclusive_cumprod(xp, x, dim)
        right = xp.flip(exclusive_cumprod(xp, xp.flip(x, axis=dim), dim), axis=dim)
        return (g * left * right).reshape(shape)


class Logsumexp(Function):
    """z = log sum_i exp(x_i) over `dim`, computed as m + log sum_i exp(x_i - m), m = max x (no overflow;
    m is taken as 0 where it is infinite, so a row of -inf gives -inf, and so does an empty row).

    dz/dx_i = exp(x_i) / sum_k exp(x_k) = exp(x_i - z)   =>   dx = g exp(x - z)   (a softmax).
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        if x.size:
            m = x.max(axis=dim, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
        else:  # an empty x has no max; its sums are 0, so z = log 0 = -inf (PyTorch's answer)
            m = xp.zeros([1 if i in dim else n for i, n in enumerate(x.shape)], dtype=x.dtype)
        with backend.quiet():  # log 0 = -inf: an empty sum, or a row of -inf
            z = xp.log(xp.exp(x - m).sum(axis=dim, keepdims=True)) + m
        self.save_for_backward(x, z, dim, keepdim)
        return z if keepdim else z.reshape([n for i, n in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        x, z, dim, keepdim = self.saved
        with backend.quiet():  # x = z = inf: inf - inf = nan, as in PyTorch
            return _expand_back(g, x.shape, dim, keepdim) * self.xp.exp(x - z)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g exp(x - z) with z the output tensor, in the graph (a
        softmax: its second derivative is softmax's)."""
        x = self.parents[0]
        _, _, dim, keepdim = self.saved
        return _expand_back(g, x.shape, dim, keepdim) * (x - _expand_back(z, x.shape, dim, keepdim)).exp()


class Nansum(Function):
    """z = sum_i x_i over `dim`, a NaN taken as 0.

    dz/dx_i = 1 where x_i is a number and 0 where it is NaN (a NaN adds nothing, whatever it is):
        dx = g broadcast back, and 0 at each NaN.
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        number = ~xp.isnan(x)
        self.save_for_backward(number, dim, keepdim)
        return xp.where(number, x, 0).sum(axis=dim, keepdims=keepdim)

    def backward(self, g):
        number, dim, keepdim = self.saved
        return self.xp.where(number, _expand_back(g, number.shape, dim, keepdim), 0)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): dx = g broadcast back, 0 at each NaN: a recorded expand and a
        MaskedFill with the constant NaN mask (linear in g, free of x)."""
        number, dim, keepdim = self.saved
        return _expand_back(g, number.shape, dim, keepdim).expand(*number.shape).masked_fill(
            graph_constant(g, ~number), 0.0
        )


class Nanmean(Function):
    """z = (1/n) sum_i x_i over the n entries along `dim` that are not NaN (NaN where n = 0).

    dz/dx_i = 1/n where x_i is a number, 0 where it is NaN:  dx = g / n broadcast back, 0 at a NaN.
    A slice of NaN alone (n = 0) gets NaN, as PyTorch's (g / 0 times the 0 of nansum's backward).
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        number = ~xp.isnan(x)
        n = number.sum(axis=dim, keepdims=True)
        some = n > 0
        n = xp.where(some, n, 1).astype(x.dtype)
        z = xp.where(some, xp.where(number, x, 0).sum(axis=dim, keepdims=True) / n, xp.nan).astype(x.dtype)
        self.save_for_backward(number, n, some, dim, keepdim)
        return z if keepdim else z.reshape([s for i, s in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        xp = self.xp
        number, n, some, dim, keepdim = self.saved
        g = _expand_back(g, number.shape, dim, keepdim)
        return xp.where(number, g / n, xp.where(some, 0, xp.nan)).astype(g.dtype)
