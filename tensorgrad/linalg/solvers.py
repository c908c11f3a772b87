"""tg.linalg's solvers and inverses: inv, solve and solve_triangular (their own backwards,
ops/decompositions.py), the _ex forms inv_ex and solve_ex, pinv (and pinverse), matrix_rank
(pinv's tolerances), lstsq, tensorinv and tensorsolve; cholesky_solve, cholesky_inverse and
triangular_solve, the top-level spellings (tg.X)."""

from __future__ import annotations

import collections
import math

from .. import backend
from ..backend import LinAlgError, ShapeError
from ..ops.decompositions import CholeskySolve, Inv, Pinv, Solve, SolveTriangular
from ..tensor import Tensor
from ..tensor_methods.common import broadcast_shapes
from .decompositions import svdvals
from .errors import _deferred_ex, _info_tensor, _infos, _matrices, _same_dtype, _singular_error, _where_failed

InvExResult = collections.namedtuple("inv_ex", ["inverse", "info"])
SolveExResult = collections.namedtuple("solve_ex", ["result", "info"])
LstsqResult = collections.namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
TriangularSolveResult = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def inv(A: Tensor, *, _check=True) -> Tensor:
    """A^-1; a singular matrix raises LinAlgError (on CuPy at the next read)."""
    _matrices("linalg.inv", A)
    error = "linalg.inv: The inversion could not be completed because the input matrix is singular."
    error = error if _check else None
    try:
        return Inv.apply(A, error=error)
    except LinAlgError:
        raise LinAlgError(_singular_error("linalg.inv", A, _infos(A, "inv"))) from None


def inv_ex(A: Tensor, *, check_errors=False):
    """(A^-1, info): info 0 where A inverted, else getrf's (the first zero pivot, 1-based; that
    matrix's inverse nan), without raising unless check_errors."""
    _matrices("linalg.inv_ex", A)
    if A.device.startswith("cuda"):
        return InvExResult(*_deferred_ex(A, inv(A, _check=False), check_errors))
    info = A._constant(backend.namespace(A.device).zeros(A.shape[:-2], dtype=backend.int32))
    try:
        return InvExResult(inv(A), info)
    except LinAlgError:
        if check_errors:
            raise
        info = _info_tensor(A, _infos(A, "inv"))
        return InvExResult(_where_failed(inv, A, info), info)


