"""Tensor methods, reductions and scans: sum, mean, var, ... (ops/reduce.py); max and min with
their indices, sorting and top-k (ops/selection.py); running sums, products and extremes
(ops/scan.py).  `axis` is accepted as NumPy's spelling of `dim`, as PyTorch accepts it."""

from __future__ import annotations

import collections
import math
import warnings

from .. import backend
from ..anomaly import _user_level
from ..ops.reduce import Amax, Amin, Logsumexp, Mean, Prod, Std, Sum, Var
from ..ops.scan import Cumprod, Cumsum, Logcumsumexp
from ..ops.selection import TakeAlongDim, cumulative_extreme_indices, sort_indices
from .common import TensorBase, accepts_keepdims, normalize_dim, normalize_dims

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
SortResult = collections.namedtuple("sort", ["values", "indices"])
CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])


def _spread_args(dim, unbiased, correction):
    """(dim, correction) of var / std in any of PyTorch's forms: var(dim, unbiased, keepdim),
    var(dim, correction=c), and var(unbiased), where a lone bool is `unbiased`, not a dim."""
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError("var/std: unbiased given twice (a bool in place of dim, and unbiased=)")
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


class ReductionMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ reductions (ops/reduce.py)
    def _reduce_args(self, dim, axis, dtype, op):
        """(self cast to dtype, the dim): `axis` is NumPy's spelling of dim, which PyTorch accepts too."""
        if axis is not None:
            if dim is not None:
                raise TypeError(f"{op}(): got both dim and axis; pass one")
            dim = axis
        return (self if dtype is None else self.to(dtype)), dim

    def _accumulating(self, dtype=None):
        """self in `dtype`, or for bools and integers narrower than int64: int64 (PyTorch's sum/prod/cumsum)."""
        if dtype is not None:
            return self.to(dtype)
        if self.dtype.kind == "b" or self.dtype.kind in "iu" and self.dtype.itemsize < 8:
            return self.long()
        return self

    @accepts_keepdims
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        x, dim = self._reduce_args(dim, axis, dtype, "sum")
        return Sum.apply(x, dim=normalize_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    @accepts_keepdims
    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        x, dim = self._reduce_args(dim, axis, dtype, "mean")
        x._require_float("mean")
        return Mean.apply(x, dim=normalize_dims(dim, self.ndim, "mean"), keepdim=keepdim)

    def _spread(self, op, dim, unbiased, keepdim, correction, axis):
        """var or std (op: var, std, var_mean or std_mean) in any of PyTorch's argument forms.  With
        no degrees of freedom left (N - correction <= 0) the result is inf (nan where every value is
        the mean), and PyTorch's UserWarning is given, naming `op`."""
        dim, correction = _spread_args(dim, unbiased, correction)
        dim = self._reduce_args(dim, axis, None, op)[1]
        self._require_float(op.removesuffix("_mean"))
        dims = normalize_dims(dim, self.ndim, op)
        if math.prod(self.shape[d] for d in dims) - correction <= 0:
            warnings.warn(
                f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                "factor (input numel divided by output numel).",
                UserWarning,
                stacklevel=_user_level(),
            )
        fn = Std if op.startswith("std") else Var
        return fn.apply(self, dim=dims, correction=correction, keepdim=keepdim)

    @accepts_keepdims
    def var(self, dim=None, unbiased=None, keepdim=False, correction=None, *, axis=None):
        """Variance; correction=1 (the default, unbiased) divides by N - 1."""
        return self._spread("var", dim, unbiased, keepdim, correction, axis)

    @accepts_keepdims
    def std(self, dim=None, unbiased=None, keepdim=False, correction=None, *, axis=None):
        """Standard deviation; correction=1 (the default, unbiased) divides by N - 1."""
        return self._spread("std", dim, unbiased, keepdim, correction, axis)

    @accepts_keepdims
    def prod(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        """Product of all elements, or along one dim; zeros get their true gradient."""
        dim = self._reduce_args(dim, axis, None, "prod")[1]
        x = self._accumulating(dtype)
        if dim is None:
            return Prod.apply(x, dim=None)
        return Prod.apply(x, dim=normalize_dim(dim, self.ndim, "prod") if self.ndim else None, keepdim=keepdim)

    @accepts_keepdims
    def logsumexp(self, dim=None, keepdim=False, *, axis=None):
        """log(sum(exp(x))) over dim (required, as in PyTorch: dim or NumPy's spelling axis)."""
        dim = self._reduce_args(dim, axis, None, "logsumexp")[1]
        if dim is None:
            raise TypeError("logsumexp(): missing the dim argument (the dim or dims to reduce, as torch.logsumexp)")
        x = self._floating("logsumexp")
        return Logsumexp.apply(x, dim=normalize_dims(dim, self.ndim, "logsumexp"), keepdim=keepdim)

    def _logical_reduce(self, dim, keepdim, axis, op):
        dim = self._reduce_args(dim, axis, None, op)[1]
        axes = normalize_dims(dim, self.ndim, op)
        out = getattr(self._data != 0, op)(axis=axes, keepdims=keepdim)
        return self._make(backend.ensure_array(backend.namespace(self.device), out), self.device, False)

    @accepts_keepdims
    def all(self, dim=None, keepdim=False, *, axis=None):
        """True where every element (along dim) is nonzero; a bool tensor without gradient."""
        return self._logical_reduce(dim, keepdim, axis, "all")

    @accepts_keepdims
    def any(self, dim=None, keepdim=False, *, axis=None):
        return self._logical_reduce(dim, keepdim, axis, "any")

    # --------------------------------------- max and min, and their indices (ops/reduce.py, ops/selection.py)
    @accepts_keepdims
    def amax(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "amax")[1]
        return Amax.apply(self, dim=normalize_dims(dim, self.ndim, "amax"), keepdim=keepdim)

    @accepts_keepdims
    def max(self, dim=None, keepdim=False, *, axis=None):
        """max() -> the largest value (ties share the gradient); max(dim) -> (values, indices), the
        gradient going to the returned index; max(other) -> maximum(other).  As in PyTorch."""
        if isinstance(dim, TensorBase):
            return self.maximum(dim)
        dim = self._reduce_args(dim, axis, None, "max")[1]
        if dim is None:
            return self.amax()
        return MaxResult(*self._extreme(dim, keepdim, largest=True, op="max"))

    @accepts_keepdims
    def argmax(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "argmax")[1]
        if dim is None:
            out = self._data.reshape(-1).argmax()
        else:
            out = self._data.argmax(axis=normalize_dim(dim, self.ndim, "argmax"), keepdims=keepdim)
        out = backend.ensure_array(backend.namespace(self.device), out).astype(backend.int64, copy=False)
        return self._make(out, self.device, False)

    @accepts_keepdims
    def amin(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "amin")[1]
        return Amin.apply(self, dim=normalize_dims(dim, self.ndim, "amin"), keepdim=keepdim)

    @accepts_keepdims
    def min(self, dim=None, keepdim=False, *, axis=None):
        """min() -> the smallest value; min(dim) -> (values, indices); min(other) -> minimum(other)."""
        if isinstance(dim, TensorBase):
            return self.minimum(dim)
        dim = self._reduce_args(dim, axis, None, "min")[1]
        if dim is None:
            return self.amin()
        return MinResult(*self._extreme(dim, keepdim, largest=False, op="min"))

    @accepts_keepdims
    def argmin(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "argmin")[1]
        if dim is None:
            out = self._data.reshape(-1).argmin()
        else:
            out = self._data.argmin(axis=normalize_dim(dim, self.ndim, "argmin"), keepdims=keepdim)
        out = backend.ensure_array(backend.namespace(self.device), out).astype(backend.int64, copy=False)
        return self._make(out, self.device, False)

    def _extreme(self, dim, keepdim, largest, op):
        """(values, indices) of the max or min along dim: the first position of the extreme."""
        d = normalize_dim(dim, self.ndim, op)
        xp = backend.namespace(self.device)
        if self.ndim == 0:
            return self.clone(), self._make(xp.zeros((), dtype=backend.int64), self.device, False)
        index = xp.expand_dims(self._data.argmax(axis=d) if largest else self._data.argmin(axis=d), d)
        values, index = self._take(index.astype(backend.int64, copy=False), d), self._make(index, self.device, False)
        return (values, index) if keepdim else (values.squeeze(d), index.squeeze(d))

    def _take(self, index, dim: int):
        """The values at integer positions `index` (an array) along dim; differentiable."""
        return TakeAlongDim.apply(self, index=index, dim=dim)

    # ------------------------------------------------------------------ scans (ops/scan.py)
    def _scan_dim(self, dim, axis, op):
        dim = self._reduce_args(dim, axis, None, op)[1]
        if dim is None:
            raise TypeError(f"{op}(): missing the dim argument")
        return normalize_dim(dim, self.ndim, op)

    def _scan(self, op, fn):
        """Scans are defined on 1-d slices: a 0-d tensor is scanned as one element."""
        return fn(self.reshape(1)).reshape(()) if self.ndim == 0 else fn(self)

    def cumsum(self, dim=None, *, dtype=None, axis=None):
        d = self._scan_dim(dim, axis, "cumsum")
        x = self._accumulating(dtype)
        return x._scan("cumsum", lambda t: Cumsum.apply(t, dim=d))

    def cumprod(self, dim=None, *, dtype=None, axis=None):
        d = self._scan_dim(dim, axis, "cumprod")
        x = self._accumulating(dtype)
        return x._scan("cumprod", lambda t: Cumprod.apply(t, dim=d))

    def logcumsumexp(self, dim=None, *, axis=None):
        d = self._scan_dim(dim, axis, "logcumsumexp")
        return self._floating("logcumsumexp")._scan("logcumsumexp", lambda t: Logcumsumexp.apply(t, dim=d))

    def _cumulative_extreme(self, dim, axis, largest, op):
        d = self._scan_dim(dim, axis, op)
        x = self.reshape(1) if self.ndim == 0 else self
        index = cumulative_extreme_indices(backend.namespace(self.device), x._data, d, largest)
        values, index = x._take(index, d), self._make(index, self.device, False)
        return (values.reshape(()), index.reshape(())) if self.ndim == 0 else (values, index)

    def cummax(self, dim=None, *, axis=None):
        """(values, indices) of the running max; the gradient goes to each index (ties: the later entry)."""
        return CummaxResult(*self._cumulative_extreme(dim, axis, True, "cummax"))

    def cummin(self, dim=None, *, axis=None):
        return CumminResult(*self._cumulative_extreme(dim, axis, False, "cummin"))

    # ------------------------------------------------------------------ sorting (ops/selection.py)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        """The k largest (or smallest) entries along dim and their indices, largest first; ties keep
        their order.  The gradient goes to the selected entries.  (Always sorted: PyTorch leaves the
        order unspecified when sorted=False.)"""
        d = normalize_dim(dim, self.ndim, "topk")
        n = self.shape[d] if self.ndim else 1
        if not isinstance(k, int) or not 0 <= k <= n:
            raise RuntimeError(f"topk: k={k} is out of range for dim {dim} of size {n} (expected 0..{n})")
        x = self.reshape(1) if self.ndim == 0 else self
        order = sort_indices(backend.namespace(self.device), x._data, d, descending=largest)
        index = order[(slice(None),) * d + (slice(0, k),)]
        values, index = x._take(index, d), self._make(index, self.device, False)
        return TopkResult(values.reshape(()), index.reshape(())) if self.ndim == 0 else TopkResult(values, index)

    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along dim; always stable (equal values keep their order)."""
        d = normalize_dim(dim, self.ndim, "sort")
        if self.ndim == 0:
            return SortResult(self.clone(), self.argsort())
        index = sort_indices(backend.namespace(self.device), self._data, d, descending)
        return SortResult(self._take(index, d), self._make(index, self.device, False))

    def argsort(self, dim=-1, descending=False, *, stable=False):
        d = normalize_dim(dim, self.ndim, "argsort")
        xp = backend.namespace(self.device)
        if self.ndim == 0:
            return self._make(xp.zeros((), dtype=backend.int64), self.device, False)
        return self._make(sort_indices(xp, self._data, d, descending), self.device, False)
