"""LayerNorm over the last dims."""

from __future__ import annotations

from .. import backend
from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape)
    dims (biased variance); weight starts at ones, bias at zeros."""

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dtype = backend.as_dtype(dtype) or backend.float32
        if elementwise_affine:
            self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(*shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
