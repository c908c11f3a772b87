"""tg.linalg, as torch.linalg: cross, vecdot, the norms (vector_norm, matrix_norm, norm), and the
matrix functions and decompositions (det, slogdet, inv, solve, solve_triangular, cholesky, eigh,
eigvalsh, svdvals, qr, pinv, and their compositions matrix_power, matrix_rank, multi_dot, cond,
tensorinv, tensorsolve, vander), with the top-level spellings torch has for some (logdet,
pinverse, cholesky_solve, cholesky_inverse, triangular_solve; tg.X).

The vector norms, the norms of the singular values (ord 2, -2, 'nuc') and the cross product have
their own backward (ops/linalg.py), as do the decompositions (ops/decompositions.py); vecdot, the
other matrix norms and the compositions above take their gradients from the ops they are made of.
A matrix an op cannot take (singular, not positive-definite) raises tg.linalg.LinAlgError, a
RuntimeError, as torch.linalg.LinAlgError."""

from __future__ import annotations

import collections
import math

from . import backend
from .backend import LinAlgError, ShapeError
from .functions import cat, where
from .ops.decompositions import (
    QR,
    Cholesky,
    CholeskySolve,
    Det,
    Eigh,
    Eigvalsh,
    Inv,
    Pinv,
    SlogDet,
    Solve,
    SolveTriangular,
    Svdvals,
)
from .ops.decompositions import SVD as _SVD
from .tensor import Tensor
from .tensor_methods.common import broadcast_shapes, normalize_dim, torch_dtype_name
from .tensor_methods.linalg import linalg_cross, matrix_norm, vector_norm

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "householder_product", "inv", "inv_ex", "lstsq", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]  # fmt: skip


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


# ============================================================ matrix functions and decompositions
# (ops/decompositions.py holds their backwards; the rest here are compositions of them)
DetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("svd", ["U", "S", "Vh"])
TorchSVDResult = collections.namedtuple("svd", ["U", "S", "V"])
QRResult = collections.namedtuple("qr", ["Q", "R"])
InvExResult = collections.namedtuple("inv_ex", ["inverse", "info"])
SolveExResult = collections.namedtuple("solve_ex", ["result", "info"])
CholeskyExResult = collections.namedtuple("cholesky_ex", ["L", "info"])
LstsqResult = collections.namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
TriangularSolveResult = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def _floating(op: str, A: Tensor):
    """The decompositions take float32 / float64 (NumPy's and CuPy's LAPACK have no float16)."""
    if not backend.is_floating(A.dtype):
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got {torch_dtype_name(A.dtype)}"
        )
    if A.dtype == backend.float16:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got Half")


def _matrices(op: str, A: Tensor, name="A", square=True):
    """A stack of (square) float matrices, with PyTorch's errors."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: argument '{name}' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(
            f"{op}: {name} must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    _floating(op, A)


def _same_dtype(op: str, A: Tensor, B: Tensor, names=("A", "B")):
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{op}: Expected {names[0]} and {names[1]} to have the same dtype, but found {names[0]} of type "
            f"{torch_dtype_name(A.dtype)} and {names[1]} of type {torch_dtype_name(B.dtype)} instead"
        )


def _batch_prefix(A: Tensor, index: int) -> str:
    return f"(Batch element {index}): " if A.ndim > 2 else ""


def _matrix_list(A: Tensor) -> list:
    """The matrices of A's stack, one by one (for the host searches of the error paths)."""
    stack = A._data.reshape((-1,) + A.shape[-2:])
    return [stack[i] for i in range(stack.shape[0])]


def _cholesky_info(xp, a) -> int:
    """potrf's info for one matrix: the order of the first leading minor that is not
    positive-definite, 0 where there is none (a host search, on the error path only)."""
    for k in range(1, a.shape[-1] + 1):
        try:
            backend.linalg(xp, "cholesky", a[:k, :k], error="")
        except LinAlgError:
            return k
    return 0


def _infos(A: Tensor, kind: str) -> list:
    """LAPACK's info of every matrix of A: getrf's ("inv") or potrf's ("cholesky")."""
    xp = backend.namespace(A.device)
    if kind == "inv":
        return [backend.lu_info(a) for a in _matrix_list(A)]
    return [_cholesky_info(xp, a) for a in _matrix_list(A)]


def _info_tensor(A: Tensor, infos: list) -> Tensor:
    xp = backend.namespace(A.device)
    return A._constant(xp.asarray(infos, dtype=backend.int32).reshape(A.shape[:-2]))


def _cholesky_error(op: str, A: Tensor, infos: list) -> str:
    index = next(i for i, info in enumerate(infos) if info)
    return (
        f"{op}: {_batch_prefix(A, index)}The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {infos[index]} is not positive-definite)."
    )


