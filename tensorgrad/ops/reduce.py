"""Reductions over one or several dims.  `dim` here is always a normalised tuple of
non-negative axes (the Tensor method validates it); `keepdim` as in PyTorch.

Every sum accumulates as PyTorch's does (`backend/accumulation.py`): float16 in float32, and over an
axis that is not the innermost one in blocks.  The ops that do more than one sum (`var`, `std`,
`prod`, `logsumexp`, `nanmean`) compute in `backend.widen(x)`, float32 for float16, and round their
results and gradients to $x$'s dtype once, at the end, as PyTorch's do: the squares of a variance of
float16 would overflow in float16 where PyTorch's do not.  (PyTorch's CPU `prod`, `logsumexp` and
`nanmean` keep float16 and can overflow where these, like its other reductions, do not.)
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from .rearrange import Flip
from .scan import exclusive_cumprod, exclusive_cumprod_graph, widened


def _expand_back(g, shape, axes, keepdim):
    """Reinsert the reduced axes as size 1 so $g$ broadcasts against the input."""
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
    r"""$z = \sum_i x_i$ over `dim`.   $\partial z / \partial x_i = 1$, so $dx = g$ broadcast back to $x$'s shape."""

    def forward(self, x, dim, keepdim=False):
        self.save_for_backward(x.shape, dim, keepdim)
        return backend.sum(self.xp, x, dim, keepdim)

    def backward(self, g):
        shape, dim, keepdim = self.saved
        return self.xp.broadcast_to(_expand_back(g, shape, dim, keepdim), shape)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$ with the reduced axes put back (a recorded reshape),
        broadcast to $x$'s shape (a recorded expand): linear in $g$, free of $x$."""
        shape, dim, keepdim = self.saved
        return _expand_back(g, shape, dim, keepdim).expand(*shape)


