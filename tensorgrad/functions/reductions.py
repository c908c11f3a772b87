"""tg.* functions that reduce, scan or select along dims, each its Tensor method: sum, mean, var,
std, prod, logsumexp, all, any, the scans (cumsum, cumprod, logcumsumexp, cummax, cummin), the
selections (topk, sort, max, min, argmax, ...), and softmax / log_softmax along a dim.  all, any,
max, min and sum are PyTorch's names: here they shadow the built-ins (builtins.X reaches those)."""

from __future__ import annotations

from ..tensor import Tensor
from ..tensor_methods.common import accepts_keepdims


# ---------------------------------------------------------------- reductions and scans as functions
@accepts_keepdims
def sum(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None) -> Tensor:  # noqa: A001 (PyTorch's name)
    return x.sum(dim, keepdim, dtype=dtype, axis=axis)


@accepts_keepdims
def mean(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None) -> Tensor:
    return x.mean(dim, keepdim, dtype=dtype, axis=axis)


@accepts_keepdims
def var(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None) -> Tensor:
    return x.var(dim, unbiased, keepdim, correction, axis=axis)


@accepts_keepdims
def std(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None) -> Tensor:
    return x.std(dim, unbiased, keepdim, correction, axis=axis)


@accepts_keepdims
def var_mean(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """(variance, mean), as torch.var_mean (a lone bool in place of dim is `unbiased`, as there)."""
    if isinstance(dim, bool):
        return var_mean(x, None, dim if unbiased is None else unbiased, keepdim, correction=correction, axis=axis)
    return x._spread("var_mean", dim, unbiased, keepdim, correction, axis), x.mean(dim, keepdim, axis=axis)


@accepts_keepdims
def std_mean(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """(standard deviation, mean), as torch.std_mean (a lone bool in place of dim is `unbiased`)."""
    if isinstance(dim, bool):
        return std_mean(x, None, dim if unbiased is None else unbiased, keepdim, correction=correction, axis=axis)
    return x._spread("std_mean", dim, unbiased, keepdim, correction, axis), x.mean(dim, keepdim, axis=axis)


@accepts_keepdims
def prod(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None) -> Tensor:
    return x.prod(dim, keepdim, dtype=dtype, axis=axis)


@accepts_keepdims
def logsumexp(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:
    return x.logsumexp(dim, keepdim, axis=axis)


@accepts_keepdims
def all(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:  # noqa: A001 (PyTorch's name)
    return x.all(dim, keepdim, axis=axis)


@accepts_keepdims
def any(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:  # noqa: A001 (PyTorch's name)
    return x.any(dim, keepdim, axis=axis)


def cumsum(x: Tensor, dim=None, *, dtype=None, axis=None) -> Tensor:
    return x.cumsum(dim, dtype=dtype, axis=axis)


def cumprod(x: Tensor, dim=None, *, dtype=None, axis=None) -> Tensor:
    return x.cumprod(dim, dtype=dtype, axis=axis)


def logcumsumexp(x: Tensor, dim=None, *, axis=None) -> Tensor:
    return x.logcumsumexp(dim, axis=axis)


def cummax(x: Tensor, dim=None, *, axis=None):
    return x.cummax(dim, axis=axis)


def cummin(x: Tensor, dim=None, *, axis=None):
    return x.cummin(dim, axis=axis)


# ---------------------------------------------------------------- selection (Tensor methods as functions)
def topk(x: Tensor, k, dim=-1, largest=True, sorted=True):  # noqa: A002 (PyTorch's name)
    return x.topk(k, dim, largest, sorted)


def sort(x: Tensor, dim=-1, descending=False, *, stable=False):
    return x.sort(dim, descending, stable=stable)


def argsort(x: Tensor, dim=-1, descending=False, *, stable=False) -> Tensor:
    return x.argsort(dim, descending, stable=stable)


@accepts_keepdims
def max(x: Tensor, dim=None, keepdim=False, *, axis=None):  # noqa: A001 (PyTorch's name)
    return x.max(dim, keepdim, axis=axis)


@accepts_keepdims
def min(x: Tensor, dim=None, keepdim=False, *, axis=None):  # noqa: A001 (PyTorch's name)
    return x.min(dim, keepdim, axis=axis)


@accepts_keepdims
def amax(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:
    return x.amax(dim, keepdim, axis=axis)


@accepts_keepdims
def amin(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:
    return x.amin(dim, keepdim, axis=axis)


@accepts_keepdims
def argmax(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:
    return x.argmax(dim, keepdim, axis=axis)


@accepts_keepdims
def argmin(x: Tensor, dim=None, keepdim=False, *, axis=None) -> Tensor:
    return x.argmin(dim, keepdim, axis=axis)


def maximum(x: Tensor, other: Tensor) -> Tensor:
    return x.maximum(other)


def minimum(x: Tensor, other: Tensor) -> Tensor:
    return x.minimum(other)


# ---------------------------------------------------------------- softmax along a dim (tensor_methods/neural.py)
def softmax(x: Tensor, dim, dtype=None) -> Tensor:
    return x.softmax(dim, dtype)


def log_softmax(x: Tensor, dim, dtype=None) -> Tensor:
    return x.log_softmax(dim, dtype)
