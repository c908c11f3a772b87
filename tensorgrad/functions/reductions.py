"""tg.* functions that reduce, scan or select along dims, each its Tensor method: sum, mean, var,
std, prod, logsumexp, all, any, the scans (cumsum, cumprod, logcumsumexp, cummax, cummin), the
selections (topk, sort, max, min, argmax, ...), and softmax / log_softmax along a dim.  all, any,
max, min and sum are PyTorch's names: here they shadow the built-ins (builtins.X reaches those)."""

from __future__ import annotations

from ..tensor import Tensor
from ..tensor_methods.common import accepts_keepdims


# ---------------------------------------------------------------- reductions and scans as functions
@accepts_keepdims
def var(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None) -> Tensor:
    """The variance along dim (all dims by default) with Bessel's correction unless `correction` / `unbiased` say
    otherwise, as torch.var."""
    return x.var(dim, unbiased, keepdim, correction, axis=axis)


@accepts_keepdims
def std(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None) -> Tensor:
    """The standard deviation along dim: the square root of var (same arguments), as torch.std."""
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
