"""tg.* reductions written out: var and std (correction keyword-only, as torch.var), var_mean and
std_mean (two results).  The reductions, scans, selections and softmax that only call their Tensor
method (sum, mean, cumsum, max, topk, sort, softmax, ...) are generated (forwarders.py)."""

from __future__ import annotations

from ..tensor import Tensor
from ..tensor_methods.common import accepts_keepdims


# ---------------------------------------------------------------- variance and standard deviation
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
