"""tg.linalg's matrix functions, compositions of matmuls and solves whose gradients are
theirs: matrix_power (repeated squaring) and matrix_exp (scaling and squaring, Pade)."""

from __future__ import annotations

import math

from .. import backend
from ..backend import ShapeError
from ..functions import where
from ..tensor import Tensor
from .errors import _matrices
from .solvers import inv, solve


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A^n by repeated squaring (matmuls); n = 0 the identity, n < 0 a power of A^-1."""
    if A.ndim < 2:
        raise ShapeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise ShapeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: argument 'n' must be int, not {type(n).__name__}")
    xp = backend.namespace(A.device)
    if n == 0:  # the identity, in the graph (a zero gradient), as PyTorch's
        eye = A._constant(xp.eye(A.shape[-1], dtype=A.dtype))
        return where(A._constant(xp.ones(A.shape, dtype=bool)), eye, A)
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


# Pade coefficients b_0..b_m of exp's [m/m] approximant, and the 1-norm up to which each degree is
# accurate to float64's unit roundoff (Higham, "The scaling and squaring method for the matrix
# exponential revisited", 2005, table 2.3).
_PADE = {
    3: (120, 60, 12, 1),
    5: (30240, 15120, 3360, 420, 30, 1),
    7: (17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1),
    9: (17643225600, 8821612800, 2075673600, 302702400, 30270240, 2162160, 110880, 3960, 90, 1),
    13: (64764752532480000, 32382376266240000, 7771770303897600, 1187353796428800, 129060195264000,
         10559470521600, 670442572800, 33522128640, 1323241920, 40840800, 960960, 16380, 182, 1),
}  # fmt: skip
_THETA = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
          (9, 2.097847961257068e0), (13, 5.371920351148152e0))  # fmt: skip


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) = sum_k A^k / k!, by scaling and squaring (Higham 2005): A / 2^s has a small 1-norm,
    the [m/m] Pade approximant r(X) = (V - U)^-1 (V + U) (U the odd powers of X, V the even ones)
    is exact to rounding there, and exp(A) = r(A / 2^s)^(2^s).  A composition of matmuls and one
    solve, so its gradient is theirs (the derivative of the approximant, equal to exp's to
    rounding).  One degree and s for the whole batch, from its largest norm (read on the host)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"matrix_exp(): argument 'input' must be Tensor, not {type(A).__name__}")
    _matrices("linalg.matrix_exp", A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A * 1
    if A.dtype != backend.float64:  # float32 through float64: PyTorch's float32 result is within
        return matrix_exp(A.to(backend.float64)).to(A.dtype)  # ~5e-7 of exp(A); this one ~1e-8
    xp = backend.namespace(A.device)
    eye = A._constant(xp.eye(n, dtype=A.dtype))
    norm = A.detach().abs().sum(-2).max().item()  # the largest 1-norm of the stack
    thetas = _THETA
    degree, scale = thetas[-1][0], 0
    for m, theta in thetas:
        if norm <= theta:
            degree = m
            break
    else:
        if math.isfinite(norm):
            scale = max(0, math.ceil(math.log2(norm / thetas[-1][1])))
    x = A / 2**scale if scale else A
    b = _PADE[degree]
    x2 = x @ x
    if degree == 13:
        x4 = x2 @ x2
        x6 = x4 @ x2
        u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
        v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    else:
        powers = [eye, x2]  # X^0, X^2, X^4, ...
        while len(powers) <= degree // 2:
            powers.append(powers[-1] @ x2)
        u = x @ sum(b[2 * i + 1] * powers[i] for i in range(degree // 2 + 1))
        v = sum(b[2 * i] * powers[i] for i in range(degree // 2 + 1))
    r = solve(v - u, v + u)
    for _ in range(scale):
        r = r @ r
    return r
