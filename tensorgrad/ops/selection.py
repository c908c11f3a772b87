"""Selecting entries by position: top-k, sort, max/min along a dim, cummax/cummin, the order
statistics (median, mode, kthvalue, quantile); and the elementwise maximum/minimum of two tensors.

The positions are integers, found first and outside the graph (argsort, argmax: no
gradient flows through an index).  The values are then read at those positions by one
differentiable op, `TakeAlongDim`, whose backward sends each upstream value back to the
position it was read from.  So `x.max(dim)` sends its whole gradient to the returned
index, as PyTorch does, even when other entries tie with it.  median, mode and kthvalue along a
dim are such reads too; median over every element (`EvenlyShared`) and quantile (`Quantile`,
which interpolates between two sorted neighbours) have backwards of their own.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from ..graph_walk import graph_constant
from ..tensor_base import TensorBase
from .masking import Where
from .shape import Cat, IndexBackward


def _open_grid(xp, index, dim):
    """The index tuple that reads `index[..., j, ...]` along `dim` and every other axis in order:
    `x[_open_grid(...)] == take_along_axis(x, index, dim)`."""
    parts = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            parts.append(index)
        else:
            shape = [1] * index.ndim
            shape[axis] = n
            parts.append(xp.arange(n).reshape(shape))
    return tuple(parts)


class TakeAlongDim(Function):
    r"""`z[..., j, ...] = x[..., index[..., j, ...], ...]` along `dim` (`torch.take_along_dim`).

    $z_j$ depends on $x$ only through $x_{\mathrm{index}_j}$, with derivative 1, so

    $$
    dx_p = \sum_{j:\ \mathrm{index}_j = p} g_j
    $$

    a scatter-add of $g$ into zeros (an index can repeat: cummax reads one position many times).
    """

    def forward(self, x, index, dim):
        self.save_for_backward(x.shape, index, dim)
        return self.xp.take_along_axis(x, index, axis=dim)

    def backward(self, g):
        shape, index, dim = self.saved
        dx = self.xp.zeros(shape, dtype=g.dtype)
        return backend.add_at(self.xp, dx, _open_grid(self.xp, index, dim), g)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the scatter-add of $g$ at the read positions, a recorded
        IndexBackward (its adjoint reads them again): linear in $g$, free of $x$ (the positions are
        constants, found outside the graph)."""
        shape, index, dim = self.saved
        return IndexBackward.apply(g, shape=shape, index=_open_grid(self.xp, index, dim), advanced=True)


# ---------------------------------------------------------------- positions (no gradient)
def sort_indices(xp, x, dim, descending=False):
    """A stable argsort along `dim`: equal values keep their order, in both directions."""
    if descending:
        x = -(x.astype(xp.int64) if x.dtype.kind in "bu" else x)  # descending = ascending of -x
    return xp.argsort(x, axis=dim, kind="stable")


def cumulative_extreme_indices(xp, x, dim, largest):
    """Index of the running max (or min) along `dim`; a tie moves it to the later entry,
    as PyTorch's cummax/cummin do."""
    x = xp.moveaxis(x, dim, 0)
    index = xp.zeros(x.shape, dtype=xp.int64)
    if x.shape[0] == 0:  # an empty dim: no entries, no indices (PyTorch's empty values and indices)
        return xp.moveaxis(index, 0, dim)
    best = x[0]
    for j in range(1, x.shape[0]):
        take = x[j] >= best if largest else x[j] <= best
        best = xp.where(take, x[j], best)
        index[j] = xp.where(take, j, index[j - 1])
    return xp.moveaxis(index, 0, dim)


