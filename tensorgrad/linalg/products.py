"""tg.linalg's products: cross, vecdot and multi_dot, with vander (powers: cumulative products)
and diagonal (a view); their gradients are those of the ops they are made of."""

from __future__ import annotations

from ..backend import ShapeError
from ..functions import cat
from ..tensor import Tensor
from ..tensor_methods.common import normalize_dim, torch_dtype_name
from ..tensor_methods.linalg import linalg_cross


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


def multi_dot(tensors) -> Tensor:
    """tensors[0] @ tensors[1] @ ...: the first may be a vector (a row), the last a vector (a
    column), the others matrices."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            which = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            raise ShapeError(
                f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D"
                if which
                else f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D"
            )
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{torch_dtype_name(tensors[0].dtype)} and tensor {i} {torch_dtype_name(t.dtype)}"
            )
    for i in range(len(tensors) - 1):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise ShapeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be "
                f"multiplied"
            )
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def vander(x: Tensor, N=None) -> Tensor:
    """The Vandermonde matrix (..., n, N): x^0, x^1, ..., x^(N-1) (products, so x = 0 is fine); a
    0-d x is taken as one element."""
    if x.ndim == 0:
        x = x.reshape(1)
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = x.unsqueeze(-1)[..., :1] * 0 + 1
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return cat([ones.to(powers.dtype), powers], dim=-1)


def diagonal(A: Tensor, *, offset=0, dim1=-2, dim2=-1) -> Tensor:
    """The diagonals of the matrices of A (dims dim1, dim2), as Tensor.diagonal."""
    return A.diagonal(offset, dim1, dim2)
