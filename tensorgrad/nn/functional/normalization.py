"""Layer normalization (ops/layernorm.py) and normalize, x / ||x||_p (ops/losses.py)."""

from __future__ import annotations

from ... import backend
from ...ops.losses import Normalize
from ...tensor import Tensor
from ...tensor_methods.common import normalize_dim


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return input.layer_norm(normalized_shape, weight, bias, eps)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """input / max(||input||_p, eps) along dim (one op: ops/losses.py)."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    if p != p or abs(p) == float("inf"):
        raise ValueError(f"normalize: p must be a finite number, got {p}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"normalize: expected a floating-point tensor, got dtype {input.dtype}")
    return Normalize.apply(input, p=p, dim=normalize_dim(dim, input.ndim, "normalize"), eps=eps)
