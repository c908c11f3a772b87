"""Sums and scans as accurate as PyTorch's: the accumulation dtype, and NumPy's sums made blocked.

PyTorch accumulates the reductions, scans and normalisations of float16 in float32 (its "acc
type") and rounds to float16 once, at the end, but for a few CPU kernels and compositions that
keep float16 and overflow (log_softmax, logsumexp, prod, nanmean, layer_norm's weight and bias
gradients).  The ops here do so throughout: `widen` gives them the array to compute in, and
`narrow` rounds their results back to the input's dtype (beyond float16's range to inf, silently,
as PyTorch's cast).  NumPy would keep float16 throughout (a sum of 5000 ones in float16 stops at
2048; the square of 300 overflows).

A float32 sum over an axis that is not the innermost one is where NumPy falls behind: it
vectorises along the contiguous axis and adds one row after another, so the error of a sum of n
terms grows like n * eps (PyTorch's cascade sum, and NumPy's own pairwise sum along a contiguous
axis, like log(n) * eps).  `sum` and `mean` bound that: a long axis of n is split into blocks of
_BLOCK, each block summed (at most _BLOCK terms one after another), and the n / _BLOCK block
totals summed the same way, recursively; one pass over the data, as fast as NumPy's own sum.  A
sum along the contiguous trailing axes goes to NumPy as it is (its pairwise sum).  Measured on
(65536, 64) standard normals summed over axis 0: error 2e-7 of the largest sum (NumPy's own 7e-6,
PyTorch's 1.5e-7), in NumPy's time; on (8192, 768) and (4096, 3072) a little faster than NumPy.

A scan (`cumsum`, `cumprod`) on the host accumulates one element after another, in NumPy as in
PyTorch's CPU kernel, which does so in its acc type: float32 for float16, and float64 for float32
(the CPU's acc type of float).  `cumsum` does the same (NumPy's cumsum with that dtype, one cast
back), so 10**6 steps of 1e-6 end at 1.0, not 1.009; it costs about 1.4 times NumPy's float32
scan, which a blocked float32 scan (scans within blocks plus the scanned block totals) did not
beat, at 7 times float64's error.

CuPy's reductions and scans are tree-shaped (parallel) and already accurate in the dtype itself;
there only float16 is widened.  The strict device runs NumPy, so it takes the host's algorithms.
"""

from __future__ import annotations

import math

import numpy as np

from . import strict

_BLOCK = 64  # terms summed one after another, at most, before a block's total is taken


def accumulation_dtype(dtype):
    """The dtype a reduction of `dtype` accumulates in (PyTorch's acc type): float32 for float16,
    the dtype itself otherwise."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def widen(a):
    """a in its accumulation dtype: float16 copied to float32, any other array as it is."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def narrow(a, dtype):
    """a (a result computed in the accumulation dtype) rounded to `dtype` once; beyond float16's
    range it is inf, silently, as PyTorch's cast.  a itself where it has that dtype already."""
    if a.dtype == dtype:
        return a
    with np.errstate(over="ignore"):
        return a.astype(dtype)


def _axes(axis, ndim):
    """axis (None, an int or a sequence, negative ones counting from the end) as a sorted tuple; a
    0-d array has none to reduce (PyTorch's dim 0 or -1 of a 0-d tensor, which NumPy's scalars take)."""
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim,)
    return tuple(sorted(a % ndim for a in axis))


def _on_host(xp) -> bool:
    return xp is np or xp is strict.xp


def sum(xp, a, axis=None, keepdims=False, dtype=None):
    """a.sum(axis, keepdims), accumulated in a's accumulation dtype and, on the host, in blocks
    (module docstring), and rounded once to `dtype`: a's own by default (accumulation_dtype(a.dtype)
    keeps the float32 sum of float16, for an op that goes on computing with it).  Integers and bools
    sum as NumPy sums them (exactly)."""
    if a.dtype.kind != "f":
        return a.sum(axis=axis, keepdims=keepdims)
    axes = _axes(axis, a.ndim)
    out = _accumulate(xp, a, axes)
    return _finish(out, a, axes, keepdims, dtype)


