r"""In-place ops as nodes of the graph: `y += b`, `y *= s`, `y /= s`, `y.clamp_(lo, hi)`, and every
write of values (`y[index] = v`, `copy_`, `fill_`, `zero_`, `masked_fill_`, `normal_` / `uniform_` on
a graph tensor).

Each forward writes into its first argument, the target's storage, and returns it; the engine's
`rebase_history` then makes the node the target's history (tensor_methods/inplace.py drives it).
The node's first parent is the target's version *before* the write, $y_{\mathrm{old}}$; its backward
returns the gradient for $y_{\mathrm{old}}$ and for each other input, as any op's does.  What the
storage held before the write is gone, so an op whose backward needs $y_{\mathrm{old}}$'s values
keeps a copy, and only when
that gradient is wanted (PyTorch's rule for the original self of an in-place op).
"""

from __future__ import annotations

from ..autograd import Function
from ..graph_walk import graph_constant
from ..tensor_base import TensorBase
from .shape import Index


class AddInplace(Function):
    r"""$y_{\mathrm{new}} = y_{\mathrm{old}} + \mathrm{sign} \cdot b$ (`y += b`: sign 1; `y -= b`:
    sign -1), in $y$'s storage and dtype.

    $dy_{\mathrm{old}} = g$, $db = \mathrm{sign} \cdot g$ (summed back to $b$'s shape by the engine:
    the adjoint of broadcast).
    """

    def forward(self, y, b, sign):
        self.save_for_backward(sign)
        (self.xp.add if sign == 1 else self.xp.subtract)(y, b, out=y)
        return y

    def backward(self, g):
        (sign,) = self.saved
        return g, (g if sign == 1 else -g) if self.needs_grad(1) else None

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dy_{\mathrm{old}} = g$, $db = \pm g$ (a recorded Neg): linear in
        $g$, free of $y_{\mathrm{old}}$ and $b$, so no value the write overwrote is needed."""
        (sign,) = self.saved
        return g, (g if sign == 1 else -g) if self.needs_grad(1) else None


class MulInplace(Function):
    r"""$y_{\mathrm{new}} = y_{\mathrm{old}} \cdot s$.  $dy_{\mathrm{old}} = g \cdot s$,
    $ds = g \cdot y_{\mathrm{old}}$.

    $s$ is saved as it is (a tensor's array: the version counter catches a later write to it);
    $y_{\mathrm{old}}$ is overwritten by the op itself, so its values are copied first, when $ds$ is
    wanted.
    """

    double_backward_reason = (
        "the gradient of the multiplier is g * y_old, and y_old's values, overwritten by the write, are "
        "kept only as an array outside the graph (multiply out of place, y = y * s, to differentiate it twice)"
    )

    def forward(self, y, s):
        self.save_for_backward(s, y.copy() if self.needs_grad(1) else None)
        self.xp.multiply(y, s, out=y)
        return y

    def backward(self, g):
        s, y_old = self.saved
        return g * s, (g * y_old if self.needs_grad(1) else None)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph) where the multiplier needs no gradient: $dy_{\mathrm{old}} = g \cdot s$
        (the input tensor $s$, or the number), linear in $g$.  Where it does, $ds = g \cdot y_{\mathrm{old}}$
        needs $y_{\mathrm{old}}$ in the graph, whose values the write overwrote: the node then raises
        lazily, with the class's reason, if a second pass reaches it."""
        if self.needs_grad(1):
            return Function.backward_graph(self, g, z)
        s = self.parents[1]
        return g * (s if isinstance(s, TensorBase) else self.saved[0]), None


class DivInplace(Function):
    r"""$y_{\mathrm{new}} = y_{\mathrm{old}} / s$.  $dy_{\mathrm{old}} = g / s$,
    $ds = -g\, y_{\mathrm{old}} / s^2 = -(g / s)\, y_{\mathrm{new}}$.

    As Div: the result $z = y_{\mathrm{new}}$ is saved for $ds$, as a copy (the storage may be written
    again).
    """

    double_backward_reason = (
        "the gradient of the divisor is -(g / s) * y_new, and y_new's values are kept only as an array "
        "outside the graph (the storage may be written again: divide out of place to differentiate it twice)"
    )

    def forward(self, y, s):
        self.xp.true_divide(y, s, out=y)
        self.save_for_backward(s, y.copy() if self.needs_grad(1) else None)
        return y

    def backward(self, g):
        s, z = self.saved
        dy = g / s
        return dy, (-dy * z if self.needs_grad(1) else None)

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph) where the divisor needs no gradient: $dy_{\mathrm{old}} = g / s$
        (the input tensor $s$, or the number), linear in $g$.  Where it does, the node raises lazily
        (the reason)."""
        if self.needs_grad(1):
            return Function.backward_graph(self, g, z)
        s = self.parents[1]
        return g / (s if isinstance(s, TensorBase) else self.saved[0]), None


class ClampInplace(Function):
    r"""$y_{\mathrm{new}} = \min(\max(y_{\mathrm{old}}, \mathrm{lo}), \mathrm{hi})$ (`lo`, `hi`: tensors
    or numbers, None for no bound), as Clamp.

    Each input gets $g$ where it is the one $y_{\mathrm{new}}$ equals (Clamp's derivation):

    $$
    dy_{\mathrm{old}} = g\, [\mathrm{lo} \le y_{\mathrm{old}} \le \mathrm{hi}], \quad
    d\mathrm{lo} = g\, [y_{\mathrm{old}} < \mathrm{lo} \le \mathrm{hi}], \quad
    d\mathrm{hi} = g\, [\max(y_{\mathrm{old}}, \mathrm{lo}) > \mathrm{hi}]
    $$

    The masks are computed before the write, so $y_{\mathrm{old}}$ itself need not be kept.
    """

    def forward(self, y, lo, hi):
        xp = self.xp
        low = y if lo is None else xp.maximum(y, lo)
        keep = None
        if self.needs_grad(0):
            keep = True if lo is None else y >= lo
            if hi is not None:
                keep = keep & (y <= hi)
        below = ((y < lo) & (True if hi is None else lo <= hi)) if self.needs_grad(1) else None
        above = (low > hi) if self.needs_grad(2) else None
        self.save_for_backward(keep, below, above)
        xp.clip(y, lo, hi, out=y)
        return y

    def backward(self, g):
        keep, below, above = self.saved
        dy = None if keep is None else g * keep
        return dy, (None if below is None else g * below), (None if above is None else g * above)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): each gradient is $g$ times its constant 0/1 mask (computed
        before the write, as Clamp's): linear in $g$, no overwritten value needed."""
        keep, below, above = self.saved
        xp = self.xp
        mask = lambda m: graph_constant(g, xp.asarray(m, dtype=g._data.dtype))  # noqa: E731
        dy = None if keep is None else g * mask(keep)
        return dy, (None if below is None else g * mask(below)), (None if above is None else g * mask(above))


class SetItem(Function):
    r"""$y_{\mathrm{new}} = y_{\mathrm{old}}$ with `y_new[index] = v` ($v$ a tensor or a number,
    broadcast to `y[index]`'s shape).

    `copy_(src)` and `fill_(v)` are SetItem at index `...` (every element); `masked_fill_(mask, v)` at
    the boolean index `mask`.  The written places no longer depend on $y_{\mathrm{old}}$, and each of
    them is an element of $v$:
    $dy_{\mathrm{old}} = g$ with `g[index] = 0`, $dv$ = `g[index]` (summed back to $v$'s shape by the
    engine).
    With a repeated integer index the last write wins and, as in PyTorch, $dv$ gathers $g$ at every
    position of the index.
    """

    def forward(self, y, v, index):
        self.save_for_backward(index, getattr(v, "ndim", 0))
        y[index] = v
        return y

    def backward(self, g):
        index, v_ndim = self.saved
        dy = None
        if self.needs_grad(0):
            dy = g.copy()
            dy[index] = 0
        dv = None
        if self.needs_grad(1):
            dv = g[index]
            if dv.ndim < v_ndim:  # NumPy lets v carry extra leading 1s: y[0] = v of shape (1, n)
                dv = dv.reshape((1,) * (v_ndim - dv.ndim) + dv.shape)
        return dy, dv

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dy_{\mathrm{old}} = g$ with the written places 0 (a recorded
        MaskedFill, the mask a constant), $dv$ = `g[index]` (a recorded Index, whose adjoint
        scatter-adds back): linear in $g$, no overwritten value needed."""
        index, v_ndim = self.saved
        dy = dv = None
        if self.needs_grad(0):
            written = self.xp.zeros(g.shape, dtype=bool)
            written[index] = True
            dy = g.masked_fill(graph_constant(g, written), 0.0)
        if self.needs_grad(1):
            dv = Index.apply(g, index=index, advanced=True)
            if dv.ndim < v_ndim:
                dv = dv.reshape((1,) * (v_ndim - dv.ndim) + tuple(dv.shape))
        return dy, dv
