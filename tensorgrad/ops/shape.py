"""Ops that move elements around without changing them: their backward moves the
gradient back the same way (a reshape is undone by a reshape, a transpose by the
inverse permutation, a slice by writing into zeros, a concat by slicing)."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class Reshape(Function):
    """$z$ = `x.reshape(shape)`.  $dx$ = `g.reshape(x.shape)` (same elements, same order)."""

    def forward(self, x, shape):
        self.save_for_backward(x.shape)
        return x.reshape(shape)

    def backward(self, g):
        (shape,) = self.saved
        return g.reshape(shape)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = `g.reshape(x.shape)`, a recorded Reshape (linear)."""
        return g.reshape(*self.saved[0])


class Permute(Function):
    r"""$z$ = `x.transpose(axes)`, i.e. $z[i_0, \dots, i_n] = x[i_{\mathrm{inv}(0)}, \dots]$.
    $dx$ = `g.transpose(argsort(axes))`."""

    def forward(self, x, axes):
        self.save_for_backward(axes)
        return x.transpose(axes)

    def backward(self, g):
        (axes,) = self.saved
        inverse = [0] * len(axes)
        for i, a in enumerate(axes):
            inverse[a] = i
        return g.transpose(inverse)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = $g$ permuted by the inverse permutation, a recorded
        Permute (linear)."""
        (axes,) = self.saved
        inverse = [0] * len(axes)
        for i, a in enumerate(axes):
            inverse[a] = i
        return g.permute(*inverse)


class Expand(Function):
    """$z$ = `broadcast_to(x, shape)`.  $dx$ = sum of $g$ over the broadcast axes (done by the engine)."""

    def forward(self, x, shape):
        return self.xp.broadcast_to(x, shape)

    def backward(self, g):
        return g

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx = g$, summed back to $x$'s shape by the engine with recorded
        ops (`graph_walk.unbroadcast_graph`): linear in $g$."""
        return g


class Index(Function):
    """$z$ = `x[index]` for basic (ints, slices, None, ...) or advanced (integer / boolean arrays)
    indexing.

    Each element of $z$ is one element of $x$, so $dx$ is zeros with $g$ added at the same places:
    $dx$ = `zeros_like(x)`; `dx[index] += g`.
    With basic indexing no element is picked twice and `dx[index] = g` suffices; an integer
    array may pick an element several times, so the gradient is scatter-added.
    """

    def forward(self, x, index, advanced):
        self.save_for_backward(x.shape, x.dtype, index, advanced)
        # a basic index is a view of x down to one element: a 0-d view where NumPy's x[index] is a copy
        return backend.getitem(x, index)

    def backward(self, g):
        shape, dtype, index, advanced = self.saved
        dx = self.xp.zeros(shape, dtype=dtype)
        if advanced:
            backend.add_at(self.xp, dx, index, g)
        else:
            dx[index] = g
        return dx

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = `zeros(x.shape)` with $g$ added at `index`, as one
        recorded op, IndexBackward (below), linear in $g$; its own backward is this Index again: the pair are
        each other's adjoints, so every order works."""
        shape, _, index, advanced = self.saved
        return IndexBackward.apply(g, shape=shape, index=index, advanced=advanced)


class IndexBackward(Function):
    """$z$ = `zeros(shape)` with $g$ added at `index`: Index's backward as an op, which Index's
    Tensor-level formula records under create_graph (first-order backward passes never make it).

    It is linear in $g$ and is the adjoint of $z$ = `g[index]`: $dg$ = `v[index]` (for a gradient $v$
    of $z$).
    """

    def forward(self, g, shape, index, advanced):
        self.save_for_backward(index, advanced)
        dx = self.xp.zeros(shape, dtype=g.dtype)
        if advanced:
            backend.add_at(self.xp, dx, index, g)
        else:
            dx[index] = g
        return dx

    def backward(self, v):
        index, _ = self.saved
        return backend.getitem(v, index)

    def backward_graph(self, v, z):
        """Tensor-level (create_graph): $dg$ = `v[index]`, a recorded Index (whose formula is this op
        again: every order works)."""
        index, advanced = self.saved
        return Index.apply(v, index=index, advanced=advanced)


class Cat(Function):
    """$z$ = `concatenate(xs, axis)`.  $dx_k$ = the slice of $g$ that $x_k$ filled."""

    def forward(self, *xs, axis):
        self.save_for_backward([x.shape[axis] for x in xs], axis)
        return self.xp.concatenate(xs, axis=axis)

    def backward(self, g):
        sizes, axis = self.saved
        grads, start = [], 0
        index = [slice(None)] * g.ndim
        for n in sizes:
            index[axis] = slice(start, start + n)
            grads.append(g[tuple(index)])
            start += n
        return tuple(grads)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx_k$ = the slice of $g$ that $x_k$ filled, each a recorded
        Index of $g$ (linear in $g$, free of the `xs`)."""
        sizes, axis = self.saved
        grads, start = [], 0
        index = [slice(None)] * g.ndim
        for n in sizes:
            index[axis] = slice(start, start + n)
            grads.append(g[tuple(index)])  # a recorded Index (basic): its formula scatters back
            start += n
        return tuple(grads)


class Stack(Function):
    """$z$ = `stack(xs, axis)`: `xs` get a new axis and are concatenated on it.
    $dx_k$ = `g.take(k, axis)`."""

    def forward(self, *xs, axis):
        self.save_for_backward(axis)
        return self.xp.stack(xs, axis=axis)

    def backward(self, g):
        (axis,) = self.saved
        return tuple(g.take(k, axis=axis) for k in range(g.shape[axis]))

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx_k$ = $g$ taken at $k$ along `axis`, each a recorded Index of
        $g$ (linear in $g$, free of the `xs`)."""
        (axis,) = self.saved
        lead = (slice(None),) * axis
        return tuple(g[lead + (k,)] for k in range(g.shape[axis]))
