"""Tensor methods, in place: writes into a tensor's storage (t += 1, t[i] = v, fill_, copy_,
normal_, ...), each checked against PyTorch's rules and counted by the version counter.
The other families make new tensors; these are the only methods that change one."""

from __future__ import annotations

from .. import backend
from ..autograd import is_grad_enabled
from ..backend import ShapeError
from .common import TensorBase, broadcast_shapes

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # an in-place result may not climb this order


def _torch_name(dtype) -> str:
    """PyTorch's scalar-type name (Float, Long, ...), for errors worded as PyTorch's."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}  # fmt: skip
    return names.get(str(backend.as_dtype(dtype)), str(dtype))


class InplaceMixin(TensorBase):
    # An in-place op writes into this tensor's storage (which its views share) and bumps the
    # version counter; backward then refuses arrays saved before the write (autograd.py).
    # PyTorch's rules: a leaf that requires grad may be written only under no_grad (how
    # optimizers and manual updates, `p -= lr * p.grad`, run).  An in-place op inside the graph
    # (on a result that requires grad, or writing a value that requires grad) is refused
    # here rather than recorded: write it out of place (x = x + y).
    __slots__ = ()

    def _check_inplace(self, op: str, *values):
        """PyTorch's rules for an in-place op, checked before anything is written."""
        if not is_grad_enabled():
            return
        if self.requires_grad and self._ctx is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if self.requires_grad or any(isinstance(v, TensorBase) and v.requires_grad for v in values):
            raise RuntimeError(
                f"{op}: in-place operations inside the autograd graph are not supported (the tensor or the "
                "value requires grad); write it out of place (x = x + y), or under tg.no_grad() if no gradient "
                "should flow through it"
            )

    @property
    def data(self):
        """This tensor's storage as a tensor outside the graph (PyTorch's .data).  Writes through
        it (p.data += v, p.data.copy_(w)) change this tensor and bump its version."""
        t = self._make(self._data, self.device, False)
        t._counter = self._counter
        return t

    @data.setter
    def data(self, value):
        """p.data = tensor_or_array: this tensor takes the new values (shape and device too)."""
        if isinstance(value, TensorBase):
            if value._data is self._data:  # `p.data += v` assigns the same storage back
                return
            array, device = value._data, value.device
        elif backend.is_array(value):
            array, device = value, backend.device_of(value)
        else:
            array, device = self._constant(value)._data, self.device
        self._data, self.device = array, device
        self._bump_version()

    def __setitem__(self, index, value):
        """In-place write (losses[k] = loss.item()), outside the graph; bumps the version."""
        self._check_inplace("setitem", value)
        index, _ = self._index_arrays(index)
        if isinstance(value, TensorBase):
            if value.device != self.device:
                raise backend.DeviceError(f"setitem: tensor on {self.device}, value on {value.device}")
            value = value._data
        elif not isinstance(value, (bool, int, float)):
            value = self._constant(value, dtype=self.dtype)._data
        self._data[index] = value
        self._bump_version()

    def _inplace_binary(self, other, ufunc: str, op: str):
        """self <- self (ufunc) other, in self's storage and dtype (other broadcasts to self)."""
        self._check_inplace(op, other)
        if isinstance(other, TensorBase):
            if other.device != self.device:
                raise backend.DeviceError(f"{op}: tensor on {self.device}, other on {other.device}")
            b, dtype = other._data, backend.result_type(self.dtype, other.dtype)
        elif isinstance(other, (bool, int, float)):
            b = other
            dtype = self.dtype if backend.is_floating(self.dtype) or not isinstance(other, float) else backend.float32
        else:
            return self._inplace_binary(self._constant(other), ufunc, op)
        if ufunc == "true_divide" and not backend.is_floating(dtype):
            dtype = backend.float32
        if _KIND_RANK[backend.as_dtype(dtype).kind] > _KIND_RANK[self.dtype.kind]:
            raise RuntimeError(
                f"result type {_torch_name(dtype)} can't be cast to the desired output type {_torch_name(self.dtype)}"
            )
        if isinstance(other, TensorBase) and broadcast_shapes(op, self.shape, other.shape) != self.shape:
            raise ShapeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                             f"{broadcast_shapes(op, self.shape, other.shape)}")  # fmt: skip
        getattr(backend.namespace(self.device), ufunc)(self._data, b, out=self._data)
        self._bump_version()
        return self

    def __iadd__(self, other):
        return self._inplace_binary(other, "add", "add_")

    def __isub__(self, other):
        return self._inplace_binary(other, "subtract", "sub_")

    def __imul__(self, other):
        return self._inplace_binary(other, "multiply", "mul_")

    def __itruediv__(self, other):
        return self._inplace_binary(other, "true_divide", "div_")

    def add_(self, other, alpha=1):
        return self._inplace_binary(other if alpha == 1 else other * alpha, "add", "add_")

    def sub_(self, other, alpha=1):
        return self._inplace_binary(other if alpha == 1 else other * alpha, "subtract", "sub_")

    def mul_(self, other):
        return self._inplace_binary(other, "multiply", "mul_")

    def div_(self, other):
        return self._inplace_binary(other, "true_divide", "div_")

    def clamp_(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        self._check_inplace("clamp_", min, max)
        if min is None and max is None:
            raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
        lo, hi = (v._data if isinstance(v, TensorBase) else v for v in (min, max))
        backend.namespace(self.device).clip(self._data, lo, hi, out=self._data)
        self._bump_version()
        return self

    def fill_(self, value):
        self._check_inplace("fill_", value)
        if isinstance(value, TensorBase):
            if value.ndim != 0:
                raise RuntimeError(
                    f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
                )
            value = value.item()
        self._data[...] = value
        self._bump_version()
        return self

    def zero_(self):
        return self.fill_(0)

    def copy_(self, src):
        """Copy src's values in (broadcast to self's shape, cast to self's dtype, from any device)."""
        self._check_inplace("copy_", src)
        if not isinstance(src, TensorBase):
            src = self._constant(src)
        if broadcast_shapes("copy_", self.shape, src.shape) != self.shape:
            raise ShapeError(f"copy_: the source of shape {src.shape} does not broadcast to {self.shape}")
        self._data[...] = backend.to_device(src._data, self.device)
        self._bump_version()
        return self

    def _draw_dtype(self, op: str):
        """The generators make float32 and float64; other float dtypes are drawn in float32 and cast."""
        if not backend.is_floating(self.dtype):
            raise TypeError(f"{op}: expected a floating-point tensor, got dtype {self.dtype}")
        return self.dtype if self.dtype in (backend.float32, backend.float64) else backend.float32

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with samples of N(mean, std^2), from `generator` (a tg.Generator of this tensor's
        device) or the device's default generator (seeded by tg.manual_seed)."""
        self._check_inplace("normal_")
        z = backend.generator_for(self.device, generator, "normal_").normal(self.shape, self._draw_dtype("normal_"))
        self._data[...] = z * std + mean
        self._bump_version()
        return self

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        """Fill with samples of U[from_, to), from `generator` (a tg.Generator of this tensor's
        device) or the device's default generator (seeded by tg.manual_seed)."""
        self._check_inplace("uniform_")
        u = backend.generator_for(self.device, generator, "uniform_").uniform(self.shape, self._draw_dtype("uniform_"))
        self._data[...] = u * (to - from_) + from_
        self._bump_version()
        return self
