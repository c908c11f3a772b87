"""The affine map y = x W^T + b (one op: ops/linear.py)."""

from __future__ import annotations

from ...backend import ShapeError
from ...ops.linear import Linear as LinearOp
from ...tensor import Tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch (one op: ops/linear.py)."""
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ShapeError(
            f"linear: input has {input.shape[-1] if input.ndim else 0} features (shape {input.shape}) but the "
            f"weight expects {weight.shape[-1]} (weight shape {weight.shape})"
        )
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ShapeError(f"linear: bias has shape {bias.shape}, expected {weight.shape[:1]}")
    if input.dtype != weight.dtype:
        input = input.to(weight.dtype)
    return LinearOp.apply(input, weight, bias)
