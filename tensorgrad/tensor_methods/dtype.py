"""Tensor methods, dtype: the shorthand conversions (t.float(), t.long(), ...) and PyTorch's
legacy type names (t.type()).  All go through Tensor.to, which casts through ops/arithmetic.py's
Cast; integer and bool results carry no gradient."""

from __future__ import annotations

from .. import backend
from .common import TensorBase, preserve_format

# PyTorch's legacy type names, as Tensor.type() speaks them
_TYPE_NAMES = {
    "FloatTensor": backend.float32, "DoubleTensor": backend.float64, "HalfTensor": backend.float16,
    "LongTensor": backend.int64, "IntTensor": backend.int32, "ShortTensor": backend.as_dtype("int16"),
    "CharTensor": backend.as_dtype("int8"), "ByteTensor": backend.uint8, "BoolTensor": backend.bool_,
}  # fmt: skip


class DtypeMixin(TensorBase):
    __slots__ = ()

    def float(self, memory_format=preserve_format):
        return self.to(backend.float32, memory_format=memory_format)

    def double(self, memory_format=preserve_format):
        return self.to(backend.float64, memory_format=memory_format)

    def half(self, memory_format=preserve_format):
        return self.to(backend.float16, memory_format=memory_format)

    def long(self, memory_format=preserve_format):
        return self.to(backend.int64, memory_format=memory_format)

    def int(self, memory_format=preserve_format):
        return self.to(backend.int32, memory_format=memory_format)

    def short(self, memory_format=preserve_format):
        return self.to(backend.as_dtype("int16"), memory_format=memory_format)

    def byte(self, memory_format=preserve_format):
        return self.to(backend.uint8, memory_format=memory_format)

    def bool(self, memory_format=preserve_format):
        return self.to(backend.bool_, memory_format=memory_format)

    def type_as(self, other):
        """self converted to `other`'s type, PyTorch's `self.type(other.type())`: its dtype and its kind
        of device (self itself where both already match; differentiable, as `to`)."""
        return self.to(device=other.device, dtype=other.dtype)

    def type(self, dtype=None):
        """type() -> PyTorch's type name ("torch.FloatTensor"); type(dtype or that name) -> converted."""
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if dtype is None:
            prefix = "torch.cuda." if self.device == "cuda" else "torch."
            return prefix + names.get(self.dtype, str(self.dtype))
        if isinstance(dtype, str) and dtype.startswith("torch."):
            key = dtype.removeprefix("torch.").removeprefix("cuda.")
            if key not in _TYPE_NAMES:
                raise ValueError(f"type(): invalid type {dtype!r} (expected e.g. 'torch.FloatTensor' or a dtype)")
            return self.to(_TYPE_NAMES[key])
        return self.to(dtype)
