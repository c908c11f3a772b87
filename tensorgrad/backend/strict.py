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

`recording()` watches the device: every namespace function and array method called (with the
names of its keywords), so a test can check each against CuPy's real API, and every read back to
the host.  The reads counted are the explicit ones (float(), int(), bool(), .item(), .tolist(),
a transfer) and the ones CuPy 14 makes without saying so, each of which waits for the GPU:
boolean-mask indexing (`a[mask]`, `a[mask] = v`: the output size is the mask's count of Trues,
read back), one-argument `where(c)` and the nonzero family, and `random.randint` (CuPy's
RandomState rejects out-of-range samples in a loop that reads a count back).  Like
`cupy.ndarray`, a StrictArray has no `__index__`: it cannot be a Python index or a range bound.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Recording:
    """What the strict device was asked while `recording()` was active."""

    calls: list = field(default_factory=list)  # (kind, name, keyword names): kind "xp" or "ndarray"
    reads: list = field(default_factory=list)  # one name per read back to the host


_recording: Recording | None = None  # process-wide: a test's recording() sees every thread's calls


@contextlib.contextmanager
def recording():
    """with recording() as rec: ... -> rec.calls, rec.reads (see the module docstring)."""
    global _recording
    outer, _recording = _recording, Recording()
    try:
        yield _recording
    finally:
        _recording = outer


def _called(kind, name, kwargs):
    if _recording is not None:
        _recording.calls.append((kind, name, tuple(sorted(kwargs))))


def _read(name):
    if _recording is not None:
        _recording.reads.append(name)


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

    # explicit, CuPy-compatible scalar conversions (CuPy syncs for these); no __index__ (CuPy has none)
    def __float__(self):
        _read("__float__")
        return float(self._a)

    def __int__(self):
        _read("__int__")
        return int(self._a)

    def __bool__(self):
        _read("__bool__")
        return bool(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield self[i]

    def item(self):
        _read("item")
        return self._a.item()

    def tolist(self):
        _read("tolist")
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
            _called("ndarray", name, kwargs)
            if name in _READING:
                _read(name)
            return _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))

        return method

    def __getitem__(self, index):
        index = _unwrap(index)
        _read_if_masked(index)
        index = _wrap_around(self._a.shape, index)
        # CuPy gives a 0-d view for an index down to one element (a[1] of a 1-d array), where NumPy
        # gives a scalar copy unless the index holds an Ellipsis (which changes nothing else)
        if type(index) is not tuple:
            index = index if index is Ellipsis else (index, Ellipsis)
        elif not any(p is Ellipsis for p in index):
            index = index + (Ellipsis,)
        return _wrap(self._a[index])

    def __setitem__(self, index, value):
        index = _unwrap(index)
        _read_if_masked(index)
        self._a[_wrap_around(self._a.shape, index)] = _unwrap(value)


# Functions and methods that read a count back to the host in CuPy 14 (the size of their output).
_READING = {"nonzero", "argwhere", "flatnonzero", "unique", "bincount", "extract", "compress", "random.randint"}


def _read_if_masked(index):
    """CuPy reads the number of Trues of a boolean-array index back to the host (a sync)."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, np.ndarray) and p.dtype == np.bool_ for p in parts):
        _read("boolean-mask indexing")


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
        _called("ndarray", name, {})
        return _wrap(getattr(self._a, name)(_unwrap(other)))

    op.__name__ = name
    return op


def _unary(name):
    def op(self):
        _called("ndarray", name, {})
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

    def __init__(self, module=np, prefix=""):
        self._module, self._prefix = module, prefix

    def __getattr__(self, name):
        if name == "random" and self._module is np:  # numpy.random's functions, randint counted as a read
            return _Namespace(np.random, "random.")
        attr = getattr(self._module, name)
        if isinstance(attr, type) or not callable(attr):
            return attr  # dtypes (xp.float32), constants (xp.inf)
        qualname = self._prefix + name

        def function(*args, **kwargs):
            _called("xp", qualname, kwargs)
            if qualname in _READING or (qualname == "where" and len(args) == 1):
                _read(qualname)
            return _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))

        function.__name__ = name
        return function

    def asarray(self, obj, dtype=None):
        _called("xp", "asarray", {"dtype": dtype} if dtype is not None else {})
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
    _read("to_numpy")
    return np.array(a._a)


def device_kernel(fn, *arrays: StrictArray) -> StrictArray:
    """fn (a NumPy function) run on the arrays' data as a stand-in for a device kernel: no read."""
    return StrictArray(np.asarray(fn(*(a._a for a in arrays))))


def add_at(target: StrictArray, index, values):
    """xp.add.at(target, index, values), recorded as the call CuPy gets (cupy.add.at)."""
    _called("xp", "add.at", {})
    np.add.at(target._a, _unwrap(index), _unwrap(values))


def ufunc_at(ufunc, target: StrictArray, index, values):
    ufunc.at(target._a, _unwrap(index), _unwrap(values))
