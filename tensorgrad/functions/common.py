"""What two families of tg.* functions share: _same_kind, the tensors of a list brought to one
dtype (PyTorch's promotion), for cat, stack, where and block_diag (shape.py) and einsum (products.py)."""

from __future__ import annotations

from .. import backend


def _same_kind(tensors, op):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dtype:
            dtype = backend.result_type(dtype, t.dtype)
    return [t if t.dtype == dtype else t.to(dtype) for t in tensors]