def _solve_shapes(op: str, A: Tensor, B: Tensor, left: bool):
    """PyTorch's solve shapes: B (..., n, k), or a vector (..., n) where B has one dim fewer than A
    and A's batch shape (B.shape == A.shape[:-1]) or is 1-D.  Returns (A, B, vector) with A and B
    broadcast to one batch shape and B a stack of matrices."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        B = B.unsqueeze(-1)
    elif not left:
        B = B.mT
    n = A.shape[-1]
    if B.shape[-2] != n:
        shown = B.mT if not left and not vector else B
        raise ShapeError(
            f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
            f"({A.shape[-2]}x{A.shape[-1]} and {shown.shape[-2]}x{shown.shape[-1]})"
        )
    batch = broadcast_shapes(op, A.shape[:-2], B.shape[:-2])
    if A.shape[:-2] != batch:
        A = A.expand(*batch, *A.shape[-2:])
    if B.shape[:-2] != batch:
        B = B.expand(*batch, *B.shape[-2:])
    return A, B, vector


def solve(A: Tensor, B: Tensor, *, left=True, _check=True) -> Tensor:
    """X with A X = B (left) or X A = B; B a stack of matrices or vectors; batch dims broadcast."""
    _matrices("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve: argument 'B' must be Tensor, not {type(B).__name__}")
    _same_dtype("linalg.solve", A, B)
    if A.ndim < 2:
        raise ShapeError("linalg.solve: The input tensor A must have at least 2 dimensions.")
    a, b, vector = _solve_shapes("linalg.solve", A if left else A.mT, B, left)
    error = "torch.linalg.solve: The solver failed because the input matrix is singular."
    x = Solve.apply(a, b, error=error if _check else None)
    if vector:
        return x.squeeze(-1)
    return x if left else x.mT


def solve_ex(A: Tensor, B: Tensor, *, left=True, check_errors=False):
    """(X, info) as solve, info 0 where solved, else getrf's (that system's X nan), raising only if
    check_errors."""
    _matrices("linalg.solve_ex", A)
    if A.device.startswith("cuda"):
        _, info = _deferred_ex(A, inv(A, _check=False), check_errors)  # info from A alone
        return SolveExResult(solve(A, B, left=left, _check=False), info)
    info = A._constant(backend.namespace(A.device).zeros(A.shape[:-2], dtype=backend.int32))
    try:
        return SolveExResult(solve(A, B, left=left), info)
    except LinAlgError:
        if check_errors:
            raise
        info = _info_tensor(A, _infos(A, "inv"))
        return SolveExResult(_where_failed(lambda a: solve(a, B, left=left), A, info), info)


def solve_triangular(A: Tensor, B: Tensor, *, upper, left=True, unitriangular=False) -> Tensor:
    """X with A X = B (left) or X A = B, A triangular (upper or lower; only that triangle read, its
    diagonal taken as ones where unitriangular).  A zero on the diagonal gives inf / nan, no error."""
    op = "linalg.solve_triangular"
    _matrices(op, A)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise ShapeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    _same_dtype(op, A, B, ("A", "B"))
    if not left:  # X A = B  <=>  A^T X^T = B^T, with A^T triangular the other way
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B.shape[-2] != A.shape[-1]:
        raise ShapeError(
            f"{op}: Incompatible shapes of A and B for the equation AX = B "
            f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    broadcast_shapes(op, A.shape[:-2], B.shape[:-2])
    return SolveTriangular.apply(A, B, upper=bool(upper), unitriangular=bool(unitriangular))


def _tolerances(A: Tensor, atol, rtol):
    """PyTorch's pinv / matrix_rank tolerances: rtol = eps * max(m, n) where neither is given, 0
    where only atol is; tensors broadcast over the batch."""
    eps = float(backend.namespace(A.device).finfo(A.dtype).eps)
    if rtol is None:
        rtol = eps * max(A.shape[-2:]) if atol is None or (not isinstance(atol, Tensor) and atol <= 0) else 0.0
    atol = 0.0 if atol is None else atol

    def arr(v):
        return v._data[..., None] if isinstance(v, Tensor) else v

    return arr(atol), arr(rtol)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian=False) -> Tensor:
    """A^+, the singular values at or below max(atol, rtol * s_max) dropped; with hermitian, A is
    taken as symmetric from its lower triangle."""
    _matrices("linalg.pinv", A, square=hermitian)
    atol_, rtol_ = _tolerances(A, atol, rtol)
    return Pinv.apply(A, atol=atol_, rtol=rtol_, hermitian=bool(hermitian))


def pinverse(input: Tensor, rcond=1e-15) -> Tensor:  # noqa: A002
    """torch.pinverse: pinv with rtol = rcond."""
    return pinv(input, rtol=rcond)


def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian=False, tol=None) -> Tensor:
    """The number of singular values above max(atol, rtol * s_max) (int64, no gradient)."""
    _matrices("linalg.matrix_rank", A, square=hermitian)
    if tol is not None:
        atol, rtol = tol, 0.0
    xp = backend.namespace(A.device)
    data = A.tril()._data + xp.tril(A._data, -1).swapaxes(-1, -2) if hermitian else A._data
    s = backend.svd(xp, data)[1]
    atol_, rtol_ = _tolerances(A, atol, rtol)
    if s.shape[-1] == 0:
        return A._constant(xp.zeros(s.shape[:-1], dtype=backend.int64))
    cutoff = xp.maximum(atol_, rtol_ * s.max(axis=-1, keepdims=True))
    return A._constant((s > cutoff).sum(axis=-1).astype(backend.int64))


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """The least-squares solution X = A^+ B (the minimum-norm one where A is wide), with PyTorch's
    other outputs per driver: residuals sum_i (A X - B)_i^2 (m > n and every A of full rank,
    except for gelsy), rank (gelsy, gelsd, gelss) and the singular values (gelsd, gelss), the last
    two without a gradient; empty where the driver gives none.  X's gradient is pinv's."""
    op = "torch.linalg.lstsq"
    _matrices("linalg.lstsq", A, square=False)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.lstsq: argument 'B' must be Tensor, not {type(B).__name__}")
    _same_dtype(op, A, B, ("input", "other"))
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise ShapeError(f"{op}: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    rtol = float(backend.namespace(A.device).finfo(A.dtype).eps) * max(m, n) if rcond is None else rcond
    x = pinv(A, rtol=rtol) @ b
    xp = backend.namespace(A.device)
    empty = A._constant(xp.zeros((0,), dtype=A.dtype))
    residuals = A.reshape(-1)[:0]  # in the graph, as PyTorch's (empty)
    no_rank = A._constant(xp.zeros((0,), dtype=backend.int64))
    rank = matrix_rank(A.detach(), rtol=rtol) if driver != "gels" else no_rank
    values = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    if m > n and driver != "gelsy" and (rank.numel() == 0 or bool((rank == n).all())):
        residuals = ((A @ x - b) ** 2).sum(-2)
    return LstsqResult(x.squeeze(-1) if vector else x, residuals, rank, values)


def tensorinv(A: Tensor, ind=2) -> Tensor:
    """The inverse of A read as a map from its last dims to its first ind dims:
    A (i1..ik, j1..jl) -> (j1..jl, i1..ik), with prod(i) = prod(j)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ShapeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
            f"but got {cols} != {rows}"
        )
    return inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B: A's dims `dims` moved to the end first."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    rows = B.numel()
    out_shape = A.shape[B.ndim :]
    cols = math.prod(out_shape)
    if rows != cols:
        raise ShapeError(
            f"Expected self to satisfy the requirement prod(result_shape) == prod(other.shape), but got "
            f"{cols} != {rows}"
        )
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*out_shape)


# ------------------------------------------------------------ top-level spellings (torch.X)
def cholesky_solve(B: Tensor, L: Tensor, upper=False) -> Tensor:
    """X with A X = B, A = L L^T (or U^T U, upper), from the factor's triangle: two triangular solves."""
    _matrices("cholesky_solve", L, name="input2")
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise ShapeError("cholesky_solve: The input tensor B must have at least 2 dimensions.")
    _same_dtype("cholesky_solve", B, L, ("self", "input2"))
    if B.shape[-2] != L.shape[-1]:
        raise ShapeError(
            f"cholesky_solve: Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by "
            f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    broadcast_shapes("cholesky_solve", B.shape[:-2], L.shape[:-2])
    return CholeskySolve.apply(B, L, upper=bool(upper))


def cholesky_inverse(L: Tensor, upper=False) -> Tensor:
    """A^-1 from A's Cholesky factor: (L L^T)^-1 = L^-T L^-1 (or U^-1 U^-T)."""
    _matrices("cholesky_inverse", L, name="input")
    xp = backend.namespace(L.device)
    eye = L._constant(xp.eye(L.shape[-1], dtype=L.dtype))
    return cholesky_solve(eye, L, upper)


def triangular_solve(b: Tensor, A: Tensor, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve: (X, A clone) with op(A) X = b, op(A) = A or A^T."""
    if transpose:
        x = solve_triangular(A.mT, b, upper=not upper, unitriangular=unitriangular)
    else:
        x = solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())