def _singular_error(op: str, A: Tensor, infos: list) -> str:
    index = next((i for i, info in enumerate(infos) if info), 0)
    return (
        f"{op}: {_batch_prefix(A, index)}The diagonal element {infos[index]} is zero, the inversion could not be "
        "completed because the input matrix is singular."
    )


def det(A: Tensor) -> Tensor:
    """det A of every matrix of the stack (..., n, n)."""
    _matrices("linalg.det", A)
    return Det.apply(A)


def slogdet(A: Tensor):
    """(sign, log|det A|): the sign (-1, 0 or 1; piecewise constant, its gradient 0), log|det A|."""
    _matrices("linalg.slogdet", A)
    packed = SlogDet.apply(A)
    return DetResult(packed[..., 0], packed[..., 1])


def logdet(A: Tensor) -> Tensor:
    """log det A: log|det A| where det A > 0, nan where it is negative, -inf where it is 0."""
    _matrices("logdet", A)
    sign, logabsdet = slogdet(A)
    return logabsdet.masked_fill(sign < 0, math.nan)


def inv(A: Tensor, *, _check=True) -> Tensor:
    """A^-1; a singular matrix raises LinAlgError (on CuPy at the next read)."""
    _matrices("linalg.inv", A)
    error = "linalg.inv: The inversion could not be completed because the input matrix is singular."
    error = error if _check else None
    try:
        return Inv.apply(A, error=error)
    except LinAlgError:
        raise LinAlgError(_singular_error("linalg.inv", A, _infos(A, "inv"))) from None


def _where_failed(fn, A: Tensor, info: Tensor):
    """fn(A) with the matrices of A that failed (info != 0) replaced by the identity, and nan in
    their results: the other matrices of the stack keep their values and gradients."""
    xp = backend.namespace(A.device)
    bad = info._data != 0
    eye = A._constant(xp.eye(A.shape[-1], dtype=A.dtype))
    out = fn(where(A._constant(bad[..., None, None]), eye, A))
    mask = bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim))  # batch dims aligned from the right
    return out.masked_fill(A._constant(mask), math.nan)


def _deferred_ex(A: Tensor, out: Tensor, check_errors: bool):
    """An _ex form on CuPy, whose failures surface at the next read, not at once: the result
    computed without the deferred error, and info 1 where it is not finite (not LAPACK's index)."""
    xp = backend.namespace(A.device)
    bad = ~xp.isfinite(out._data)
    bad = bad.reshape(bad.shape[:-2] + (-1,)).any(axis=-1)  # out: A's batch shape and one matrix each
    if check_errors:

        def fail():
            raise LinAlgError("linalg: the factorization could not be completed (info > 0)")

        backend.defer_check(bad.any(), fail)
    return out, A._constant(bad.astype(backend.int32))


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


def cholesky(A: Tensor, upper=False, *, out=None, _op="linalg.cholesky", _check=True) -> Tensor:
    """L lower with L L^T = A (A's lower triangle read), or U = L^T with U^T U = A (A's upper
    triangle read) where upper.  Not positive-definite: LinAlgError."""
    if out is not None:
        raise TypeError(f"{_op}: out= is not supported")
    _matrices(_op, A)
    if upper:
        return cholesky(A.mT, _op=_op, _check=_check).mT
    error = f"{_op}: The factorization could not be completed because the input is not positive-definite."
    try:
        return Cholesky.apply(A, error=error if _check else None)
    except LinAlgError:
        raise LinAlgError(_cholesky_error(_op, A, _infos(A, "cholesky"))) from None


def cholesky_ex(A: Tensor, *, upper=False, check_errors=False):
    """(L, info): info 0 where factorized, else potrf's (the order of the first leading minor not
    positive-definite; that matrix's L nan), raising only if check_errors."""
    _matrices("linalg.cholesky_ex", A)
    if A.device.startswith("cuda"):
        return CholeskyExResult(*_deferred_ex(A, cholesky(A, upper, _check=False), check_errors))
    info = A._constant(backend.namespace(A.device).zeros(A.shape[:-2], dtype=backend.int32))
    try:
        return CholeskyExResult(cholesky(A, upper, _op="linalg.cholesky_ex"), info)
    except LinAlgError:
        if check_errors:
            raise
        read = A.mT if upper else A  # the triangle factorized
        info = _info_tensor(A, _infos(read, "cholesky"))
        return CholeskyExResult(_where_failed(lambda a: cholesky(a, upper), A, info), info)


