"""Selecting entries by position: top-k, sort, max/min along a dim, cummax/cummin; and the
elementwise maximum/minimum of two tensors.

The positions are integers, found first and outside the graph (argsort, argmax: no
gradient flows through an index).  The values are then read at those positions by one
differentiable op, `TakeAlongDim`, whose backward sends each upstream value back to the
position it was read from.  So `x.max(dim)` sends its whole gradient to the returned
index, as PyTorch does, even when other entries tie with it.
"""

from __future__ import annotations

from .. import backend
from ..autograd import Function


def _open_grid(xp, index, dim):
    """The index tuple that reads index[..., j, ...] along `dim` and every other axis in order:
    x[_open_grid(...)] == take_along_axis(x, index, dim)."""
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
    """z[..., j, ...] = x[..., index[..., j, ...], ...] along `dim` (torch.take_along_dim).

    z_j depends on x only through x[index_j], with derivative 1, so
        dx[p] = sum of g_j over every j with index_j = p
    a scatter-add of g into zeros (an index can repeat: cummax reads one position many times).
    """

    def forward(self, x, index, dim):
        self.save_for_backward(x.shape, index, dim)
        return self.xp.take_along_axis(x, index, axis=dim)

    def backward(self, g):
        shape, index, dim = self.saved
        dx = self.xp.zeros(shape, dtype=g.dtype)
        return backend.add_at(self.xp, dx, _open_grid(self.xp, index, dim), g)


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
    best = x[0]
    for j in range(1, x.shape[0]):
        take = x[j] >= best if largest else x[j] <= best
        best = xp.where(take, x[j], best)
        index[j] = xp.where(take, j, index[j - 1])
    return xp.moveaxis(index, 0, dim)


# ---------------------------------------------------------------- elementwise max / min
class Maximum(Function):
    """z = max(x, y) elementwise.

    dz/dx = 1 where x > y, 0 where x < y; at a tie PyTorch splits the gradient in halves.  As in
    PyTorch's formula, an input's gradient is zeroed only where the other is strictly larger, so
    where x or y is NaN (z is NaN, no order holds) both get g:
        dx = g * ([not x < y] - [x == y] / 2),   dy = g * ([not y < x] - [x == y] / 2).
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


class Minimum(Function):
    """z = min(x, y) elementwise.   dx = g * ([not x > y] - [x == y] / 2),  dy likewise (NaN: both g)."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return self.xp.minimum(x, y)

    def backward(self, g):
        x, y = self.saved
        tie = (x == y).astype(g.dtype) * 0.5
        dx = g * (~(x > y) - tie) if self.needs_grad(0) else None
        dy = g * (~(y > x) - tie) if self.needs_grad(1) else None
        return dx, dy
