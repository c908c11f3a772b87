"""tg.linalg's decompositions, each with its own backward (ops/decompositions.py): det,
slogdet and logdet, cholesky and cholesky_ex, eigh and eigvalsh, svd and svdvals, qr, and
householder_product (qr's Q from its reflectors, a composition); torch.svd and torch.qr, the
top-level spellings (tg.svd, tg.qr)."""

from __future__ import annotations

import collections
import math

from .. import backend
from ..backend import LinAlgError, ShapeError
from ..functions import where
from ..ops.decompositions import QR, Cholesky, Det, Eigh, Eigvalsh, SlogDet, Svdvals
from ..ops.decompositions import SVD as _SVD
from ..tensor import Tensor
from .errors import _cholesky_error, _deferred_ex, _info_tensor, _infos, _matrices, _same_dtype, _where_failed

# ============================================================ matrix functions and decompositions
# (ops/decompositions.py holds their backwards; the rest here are compositions of them)
DetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("svd", ["U", "S", "Vh"])
TorchSVDResult = collections.namedtuple("svd", ["U", "S", "V"])
QRResult = collections.namedtuple("qr", ["Q", "R"])
CholeskyExResult = collections.namedtuple("cholesky_ex", ["L", "info"])


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


# ------------------------------------------------------------ top-level spellings (torch.X)
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
