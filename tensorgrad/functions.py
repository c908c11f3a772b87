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
from .tensor_methods.common import accepts_keepdims, broadcast_shapes, normalize_dim


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
    broadcast_shapes("where", broadcast_shapes("where", condition.shape, x.shape), y.shape)
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
