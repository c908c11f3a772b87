"""The few array primitives NumPy and CuPy spell differently (the ops hold the math around them).

- `add_at` / `reduce_at`: an unbuffered scatter, target[index] op= values with repeated indices
  combining: `ufunc.at` on NumPy (and the strict device), `cupy.add.at` and
  `cupyx.scatter_add` / `scatter_max` / `scatter_min` on CuPy.
- `erf`: NumPy has none; it comes from SciPy (or `math.erf`) on the host and from
  `cupyx.scipy.special` on the GPU, imports that only the backend may make.
- `special`: any other of SciPy's special functions (gammaln, digamma, i0e, ndtri, ...), by name:
  `scipy.special` on the host, `cupyx.scipy.special` on the GPU.
- `ensure_array`: NumPy reductions return scalars where CuPy returns 0-d arrays.
- `windows`: a view of every window along an axis (`as_strided`: `numpy.lib.stride_tricks` and
  `cupy.lib.stride_tricks`).
- `getitem`: array[index], where NumPy returns a scalar copy for an index down to one element
  (a[1] of a 1-d array) and CuPy a 0-d view of the array's memory; the view on both.
- `quiet`: IEEE arithmetic without NumPy's RuntimeWarnings (log(-1) is NaN, 1/0 is inf, a NaN cast
  to an integer is what the hardware gives), as PyTorch and CuPy compute it: silently.
- `svd`, `linalg`: numpy.linalg and cupy.linalg (batched), the strict device running NumPy's; a
  singular (or not positive-definite) matrix raises LinAlgError on the host, where NumPy's LAPACK
  reports it, and at the next read on CuPy (which returns inf / nan instead of raising).
"""

from __future__ import annotations

import math

import numpy as np

from . import strict
from .errors import LinAlgError
from .host import _unwrapped, defer_check

# What NumPy's reductions return instead of 0-d arrays (np.float32 ...): `ensure_array` makes them arrays;
# loops that run per gradient test `isinstance(value, SCALAR_TYPES)` first, without the call.
SCALAR_TYPES = (np.generic,)


def ensure_array(xp, value):
    """NumPy reductions return scalars (np.float32), not 0-d arrays; make them arrays."""
    if isinstance(value, SCALAR_TYPES):
        return xp.asarray(value)
    return value


def getitem(array, index):
    """array[index]; an index down to one element gives a 0-d view of array's memory, as CuPy's
    (and the strict device's) indexing does and as every other basic index does: NumPy returns a
    scalar copy there (a[1] of a 1-d array, a[1, 2] of a 2-d one, a[()] of a 0-d one), unless the
    index holds an Ellipsis, which changes nothing else (a[1, ...] is a[1]).  So a NumPy index gets
    one at its end.  An advanced index (integer or boolean arrays) makes a copy, as always."""
    if isinstance(array, np.ndarray):
        if type(index) is not tuple:
            index = index if index is Ellipsis else (index, Ellipsis)
        elif not any(it is Ellipsis for it in index):
            index = index + (Ellipsis,)
    return array[index]


def windows(xp, array, dim, size, step):
    """Every window of `size` elements along `dim`, `step` apart, as a new last axis, in a view of
    `array`'s memory (PyTorch's `Tensor.unfold`): shape `(..., n, ..., size)` with
    `n = (array.shape[dim] - size) // step + 1`, the windows' axis `step` elements apart in memory
    and the new last axis one element apart.  Where windows overlap (`step < size`) one element
    shows in several places (the in-place methods refuse the writes that would be ambiguous:
    tensor_methods/inplace.py)."""
    a = _unwrapped(array)
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1 :] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1 :] + (a.strides[dim],)
    return _strided(xp, array, a, shape, strides)


