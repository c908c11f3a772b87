"""Matrix product with NumPy's broadcasting of batch dimensions."""

from __future__ import annotations

from ..autograd import Function


class MatMul(Function):
    """Z = X @ Y for X (..., n, k) and Y (..., k, m); batch dims broadcast.

    Z_ij = sum_k X_ik Y_kj, so dZ_ij/dX_ik = Y_kj and dZ_ij/dY_kj = X_ik:

        dX = G @ Y^T     (..., n, m) @ (..., m, k)
        dY = X^T @ G     (..., k, n) @ (..., n, m)

    (^T swaps the last two axes.)  When a batch dim was broadcast, dX or dY comes out
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
        """Tensor-level (create_graph): dX = G @ Y^T, dY = X^T @ G as recorded MatMuls of the input
        tensors (bilinear: a second pass sees d(dX)/dG = (. @ Y^T), d(dX)/dY = G^T-weighted
        products, through MatMul's own formula)."""
        x, y = self.parents
        dx = g @ y.transpose(-1, -2) if self.needs_grad(0) else None
        dy = x.transpose(-1, -2) @ g if self.needs_grad(1) else None
        return dx, dy