def mean(xp, a, axis=None, keepdims=False):
    """a.mean(axis, keepdims) in a's (floating) dtype: the blocked sum, in the accumulation dtype,
    over the count, rounded once.  An empty reduction is NaN (0 / 0), silently, as PyTorch's."""
    axes = _axes(axis, a.ndim)
    with np.errstate(invalid="ignore"):
        out = _accumulate(xp, a, axes) / math.prod(a.shape[i] for i in axes)
    return _finish(out, a, axes, keepdims)


def _finish(out, a, axes, keepdims, dtype=None):
    if not keepdims:
        out = out.reshape(tuple(n for i, n in enumerate(a.shape) if i not in axes))
    return narrow(out, a.dtype if dtype is None else dtype)


def _accumulate(xp, a, axes):
    """The sum of a over `axes` (a sorted tuple), keepdims, in a's accumulation dtype."""
    acc = accumulation_dtype(a.dtype)
    if not _on_host(xp):
        return a.sum(axis=axes, dtype=acc, keepdims=True)
    axes = tuple(i for i in axes if a.shape[i] != 1)  # nothing to add along a size-1 axis
    if math.prod(a.shape[i] for i in axes) <= _BLOCK:
        return a.sum(axis=axes, dtype=acc, keepdims=True)
    k = len(axes)  # the trailing run of reduced axes that NumPy sums pairwise, in one go
    while k > 0 and _inner(a, axes[k - 1 :]):
        k -= 1
    if k < len(axes):
        a = a.sum(axis=axes[k:], dtype=acc, keepdims=True)
    for i in reversed(axes[:k]):  # the others one at a time, in blocks
        a = _blocked(xp, a, i, acc)
    return a


def _inner(a, axes) -> bool:
    """Whether NumPy sums over `axes` pairwise: a is C-contiguous and every axis after the first
    of them is either one of them or of size 1 (so the reduced elements are its innermost loop)."""
    return a.flags.c_contiguous and all(a.shape[i] == 1 for i in range(axes[0], a.ndim) if i not in axes)


def _blocked(xp, a, axis, acc):
    """The sum over one axis (keepdims): blocks of _BLOCK summed, then their totals, recursively."""
    n = a.shape[axis]
    if n <= _BLOCK or _inner(a, (axis,)):
        return a.sum(axis=axis, dtype=acc, keepdims=True)
    m = n // _BLOCK
    before = (slice(None),) * axis
    head = a[before + (slice(0, m * _BLOCK),)].reshape(a.shape[:axis] + (m, _BLOCK) + a.shape[axis + 1 :])
    totals = head.sum(axis=axis + 1, dtype=acc)  # (..., m, ...): one total per block
    if m * _BLOCK < n:
        tail = a[before + (slice(m * _BLOCK, n),)].sum(axis=axis, dtype=acc, keepdims=True)
        totals = xp.concatenate([totals, tail], axis=axis)
    return _blocked(xp, totals, axis, acc)


def _scan_dtype(xp, dtype):
    """The dtype a host scan accumulates in: float32 for float16, float64 for float32 (PyTorch's CPU
    acc types); on CuPy only float16 is widened (its scans are tree-shaped)."""
    if dtype == np.float32 and _on_host(xp):
        return np.dtype(np.float64)
    return accumulation_dtype(dtype)


def cumsum(xp, a, axis):
    """xp.cumsum(a, axis) in a's dtype, accumulated in the scan's accumulation dtype (module
    docstring) and rounded once."""
    if a.dtype.kind != "f":
        return xp.cumsum(a, axis=axis)
    return narrow(xp.cumsum(a, axis=axis, dtype=_scan_dtype(xp, a.dtype)), a.dtype)


def cumprod(xp, a, axis):
    """xp.cumprod(a, axis) in a's dtype, accumulated as `cumsum` is (a running product of float16
    overflows in float16 where PyTorch's, in float32, does not)."""
    if a.dtype.kind != "f":
        return xp.cumprod(a, axis=axis)
    return narrow(xp.cumprod(a, axis=axis, dtype=_scan_dtype(xp, a.dtype)), a.dtype)
