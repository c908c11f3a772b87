"""tg.linalg, as torch.linalg: cross, vecdot and the norms (vector_norm, matrix_norm, norm).

The vector norms, the norms of the singular values (ord 2, -2, 'nuc') and the cross product have
their own backward (ops/linalg.py); vecdot and the other matrix norms are compositions (a product
and a sum; sums of |A| and a max or min), so their gradients are those ops' backwards."""

from __future__ import annotations

from .tensor import Tensor
from .tensor_methods.common import normalize_dim, torch_dtype_name
from .tensor_methods.linalg import linalg_cross, matrix_norm, vector_norm

__all__ = ["cross", "matrix_norm", "norm", "vecdot", "vector_norm"]


def cross(input: Tensor, other: Tensor, *, dim=-1) -> Tensor:
    """input x other along dim (size 3 in both); the other dims broadcast."""
    return linalg_cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim=-1) -> Tensor:
    """sum over dim of conj(x) * y (x and y broadcast; one dtype, as PyTorch)."""
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {torch_dtype_name(x.dtype)} "
            f"and y of type {torch_dtype_name(y.dtype)} instead"
        )
    product = x * y
    return product.sum(normalize_dim(dim, product.ndim, "linalg.vecdot"))


def norm(A: Tensor, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """A vector norm (dim an int, or None on a 1-D tensor or with ord None) or a matrix norm (dim a
    pair, or None on a 2-D tensor with ord given), as torch.linalg.norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D."
            )
        dim = tuple(range(A.ndim))
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
