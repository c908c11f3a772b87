"""Tensor methods, statistics: order statistics (median, mode, kthvalue, quantile: ops/selection.py),
reductions that skip NaN (nansum, nanmean), counting and distinct values (count_nonzero, bincount,
unique), covariance, renorm and equal.

An order statistic finds its positions first, outside the graph (a stable sort, NaN last), and reads
the values there with the differentiable `TakeAlongDim` (ops/selection.py), so the gradient goes to
the selected element, as PyTorch's.  Counting and distinct values are integers: no gradient."""

from __future__ import annotations

import collections
import math
import warnings

from .. import backend
from ..ops import ranges
from ..ops.reduce import Nanmean, Nansum
from ..ops.selection import EvenlyShared, Quantile, median_positions, mode_positions, nan_last_order
from .common import TensorBase, accepts_keepdims, normalize_dim, normalize_dims

MedianResult = collections.namedtuple("median", ["values", "indices"])
NanmedianResult = collections.namedtuple("nanmedian", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
AminmaxResult = collections.namedtuple("aminmax", ["min", "max"])
HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class StatisticsMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ counting values (no gradient, as in PyTorch)
    def _bin_range(self, lo, hi, widen, op):
        """(lo, hi) as given, else the data's min and max (0 and 1 for no data); an empty range is
        widened by `widen` on each side, as PyTorch does (0.5 for histogram, 1 for histc).  A range
        that is not finite (a NaN or an inf in the data) is refused, as PyTorch refuses it."""
        if lo is None:
            data = self._data
            lo, hi = (0.0, 1.0) if data.size == 0 else (float(data.min()), float(data.max()))
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            where = "dimension 0's range" if op == "histogramdd" else "range of"
            raise RuntimeError(f"torch.{op}: {where} [{lo:g}, {hi:g}] is not finite")
        return (lo - widen, hi + widen) if lo == hi else (lo, hi)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's name)
        """(hist, bin_edges), as torch.histogram: `bins` (100 by default) equal-width bins over `range`
        (default: the data's min to max), or the given 1-d tensor of increasing edges (of the input's
        dtype); `weight` (the input's dtype and size) sums weights instead of counting; `density`
        divides by the total and the bin widths so that the histogram integrates to 1.  A value in
        bin i has edges[i] <= v < edges[i+1] (the last bin holds its right edge too); values outside,
        and NaN, are not counted.  The edges are PyTorch's linspace, bit for bit (ops/ranges.py)."""
        if self.dtype.kind != "f" or self.dtype == backend.float16:
            raise NotImplementedError(f'"histogram" not implemented for {self.dtype}: pass a float32 or float64 tensor')
        xp = backend.namespace(self.device)
        if isinstance(bins, TensorBase):
            if range is not None:
                raise TypeError("histogram(): range= goes with a number of bins, not with a tensor of bin edges")
            if bins.ndim != 1 or bins.numel() < 2:
                raise RuntimeError(
                    f"torch.histogram(): bins must be a 1-d tensor of at least 2 edges, got shape {bins.shape}"
                )
            if bins.dtype != self.dtype:
                raise RuntimeError(
                    f"torch.histogram(): the bin edges ({bins.dtype}) must have the input's dtype ({self.dtype})"
                )
            edges = bins._data
        else:
            if not isinstance(bins, int) or isinstance(bins, bool):
                raise TypeError(f"histogram(): bins must be an int or a tensor of edges, not {type(bins).__name__}")
            if bins <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
            if range is not None and len(range) != 2:
                raise RuntimeError(
                    "torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, "
                    f"but got {len(range)}"
                )
            lo, hi = range if range is not None else (None, None)
            if lo is not None and lo > hi:
                raise RuntimeError(
                    f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for dimension 0"
                )
            lo, hi = self._bin_range(lo, hi, 0.5, "histogramdd")
            edges = ranges.linspace(xp, lo, hi, bins + 1, self.dtype)
        if weight is not None and (weight.dtype != self.dtype or weight.numel() != self.numel()):
            raise RuntimeError(
                f"torch.histogram(): weight must have the input's dtype ({self.dtype}) and size ({self.numel()}), "
                f"got {weight.dtype} and {weight.numel()}"
            )
        v = self._data.reshape(-1)
        n = edges.shape[0] - 1
        inside = (v >= edges[0]) & (v <= edges[-1])  # NaN: outside
        pos = xp.minimum(xp.searchsorted(edges, xp.where(inside, v, edges[0]), side="right") - 1, n - 1)
        w = xp.ones(v.shape, dtype=self.dtype) if weight is None else weight._data.reshape(-1)
        hist = xp.zeros(n, dtype=self.dtype)
        backend.add_at(xp, hist, xp.maximum(pos, 0), xp.where(inside, w, 0))
        if density:
            with backend.quiet():  # no data (or zero weight): 0 / 0 = nan, as in PyTorch
                hist = hist / (hist.sum() * xp.diff(edges))
        return HistogramResult(self._make(hist, self.device, False), self._make(edges.copy(), self.device, False))

    def histc(self, bins=100, min=0, max=0):  # noqa: A002 (PyTorch's names)
        """Counts in `bins` equal-width bins from min to max, as torch.histc; min == max (the default
        0, 0) takes the data's min and max instead.  A tensor of the input's (floating) dtype.  A value
        v goes to bin int((v - min) * bins / (max - min)) in the input's dtype, as PyTorch computes it
        (the last bin holds max too); values outside [min, max], and NaN, are not counted."""
        if self.dtype.kind != "f":
            raise NotImplementedError(f'"histogram_cpu" not implemented for {self.dtype}: pass a floating-point tensor')
        if not isinstance(bins, int) or isinstance(bins, bool):
            raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if min > max:
            raise RuntimeError("torch.histc: max must be larger than min")
        lo, hi = self._bin_range(*((None, None) if min == max else (min, max)), 1.0, "histc")
        xp = backend.namespace(self.device)
        lo, hi = self.dtype.type(lo), self.dtype.type(hi)  # the first and last edge, in the input's dtype
        v = self._data.reshape(-1)
        inside = (v >= lo) & (v <= hi)
        with backend.quiet():  # NaN values are outside (and their bin is never used)
            pos = ((xp.where(inside, v, lo) - lo) * self.dtype.type(bins) / (hi - lo)).astype(backend.int64)
        hist = xp.zeros(bins, dtype=self.dtype)
        backend.add_at(xp, hist, xp.minimum(pos, bins - 1), inside.astype(self.dtype))
        return self._make(hist, self.device, False)

    # ------------------------------------------------------------------ order statistics
    def _select(self, dim, keepdim, op, positions):
        """(values, indices) read at `positions(xp, data, dim)` (an index along dim, keepdims); the
        gradient goes to that index.  A 0-d tensor is one element; an empty dim has no such value."""
        d = normalize_dim(dim, self.ndim, op)
        x = self.reshape(1) if self.ndim == 0 else self
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
        index = positions(backend.namespace(self.device), x._data, d)
        values, index = x._take(index, d), self._make(index, self.device, False)
        if self.ndim == 0:
            return values.reshape(()), index.reshape(())
        return (values, index) if keepdim else (values.squeeze(d), index.squeeze(d))

    def _median(self, dim, keepdim, ignore_nan, op):
        xp = backend.namespace(self.device)
        if dim is None and keepdim:
            raise TypeError(f'{op}() missing 1 required positional arguments: "dim" (keepdim needs a dim)')
        if dim is None:  # one value, its gradient shared by every element equal to it (as PyTorch)
            if self.numel() == 0:
                return self._make(xp.full((), xp.nan, dtype=self.dtype), self.device, False)
            flat = self._data.reshape(-1)
            return EvenlyShared.apply(self, position=median_positions(xp, flat, 0, ignore_nan).reshape(()))
        return self._select(dim, keepdim, op, lambda xp, a, d: median_positions(xp, a, d, ignore_nan))

    @accepts_keepdims
    def median(self, dim=None, keepdim=False):
        """median() -> the lower of the two middle values (NaN if any is NaN); median(dim) ->
        (values, indices), the gradient going to the index.  As torch.median."""
        out = self._median(dim, keepdim, False, "median")
        return out if dim is None else MedianResult(*out)

    @accepts_keepdims
    def nanmedian(self, dim=None, keepdim=False):
        """median of the values that are not NaN (NaN where all are)."""
        out = self._median(dim, keepdim, True, "nanmedian")
        return out if dim is None else NanmedianResult(*out)

    @accepts_keepdims
    def mode(self, dim=-1, keepdim=False):
        """(values, indices): the most frequent value along dim (the smallest among equally frequent
        ones) and the last index it is at, as torch.mode."""
        return ModeResult(*self._select(dim, keepdim, "mode", mode_positions))

    @accepts_keepdims
    def kthvalue(self, k, dim=-1, keepdim=False):
        """(values, indices): the k-th smallest value along dim (k from 1; NaN counts as the largest)."""
        d = normalize_dim(dim, self.ndim, "kthvalue")
        n = self.shape[d] if self.ndim else 1
        if not 1 <= k <= n:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: k={k}, size {n}")

        def positions(xp, a, d):
            order = nan_last_order(xp, a, d)[0]
            return order[(slice(None),) * d + (slice(k - 1, k),)]

        return KthvalueResult(*self._select(dim, keepdim, "kthvalue", positions))

    def _quantile(self, q, dim, keepdim, interpolation, ignore_nan, op):
        if self.dtype not in (backend.float32, backend.float64):
            raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {self.dtype}")
        if self.numel() == 0:
            raise RuntimeError(f"{op}() input tensor must be non-empty")
        if interpolation not in INTERPOLATIONS:
            raise RuntimeError(
                f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                f"Found '{interpolation}'"
            )
        if isinstance(q, TensorBase):
            if q.ndim > 1:
                raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got {q.ndim} dims")
            if q.dtype != self.dtype:
                raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor, got {q.dtype}")
            if q.device != self.device:
                raise backend.DeviceError(f"{op}() q tensor must be on the same device as the input tensor")
            if q.numel() and not bool(((q._data >= 0) & (q._data <= 1)).all()):
                raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
            many, qs = q.ndim == 1, q.reshape(-1)
        else:
            if not 0 <= q <= 1:
                raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
            many, qs = False, float(q)
        if dim is None:
            x, kept = self.reshape(-1), [1] * self.ndim
        else:
            d = normalize_dim(dim, self.ndim, op)
            if self.ndim == 0:
                x, kept = self.reshape(1), []
            else:
                x = self.permute(*[i for i in range(self.ndim) if i != d], d)  # the reduced dim last
                kept = list(self.shape)
                kept[d] = 1
        z = Quantile.apply(x, qs, interpolation=interpolation, ignore_nan=ignore_nan)  # (..., Q)
        if not keepdim:
            kept = (
                [] if dim is None else [n for i, n in enumerate(self.shape) if i != normalize_dim(dim, self.ndim, op)]
            )
        if not many:
            return z.reshape(kept)
        z = z.reshape(kept + [z.shape[-1]])
        return z.permute(z.ndim - 1, *range(z.ndim - 1))  # q's dim first, as PyTorch

    @accepts_keepdims
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The q-quantiles along dim (of every element for dim None), q a number or a 1-d tensor in
        [0, 1] (its dim comes first in the result); a NaN gives NaN.  As torch.quantile."""
        return self._quantile(q, dim, keepdim, interpolation, False, "quantile")

    @accepts_keepdims
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """quantile of the values that are not NaN (NaN where all are)."""
        return self._quantile(q, dim, keepdim, interpolation, True, "nanquantile")

    def msort(self):
        """The values sorted along dim 0: sort(0).values."""
        return self.sort(0).values

    @accepts_keepdims
    def aminmax(self, *, dim=None, keepdim=False):
        """(min, max) over every element or along one dim; ties share the gradient, as amin/amax."""
        if dim is None and self.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity"
            )
        if dim is not None:
            d = normalize_dim(dim, self.ndim, "aminmax")
            if self.ndim and self.shape[d] == 0:
                raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        return AminmaxResult(self.amin(dim, keepdim), self.amax(dim, keepdim))

    # ------------------------------------------------------------------ reductions that skip NaN
    @accepts_keepdims
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        """sum with NaN taken as 0 (their gradient is 0); integers as sum (int64)."""
        x = self._accumulating(dtype)
        if not x.is_floating_point():
            return x.sum(dim, keepdim)
        return Nansum.apply(x, dim=normalize_dims(dim, self.ndim, "nansum"), keepdim=keepdim)

    @accepts_keepdims
    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """mean of the values that are not NaN (NaN where there is none)."""
        if not self.is_floating_point():
            raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {self.dtype}")
        x = self if dtype is None else self.to(dtype)
        return Nanmean.apply(x, dim=normalize_dims(dim, self.ndim, "nanmean"), keepdim=keepdim)

    # ------------------------------------------------------------------ counting (no gradient)
    def count_nonzero(self, dim=None):
        """The number of nonzero elements along dim (an int or a tuple; None: all), int64."""
        xp = backend.namespace(self.device)
        counts = (self._data != 0).sum(axis=normalize_dims(dim, self.ndim, "count_nonzero"))
        return self._make(backend.ensure_array(xp, counts).astype(backend.int64), self.device, False)

    def argwhere(self):
        """The indices of the nonzero elements, (count, ndim) int64: nonzero()."""
        return self.nonzero()

    def bincount(self, weights=None, minlength=0):
        """counts[i] = the number of times i occurs in self (1-d, non-negative integers), or the sum
        of the weights where it does; the length is max(self) + 1, at least minlength."""
        xp = backend.namespace(self.device)
        if self.dtype.kind not in "iu":
            raise NotImplementedError(f'"bincount_cpu" not implemented for \'{self.dtype}\'')
        if self.ndim != 1 or (self.numel() and int(self._data.min()) < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if minlength < 0:
            raise RuntimeError("minlength should be >= 0")
        w = None
        if weights is not None:
            if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
                raise RuntimeError("weights should be 1-d and have the same length as input")
            w = weights._data
        out = xp.bincount(self._data, weights=w, minlength=minlength)
        if weights is None:
            dtype = backend.int64
        else:
            dtype = weights.dtype if weights.is_floating_point() else backend.float64
        return self._make(out.astype(dtype), self.device, False)

    def _distinct(self, dim, op):
        """(slices, n) to find distinct values among: the flattened values (dim None), or the slices
        along dim moved first and flattened to rows (n, -1)."""
        xp = backend.namespace(self.device)
        if dim is None:
            return self._data.reshape(-1), None
        if self.ndim == 0:
            raise IndexError(f"{op}(): dim specified as {dim} but the tensor has no dimensions")
        d = normalize_dim(dim, self.ndim, op)
        return xp.moveaxis(self._data, d, 0), d

    def _distinct_result(self, values, inverse, counts, return_inverse, return_counts):
        out = [self._make(values, self.device, False)]
        if return_inverse:
            out.append(self._make(inverse.astype(backend.int64), self.device, False))
        if return_counts:
            out.append(self._make(counts.astype(backend.int64), self.device, False))
        return out[0] if len(out) == 1 else tuple(out)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 (PyTorch's name)
        """The distinct values (sorted; PyTorch's CPU op sorts for sorted=False too; each NaN is one of
        its own, as PyTorch's), or the distinct slices along dim; with the inverse (where each
        element went) and the counts."""
        xp = backend.namespace(self.device)
        a, d = self._distinct(dim, "unique")
        if d is None:
            values, inverse, counts = xp.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
            return self._distinct_result(values, inverse.reshape(self.shape), counts, return_inverse, return_counts)
        rows = a.reshape(a.shape[0], math.prod(a.shape[1:]))
        if rows.shape[0] == 0:
            zero = xp.zeros(0, dtype=backend.int64)
            return self._distinct_result(xp.moveaxis(a, 0, d), zero, zero, return_inverse, return_counts)
        order = xp.lexsort(rows.T[::-1]) if rows.shape[1] else xp.arange(rows.shape[0])
        ranked = rows[order]
        starts = xp.concatenate([xp.ones(1, dtype=bool), (ranked[1:] != ranked[:-1]).any(axis=1)])
        first = xp.nonzero(starts)[0]
        inverse = xp.zeros(rows.shape[0], dtype=backend.int64)
        inverse[order] = xp.cumsum(starts) - 1
        counts = xp.diff(xp.concatenate([first, xp.asarray([rows.shape[0]])]))
        values = xp.moveaxis(a[order[first]], 0, d)
        return self._distinct_result(values, inverse, counts, return_inverse, return_counts)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """The values (or slices along dim) with each run of equal consecutive ones kept once; with
        the inverse (the run each element is in) and the run lengths."""
        xp = backend.namespace(self.device)
        a, d = self._distinct(dim, "unique_consecutive")
        n = a.shape[0]
        rows = a.reshape(n, math.prod(a.shape[1:])) if d is not None else a.reshape(n, 1)
        starts = xp.concatenate([xp.ones(min(n, 1), dtype=bool), (rows[1:] != rows[:-1]).any(axis=1)])
        first = xp.nonzero(starts)[0]
        inverse = xp.cumsum(starts) - 1
        counts = xp.diff(xp.concatenate([first, xp.asarray([n])])) if n else xp.zeros(0, dtype=backend.int64)
        if d is None:
            return self._distinct_result(a[first], inverse.reshape(self.shape), counts, return_inverse, return_counts)
        return self._distinct_result(xp.moveaxis(a[first], 0, d), inverse, counts, return_inverse, return_counts)

    def equal(self, other) -> bool:
        """True when other has the same shape and every element is equal (NaN equals nothing)."""
        if self.shape != other.shape:
            return False
        return bool((self._data == other._data).all())

    # ------------------------------------------------------------------ covariance and renorm
    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance matrix of the variables in the rows (a 1-d input: one variable), the
        observations in the columns, as torch.cov: weighted by fweights (integer frequencies) and
        aweights (floating importances), normalised by sum(w) - correction (see its docs)."""
        if self.ndim > 2:
            raise RuntimeError(
                f"cov(): expected input to have two or fewer dimensions but got an input with {self.ndim} dimensions"
            )
        x = (self if self.ndim == 2 else self.reshape(1, -1))._floating("cov")
        n = x.shape[1]
        w = None
        for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
            if weights is None:
                continue
            if weights.ndim > 1:
                raise RuntimeError(
                    f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                    f"{weights.ndim} dimensions"
                )
            if (weights.dtype.kind in "iu") != integral or weights.dtype.kind == "b":
                kind = "integral" if integral else "floating point"
                raise RuntimeError(
                    f"cov(): expected {name} to have {kind} dtype but got {name} with {weights.dtype} dtype"
                )
            if weights.numel() != n:
                raise RuntimeError(
                    f"cov(): expected {name} to have the same numel as there are observations in the input "
                    f"but got {weights.numel()} != {n}"
                )
            if weights.numel() and not bool((weights._data >= 0).all()):
                raise RuntimeError(f"cov(): {name} cannot be negative")
            w = weights if w is None else w * weights
        if w is None:
            total = n
            avg = x.sum(1) / n
        else:
            total = w.sum()
            avg = (x * w).sum(1) / total
        if w is not None and aweights is not None and correction != 0:
            norm = total - correction * (w * aweights).sum() / total
        else:
            norm = total - correction
        if float(norm) <= 0:
            warnings.warn(
                "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                "observations.",
                UserWarning,
                stacklevel=2,
            )
            norm = norm * 0
        x = x - avg.unsqueeze(1)
        c = x.matmul((x if w is None else x * w).T)
        return (c / norm).squeeze()

    def corrcoef(self):
        """Pearson's correlation coefficients: cov / (std_i std_j), clipped to [-1, 1]."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        std = c.diagonal().sqrt()
        c = c / std.reshape(-1, 1)
        c = c / std.reshape(1, -1)
        return c.clamp(-1, 1)

    def renorm(self, p, dim, maxnorm):
        """Each slice along dim whose p-norm exceeds maxnorm scaled to norm maxnorm (divided by
        norm + 1e-7, as PyTorch); the others unchanged.  Differentiable through the norm."""
        if self.ndim < 2:
            raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
        if not p > 0:
            raise RuntimeError("renorm: non-positive-norm not supported")
        if maxnorm < 0:
            raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
        d = normalize_dim(dim, self.ndim, "renorm")
        rest = tuple(i for i in range(self.ndim) if i != d)
        a = self.abs()
        if math.isinf(p):
            norm = a.amax(rest, keepdim=True)
        elif p == 1:
            norm = a.sum(rest, keepdim=True)
        elif p == 2:
            norm = (a * a).sum(rest, keepdim=True).sqrt()
        else:
            norm = (a**p).sum(rest, keepdim=True) ** (1 / p)
        small = self._make(~(norm._data > maxnorm), self.device, False)
        return self * (maxnorm / (norm + 1e-7)).masked_fill(small, 1.0)
