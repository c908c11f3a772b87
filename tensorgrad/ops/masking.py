"""Selecting between values with a boolean mask."""

from __future__ import annotations

from ..autograd import Function
from ..graph_walk import graph_constant


class MaskedFill(Function):
    r"""$z = \mathrm{value}$ where `mask` else $x$ (`mask` broadcasts against $x$).

    The filled places no longer depend on $x$: $dx = g$ where not `mask`, else 0.
    """

    def forward(self, x, mask, value):
        self.save_for_backward(mask)
        return self.xp.where(mask, self.xp.asarray(value, dtype=x.dtype), x)

    def backward(self, g):
        (mask,) = self.saved
        return self.xp.where(mask, self.xp.zeros((), dtype=g.dtype), g), None

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx = g$ where not `mask`, else 0: a recorded MaskedFill of $g$
        with the same (constant) mask, linear in $g$ and free of $x$ (so this formula is its own
        derivative's: every order works)."""
        (mask,) = self.saved
        return g.masked_fill(type(g)._make(mask, g.device, False), 0.0), None


class Where(Function):
    """$z = x$ where `cond` else $y$ (all three broadcast).  $dx = g$ where `cond`, $dy = g$ where not
    `cond`."""

    def forward(self, cond, x, y):
        self.save_for_backward(cond)
        return self.xp.where(cond, x, y)

    def backward(self, g):
        (cond,) = self.saved
        zero = self.xp.zeros((), dtype=g.dtype)
        dx = self.xp.where(cond, g, zero) if self.needs_grad(1) else None
        dy = self.xp.where(cond, zero, g) if self.needs_grad(2) else None
        return None, dx, dy

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx = g$ where `cond`, $dy = g$ where not `cond`: recorded
        MaskedFills of $g$ with the constant condition (linear in $g$, free of $x$ and $y$)."""
        (cond,) = self.saved
        dx = g.masked_fill(graph_constant(g, ~cond), 0.0) if self.needs_grad(1) else None
        dy = g.masked_fill(graph_constant(g, cond), 0.0) if self.needs_grad(2) else None
        return None, dx, dy