class Mean(Function):
    r"""$z = \frac{1}{N} \sum_i x_i$ over `dim`.   $dx = g / N$ broadcast back."""

    def forward(self, x, dim, keepdim=False):
        self.save_for_backward(x.shape, dim, keepdim)
        return backend.mean(self.xp, x, dim, keepdim)

    def backward(self, g):
        shape, dim, keepdim = self.saved
        g = _expand_back(g, shape, dim, keepdim) / _count(shape, dim)
        return self.xp.broadcast_to(g, shape)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g / N$, the reduced axes put back and broadcast to $x$'s
        shape, as recorded ops: linear in $g$, free of $x$."""
        shape, dim, keepdim = self.saved
        return (_expand_back(g, shape, dim, keepdim) / _count(shape, dim)).expand(*shape)


class Amax(Function):
    r"""$z = \max_i x_i$ over `dim`.

    $\partial z / \partial x_i = 1$ for the maximal element, 0 elsewhere.  When several elements tie for
    the maximum the gradient is split evenly between them (PyTorch's `amax` does the same):

    $$
    dx = \frac{g\, [x = z]}{\mathrm{count}(x = z)}.
    $$
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
        hit = (x == z).astype(backend.accumulation_dtype(x.dtype))  # float16 counts to 2048 only
        hit /= backend.sum(self.xp, hit, dim, keepdims=True)
        return backend.narrow(_expand_back(g, x.shape, dim, keepdim) * hit, x.dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, [x = z] / \mathrm{count}(x = z)$, the tie-sharing weights a
        constant (piecewise constant in $x$): linear in $g$, $\partial(dx)/\partial x = 0$.  `Amin` inherits it."""
        x, z, dim, keepdim = self.saved
        hit = (x == z).astype(x.dtype)
        hit /= hit.sum(axis=dim, keepdims=True)
        return _expand_back(g, x.shape, dim, keepdim) * graph_constant(g, hit)


class Amin(Amax):
    r"""$z = \min_i x_i$ over `dim`.   As `Amax`: $dx = g\, [x = z] / \mathrm{count}(x = z)$ (ties share)."""

    @staticmethod
    def extreme(x, dim):
        return x.min(axis=dim, keepdims=True)


class Var(Function):
    r"""$v = \sum_i (x_i - m)^2 / (N - c)$, $m$ the mean over `dim`, $c$ the correction (1: unbiased).

    $$
    \frac{\partial v}{\partial x_j} = \frac{2 (x_j - m)}{N - c}
    \quad\Longrightarrow\quad dx = g\, \frac{2 (x - m)}{N - c}
    $$

    (the terms through $m$ sum to zero, since $\sum_i (x_i - m) = 0$).
    With no degrees of freedom ($N \le c$; the divisor clamped to 0, as PyTorch's): $v = \mathrm{sum} / 0$,
    $\infty$ (NaN where every $x_i = m$), and $dx = g \cdot 2 (x - m) / 0$, $\pm\infty$ (NaN where $x = m$).
    """

    def forward(self, x, dim, correction=1, keepdim=False):
        xp = self.xp
        w = backend.widen(x)
        d = w - backend.mean(xp, w, dim, keepdims=True)
        denom = max(_count(x.shape, dim) - correction, 0)
        self.save_for_backward(d, dim, keepdim, denom, x.dtype)
        with backend.quiet():  # N <= c: a division by 0, inf or nan (PyTorch warns, a UserWarning, not NumPy's)
            return backend.narrow(backend.sum(xp, d * d, dim, keepdim) / denom, x.dtype)

    def backward(self, g):
        d, dim, keepdim, denom, dtype = self.saved
        if not denom:
            with backend.quiet():  # 2 (x - m) / 0: +-inf, nan where x = m (PyTorch's along a dim)
                return backend.narrow(_expand_back(g, d.shape, dim, keepdim) * (2 * d / 0.0), dtype)
        return backend.narrow(_expand_back(g, d.shape, dim, keepdim) * (2 / denom) * d, dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g \cdot 2 (x - m) / (N - c)$ with $x - m$ recomputed as
        recorded ops of the input tensor: a second pass sees
        $\partial(dx)/\partial x = 2 g\, (I - \tfrac{1}{N}) / (N - c)$."""
        x = self.parents[0]
        _, dim, keepdim, denom, _ = self.saved
        d = x - x.mean(dim=dim, keepdim=True)
        if not denom:  # 2 (x - m) / 0: +-inf, nan where x = m, as the array backward
            return _expand_back(g, x.shape, dim, keepdim) * (d * 2 / 0.0)
        return _expand_back(g, x.shape, dim, keepdim) * (2 / denom) * d


class Std(Function):
    r"""$s = \sqrt{v}$, $v$ the variance as in `Var` (correction $c$).

    $$
    \frac{\partial s}{\partial x} = \frac{\partial v / \partial x}{2 s} = \frac{2 (x - m)}{(N - c)\, 2 s}
    \quad\Longrightarrow\quad dx = \frac{g\, (x - m)}{(N - c)\, s}.
    $$

    Where $s = 0$ (every $x_i = m$, so $x - m = 0$) the derivative is infinite; PyTorch takes $g / (2 s)$
    as 0 there, and so the gradient is 0.  With no degrees of freedom ($N \le c$)
    $s = \sqrt{\mathrm{sum} / 0}$, $\infty$ (NaN where every $x_i = m$), and the gradient is NaN.
    """

    def forward(self, x, dim, correction=1, keepdim=False):
        xp = self.xp
        w = backend.widen(x)
        m = backend.mean(xp, w, dim, keepdims=True)
        d = w - m
        denom = max(_count(x.shape, dim) - correction, 0)
        with backend.quiet():  # N <= c: sqrt(sum / 0), inf or nan (PyTorch warns, a UserWarning, not NumPy's)
            s = xp.sqrt(backend.sum(xp, d * d, dim, keepdims=True) / denom)
        self.save_for_backward(d, s, dim, keepdim, denom, x.dtype)
        s = backend.narrow(s, x.dtype)
        return s if keepdim else s.reshape([n for i, n in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        xp = self.xp
        d, s, dim, keepdim, denom, dtype = self.saved
        inv = xp.where(s == 0, 0, 1 / xp.where(s == 0, 1, s))  # 1 / s, 0 where s = 0 (PyTorch's)
        dx = _expand_back(g, d.shape, dim, keepdim) * d * inv / (denom if denom else xp.nan)
        return backend.narrow(dx, dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, (x - m) / ((N - c)\, s)$ with $x - m$ recomputed and $s$ the
        output tensor, both in the graph; $1 / s$ is 0 where $s = 0$, as the array backward's (and
        PyTorch's), taken from a safe divisor so that no $0 / 0$ reaches a later pass."""
        x = self.parents[0]
        _, _, dim, keepdim, denom, _ = self.saved
        d = x - x.mean(dim=dim, keepdim=True)
        s = _expand_back(z, x.shape, dim, keepdim)
        zero = s == 0
        inv = (1 / s.masked_fill(zero, 1)).masked_fill(zero, 0)
        return _expand_back(g, x.shape, dim, keepdim) * d * inv / (denom if denom else float("nan"))


class Prod(Function):
    r"""$z = \prod_i x_i$ along `dim` (an int), or over every element (`dim` None).

    $$
    \frac{\partial z}{\partial x_i} = \prod_{k \ne i} x_k = L_i R_i,
    \qquad L_i = \prod_{k < i} x_k, \quad R_i = \prod_{k > i} x_k
    $$

    (exclusive products from each side).  No division by $x_i$, so zeros get their true gradient:

    $$
    dx = g\, L\, R.
    $$
    """

    def forward(self, x, dim=None, keepdim=False):
        self.save_for_backward(x, dim, keepdim)
        acc = backend.accumulation_dtype(x.dtype)
        z = x.prod(dtype=acc) if dim is None else x.prod(axis=dim, dtype=acc, keepdims=keepdim)
        return backend.narrow(backend.ensure_array(self.xp, z), x.dtype)

    def backward(self, g):
        xp = self.xp
        x, dim, keepdim = self.saved
        shape, dtype = x.shape, x.dtype
        x = backend.widen(x)
        if dim is None:
            x, dim, g = x.reshape(-1), 0, g.reshape(1)
        elif not keepdim:
            g = xp.expand_dims(g, dim)
        left = exclusive_cumprod(xp, x, dim)
        right = xp.flip(exclusive_cumprod(xp, xp.flip(x, axis=dim), dim), axis=dim)
        return backend.narrow((g * left * right).reshape(shape), dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, L\, R$ as recorded ops of the input tensor, in the
        widened dtype and cast back once (as the array backward): $L$ = `exclusive_cumprod_graph(x)`
        (a `Cat` and a `Cumprod`), $R$ the same of $x$ flipped, flipped back (recorded `Flip`s).  No
        division: a second pass sees $\partial(dx_i)/\partial x_k = g \prod_{m \ne i, k} x_m$ through the
        `Cumprod`s' own formulas, zeros included, and $\partial(dx)/\partial g = L\, R$."""
        x, dim, keepdim = self.parents[0], self.saved[1], self.saved[2]
        shape, dtype = x.shape, g.dtype
        x, g = widened(x), widened(g)
        if dim is None:
            x, dim, g = x.reshape(-1), 0, g.reshape(1)
        elif not keepdim:
            g = g.unsqueeze(dim)
        left = exclusive_cumprod_graph(x, dim)
        right = Flip.apply(exclusive_cumprod_graph(Flip.apply(x, dims=(dim,)), dim), dims=(dim,))
        dx = (g * left * right).reshape(shape)
        return dx if dx.dtype == dtype else dx.to(dtype)


class Logsumexp(Function):
    r"""$z = \log \sum_i e^{x_i}$ over `dim`, computed as $m + \log \sum_i e^{x_i - m}$, $m = \max x$ (no
    overflow; $m$ is taken as 0 where it is infinite, so a row of $-\infty$ gives $-\infty$, and so does
    an empty row).

    $$
    \frac{\partial z}{\partial x_i} = \frac{e^{x_i}}{\sum_k e^{x_k}} = e^{x_i - z}
    \quad\Longrightarrow\quad dx = g\, e^{x - z} \quad \text{(a softmax)}.
    $$
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        w = backend.widen(x)
        if x.size:
            m = w.max(axis=dim, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
        else:  # an empty x has no max; its sums are 0, so z = log 0 = -inf (PyTorch's answer)
            m = xp.zeros([1 if i in dim else n for i, n in enumerate(x.shape)], dtype=w.dtype)
        with backend.quiet():  # log 0 = -inf: an empty sum, or a row of -inf
            z = xp.log(backend.sum(xp, xp.exp(w - m), dim, keepdims=True)) + m
        self.save_for_backward(x, z, dim, keepdim)
        z = backend.narrow(z, x.dtype)
        return z if keepdim else z.reshape([n for i, n in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        x, z, dim, keepdim = self.saved
        with backend.quiet():  # x = z = inf: inf - inf = nan, as in PyTorch
            dx = _expand_back(g, x.shape, dim, keepdim) * self.xp.exp(x - z)  # z in the accumulation dtype
        return backend.narrow(dx, x.dtype)

    def backward_graph(self, g, z):
        r"""Tensor-level (`create_graph`): $dx = g\, e^{x - z}$ with $z$ the output tensor, in the graph (a
        softmax: its second derivative is softmax's)."""
        x = self.parents[0]
        _, _, dim, keepdim = self.saved
        return _expand_back(g, x.shape, dim, keepdim) * (x - _expand_back(z, x.shape, dim, keepdim)).exp()


class Nansum(Function):
    r"""$z = \sum_i x_i$ over `dim`, a NaN taken as 0.

    $\partial z / \partial x_i = 1$ where $x_i$ is a number and 0 where it is NaN (a NaN adds nothing,
    whatever it is): $dx = g$ broadcast back, and 0 at each NaN.
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        number = ~xp.isnan(x)
        self.save_for_backward(number, dim, keepdim)
        return backend.sum(xp, xp.where(number, x, 0), dim, keepdim)

    def backward(self, g):
        number, dim, keepdim = self.saved
        return self.xp.where(number, _expand_back(g, number.shape, dim, keepdim), 0)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g$ broadcast back, 0 at each NaN: a recorded expand and a
        `MaskedFill` with the constant NaN mask (linear in $g$, free of $x$)."""
        number, dim, keepdim = self.saved
        return _expand_back(g, number.shape, dim, keepdim).expand(*number.shape).masked_fill(
            graph_constant(g, ~number), 0.0
        )


class Nanmean(Function):
    r"""$z = \frac{1}{n} \sum_i x_i$ over the $n$ entries along `dim` that are not NaN (NaN where $n = 0$).

    $\partial z / \partial x_i = 1/n$ where $x_i$ is a number, 0 where it is NaN: $dx = g / n$ broadcast
    back, 0 at a NaN.
    A slice of NaN alone ($n = 0$) gets NaN, as PyTorch's ($g / 0$ times the 0 of nansum's backward).
    """

    def forward(self, x, dim, keepdim=False):
        xp = self.xp
        number = ~xp.isnan(x)
        n = number.sum(axis=dim, keepdims=True)
        some = n > 0
        n = xp.where(some, n, 1).astype(backend.accumulation_dtype(x.dtype))
        total = backend.sum(xp, backend.widen(xp.where(number, x, 0)), dim, keepdims=True)
        z = xp.where(some, total / n, xp.nan).astype(x.dtype)
        self.save_for_backward(number, n, some, dim, keepdim)
        return z if keepdim else z.reshape([s for i, s in enumerate(x.shape) if i not in dim])

    def backward(self, g):
        xp = self.xp
        number, n, some, dim, keepdim = self.saved
        g = _expand_back(g, number.shape, dim, keepdim)
        return xp.where(number, g / n, xp.where(some, 0, xp.nan)).astype(g.dtype)

    def backward_graph(self, g, z):
        """Tensor-level (`create_graph`): $dx = g / n$ broadcast back (a recorded `Div` by the constant
        count, then `MaskedFill`s with constant masks: 0 at a NaN, NaN on a slice of NaN alone):
        linear in $g$, free of $x$ (the count is piecewise constant in $x$)."""
        number, n, some, dim, keepdim = self.saved
        dtype = g.dtype
        q = _expand_back(g, number.shape, dim, keepdim) / graph_constant(g, n)
        q = q.masked_fill(graph_constant(g, ~number & some), 0.0)
        q = q.masked_fill(graph_constant(g, ~number & ~some), float("nan"))
        return q if q.dtype == dtype else q.to(dtype)
