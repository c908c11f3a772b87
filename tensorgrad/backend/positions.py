"""Where a view's elements lie in the array whose memory it shares: the places a write through
any view takes in its base (tensor_methods/inplace.py records them, as PyTorch's CopySlices)."""

from __future__ import annotations

from . import strict
from .devices import device_of, namespace
from .host import _unwrapped, address


def positions_in(view, base):
    """Where each element of `view`, an array over `base`'s memory, lies in `base`: a tuple of
    integer arrays of `view`'s shape, one per dim of `base`, so that `base[index]` holds `view`'s
    elements (each place once), made on `view`'s device without reading anything back.  None
    where the layouts do not tell: `base` not dense (its dims, by stride, must step each past the
    ones below), a negative stride, another dtype, or memory outside `base`.

    Each element's byte offset from `base`'s first is `start + sum_k i_k * view.strides[k]`; in a
    dense `base` an offset is `sum_d j_d * base.strides[d]`, a number in mixed radix whose digit
    for dim d is `(offset // base.strides[d]) % base.shape[d]`.  Where each dim of `view` steps
    along one dim of `base` (transposes, permutes, slices: `_separable`), the index is made of
    aranges broadcast to `view`'s shape, nothing of `view`'s size held; otherwise (a diagonal, a
    reshape's merged dims) of the offsets."""
    v, b = _unwrapped(view), _unwrapped(base)
    if v.dtype != b.dtype or any(st < 0 for st in v.strides):
        return None
    xp = namespace(device_of(v))
    if v.size == 0:  # nothing to place (and the strides of a base without elements tell nothing)
        return _like(view, tuple(xp.zeros(v.shape, xp.int64) for _ in b.shape)) if b.ndim else None
    if b.ndim == 0:  # its one element, in the view's shape of 1s
        return (None,) * v.ndim if address(v) == address(b) and v.size == 1 else None
    dims = [(st, n) for st, n in zip(b.strides, b.shape) if n > 1]
    expected = b.itemsize
    for st, n in sorted(dims):
        if st != expected:
            return None
        expected *= n
    start = address(v) - address(b)
    last = start + sum((n - 1) * st for st, n in zip(v.strides, v.shape))
    if start < 0 or last + v.itemsize > b.size * b.itemsize:
        return None
    first = [(start // st) % n if n > 1 else 0 for st, n in zip(b.strides, b.shape)]  # the view's first element's
    index = _separable(v, b, first, xp)
    if index is None:
        offset = xp.full(v.shape, start, dtype=xp.int64)
        for k, (st, n) in enumerate(zip(v.strides, v.shape)):
            offset = offset + _along(xp.arange(n, dtype=xp.int64) * st, k, v.ndim)
        index = tuple((offset // st) % n if n > 1 else xp.zeros(v.shape, xp.int64) for st, n in zip(b.strides, b.shape))
    return _like(view, index)


def _separable(v, b, first, xp):
    """The index where each dim of `v` of size > 1 steps along its own dim of `b` (`m` of its
    elements a step, never past its end, so no digit carries into the next): that dim's positions
    are `first + m * arange`; the other dims of `b` stay at `first`.  None where two dims of `v`
    step along one dim of `b` (overlapping windows) or one steps across several (a diagonal)."""
    steps = {}  # dim of b -> (dim of v, elements a step)
    for k, (st, n) in enumerate(zip(v.strides, v.shape)):
        if n == 1:
            continue
        d = next((d for d, (bst, bn) in enumerate(zip(b.strides, b.shape))
                  if bn > 1 and st % bst == 0 and first[d] + st // bst * (n - 1) < bn), None)  # fmt: skip
        if d is None or d in steps:
            return None
        steps[d] = (k, st // b.strides[d])
    index = []
    for d in range(b.ndim):
        if d in steps:
            k, m = steps[d]
            places = _along(first[d] + m * xp.arange(v.shape[k], dtype=xp.int64), k, v.ndim)
        else:
            places = xp.asarray(first[d], dtype=xp.int64)
        index.append(xp.broadcast_to(places, v.shape))
    return tuple(index)


def _along(a, k, ndim):
    """The 1-d `a` laid along dim `k` of `ndim` dims (size 1 in the others), to broadcast."""
    return a.reshape((1,) * k + (a.shape[0],) + (1,) * (ndim - k - 1))


def _like(view, index):
    """The index arrays on the view's device: StrictArrays for a strict view."""
    return tuple(strict.StrictArray(i) for i in index) if isinstance(view, strict.StrictArray) else index