def diagonal(xp, array, offset, dim1, dim2):
    """The diagonal of dims `(dim1, dim2)` `offset` above the main one (below where negative), moved
    last, in a view of `array`'s memory (PyTorch's `Tensor.diagonal`; NumPy's own is read-only):
    the other dims, then the `k`-th element `array[..., r0 + k, c0 + k]` with
    `r0 = max(-offset, 0)`, `c0 = max(offset, 0)`, one row stride plus one column stride apart."""
    a = _unwrapped(array)
    d1, d2 = dim1 % a.ndim, dim2 % a.ndim
    moved = a.transpose([d for d in range(a.ndim) if d not in (d1, d2)] + [d1, d2])  # (..., n, m), a view
    n, m = moved.shape[-2:]
    r0, c0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(n - r0, m - c0))
    start = moved[..., min(r0, n) :, min(c0, m) :]  # its first element is the diagonal's (when it has one)
    shape = moved.shape[:-2] + (length,)
    strides = moved.strides[:-2] + (moved.strides[-2] + moved.strides[-1],)
    return _strided(xp, array, start, shape, strides)


def _strided(xp, array, a, shape, strides):
    """`a`'s memory read through `shape` and `strides` from its first element (writeable where `a`
    is), wrapped again where `array` is a strict array."""
    if xp is np or isinstance(array, strict.StrictArray):
        view = np.lib.stride_tricks.as_strided(a, shape, strides)
        return strict.StrictArray(view) if isinstance(array, strict.StrictArray) else view
    from cupy.lib.stride_tricks import as_strided  # noqa: PLC0415 - CuPy only on the GPU path

    return as_strided(a, shape, strides)


def quiet():
    """A context where NumPy computes NaN, inf and overflowing casts silently (np.errstate, which
    is local to the thread and the block; CuPy and the GPU never warn).  Used narrowly: around the
    one expression of an op where PyTorch would make a NaN or an inf without a word."""
    return np.errstate(invalid="ignore", divide="ignore", over="ignore")


def add_at(xp, target, index, values):
    """target[index] += values, with repeated indices accumulating (unbuffered): ufunc.at.

    NumPy's add.at is exact and ordered; CuPy's (cupy.add.at) uses atomics, which are fast but
    not bit-for-bit repeatable.  Callers with a 1-d integer index along axis 0 and a small
    table should prefer ops/embedding.py's `embedding_backward`, which is a deterministic matmul.
    """
    if xp is strict.xp:
        strict.add_at(target, index, values)
    else:
        xp.add.at(target, index, values)
    return target


_AT_UFUNCS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}
_CUPY_SCATTERS = {"sum": "scatter_add", "amax": "scatter_max", "amin": "scatter_min"}


def has_reduce_at(xp, reduce) -> bool:
    """Whether `reduce_at` combines with `reduce` on xp's device: every reduce on the host and the
    strict device; on CuPy all but "prod" (cupyx has no unbuffered product)."""
    return xp is np or xp is strict.xp or reduce in _CUPY_SCATTERS


def reduce_at(xp, target, index, values, reduce):
    """target[index] = reduce(target[index], values), repeated indices combining (unbuffered), by
    the device's own primitive.  reduce is "sum", "prod", "amax" or "amin" (see has_reduce_at)."""
    if xp is np:
        _AT_UFUNCS[reduce].at(target, index, values)
    elif xp is strict.xp:
        strict.ufunc_at(_AT_UFUNCS[reduce], target, index, values)
    elif reduce in _CUPY_SCATTERS:
        import cupyx  # noqa: PLC0415

        getattr(cupyx, _CUPY_SCATTERS[reduce])(target, index, values)
    else:
        raise ValueError(f"reduce_at: CuPy has no unbuffered {reduce!r} (check has_reduce_at first)")
    return target


def erf(xp, x):
    """The error function, elementwise (NumPy has none of its own)."""
    if xp is np:
        try:
            from scipy.special import erf as scipy_erf  # noqa: PLC0415
        except ImportError:
            return _np_erf(x).astype(x.dtype, copy=False)
        return scipy_erf(x).astype(x.dtype, copy=False)
    if xp is strict.xp:
        return strict.device_kernel(lambda a: erf(np, a), x)
    from cupyx.scipy.special import erf as cupy_erf  # noqa: PLC0415

    return cupy_erf(x).astype(x.dtype, copy=False)  # float16 in gives float64 out in CuPy 14


