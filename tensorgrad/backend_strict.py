"""A strict array namespace that behaves like CuPy, for testing without a GPU.

CuPy arrays live on another device, so CuPy refuses what would silently copy
them to the host or mix them with host arrays:

    np.asarray(gpu_array)        -> TypeError (implicit conversion)
    gpu_array + np.ones(3)       -> TypeError (mixing with a NumPy array)
    np.exp(gpu_array)            -> only works through CuPy's own functions

`StrictArray` wraps a NumPy array and refuses the same things, and `xp` is a
namespace with NumPy's functions that accepts and returns StrictArrays only.
Running the engine on device="strict" therefore fails wherever the CuPy path
would fail: an op that builds a NumPy array for a GPU tensor, a mask left on
the host, a `float(array)` sync hidden in a hot loop is still allowed (CuPy
allows it) but `np.asarray` is not.

Python scalars and NumPy scalars (np.float32(2.0)) are accepted, as in CuPy.
"""

from __future__ import annotations

import numpy as np


class StrictArray:
    __slots__ = ("_a",)
    __array_ufunc__ = None  # numpy ufuncs on a StrictArray raise TypeError
    __array_function__ = None  # so do numpy functions (np.concatenate(...), ...)

    def __init__(self, a: np.ndarray):
        self._a = a

    # implicit host conversion is refused, as CuPy does
    def __array__(self, *args, **kwargs):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed (strict device, like CuPy). "
            "Use an explicit transfer (Tensor.numpy() / backend.to_numpy)."
        )

    # explicit, CuPy-compatible scalar conversions (CuPy syncs for these)
    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __bool__(self):
        return bool(self._a)

    def __index__(self):
        return self._a.__index__()

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield self[i]

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def __repr__(self):
        return "strict_" + repr(self._a)

    # attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    T = property(lambda self: StrictArray(self._a.T))
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)

    def __getattr__(self, name):
        # methods (sum, reshape, astype, ...): unwrap arguments, wrap results.
        # Protocol attributes are not forwarded: NumPy would read __array_interface__ /
        # __array_struct__ and convert to a host array silently (CuPy arrays have neither).
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            return _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))

        return method

    def __getitem__(self, index):
        return _wrap(self._a[_wrap_around(self._a.shape, _unwrap(index))])

    def __setitem__(self, index, value):
        self._a[_wrap_around(self._a.shape, _unwrap(index))] = _unwrap(value)


def _wrap_around(shape, index):
    """CuPy wraps out-of-range integer-array indices around where NumPy raises; so does this
    device, so that code which relies on NumPy's IndexError fails here as it would on a GPU."""
    parts = index if isinstance(index, tuple) else (index,)

    def consumed(p):  # how many axes of the array an index part walks over
        if p is None or p is Ellipsis:
            return 0
        return p.ndim if isinstance(p, np.ndarray) and p.dtype == np.bool_ else 1

    axis, out = 0, []
    for p in parts:
        if p is Ellipsis:
            axis += len(shape) - sum(consumed(q) for q in parts)
        elif isinstance(p, np.ndarray) and p.dtype.kind in "iu" and axis < len(shape) and shape[axis] > 0:
            p = p % shape[axis]
        axis += consumed(p)
        out.append(p)
    return tuple(out) if isinstance(index, tuple) else out[0]


def _binary(name):
    def op(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)))

    op.__name__ = name
    return op


def _unary(name):
    def op(self):
        return _wrap(getattr(self._a, name)())

    op.__name__ = name
    return op


for _name in (
    "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
    "mod", "pow", "rpow", "matmul", "rmatmul", "and", "rand", "or", "ror", "xor",
    "eq", "ne", "lt", "le", "gt", "ge",
    "iadd", "isub", "imul", "itruediv", "ipow", "iand", "ior",
):  # fmt: skip
    setattr(StrictArray, f"__{_name}__", _binary(f"__{_name}__"))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(StrictArray, f"__{_name}__", _unary(f"__{_name}__"))


def _unwrap(obj):
    """StrictArray -> its NumPy array; refuses NumPy arrays (mixing devices)."""
    if isinstance(obj, StrictArray):
        return obj._a
    if isinstance(obj, np.ndarray):
        raise TypeError(
            "Unsupported type numpy.ndarray: a host NumPy array was mixed with a strict-device "
            "array (CuPy refuses this too). Move it to the device first."
        )
    if isinstance(obj, tuple):
        return tuple(_unwrap(o) for o in obj)
    if isinstance(obj, list):
        return [_unwrap(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj):
    if isinstance(obj, np.ndarray):
        return StrictArray(obj)
    if isinstance(obj, np.generic):  # a reduction's result: CuPy returns a 0-d device array
        return StrictArray(np.asarray(obj))
    if isinstance(obj, tuple):
        return tuple(_wrap(o) for o in obj)
    if isinstance(obj, list):
        return [_wrap(o) for o in obj]
    return obj


class _Namespace:
    """NumPy's functions, taking and returning StrictArrays."""

    ndarray = StrictArray
    newaxis = None

    def __getattr__(self, name):
        attr = getattr(np, name)
        if isinstance(attr, type) or not callable(attr):
            return attr  # dtypes (xp.float32), constants (xp.inf)

        def function(*args, **kwargs):
            return _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))

        function.__name__ = name
        return function

    def asarray(self, obj, dtype=None):
        if isinstance(obj, StrictArray):
            return obj if dtype is None else obj.astype(dtype, copy=False)
        # Python data or NumPy scalars are fine (CuPy accepts them); NumPy arrays are not.
        return StrictArray(np.asarray(_unwrap(obj), dtype=dtype))


xp = _Namespace()


def from_numpy(a: np.ndarray) -> StrictArray:
    """An explicit host-to-device transfer."""
    return StrictArray(np.array(a))


def to_numpy(a: StrictArray) -> np.ndarray:
    """An explicit device-to-host transfer."""
    return np.array(a._a)


def add_at(target: StrictArray, index, values):
    np.add.at(target._a, _unwrap(index), _unwrap(values))


def ufunc_at(ufunc, target: StrictArray, index, values):
    ufunc.at(target._a, _unwrap(index), _unwrap(values))
