"""tg.* functions of statistics written out: isin (a number on either side), searching sorted
values (searchsorted, bucketize), the trapezoidal rule (trapezoid, cumulative_trapezoid) and
one_hot.  The statistics that only call their Tensor method (median, quantile, nansum, unique, cov,
histogram, ...; tensor_methods/statistics.py) are generated (forwarders.py).  Searching has no
gradient, as in PyTorch."""

from __future__ import annotations

import builtins  # tg.functions defines max, min, all, ... as PyTorch does: builtins.X is the built-in one

from .. import backend
from ..tensor import Tensor
from ..tensor_methods.common import normalize_dim


# ---------------------------------------------------------------- membership and searching (no gradient)
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
