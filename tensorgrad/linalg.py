"""tg.linalg, as torch.linalg: cross, vecdot and the norms (vector_norm, matrix_norm, norm).

The vector norms and the cross product have their own backward (ops/linalg.py); vecdot and the
matrix norms other than the Frobenius norm are compositions (a product and a sum; sums of |A|
and a max or min), so their gradients are those ops' backwards.  The norms that need singular
values (ord 2, -2, 'nuc') are refused: tensorgrad has no SVD."""

from __future__ import annotations

import math

from . import backend
from .backend import ShapeError
from .tensor import Tensor
from .tensor_methods.common import normalize_dim
from .tensor_methods.linalg import _torch_dtype, linalg_cross, vector_norm

__all__ = ["cross", "matrix_norm", "norm", "vecdot", "vector_norm"]


def cross(input: Tensor, other: Tensor, *, dim=-1) -> Tensor:
    """input x other along dim (size 3 in both); the other dims broadcast."""
    return linalg_cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim=-1) -> Tensor:
    """sum over dim of conj(x) * y (x and y broadcast; one dtype, as PyTorch)."""
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {_torch_dtype(x.dtype)} "
            f"and y of type {_torch_dtype(y.dtype)} instead"
        )
    product = x * y
    return product.sum(normalize_dim(dim, product.ndim, "linalg.vecdot"))


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002
    """The norm of the matrices on dims `dim`: 'fro' (the 2-norm of their elements), 1 / -1 (the
    largest / smallest column sum of |A|), inf / -inf (the largest / smallest row sum)."""
    if A.ndim < 2:
        raise ShapeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not backend.is_floating(A.dtype):
        raise RuntimeError(
            f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {_torch_dtype(A.dtype)}"
        )
    dim = tuple(dim)
    if len(dim) != 2:
        raise ShapeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (normalize_dim(d, A.ndim, "linalg.matrix_norm") for d in dim)
    if d0 == d1:
        raise ShapeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(
            f"linalg.matrix_norm: ord={ord!r} needs singular values, which tensorgrad does not compute"
        )
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)  # column sums (ord +-1) or row sums (+-inf)
    if A.shape[reduced] == 0:  # a max or min over nothing (an empty sum is 0: fine)
        raise RuntimeError(f"linalg.matrix_norm: the {ord} norm of an empty matrix is not defined")
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(reduced, keepdim=True) if ord > 0 else sums.amin(reduced, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


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