def _uplo(op: str, UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def eigh(A: Tensor, UPLO="L"):  # noqa: N803 (PyTorch's name)
    """(L, V): A = V diag(L) V^T, L ascending, A symmetric (its lower triangle read, or the upper
    one with UPLO='U')."""
    _matrices("linalg.eigh", A)
    n = A.shape[-1]
    packed = Eigh.apply(A, uplo=_uplo("linalg.eigh", UPLO))
    return EighResult(packed[..., n, :], packed[..., :n, :])


def eigvalsh(A: Tensor, UPLO="L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric A, ascending."""
    _matrices("linalg.eigvalsh", A)
    return Eigvalsh.apply(A, uplo=_uplo("linalg.eigvalsh", UPLO))


def svdvals(A: Tensor) -> Tensor:
    """The singular values of every matrix (..., m, n), descending: (..., min(m, n))."""
    _matrices("linalg.svdvals", A, square=False)
    return Svdvals.apply(A)


def svd(A: Tensor, full_matrices=True, *, driver=None):
    """(U, S, Vh), A = U diag(S) Vh, S descending: U (..., m, m) and Vh (..., n, n) with
    full_matrices, else (..., m, k) and (..., k, n), k = min(m, n)."""
    _matrices("linalg.svd", A, square=False)
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."
        )
    m, n = A.shape[-2:]
    k = min(m, n)
    mu, nv = (m, n) if full_matrices else (k, k)
    packed = _SVD.apply(A, full_matrices=bool(full_matrices))
    batch = A.shape[:-2]
    u = packed[..., : m * mu].reshape(*batch, m, mu)
    s = packed[..., m * mu : m * mu + k]
    vh = packed[..., m * mu + k :].reshape(*batch, nv, n)
    return SVDResult(u, s, vh)


def qr(A: Tensor, mode="reduced"):
    """(Q, R), A = Q R: 'reduced' (Q (m, k), R (k, n), k = min(m, n)), 'complete' (Q (m, m)) or
    'r' (R alone, Q empty; no backward)."""
    _matrices("linalg.qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    m, n = A.shape[-2:]
    qcols = m if mode == "complete" else min(m, n)
    packed = QR.apply(A, mode="complete" if mode == "complete" else "reduced", r_only=mode == "r")
    batch = A.shape[:-2]
    q = packed[..., : m * qcols].reshape(*batch, m, qcols)
    r = packed[..., m * qcols :].reshape(*batch, qcols, n)
    if mode == "r":
        q = A._constant(backend.namespace(A.device).zeros((0,), dtype=A.dtype))
    return QRResult(q, r)


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


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of A
    below the diagonal with a 1 on it (LAPACK's orgqr; A (..., m, n), m >= n >= k = tau's last
    size).  A composition (k rank-one updates), so its gradient is theirs."""
    op = "torch.linalg.householder_product"
    _matrices("linalg.householder_product", A, name="input", square=False)
    m, n = A.shape[-2:]
    if m < n:
        raise ShapeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise ShapeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.ndim - tau.ndim != 1 or tau.shape[:-1] != A.shape[:-2]:
        raise ShapeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                         f"{list(tau.shape[:-1])}")  # fmt: skip
    _same_dtype(op, A, tau, ("input", "tau"))
    xp = backend.namespace(A.device)
    v = A.tril(-1) + A._constant(xp.eye(m, n, dtype=A.dtype))  # the reflectors' vectors, column by column
    q = A._constant(xp.broadcast_to(xp.eye(m, dtype=A.dtype), A.shape[:-2] + (m, m)).copy())
    for i in range(tau.shape[-1]):
        vi = v[..., :, i : i + 1]
        q = q - (q @ vi) * tau[..., i, None, None] @ vi.mT
    if tau.shape[-1] == 0:  # no reflector: the identity's columns, in the graph (a zero gradient), as PyTorch's
        return where(A._constant(xp.ones(A.shape, dtype=bool)), q[..., :, :n], A)
    return q[..., :, :n]


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


def torch_svd(input: Tensor, some=True, compute_uv=True):  # noqa: A002
    """torch.svd: (U, S, V), V = Vh^T (not Vh); some=False gives the full U and V; without
    compute_uv, U and V are zero-filled (m, m) and (n, n)."""
    _matrices("svd", input, square=False)
    if not compute_uv:
        xp = backend.namespace(input.device)
        m, n = input.shape[-2:]
        zeros = [input._constant(xp.zeros(input.shape[:-2] + (d, d), dtype=input.dtype)) for d in (m, n)]
        return TorchSVDResult(zeros[0], svdvals(input), zeros[1])
    u, s, vh = svd(input, full_matrices=not some)
    return TorchSVDResult(u, s, vh.mT)


def torch_qr(input: Tensor, some=True):  # noqa: A002
    """torch.qr: linalg.qr with mode 'reduced' (some) or 'complete'."""
    return qr(input, "reduced" if some else "complete")


def triangular_solve(b: Tensor, A: Tensor, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve: (X, A clone) with op(A) X = b, op(A) = A or A^T."""
    if transpose:
        x = solve_triangular(A.mT, b, upper=not upper, unitriangular=unitriangular)
    else:
        x = solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())
