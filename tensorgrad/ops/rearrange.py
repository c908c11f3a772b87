"""Ops that put elements in new places in a fixed pattern: repeat, flip, roll, diag_embed (copies),
diagonal, unfold (views of the input's memory, as PyTorch's).  Each output element is one input
element, so each backward sends $g$ back along the same pattern; where one input element shows in
many places (repeat, overlapping unfold windows), their gradients add up."""

from __future__ import annotations

from .. import backend
from ..autograd import Function
from .shape import Index, IndexBackward


class Repeat(Function):
    r"""$z$ = `tile(x, reps)`: $x$ (with leading 1s added up to `len(reps)` dims) repeated `reps[a]`
    times along each axis $a$, so $z[r_0 s_0 + i_0, \dots] = x[i_0, \dots]$ for every tile $r$.

    Every tile is a copy of $x$: $dx = \sum_{\text{tiles}} g$.  Viewing $g$ as
    $(r_0, s_0, r_1, s_1, \dots)$ (tile index, then position in the tile, per axis), that is a sum
    over the tile axes.
    """

    def forward(self, x, reps):
        shape = (1,) * (len(reps) - x.ndim) + x.shape
        self.save_for_backward(x.shape, shape, reps)
        return self.xp.tile(x.reshape(shape), reps)

    def backward(self, g):
        x_shape, shape, reps = self.saved
        split = []
        for r, s in zip(reps, shape):
            split += [r, s]
        dx = backend.sum(self.xp, g.reshape(split), tuple(range(0, 2 * len(reps), 2)))  # (s_0, s_1, ...)
        return dx.reshape(x_shape)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the same reshape, sum over the tile axes and reshape, as
        recorded ops: linear in $g$."""
        x_shape, shape, reps = self.saved
        split = []
        for r, s in zip(reps, shape):
            split += [r, s]
        return g.reshape(split).sum(tuple(range(0, 2 * len(reps), 2))).reshape(x_shape)


class Flip(Function):
    r"""$z$ = $x$ reversed along `dims`: $z_i = x_{n - 1 - i}$.  Reversing twice is the identity:
    $dx = \operatorname{flip}(g)$.

    ($z$ is a copy, as PyTorch's flip: an in-place write to $z$ leaves $x$ alone.)"""

    def forward(self, x, dims):
        self.save_for_backward(dims)
        return self.xp.flip(x, axis=dims).copy()

    def backward(self, g):
        (dims,) = self.saved
        return self.xp.flip(g, axis=dims)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = \operatorname{flip}(g)$, a recorded Flip: linear in $g$ (its
        formula is this one again)."""
        (dims,) = self.saved
        return Flip.apply(g, dims=dims)


class Roll(Function):
    r"""$z$ = $x$ shifted cyclically: $z_{(i + \mathrm{shift}) \bmod n} = x_i$ along each dim (the
    flattened $x$ when `dims` is None).  $dx_i = g_{(i + \mathrm{shift}) \bmod n}$, i.e.
    $dx = \operatorname{roll}(g, -\mathrm{shift})$."""

    def forward(self, x, shifts, dims):
        self.save_for_backward(shifts, dims)
        return self.xp.roll(x, shifts, axis=dims)

    def backward(self, g):
        shifts, dims = self.saved
        neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return self.xp.roll(g, neg, axis=dims)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dx = \operatorname{roll}(g, -\mathrm{shift})$, a recorded Roll:
        linear in $g$."""
        shifts, dims = self.saved
        neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return Roll.apply(g, shifts=neg, dims=dims)


class Diagonal(Function):
    r"""$z[\dots, k] = x[\dots, r_k, c_k]$ over dims `(dim1, dim2)`, moved last, with
    $r_k = k + \max(-\mathrm{offset}, 0)$ and $c_k = k + \max(\mathrm{offset}, 0)$ (PyTorch's order:
    the other dims, then the diagonal).

    $z$ is a view of $x$'s memory, as PyTorch's (`backend.diagonal`: a write into it reaches $x$).
    Each $z$ element is one distinct $x$ element: $dx$ = `zeros_like(x)`;
    $dx[\dots, r_k, c_k] = g[\dots, k]$.
    """

    output_views = 0  # x's memory: x's version counter (CuPy's strided view has no `.base`)

    def forward(self, x, offset, dim1, dim2):
        xp = self.xp
        z = backend.diagonal(xp, x, offset, dim1, dim2)  # (..., length)
        rows = xp.arange(z.shape[-1]) + max(-offset, 0)
        cols = xp.arange(z.shape[-1]) + max(offset, 0)
        self.save_for_backward((*z.shape[:-1], x.shape[dim1], x.shape[dim2]), x.dtype, rows, cols, dim1, dim2)
        return z

    def backward(self, g):
        moved_shape, dtype, rows, cols, dim1, dim2 = self.saved
        xp = self.xp
        dmoved = xp.zeros(moved_shape, dtype=dtype)
        dmoved[..., rows, cols] = g
        return xp.moveaxis(dmoved, (-2, -1), (dim1, dim2))

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $g$ written onto the diagonal of zeros (a recorded
        IndexBackward; distinct places), its dims moved back (a recorded permute): linear in $g$."""
        moved_shape, _, rows, cols, dim1, dim2 = self.saved
        dmoved = IndexBackward.apply(g, shape=moved_shape, index=(Ellipsis, rows, cols), advanced=False)
        return dmoved.movedim((-2, -1), (dim1, dim2))


class DiagEmbed(Function):
    r"""$z$ = zeros with $z[\dots, r_k, c_k] = x[\dots, k]$ on dims `(dim1, dim2)` of $z$ (the last
    dim of $x$ becomes that diagonal), $r_k = k + \max(-\mathrm{offset}, 0)$,
    $c_k = k + \max(\mathrm{offset}, 0)$: Diagonal's adjoint.

    Each $x$ element lands in one $z$ element and the rest of $z$ is constant:
    $dx[\dots, k] = g[\dots, r_k, c_k]$ (the diagonal of $g$).
    """

    def forward(self, x, offset, dim1, dim2):
        xp = self.xp
        n = x.shape[-1]
        m = n + abs(offset)
        rows = xp.arange(n) + max(-offset, 0)
        cols = xp.arange(n) + max(offset, 0)
        z = xp.zeros(x.shape[:-1] + (m, m), dtype=x.dtype)
        z[..., rows, cols] = x
        self.save_for_backward(rows, cols, dim1, dim2)
        return xp.moveaxis(z, (-2, -1), (dim1, dim2))

    def backward(self, g):
        rows, cols, dim1, dim2 = self.saved
        return self.xp.moveaxis(g, (dim1, dim2), (-2, -1))[..., rows, cols]

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the diagonal of $g$ (a recorded permute and Index): linear in $g$."""
        rows, cols, dim1, dim2 = self.saved
        return Index.apply(g.movedim((dim1, dim2), (-2, -1)), index=(Ellipsis, rows, cols), advanced=True)


class Unfold(Function):
    r"""`Tensor.unfold(dim, size, step)`: every window of `size` elements along `dim`, `step` apart,
    as a new last axis.  With windows $w = 0, \dots, n-1$
    ($n = \lfloor (L - \mathrm{size}) / \mathrm{step}\rfloor + 1$):

    $$
    z[\dots, w, \dots, j] = x[\dots, w \cdot \mathrm{step} + j, \dots], \qquad
    \mathrm{window\_index}[w, j] = w \cdot \mathrm{step} + j
    $$

    $z$ is a view of $x$'s memory, as PyTorch's (`backend.windows`: the same element read through
    other strides; no copy).  Windows overlap when `step < size`, so one $x$ element lands in
    several $z$ elements: $dx$ = `zeros_like(x)`; `dx[..., window_index, ...] += g` (moved back:
    a scatter-add).
    """

    output_views = 0  # the windows are x's memory: x's version counter (CuPy's view has no `.base`)

    def forward(self, x, dim, size, step):
        self.save_for_backward(x.shape, x.dtype, dim, size, step)
        return backend.windows(self.xp, x, dim, size, step)  # (..., n, ..., size)

    def _window_index(self):
        r"""`window_index` `(n, size)`: $w \cdot \mathrm{step} + j$, and the saved dim."""
        shape, _, dim, size, step = self.saved
        xp = self.xp
        n = (shape[dim] - size) // step + 1
        return xp.arange(n)[:, None] * step + xp.arange(size)[None, :], dim

    def backward(self, g):
        shape, dtype = self.saved[:2]
        window_index, dim = self._window_index()
        xp = self.xp
        dx = xp.zeros(shape, dtype=dtype)
        backend.add_at(xp, dx, (slice(None),) * dim + (window_index,), xp.moveaxis(g, -1, dim + 1))
        return dx

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): the window axis moved back (a recorded permute), then the
        scatter-add (a recorded IndexBackward): linear in $g$."""
        shape = self.saved[0]
        window_index, dim = self._window_index()
        index = (slice(None),) * dim + (window_index,)
        return IndexBackward.apply(g.movedim(-1, dim + 1), shape=shape, index=index, advanced=True)
