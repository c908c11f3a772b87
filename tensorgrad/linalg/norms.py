"""tg.linalg's norms: norm (a vector or a matrix norm, by dim and ord), vector_norm and
matrix_norm (tensor_methods/linalg.py, ops/linalg.py), and cond, the condition number."""

from __future__ import annotations

import math

from ..tensor import Tensor
from ..tensor_methods.linalg import matrix_norm, vector_norm
from .decompositions import svdvals
from .errors import _matrices
from .solvers import inv_ex


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


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number: s_max / s_min (p None or 2), s_min / s_max (-2), else
    norm(A, p) * norm(A^-1, p) (square A; inf where A is singular, as PyTorch)."""
    _matrices("linalg.cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    inverse, info = inv_ex(A)
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).masked_fill(info != 0, math.inf)
