"""Matrix product with NumPy's broadcasting of batch dimensions."""

from __future__ import annotations

from ..autograd import Function


class MatMul(Function):
    r"""$Z = X Y$ (`X @ Y`) for $X$ `(..., n, k)` and $Y$ `(..., k, m)`; batch dims broadcast.

    $Z_{ij} = \sum_k X_{ik} Y_{kj}$, so $\partial Z_{ij}/\partial X_{ik} = Y_{kj}$ and
    $\partial Z_{ij}/\partial Y_{kj} = X_{ik}$:

    $$
    \begin{aligned}
    dX &= G\, Y^\top && (\dots, n, m) \cdot (\dots, m, k) \\
    dY &= X^\top G && (\dots, k, n) \cdot (\dots, n, m)
    \end{aligned}
    $$

    ($^\top$ swaps the last two axes.)  When a batch dim was broadcast, $dX$ or $dY$ comes out
    with the broadcast batch shape and the engine sums it back to the input's shape.
    1-d operands are handled by the Tensor method, which adds and removes a unit axis.
    """

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x @ y

    def backward(self, g):
        x, y = self.saved
        dx = g @ y.swapaxes(-1, -2) if self.needs_grad(0) else None
        dy = x.swapaxes(-1, -2) @ g if self.needs_grad(1) else None
        return dx, dy

    def backward_graph(self, g, z):
        r"""Tensor-level (create_graph): $dX = G\, Y^\top$, $dY = X^\top G$ as recorded MatMuls of the
        input tensors (bilinear: a second pass sees $\partial(dX)/\partial G = (\cdot\ Y^\top)$,
        $\partial(dX)/\partial Y$ = $G^\top$-weighted products, through MatMul's own formula)."""
        x, y = self.parents
        dx = g @ y.transpose(-1, -2) if self.needs_grad(0) else None
        dy = x.transpose(-1, -2) @ g if self.needs_grad(1) else None
        return dx, dy
