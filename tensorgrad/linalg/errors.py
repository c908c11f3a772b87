"""What tg.linalg checks and reports, with PyTorch's messages: the argument checks (float
matrices, square, one dtype), LAPACK's info of a failed factorization (getrf's, potrf's) and the
errors built from it, and what the _ex forms do where a matrix failed (nan there, and info; on
CuPy, from the result).  LinAlgError is the backend's, a RuntimeError."""

from __future__ import annotations

import math

from .. import backend
from ..backend import LinAlgError, ShapeError
from ..functions import where
from ..tensor import Tensor
from ..tensor_methods.common import torch_dtype_name


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
