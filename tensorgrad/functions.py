"""torch.* functions that take several tensors (cat, stack, where) and the functional
spellings of Tensor methods (tg.exp(x) == x.exp())."""

from __future__ import annotations

import builtins  # the module defines max, min, all, ... as PyTorch does; the built-ins stay reachable
import collections

from . import backend
from .backend import ShapeError
from .ops.einsum import Einsum
from .ops.masking import Where
from .ops.shape import Cat, Stack
from .tensor import Tensor
from .tensor_methods.common import accepts_keepdims, normalize_dim
from .tensor_methods.common import broadcast_shapes as _broadcast
from .tensor_methods.linalg import tensordot as _tensordot


def _same_kind(tensors, op):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dtype:
            dtype = backend.result_type(dtype, t.dtype)
    return [t if t.dtype == dtype else t.to(dtype) for t in tensors]


def cat(tensors, dim=0) -> Tensor:
    """Concatenate along an existing dim; all other dims must agree."""
    tensors = _same_kind(tensors, "cat")
    # PyTorch's legacy rule: a 1-d empty tensor joins anything (it is left out), unless all are such
    tensors = [t for t in tensors if t.shape != (0,)] or tensors
    d = normalize_dim(dim, tensors[0].ndim, "cat")
    first = tensors[0].shape
    for t in tensors[1:]:
        if t.ndim != len(first) or t.shape[:d] + t.shape[d + 1 :] != first[:d] + first[d + 1 :]:
            raise backend.ShapeError(f"cat: shapes {first} and {t.shape} differ outside dim {dim}")
    return Cat.apply(*tensors, axis=d)


def stack(tensors, dim=0) -> Tensor:
    """Join along a new dim; all shapes must be equal."""
    tensors = _same_kind(tensors, "stack")
    for t in tensors[1:]:
        if t.shape != tensors[0].shape:
            raise backend.ShapeError(f"stack: expects tensors of equal shape, got {tensors[0].shape} and {t.shape}")
    return Stack.apply(*tensors, axis=normalize_dim(dim, tensors[0].ndim + 1, "stack"))


def where(condition: Tensor, input, other) -> Tensor:
    """input where condition else other (all three broadcast)."""
    if not isinstance(condition, Tensor) or condition.dtype != backend.bool_:
        raise TypeError("where: condition must be a bool tensor")
    device = condition.device
    x = input if isinstance(input, Tensor) else Tensor(input, device=device)
    y = other if isinstance(other, Tensor) else Tensor(other, device=device)
    if x.is_floating_point() != y.is_floating_point() and not isinstance(input, Tensor):
        x = x.to(y.dtype)
    elif x.is_floating_point() != y.is_floating_point() and not isinstance(other, Tensor):
        y = y.to(x.dtype)
    x, y = _same_kind([x, y], "where")
    _broadcast("where", _broadcast("where", condition.shape, x.shape), y.shape)
    return Where.apply(condition, x, y)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a.matmul(b)


def exp(x: Tensor) -> Tensor:
    return x.exp()


def log(x: Tensor) -> Tensor:
    return x.log()


def exp2(x: Tensor) -> Tensor:
    return x.exp2()


def log2(x: Tensor) -> Tensor:
    return x.log2()


def log10(x: Tensor) -> Tensor:
    return x.log10()


def sqrt(x: Tensor) -> Tensor:
    return x.sqrt()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def relu(x: Tensor) -> Tensor:
    return x.relu()


@accepts_keepdims
def sum(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None) -> Tensor:  # noqa: A001 (PyTorch's name)
    return x.sum(dim, keepdim, dtype=dtype, axis=axis)


@accepts_keepdims
def mean(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None) -> Tensor:
    return x.mean(dim, keepdim, dtype=dtype, axis=axis)


def softmax(x: Tensor, dim, dtype=None) -> Tensor:
    return x.softmax(dim, dtype)


def log_softmax(x: Tensor, dim, dtype=None) -> Tensor:
    return x.log_softmax(dim, dtype)


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    return x.masked_fill(mask, value)


# ---------------------------------------------------------------- indexing and shape
def gather(input: Tensor, dim, index) -> Tensor:
    return input.gather(dim, index)


def scatter(input: Tensor, dim, index, src=None, value=None, reduce=None) -> Tensor:
    return input.scatter(dim, index, src, value, reduce)


def scatter_add(input: Tensor, dim, index, src) -> Tensor:
    return input.scatter_add(dim, index, src)


def scatter_reduce(input: Tensor, dim, index, src, reduce, include_self=True) -> Tensor:
    return input.scatter_reduce(dim, index, src, reduce, include_self=include_self)


def index_select(input: Tensor, dim, index) -> Tensor:
    return input.index_select(dim, index)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    return input.masked_select(mask)