# ---------------------------------------------------------------- elementwise max / min
class Maximum(Function):
    r"""$z = \max(x, y)$ elementwise.

    $\partial z/\partial x = 1$ where $x > y$, 0 where $x < y$; at a tie PyTorch splits the gradient in
    halves.  As in PyTorch's formula, an input's gradient is zeroed only where the other is strictly
    larger, so where $x$ or $y$ is NaN ($z$ is NaN, no order holds) both get $g$
    ($[\cdot]$ is 1 where the condition holds, else 0):

    $$
    dx = g \cdot \big([\lnot\, x < y] - [x = y] / 2\big), \qquad
    dy = g \cdot \big([\lnot\, y < x] - [x = y] / 2\big)
    $$
    """

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return self.xp.maximum(x, y)

    def backward(self, g):
        x, y = self.saved
        tie = (x == y).astype(g.dtype) * 0.5
        dx = g * (~(x < y) - tie) if self.needs_grad(0) else None
        dy = g * (~(y < x) - tie) if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx, dy$ = $g$ times the constant weights above (piecewise
        constant in $x$ and $y$: $\partial(dx)/\partial x = 0$, as PyTorch's): linear in $g$.  Minimum
        inherits it."""
        x, y = self.saved
        xp, below = self.xp, self._below
        tie = (x == y).astype(g.dtype) * 0.5
        dx = g * graph_constant(g, xp.asarray(~below(x, y) - tie, dtype=g.dtype)) if self.needs_grad(0) else None
        dy = g * graph_constant(g, xp.asarray(~below(y, x) - tie, dtype=g.dtype)) if self.needs_grad(1) else None
        return dx, dy

    @staticmethod
    def _below(a, b):
        """Where $a$ loses to $b$ ($a < b$ for the maximum): its gradient is 0 there."""
        return a < b


class Minimum(Maximum):
    r"""$z = \min(x, y)$ elementwise.  $dx = g \cdot \big([\lnot\, x > y] - [x = y] / 2\big)$, $dy$
    likewise (NaN: both $g$)."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return self.xp.minimum(x, y)

    def backward(self, g):
        x, y = self.saved
        tie = (x == y).astype(g.dtype) * 0.5
        dx = g * (~(x > y) - tie) if self.needs_grad(0) else None
        dy = g * (~(y > x) - tie) if self.needs_grad(1) else None
        return dx, dy

    @staticmethod
    def _below(a, b):
        """Where $a$ loses to $b$ ($a > b$ for the minimum)."""
        return a > b


# ---------------------------------------------------------------- order statistics
def nan_last_order(xp, x, axis=-1):
    """A stable argsort along `axis` with every NaN after the numbers (NumPy's and CuPy's sort put
    NaN last), and the count of non-NaN entries along it (keepdims): order statistics read
    positions in it."""
    return xp.argsort(x, axis=axis, kind="stable"), (~xp.isnan(x)).sum(axis=axis, keepdims=True)


def median_positions(xp, x, dim, ignore_nan):
    """The index along `dim` (keepdims) of each slice's median: the lower of the two middle values,
    as PyTorch's.  median: a slice with a NaN gives its first NaN.  nanmedian: the median of the
    non-NaN values; a slice of NaN alone gives its first entry."""
    order, count = nan_last_order(xp, x, dim)
    n = x.shape[dim]
    if ignore_nan:
        k = xp.maximum(count - 1, 0) // 2
    else:
        k = xp.where(count < n, count, (n - 1) // 2)
    return xp.take_along_axis(order, k.astype(order.dtype), axis=dim)


def mode_positions(xp, x, dim):
    """The index along `dim` (keepdims) of each slice's mode, as PyTorch's: the smallest of the most
    frequent values, at the last position it holds.

    Sorted (stably), equal values form runs; a run's length is counted by an add-at over run ids,
    the first longest run is the smallest mode, and its last sorted position is the last of its
    original positions."""
    x = xp.moveaxis(x, dim, -1)
    lead, n = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, n)
    order = xp.argsort(flat, axis=-1, kind="stable")
    s = xp.take_along_axis(flat, order, axis=-1)
    starts = xp.concatenate([xp.ones((flat.shape[0], 1), dtype=bool), s[:, 1:] != s[:, :-1]], axis=-1)
    run = xp.cumsum(starts, axis=-1) - 1  # the run id of each sorted position
    rows = xp.arange(flat.shape[0])[:, None]
    lengths = backend.add_at(xp, xp.zeros(flat.shape, dtype=xp.int64), (rows, run), 1)
    freq = xp.take_along_axis(lengths, run, axis=-1)  # each position's run length
    first = freq.argmax(axis=-1)[:, None]  # the first position of the first longest run
    last = first + xp.take_along_axis(freq, first, axis=-1) - 1
    index = xp.take_along_axis(order, last, axis=-1).reshape(lead + (1,))
    return xp.moveaxis(index, -1, dim)


class EvenlyShared(Function):
    r"""$z = x_p$, one value chosen among all of $x$ (median and nanmedian over every element).

    As PyTorch's `median()` (not `median(dim)`), the gradient is spread evenly over every element
    equal to the chosen one, since any of them is the median: with the mask $M = [x = z]$
    ($M = [x \text{ is NaN}]$ when $z$ is NaN), $dx = g\, M / \sum M$.  (Where $x$ has one such
    element this is $\partial z/\partial x = 1$ there.)
    """

    def forward(self, x, position):
        z = x.reshape(-1)[position]
        self.save_for_backward(x, z)
        return z

    def backward(self, g):
        xp = self.xp
        x, z = self.saved
        hit = xp.where(xp.isnan(z), xp.isnan(x), x == z).astype(backend.accumulation_dtype(g.dtype))
        return backend.narrow(g * hit / hit.sum(), g.dtype)  # the count in float32 for float16

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = g\, M / \sum M$, the mask and its count constants ($M$ is
        piecewise constant in $x$): linear in $g$."""
        xp = self.xp
        x, z_array = self.saved
        hit = xp.where(xp.isnan(z_array), xp.isnan(x), x == z_array).astype(backend.accumulation_dtype(g._data.dtype))
        dx = g * graph_constant(g, hit) / graph_constant(g, xp.asarray(hit.sum()))
        return dx if dx.dtype == g.dtype else dx.to(g.dtype)


class Quantile(Function):
    r"""`z[..., j]` = the $q_j$-quantile of `x[..., :]` (the last axis), as `torch.quantile` computes it.

    With $s$ the sorted row (NaN last) and $n$ the count it ranks over (its length; for nanquantile the
    count of non-NaN values), the rank $r_j = q_j (n - 1)$, moved to an integer by the interpolation
    ('lower': floor, 'higher': ceil, 'nearest': round half to even; kept for 'linear', 'midpoint').
    With $a = \lfloor r\rfloor$, $b = \lceil r\rceil$ and the weight $w$ ($r - a$ for 'linear', $1/2$
    for 'midpoint', 0 else):

    $$
    z = \operatorname{lerp}(s_a, s_b, w) = (1 - w)\, s_a + w\, s_b
    $$

    A row with a NaN gives NaN for quantile ($r = n - 1$: a NaN), and for nanquantile when all are NaN.

    Backward.  $z$ is linear in the two neighbours it reads, so the gradient is split between them:

    $$
    \frac{\partial z}{\partial s_a} = 1 - w, \qquad \frac{\partial z}{\partial s_b} = w
    $$

    sent back through the sort to their original positions (scatter-add: $a = b$ is one position that
    gets both, 1 in all).  With 'linear', $w$ depends on $q$ too:
    $\partial w/\partial q = \partial r/\partial q = n - 1$ (floor's derivative is 0), so

    $$
    \frac{\partial z}{\partial q_j} = (s_b - s_a)(n - 1)
    $$

    summed over the rows; zero where the rank was replaced (a NaN row, an all-NaN row).
    """

    def forward(self, x, q, interpolation="linear", ignore_nan=False):
        xp = self.xp
        q = xp.asarray(q, dtype=x.dtype).reshape(-1)
        order, count = nan_last_order(xp, x)
        s = xp.take_along_axis(x, order, axis=-1)
        n = x.shape[-1]
        if ignore_nan:
            scale = (count - 1).astype(x.dtype)  # (..., 1)
            rank = q * scale
            live = rank >= 0  # an all-NaN row: rank -q * 1 < 0, taken as 0 (its first value, a NaN)
        else:
            scale = xp.asarray(n - 1, dtype=x.dtype)
            live = xp.broadcast_to(count == n, x.shape[:-1] + q.shape)  # a row with a NaN: the last (NaN)
            rank = q * scale
        rank = xp.where(live, xp.broadcast_to(rank, live.shape), 0 if ignore_nan else n - 1)
        if interpolation == "lower":
            rank = xp.floor(rank)
        elif interpolation == "higher":
            rank = xp.ceil(rank)
        elif interpolation == "nearest":
            rank = xp.round(rank)
        below, above = xp.floor(rank).astype(xp.int64), xp.ceil(rank).astype(xp.int64)
        if interpolation == "linear":
            w = rank - xp.floor(rank)
        elif interpolation == "midpoint":
            w = xp.full(rank.shape, 0.5, dtype=x.dtype)
        else:
            w = xp.zeros(rank.shape, dtype=x.dtype)
        lo, hi = xp.take_along_axis(s, below, axis=-1), xp.take_along_axis(s, above, axis=-1)
        # torch.lerp's two forms (exact at w = 0 and at w = 1)
        z = xp.where(w < 0.5, lo + w * (hi - lo), hi - (hi - lo) * (1 - w))
        positions = xp.take_along_axis(order, below, axis=-1), xp.take_along_axis(order, above, axis=-1)
        dq_scale = (live, scale) if interpolation == "linear" else None
        self.save_for_backward(x.shape, positions, w, hi - lo, dq_scale)
        return z

    def backward(self, g):
        xp = self.xp
        shape, (p_lo, p_hi), w, spread, dq_scale = self.saved
        dx = None
        if self.needs_grad(0):
            dx = xp.zeros(shape, dtype=g.dtype)
            backend.add_at(xp, dx, _open_grid(xp, p_lo, len(shape) - 1), g * (1 - w))
            backend.add_at(xp, dx, _open_grid(xp, p_hi, len(shape) - 1), g * w)
        dq = None
        if dq_scale is not None and self.needs_grad(1):
            live, scale = dq_scale  # a replaced rank has no derivative (0, not NaN from a NaN row)
            dq = backend.sum(xp, xp.where(live, g * spread * scale, 0).reshape(-1, g.shape[-1]), 0)
        return dx, dq

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx$ = the two scatter-adds above as one recorded
        IndexBackward (the weights $g (1 - w)$ and $g\, w$ joined along the last axis, so each place
        adds its lower then its upper share, as the array backward does); $dq$ = the row sum of
        $g (s_b - s_a)(n - 1)$ where the rank is live, with $s_a, s_b$ recorded TakeAlongDims of $x$.
        With 'linear' and $q$ a tensor, $w = q (n - 1) - \lfloor q (n - 1)\rfloor$ is recorded too
        (floor's derivative 0), so a second pass sees $\partial(dx)/\partial q$ and
        $\partial(dq)/\partial x$; the positions are constants."""
        xp = self.xp
        shape, (p_lo, p_hi), w, _, dq_scale = self.saved
        x, q = self.parents[:2]
        last = len(shape) - 1
        w_t = graph_constant(g, w)
        if dq_scale is not None and isinstance(q, TensorBase) and q._requires_grad:
            live, scale = dq_scale
            rank = q.reshape(-1) * graph_constant(g, xp.asarray(scale))
            floor = graph_constant(g, xp.floor(xp.broadcast_to(rank._data, live.shape)))
            w_t = Where.apply(graph_constant(g, live), rank.expand(*live.shape) - floor, w_t)
        dx = dq = None
        if self.needs_grad(0):
            shares = Cat.apply(g * (1 - w_t), g * w_t, axis=-1)
            index = _open_grid(xp, xp.concatenate([p_lo, p_hi], axis=-1), last)
            dx = IndexBackward.apply(shares, shape=shape, index=index, advanced=True)
        if dq_scale is not None and self.needs_grad(1):
            live, scale = dq_scale
            spread = TakeAlongDim.apply(x, index=p_hi, dim=last) - TakeAlongDim.apply(x, index=p_lo, dim=last)
            per = (g * spread * graph_constant(g, xp.asarray(scale))).masked_fill(graph_constant(g, ~live), 0.0)
            dq = per.reshape(-1, g.shape[-1]).sum(0)
        return dx, dq
