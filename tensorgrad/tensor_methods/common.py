"""What every family of Tensor methods shares: the base class the families derive from, and
the argument rules (broadcasting, dims, shapes) that their error messages speak of."""

from __future__ import annotations

import functools

from .. import backend
from ..backend import ShapeError
from ..tensor_base import TensorBase

# TensorBase (the engine's: the fields autodiff reads) is the base of every method family, so of
# every Tensor.  The families cannot import tensor.py (it imports them), so they ask
# `isinstance(x, TensorBase)` for "is x a Tensor", and make results through the op's `apply`,
# `self._make` or `self._constant`.
__all__ = [
    "MemoryFormat", "TensorBase", "accepts_keepdims", "broadcast_shapes", "channels_last", "channels_last_3d",
    "check_memory_format", "contiguous_format", "normalize_dim", "normalize_dims", "preserve_format", "shape_arg",
    "torch_dtype_name",
]  # fmt: skip


class MemoryFormat:
    """PyTorch's memory formats (tg.preserve_format, tg.contiguous_format, tg.channels_last,
    tg.channels_last_3d).  tensorgrad's arrays are always in row-major (contiguous) order, and the
    values do not depend on the layout, so a format is checked (as PyTorch checks it) and otherwise
    changes nothing."""

    __slots__ = ("name", "ndim")

    def __init__(self, name: str, ndim: int | None = None):
        self.name, self.ndim = name, ndim  # ndim: the rank a channels-last format requires

    def __repr__(self):
        return f"tensorgrad.{self.name}"


preserve_format = MemoryFormat("preserve_format")
contiguous_format = MemoryFormat("contiguous_format")
channels_last = MemoryFormat("channels_last", 4)
channels_last_3d = MemoryFormat("channels_last_3d", 5)


def check_memory_format(op: str, memory_format, ndim: int):
    """The memory_format= of clone, contiguous, to, float, ...: refused as PyTorch refuses it (not a
    format, channels_last on a tensor that is not 4-d, channels_last_3d not 5-d)."""
    if memory_format is None:
        return
    if not isinstance(memory_format, MemoryFormat):
        raise TypeError(
            f"{op}(): memory_format must be a memory format (e.g. tg.contiguous_format), got {memory_format!r}"
        )
    if memory_format.ndim is not None and ndim != memory_format.ndim:
        raise RuntimeError(f"{op}(): required rank {memory_format.ndim} tensor to use {memory_format.name} format")


def accepts_keepdims(fn):
    """Have the reduction `fn(..., keepdim=...)` also take NumPy's spelling `keepdims=`, as PyTorch's
    argument parser does for every op with a `keepdim` (sum, mean, max, var, all, argmax, ...).
    The one place the alias is read: the reductions and their tg.* functions are decorated with it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "keepdims" in kwargs:
            if "keepdim" in kwargs:
                raise TypeError(f"{fn.__name__}() got both keepdim and keepdims; pass one")
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)

    wrapper.accepts_keepdims = True  # functions/forwarders.py gives a tg.* forwarder of such a method the alias too
    return wrapper


def broadcast_shapes(op: str, a: tuple, b: tuple) -> tuple:
    """NumPy's broadcast rule, with an error that names the op and both shapes."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"{op}: shapes {a} and {b} cannot be broadcast together")
        out.append(y if x == 1 else x)
    return tuple(out)


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    if not isinstance(dim, int):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor of {ndim} dims (expected {lo}..{hi})")
    return dim % max(ndim, 1)


def normalize_dims(dim, ndim: int, op: str) -> tuple:
    """None -> every axis; int or tuple -> a sorted tuple of distinct non-negative axes.
    A 0-d tensor accepts dim 0 and -1, as in PyTorch, and has no axis to reduce: ()."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(sorted({normalize_dim(d, ndim, op) for d in dims}))
    if ndim == 0:
        return ()
    if len(out) != len(dims):
        raise ValueError(f"{op}: dim {dim} repeats an axis")
    return out


def shape_arg(shape) -> tuple:
    """reshape(2, 3) and reshape((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def torch_dtype_name(dtype) -> str:
    """PyTorch's scalar-type name (Float, Long, ...), for errors worded as PyTorch's."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}  # fmt: skip
    return names.get(str(backend.as_dtype(dtype)), str(dtype))
