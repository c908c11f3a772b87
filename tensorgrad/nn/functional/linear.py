"""The affine map y = x W^T + b (one op: ops/linear.py) and the bilinear map x1^T W x2 + b (a composition)."""

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


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]: a composition of two
    products, (x1 W) for every o by matmul, then with x2 by a multiply and a sum."""
    if weight.ndim != 3:
        raise ShapeError(f"bilinear: weight must be 3-d (out_features, in1_features, in2_features), got {weight.shape}")
    if input1.ndim == 0 or input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: input1 {input1.shape} and input2 {input2.shape} must have the same batch dims")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise ShapeError(f"bilinear: inputs with {input1.shape[-1]} and {input2.shape[-1]} features do not fit weight "
                         f"{weight.shape}")  # fmt: skip
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ShapeError(f"bilinear: bias has shape {bias.shape}, expected {weight.shape[:1]}")
    left = (input1.unsqueeze(-2).unsqueeze(-2) @ weight).squeeze(-2)  # (..., O, J): x1 W[o] for every o
    y = (left * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
