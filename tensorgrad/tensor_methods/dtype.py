"""Tensor methods, dtype: the shorthand conversions (t.float(), t.long(), ...) and PyTorch's
legacy type names (t.type()).  All go through Tensor.to, which casts through ops/arithmetic.py's
Cast; integer and bool results carry no gradient."""

from __future__ import annotations

from .. import backend
from .common import TensorBase

# PyTorch's legacy type names, as Tensor.type() speaks them
_TYPE_NAMES = {
    "FloatTensor": backend.float32, "DoubleTensor": backend.float64, "HalfTensor": backend.float16,
    "LongTensor": backend.int64, "IntTensor": backend.int32, "ShortTensor": backend.as_dtype("int16"),
    "CharTensor": backend.as_dtype("int8"), "ByteTensor": backend.uint8, "BoolTensor": backend.bool_,
}  # fmt: skip


class DtypeMixin(TensorBase):
    __slots__ = ()

    def float(self):
        return self.to(backend.float32)

    def double(self):
        return self.to(backend.float64)

    def half(self):
        return self.to(backend.float16)

    def long(self):
        return self.to(backend.int64)

    def int(self):
        return self.to(backend.int32)

    def short(self):
        return self.to(backend.as_dtype("int16"))

    def byte(self):
        return self.to(backend.uint8)

    def bool(self):
        return self.to(backend.bool_)

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