_np_erf = np.vectorize(math.erf, otypes=[np.float64])


def svd(xp, a):
    """The thin SVD of a stack of matrices: (U, S, Vh) with a = U diag(S) Vh, S descending
    (numpy.linalg.svd and cupy.linalg.svd, batched, full_matrices=False)."""
    if xp is strict.xp:
        u, s, vh = np.linalg.svd(a._a, full_matrices=False)
        return strict.StrictArray(u), strict.StrictArray(s), strict.StrictArray(vh)
    return xp.linalg.svd(a, full_matrices=False)


def special(xp, name, *args):
    """scipy.special.<name>(*args) elementwise on xp's device, in the floating dtype of the array
    arguments (CuPy computes float16 in float64; SciPy keeps float32).  Python numbers among
    the arguments (polygamma's order) are passed as they are."""
    dtype = next(a.dtype for a in args if hasattr(a, "dtype"))
    if xp is np:
        import scipy.special  # noqa: PLC0415

        with np.errstate(all="ignore"):  # the numbers of a pole (lgamma(0) = inf) are the answer
            return xp.asarray(getattr(scipy.special, name)(*args)).astype(dtype, copy=False)
    if xp is strict.xp:
        arrays = [a for a in args if isinstance(a, strict.StrictArray)]

        def host(*data):
            it = iter(data)
            return special(np, name, *(next(it) if isinstance(a, strict.StrictArray) else a for a in args))

        return strict.device_kernel(host, *arrays)
    import cupyx.scipy.special  # noqa: PLC0415

    return getattr(cupyx.scipy.special, name)(*args).astype(dtype, copy=False)


def linalg(xp, name, *arrays, error=None, **kwargs):
    """xp.linalg.<name>(*arrays, **kwargs) (inv, solve, det, slogdet, cholesky, eigh, qr, pinv),
    its outputs as a tuple where it has several.  `error` (a message) makes a failure of the
    factorization a LinAlgError: NumPy raises one at once; CuPy gives inf / nan, which a deferred
    check turns into the same error at the next read (where the inputs were finite).  (CuPy's
    cholesky of a matrix that is not positive-definite may leave finite values: not caught there.)"""
    if xp is np or xp is strict.xp:
        raw = [a._a if isinstance(a, strict.StrictArray) else a for a in arrays]
        try:
            out = getattr(np.linalg, name)(*raw, **kwargs)
        except np.linalg.LinAlgError as e:
            raise LinAlgError(error or str(e)) from None
        outs = tuple(out) if isinstance(out, tuple) else (out,)
        if xp is strict.xp:
            outs = tuple(strict.StrictArray(np.asarray(o)) for o in outs)
    else:
        out = getattr(xp.linalg, name)(*arrays, **kwargs)
        outs = tuple(out) if isinstance(out, tuple) else (out,)
        if error is not None and outs[0].size:
            def fail():
                raise LinAlgError(error)

            finite_in = xp.stack([xp.isfinite(a).all() for a in arrays]).all()  # nan in, nan out: no error
            defer_check(finite_in & ~xp.isfinite(outs[0]).all(), fail)
    return outs if len(outs) > 1 else outs[0]


def lu_info(a) -> int:
    """LAPACK getrf's info for one square matrix (host or device array; read on the host, on the
    error path only): the 1-based index of the first zero pivot of LU with partial pivoting (the
    largest |entry| of the column, the first of ties), 0 where there is none."""
    if isinstance(a, strict.StrictArray):
        a = a._a
    u = np.array(a.get() if hasattr(a, "get") else a, dtype=np.float64)
    n = u.shape[-1]
    info = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            info = info or j + 1
            continue
        u[[j, p]] = u[[p, j]]
        u[j + 1 :, j:] -= np.outer(u[j + 1 :, j] / u[j, j], u[j, j:])
    return info