def nonzero(input: Tensor, as_tuple=False):
    return input.nonzero(as_tuple=as_tuple)


def repeat_interleave(input: Tensor, repeats, dim=None, output_size=None) -> Tensor:
    return input.repeat_interleave(repeats, dim, output_size=output_size)


def tile(input: Tensor, dims) -> Tensor:
    return input.tile(dims)


def flip(input: Tensor, dims) -> Tensor:
    return input.flip(dims)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    return input.roll(shifts, dims)


def diagonal(input: Tensor, offset=0, dim1=0, dim2=1) -> Tensor:
    return input.diagonal(offset, dim1, dim2)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-d tensors: out[k] varies along dim k ("ij"; "xy" swaps the first two).
    Each grid is a reshape and an expand of one input, so its gradient is summed back by the engine."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-d tensors, got shape {t.shape}")
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    sizes = [tensors[k].numel() for k in order]
    grids = []
    for k, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(k)] = -1
        grids.append(t.reshape(shape).expand(*sizes))
    return tuple(grids)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(equation: str, *operands) -> Tensor:
    """Sum of products over labelled axes, e.g. einsum("bij,bjk->bik", a, b); "..." and the implicit
    output (the labels seen once, sorted) as in PyTorch.  One op (ops/einsum.py), whose backward is an
    einsum per operand."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: expected at least one operand")
    operands = _same_kind(operands, "einsum")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: the equation {equation!r} has {len(terms)} operands, got {len(operands)} tensors")
    free = [c for c in _LETTERS if c not in eq]
    dims_under_ellipsis = (t.ndim - len(term.replace("...", "")) for term, t in zip(terms, operands) if "..." in term)
    n_ellipsis = builtins.max(dims_under_ellipsis, default=0)
    spelled = []
    for term, t in zip(terms, operands):
        letters = term.replace("...", "")
        if not builtins.all(c in _LETTERS for c in letters) or term.count("...") > 1:
            raise ValueError(f"einsum: invalid subscript {term!r} in {equation!r} (letters and one '...' only)")
        k = t.ndim - len(letters)
        if ("..." in term and k < 0) or ("..." not in term and k != 0):
            raise ShapeError(f"einsum: subscript {term!r} has {len(letters)} labels for an operand of shape {t.shape}")
        spelled.append(term.replace("...", "".join(free[n_ellipsis - k : n_ellipsis])))
    ellipsis = "".join(free[:n_ellipsis])
    if arrow:
        output = rhs.replace("...", ellipsis)
    else:
        counts = "".join(spelled)
        output = ellipsis + "".join(sorted(c for c in set(lhs) if c in _LETTERS and counts.count(c) == 1))
    sizes = {}
    for term, t in zip(spelled, operands):
        for c, n in zip(term, t.shape):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ShapeError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} in {equation!r}")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    for c in output:
        if c not in sizes or output.count(c) > 1:
            raise ValueError(f"einsum: output label {c!r} of {equation!r} must appear once and in an input")
    return Einsum.apply(*operands, terms=tuple(spelled), output=output)


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


# ---------------------------------------------------------------- arithmetic and elementwise math as functions
def _numbers(input, other):
    """torch.add(2.5, 3) and the other binary functions of two Python numbers: the first becomes a
    0-d tensor (float32 or int64, PyTorch's defaults), so the answer is a tensor, as in PyTorch."""
    if isinstance(input, Tensor) or isinstance(other, Tensor):
        return input
    return Tensor(input)


def _one_tensor(op: str, input, other):
    """pow and remainder take a number for one side, not both (PyTorch has no such overload)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"{op}(): one of input and other must be a Tensor, got {type(input).__name__} and {type(other).__name__}"
        )


def add(input, other, *, alpha=1) -> Tensor:
    input = _numbers(input, other)
    return input.add(other, alpha=alpha) if isinstance(input, Tensor) else other.__radd__(input)


def sub(input, other, *, alpha=1) -> Tensor:
    input = _numbers(input, other)
    if isinstance(input, Tensor):
        return input.sub(other, alpha=alpha)
    return (other * alpha if alpha != 1 else other).__rsub__(input)


def mul(input, other) -> Tensor:
    input = _numbers(input, other)
    return input * other if isinstance(input, Tensor) else other.__rmul__(input)


def div(input, other, *, rounding_mode=None) -> Tensor:
    input = _numbers(input, other)
    if isinstance(input, Tensor):
        return input.div(other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        return other.__rtruediv__(input)
    return Tensor(input, device=other.device).div(other, rounding_mode=rounding_mode)


def pow(input, exponent) -> Tensor:  # noqa: A001 (PyTorch's name)
    """input ** exponent: either may be a number (not both)."""
    _one_tensor("pow", input, exponent)
    return input**exponent if isinstance(input, Tensor) else exponent.__rpow__(input)


def abs(input: Tensor) -> Tensor:  # noqa: A001 (PyTorch's name)
    return input.abs()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def sin(input: Tensor) -> Tensor:
    return input.sin()


def cos(input: Tensor) -> Tensor:
    return input.cos()


def tan(input: Tensor) -> Tensor:
    return input.tan()


def sign(input: Tensor) -> Tensor:
    return input.sign()


def round(input: Tensor, *, decimals=0) -> Tensor:  # noqa: A001 (PyTorch's name)
    return input.round(decimals)


def floor(input: Tensor) -> Tensor:
    return input.floor()


def ceil(input: Tensor) -> Tensor:
    return input.ceil()


def trunc(input: Tensor) -> Tensor:
    return input.trunc()


def clamp(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002 (PyTorch's names)
    return input.clamp(min, max)


clip = clamp


def fmod(input: Tensor, other) -> Tensor:
    return input.fmod(other)


def remainder(input, other) -> Tensor:
    _one_tensor("remainder", input, other)
    return input.remainder(other) if isinstance(input, Tensor) else other.__rmod__(input)


def copysign(input: Tensor, other) -> Tensor:
    return input.copysign(other)


def floor_divide(input, other) -> Tensor:
    return div(input, other, rounding_mode="floor")


# ---------------------------------------------------------------- reductions and scans as functions
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
    return x.var(dim, unbiased, keepdim, correction, axis=axis), x.mean(dim, keepdim, axis=axis)


@accepts_keepdims
def std_mean(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """(standard deviation, mean), as torch.std_mean (a lone bool in place of dim is `unbiased`)."""
    if isinstance(dim, bool):
        return std_mean(x, None, dim if unbiased is None else unbiased, keepdim, correction=correction, axis=axis)
    return x.std(dim, unbiased, keepdim, correction, axis=axis), x.mean(dim, keepdim, axis=axis)


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


# ---------------------------------------------------------------- comparing values
def isclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    return input.isclose(other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return input.allclose(other, rtol, atol, equal_nan)


# ---------------------------------------------------------------- counting values (no gradient, as in PyTorch)
HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _count(x: Tensor, edges, weight, op: str):
    """Counts (or summed weights) of the values of x in the bins between `edges` (an array of
    x's dtype): bin i holds edges[i] <= v < edges[i+1], the last bin also its right edge; values
    outside are not counted.  Runs on x's device (xp.histogram), never recorded in a graph."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"{op}" not implemented for {x.dtype}: pass a floating-point tensor')
    xp = backend.namespace(x.device)
    w = None if weight is None else weight._data.reshape(-1)
    counts, _ = xp.histogram(x._data.reshape(-1), bins=edges, weights=w)
    return counts.astype(x.dtype, copy=False)


def _linspace_as_torch(xp, lo, hi, steps):
    """PyTorch's linspace: lo + i * step for the first half, hi - (steps - 1 - i) * step for the rest
    (NumPy's lo + i * step throughout can differ in the last bit, which moves a value on an edge)."""
    step = (hi - lo) / (steps - 1)
    i = xp.arange(steps, dtype=xp.float64)
    return xp.where(i < steps // 2, lo + i * step, hi - (steps - 1 - i) * step)


def _count_equal_width(x: Tensor, lo, hi, bins, weight, op: str):
    """Counts in `bins` equal-width bins from lo to hi, binned as PyTorch bins them (its linear
    interpolation): bin floor((v - lo) * bins / (hi - lo)), the last bin also holding hi; values
    outside [lo, hi] are not counted.  A value a rounding away from an edge may fall in another
    bin than the edges alone (`_count`) would put it in: PyTorch's bin, not the edges', is the answer."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"{op}" not implemented for {x.dtype}: pass a floating-point tensor')
    xp = backend.namespace(x.device)
    v = x._data.reshape(-1)
    w = xp.ones(v.shape, dtype=x.dtype) if weight is None else weight._data.reshape(-1).astype(x.dtype, copy=False)
    inside = (v >= lo) & (v <= hi)
    with backend.quiet():  # NaN values are outside (and their bin is never used)
        pos = xp.floor((xp.where(inside, v, lo) - lo) * bins / (hi - lo)).astype(backend.int64)
    pos = xp.minimum(pos, bins - 1)
    counts = xp.zeros(bins, dtype=x.dtype)
    backend.add_at(xp, counts, pos, xp.where(inside, w, 0))
    return counts


def _value_range(x: Tensor, lo, hi, widen: float):
    """(lo, hi) as given, else the data's min and max (0 and 1 for no data); an empty range is
    widened by `widen` on each side, as PyTorch does (0.5 for histogram, 1 for histc)."""
    if lo is None:
        lo, hi = (0.0, 1.0) if x.numel() == 0 else (float(x._data.min()), float(x._data.max()))
    lo, hi = builtins.float(lo), builtins.float(hi)
    return (lo - widen, hi + widen) if lo == hi else (lo, hi)


def histogram(input: Tensor, bins, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's name)
    """(hist, bin_edges), as torch.histogram: `bins` equal-width bins over `range` (default: the
    data's min to max) or the given 1-d tensor of increasing edges; `weight` sums weights instead
    of counting; `density` divides by the total and the bin widths so the histogram integrates to 1."""
    xp = backend.namespace(input.device)
    if isinstance(bins, Tensor):
        edges = bins._data.astype(input.dtype, copy=False)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        lo, hi = range if range is not None else (None, None)
        if lo is not None and lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for dimension 0"
            )
        lo, hi = _value_range(input, lo, hi, 0.5)
        edges = _linspace_as_torch(xp, lo, hi, bins + 1).astype(input.dtype)
    hist = _count(input, edges, weight, "histogram")
    if density:
        with backend.quiet():  # no data (or zero weight): 0 / 0 = nan, as in PyTorch
            hist = hist / (hist.sum() * xp.diff(edges))
    return HistogramResult(input._make(hist, input.device, False), input._make(edges, input.device, False))


def histc(input: Tensor, bins=100, min=0, max=0) -> Tensor:  # noqa: A002 (PyTorch's names)
    """Counts in `bins` equal-width bins from min to max, as torch.histc; min == max (the default
    0, 0) takes the data's min and max instead.  A float tensor of the input's dtype."""
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = (None, None) if min == max else (min, max)
    lo, hi = _value_range(input, lo, hi, 1.0)
    return input._make(_count_equal_width(input, lo, hi, bins, None, "histogram_cpu"), input.device, False)


# ---------------------------------------------------------------- statistics (tensor_methods/statistics.py)
@accepts_keepdims
def median(input: Tensor, dim=None, keepdim=False):  # noqa: A002 (PyTorch's name)
    return input.median(dim, keepdim)


@accepts_keepdims
def nanmedian(input: Tensor, dim=None, keepdim=False):  # noqa: A002 (PyTorch's name)
    return input.nanmedian(dim, keepdim)


@accepts_keepdims
def mode(input: Tensor, dim=-1, keepdim=False):  # noqa: A002 (PyTorch's name)
    return input.mode(dim, keepdim)


@accepts_keepdims
def kthvalue(input: Tensor, k, dim=-1, keepdim=False):  # noqa: A002 (PyTorch's name)
    return input.kthvalue(k, dim, keepdim)


@accepts_keepdims
def quantile(input: Tensor, q, dim=None, keepdim=False, *, interpolation="linear") -> Tensor:  # noqa: A002
    return input.quantile(q, dim, keepdim, interpolation=interpolation)


@accepts_keepdims
def nanquantile(input: Tensor, q, dim=None, keepdim=False, *, interpolation="linear") -> Tensor:  # noqa: A002
    return input.nanquantile(q, dim, keepdim, interpolation=interpolation)


@accepts_keepdims
def nansum(input: Tensor, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.nansum(dim, keepdim, dtype=dtype)


@accepts_keepdims
def nanmean(input: Tensor, dim=None, keepdim=False, *, dtype=None) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.nanmean(dim, keepdim, dtype=dtype)


@accepts_keepdims
def aminmax(input: Tensor, *, dim=None, keepdim=False):  # noqa: A002 (PyTorch's name)
    return input.aminmax(dim=dim, keepdim=keepdim)


def count_nonzero(input: Tensor, dim=None) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.count_nonzero(dim)


def msort(input: Tensor) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.msort()


def argwhere(input: Tensor) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.argwhere()


def bincount(input: Tensor, weights=None, minlength=0) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.bincount(weights, minlength)


def unique(input: Tensor, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    return input.unique(sorted, return_inverse, return_counts, dim)


def unique_consecutive(input: Tensor, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    return input.unique_consecutive(return_inverse, return_counts, dim)


def cov(input: Tensor, *, correction=1, fweights=None, aweights=None) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.cov(correction=correction, fweights=fweights, aweights=aweights)


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.corrcoef()


def renorm(input: Tensor, p, dim, maxnorm) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.renorm(p, dim, maxnorm)


def equal(input: Tensor, other: Tensor) -> builtins.bool:  # noqa: A002 (PyTorch's name)
    return input.equal(other)


def isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor:
    """True where an element of `elements` is among `test_elements` (either may be a number), a bool
    tensor of elements' shape; invert=True negates it."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected elements or test_elements to be a tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    a = elements._data if isinstance(elements, Tensor) else elements
    b = test_elements._data if isinstance(test_elements, Tensor) else test_elements
    xp = backend.namespace(like.device)
    out = xp.isin(xp.asarray(a), xp.asarray(b), assume_unique=assume_unique, invert=invert)
    return like._make(backend.ensure_array(xp, out), like.device, False)


def _search(boundaries, values, right: builtins.bool, out_int32: builtins.bool, like: Tensor):
    """For each value, the number of boundaries below it (right=False: boundaries < v; right=True:
    boundaries <= v), i.e. its insertion point in each sorted row of `boundaries` (an array)."""
    xp = backend.namespace(like.device)
    v = values._data if isinstance(values, Tensor) else xp.asarray(values, dtype=boundaries.dtype)
    if boundaries.ndim == 1:
        out = xp.searchsorted(boundaries, v, side="right" if right else "left")
    else:  # row by row: count the boundaries on the wanted side of each value (O(values x boundaries))
        below = boundaries[..., None, :] <= v[..., :, None] if right else boundaries[..., None, :] < v[..., :, None]
        out = below.sum(axis=-1)
    dtype = backend.int32 if out_int32 else backend.int64
    return like._make(backend.ensure_array(xp, out).astype(dtype), like.device, False)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32=False, right=False, side=None, sorter=None) -> Tensor:  # noqa: A002
    """Where each value of `input` would go in the last dim of `sorted_sequence` to keep it sorted:
    the first such index (side 'left') or the last (right=True, side 'right'), as torch.searchsorted.
    sorted_sequence is 1-d, or has input's leading dims; `sorter` sorts an unsorted one.  No gradient."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
            )
        right = side == "right"
    seq = sorted_sequence._data
    values_shape = input.shape if isinstance(input, Tensor) else ()
    if seq.ndim != 1 and (len(values_shape) != seq.ndim or values_shape[:-1] != sorted_sequence.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(sorted_sequence.shape)} "
            f"and input value tensor {list(values_shape)}"
        )
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size")
        if sorter.dtype != backend.int64:
            raise TypeError("torch.searchsorted(): sorter must be a tensor of long dtype")
        seq = backend.namespace(sorted_sequence.device).take_along_axis(seq, sorter._data, axis=-1)
    return _search(seq, input, right, out_int32, sorted_sequence)


def bucketize(input, boundaries: Tensor, *, out_int32=False, right=False) -> Tensor:  # noqa: A002
    """The bucket of each value between the sorted 1-d `boundaries`: i with b[i-1] < v <= b[i]
    (right=True: b[i-1] <= v < b[i]), as torch.bucketize: searchsorted(boundaries, input, right=right)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries._data, input, right, out_int32, boundaries)


def _along(y: Tensor, d: int, start, stop):
    """y[..., start:stop, ...] along dim d (differentiable)."""
    return y[(slice(None),) * d + (slice(start, stop),)]


def _spacing(y: Tensor, x: Tensor, d: int, op: str):
    """The widths x[i+1] - x[i] along y's dim d: a 1-d x lies along d, an N-d x broadcasts with y."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(
                f"{op}: There must be one `x` value for each sample point, got {x.shape[0]} and {y.shape[d]}"
            )
        shape = [1] * y.ndim
        shape[d] = y.shape[d] - 1
        return (x[1:] - x[:-1]).reshape(shape)
    dx = d - y.ndim + x.ndim  # the same dim, counted from the end
    return _along(x, dx, 1, None) - _along(x, dx, 0, -1)


def _trapezoid_args(y: Tensor, x, dx, dim, op: str):
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): pass x or dx, not both")
    return normalize_dim(dim, y.ndim, op)


def trapezoid(y: Tensor, x=None, *, dx=None, dim=-1) -> Tensor:
    """The trapezoidal rule along dim: sum_i (x[i+1] - x[i]) (y[i] + y[i+1]) / 2, with the sample
    points x (a tensor) or a constant spacing dx (default 1), as torch.trapezoid."""
    d = _trapezoid_args(y, x, dx, dim, "trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.sum(d)  # zeros: an empty integral
    if x is None:  # PyTorch's form for a constant spacing: (sum y - (y_0 + y_last) / 2) dx
        first, last = _along(y, d, 0, 1).squeeze(d), _along(y, d, n - 1, n).squeeze(d)
        return (y.sum(d) - (first + last) * 0.5) * (1 if dx is None else dx)
    return (_spacing(y, x, d, "trapezoid") * (_along(y, d, 0, n - 1) + _along(y, d, 1, n))).sum(d) / 2


def trapz(y: Tensor, x=None, *, dx=None, dim=-1) -> Tensor:
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim=-1) -> Tensor:
    """The running trapezoidal integral along dim (one value fewer than y along it)."""
    d = _trapezoid_args(y, x, dx, dim, "cumulative_trapezoid")
    n = y.shape[d]
    if n == 0:
        return y
    pairs = _along(y, d, 0, n - 1) + _along(y, d, 1, n)
    if x is None:
        return ((1 if dx is None else dx) / 2 * pairs).cumsum(d)
    return (_spacing(y, x, d, "cumulative_trapezoid") * pairs).cumsum(d) / 2


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """F.one_hot: an int64 tensor of shape tensor.shape + (num_classes,), 1 at each class index;
    num_classes=-1 takes the largest index + 1.  Not differentiable (integer in, integer out)."""
    if tensor.dtype != backend.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = backend.namespace(tensor.device)
    ids = tensor._data
    if ids.size == 0 and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = int(ids.max()) + 1
    if ids.size and int(ids.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if ids.size and int(ids.max()) >= num_classes or num_classes < -1:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (ids[..., None] == xp.arange(builtins.max(num_classes, 0))).astype(backend.int64)
    return tensor._make(out, tensor.device, False)


# ---------------------------------------------------------------- linear algebra (tensor_methods/linalg.py)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    return input.mm(mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return input.bmm(mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return input.mv(vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return input.dot(other)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    return input.vdot(other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    return input.inner(other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    return input.outer(vec2)


ger = outer


def kron(input: Tensor, other: Tensor) -> Tensor:
    return input.kron(other)


def trace(input: Tensor) -> Tensor:
    return input.trace()


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addmm(mat1, mat2, beta=beta, alpha=alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addmv(mat, vec, beta=beta, alpha=alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addr(vec1, vec2, beta=beta, alpha=alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return input.addbmm(batch1, batch2, beta=beta, alpha=alpha)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input.addcmul(tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input.addcdiv(tensor1, tensor2, value=value)


def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    return input.cross(other, dim)


def norm(input: Tensor, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:
    return input.norm(p, dim, keepdim, dtype)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    return input.dist(other, p)


# ---------------------------------------------------------------- shape spellings (tensor_methods/shape.py)
def movedim(input: Tensor, source, destination) -> Tensor:
    return input.movedim(source, destination)


moveaxis = movedim


def swapaxes(input: Tensor, axis0, axis1) -> Tensor:
    return input.swapaxes(axis0, axis1)


swapdims = swapaxes


def t(input: Tensor) -> Tensor:
    return input.t()


def adjoint(input: Tensor) -> Tensor:
    return input.adjoint()


def ravel(input: Tensor) -> Tensor:
    return input.ravel()


def broadcast_to(input: Tensor, size) -> Tensor:
    return input.broadcast_to(size)


def unflatten(input: Tensor, dim, sizes) -> Tensor:
    return input.unflatten(dim, sizes)


def narrow(input: Tensor, dim, start, length) -> Tensor:
    return input.narrow(dim, start, length)


def narrow_copy(input: Tensor, dim, start, length) -> Tensor:
    return input.narrow_copy(dim, start, length)


def select(input: Tensor, dim, index) -> Tensor:
    return input.select(dim, index)


def unbind(input: Tensor, dim=0):
    return input.unbind(dim)


def tensor_split(input: Tensor, indices_or_sections, dim=0):
    return input.tensor_split(indices_or_sections, dim)


def split_with_sizes(input: Tensor, split_sizes, dim=0):
    return input.split_with_sizes(split_sizes, dim)


def hsplit(input: Tensor, indices_or_sections):
    return input.hsplit(indices_or_sections)


def vsplit(input: Tensor, indices_or_sections):
    return input.vsplit(indices_or_sections)


def dsplit(input: Tensor, indices_or_sections):
    return input.dsplit(indices_or_sections)


def fliplr(input: Tensor) -> Tensor:
    return input.fliplr()


def flipud(input: Tensor) -> Tensor:
    return input.flipud()


def rot90(input: Tensor, k=1, dims=(0, 1)) -> Tensor:
    return input.rot90(k, dims)


def diag(input: Tensor, diagonal=0) -> Tensor:
    return input.diag(diagonal)


def diag_embed(input: Tensor, offset=0, dim1=-2, dim2=-1) -> Tensor:
    return input.diag_embed(offset, dim1, dim2)


def diagflat(input: Tensor, offset=0) -> Tensor:
    return input.diagflat(offset)


def diff(input: Tensor, n=1, dim=-1, prepend=None, append=None) -> Tensor:
    return input.diff(n, dim, prepend, append)


def _tensors_arg(tensors, op):
    """f(a, b, c) and f([a, b, c]) alike."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t_ in tensors:
        if not isinstance(t_, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element, got {type(t_).__name__}")
    return tuple(tensors)


def _at_least(tensors, ndim, reshape, op):
    tensors = _tensors_arg(tensors, op)
    out = tuple(x if x.ndim >= ndim else reshape(x) for x in tensors)
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim: a 0-d tensor becomes shape (1,)."""
    return _at_least(tensors, 1, lambda x: x.reshape(1), "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims: () -> (1, 1), (n,) -> (1, n)."""
    return _at_least(tensors, 2, lambda x: x.reshape(1, -1) if x.ndim else x.reshape(1, 1), "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    shapes = {0: lambda x: (1, 1, 1), 1: lambda x: (1, x.shape[0], 1), 2: lambda x: x.shape + (1,)}
    return _at_least(tensors, 3, lambda x: x.reshape(shapes[x.ndim](x)), "atleast_3d")


def _sequence(tensors, op):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors) -> Tensor:
    """cat along dim 1 (dim 0 when every tensor is 1-D), after atleast_1d."""
    tensors = [atleast_1d(x) for x in _sequence(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """cat along dim 0 after atleast_2d (1-D tensors become rows)."""
    return cat([atleast_2d(x) for x in _sequence(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """cat along dim 2 after atleast_3d."""
    return cat([atleast_3d(x) for x in _sequence(tensors, "dstack")], 2)


def column_stack(tensors) -> Tensor:
    """cat along dim 1, 0-d and 1-D tensors first made columns (n, 1)."""
    return cat([x.reshape(-1, 1) if x.ndim <= 1 else x for x in _sequence(tensors, "column_stack")], 1)


def broadcast_shapes(*shapes) -> tuple:
    """The shape all the given shapes broadcast to (ints count as 1-d shapes)."""
    out = ()
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(int(n) for n in s)
        if builtins.any(n < 0 for n in s):
            raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(s)}: {list(s)}")
        out = _broadcast("broadcast_shapes", out, s)
    return out


def broadcast_tensors(*tensors):
    """Every tensor expanded to the shape they broadcast to (views: Expand)."""
    tensors = _tensors_arg(tensors, "broadcast_tensors")
    shape = ()
    for x in tensors:
        shape = _broadcast("broadcast_tensors", shape, x.shape)
    return tuple(x.expand(*shape) for x in tensors)


def block_diag(*tensors) -> Tensor:
    """The tensors (0-d as 1x1, 1-D as a row) placed along the diagonal of a matrix of zeros: each
    one padded with zero columns to the total width, then the rows concatenated (cat)."""
    tensors = _tensors_arg(tensors, "block_diag")
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {x.ndim} dimensions"
            )
    if not tensors:
        return Tensor(backend.namespace("cpu").zeros((1, 0), dtype=backend.float32))
    blocks = _same_kind(
        [x.reshape(1, 1) if x.ndim == 0 else x.reshape(1, -1) if x.ndim == 1 else x for x in tensors], "block_diag"
    )
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        n, m = b.shape
        pieces = [b.new_zeros(n, left), b, b.new_zeros(n, width - left - m)]
        rows.append(cat(pieces, 1))
        left += m
    return cat(rows, 0)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element of each 1-D tensor, as rows (k columns): meshgrid, then stack."""
    tensors = _tensors_arg(tensors, "cartesian_prod")
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
        if x.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    return _tensordot(a, b, dims)


def fill(input: Tensor, value) -> Tensor:
    """A copy of input with every element value (torch.fill); a tensor value gets the gradient."""
    return input.clone().fill_(value)


# ---------------------------------------------------------------- indexing spellings (tensor_methods/indexing.py)
def index_add(input: Tensor, dim, index, source, *, alpha=1) -> Tensor:
    return input.index_add(dim, index, source, alpha=alpha)


def index_copy(input: Tensor, dim, index, source) -> Tensor:
    return input.index_copy(dim, index, source)


def index_reduce(input: Tensor, dim, index, source, reduce, *, include_self=True) -> Tensor:
    return input.index_reduce(dim, index, source, reduce, include_self=include_self)


def index_fill(input: Tensor, dim, index, value) -> Tensor:
    return input.index_fill(dim, index, value)


def index_put(input: Tensor, indices, values, accumulate=False) -> Tensor:
    return input.index_put(indices, values, accumulate)


def take(input: Tensor, index) -> Tensor:
    return input.take(index)


def take_along_dim(input: Tensor, indices, dim=None) -> Tensor:
    return input.take_along_dim(indices, dim)


# ---------------------------------------------------------------- pointwise math (tensor_methods/pointwise.py)
def asin(input: Tensor) -> Tensor:
    return input.asin()


def acos(input: Tensor) -> Tensor:
    return input.acos()


def atan(input: Tensor) -> Tensor:
    return input.atan()


def sinh(input: Tensor) -> Tensor:
    return input.sinh()


def cosh(input: Tensor) -> Tensor:
    return input.cosh()


def asinh(input: Tensor) -> Tensor:
    return input.asinh()


def acosh(input: Tensor) -> Tensor:
    return input.acosh()


def atanh(input: Tensor) -> Tensor:
    return input.atanh()


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # NumPy's names


def expm1(input: Tensor) -> Tensor:
    return input.expm1()


def log1p(input: Tensor) -> Tensor:
    return input.log1p()


def rsqrt(input: Tensor) -> Tensor:
    return input.rsqrt()


def reciprocal(input: Tensor) -> Tensor:
    return input.reciprocal()


def square(input: Tensor) -> Tensor:
    return input.square()


def sinc(input: Tensor) -> Tensor:
    return input.sinc()


def frac(input: Tensor) -> Tensor:
    return input.frac()


def deg2rad(input: Tensor) -> Tensor:
    return input.deg2rad()


def rad2deg(input: Tensor) -> Tensor:
    return input.rad2deg()


def sgn(input: Tensor) -> Tensor:
    return input.sgn()


def logit(input: Tensor, eps=None) -> Tensor:
    return input.logit(eps)


def nan_to_num(input: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    return input.nan_to_num(nan, posinf, neginf)


def erf(input: Tensor) -> Tensor:
    return input.erf()


def erfc(input: Tensor) -> Tensor:
    return input.erfc()


def erfinv(input: Tensor) -> Tensor:
    return input.erfinv()


def lgamma(input: Tensor) -> Tensor:
    return input.lgamma()


def digamma(input: Tensor) -> Tensor:
    return input.digamma()


def i0(input: Tensor) -> Tensor:
    return input.i0()


def polygamma(n: int, input: Tensor) -> Tensor:
    return input.polygamma(n)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    return input.atan2(other)


arctan2 = atan2


def hypot(input: Tensor, other: Tensor) -> Tensor:
    return input.hypot(other)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    return input.logaddexp(other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    return input.logaddexp2(other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    return input.fmax(other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    return input.fmin(other)


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input = 0; either may be a number (not both)."""
    return input.xlogy(other) if isinstance(input, Tensor) else other._xlogy(input, reflected=True)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    return input.lerp(end, weight)


def float_power(input, exponent) -> Tensor:
    """input ** exponent in float64; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input.float_power(exponent)
    return exponent.to(backend.float64).__rpow__(input)


def true_divide(input, other) -> Tensor:
    return div(input, other)


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """other - alpha * input (sub with the operands swapped)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' must be Tensor, not {type(input).__name__}")
    scaled = input * alpha if alpha != 1 else input
    return other - scaled if isinstance(other, Tensor) else scaled.__rsub__(other)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    return input.ldexp(other)


def frexp(input: Tensor):
    return input.frexp()


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.clamp_min(min)


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.clamp_max(max)


# ---------------------------------------------------------------- no gradient: predicates, logical and bitwise ops
def isnan(input: Tensor) -> Tensor:
    return input.isnan()


def isinf(input: Tensor) -> Tensor:
    return input.isinf()


def isfinite(input: Tensor) -> Tensor:
    return input.isfinite()


def isposinf(input: Tensor) -> Tensor:
    return input.isposinf()


def isneginf(input: Tensor) -> Tensor:
    return input.isneginf()


def isreal(input: Tensor) -> Tensor:
    return input.isreal()


def signbit(input: Tensor) -> Tensor:
    return input.signbit()


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    return input.heaviside(values)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    return input.nextafter(other)


def logical_not(input: Tensor) -> Tensor:
    return input.logical_not()


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_and(other)


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_or(other)


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_xor(other)


def bitwise_xor(input, other) -> Tensor:
    """input ^ other; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input.bitwise_xor(other)
    if not isinstance(other, Tensor):
        names = f"{type(input).__name__} and {type(other).__name__}"
        raise TypeError(f"bitwise_xor(): expected a Tensor argument, got {names}")
    return other.__rxor__(input)


def _number_as_tensor(input, other: Tensor, op) -> Tensor:
    """A number `input` before a tensor `other` (a shift of 2 by a tensor), as a tensor of other's dtype."""
    if not isinstance(other, Tensor) or not isinstance(input, int):
        raise TypeError(f"{op}(): expected a Tensor argument, got {type(input).__name__} and {type(other).__name__}")
    return other._constant(input, dtype=other.dtype)


def bitwise_left_shift(input, other) -> Tensor:
    """input << other; input may be a number before a tensor."""
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other, "bitwise_left_shift")
    return input.bitwise_left_shift(other)


def bitwise_right_shift(input, other) -> Tensor:
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other, "bitwise_right_shift")
    return input.bitwise_right_shift(other)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    return input.gcd(other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    return input.lcm(other)
