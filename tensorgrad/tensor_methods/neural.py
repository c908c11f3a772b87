"""Tensor methods, neural-net ops: softmax and log-softmax along a dim (ops/softmax.py),
dropout (ops/dropout.py) and layer norm (ops/layernorm.py), each one fused op with its own
backward.  tg.nn.functional calls these."""

from __future__ import annotations

from ..backend import ShapeError
from ..ops.dropout import Dropout
from ..ops.layernorm import LayerNorm
from ..ops.softmax import LogSoftmax, Softmax
from .common import TensorBase, normalize_dim


class NeuralNetMixin(TensorBase):
    __slots__ = ()

    def softmax(self, dim, dtype=None):
        """Softmax along dim; dtype casts the input first (so integers may go in), as in PyTorch."""
        if dtype is not None:
            return self.to(dtype).softmax(dim)
        self._require_float("softmax")
        if self.ndim == 0:  # one element: softmax is 1 (through the graph, so its gradient is 0)
            normalize_dim(dim, 0, "softmax")
            return self.reshape(1).softmax(0).reshape(())
        return Softmax.apply(self, dim=normalize_dim(dim, self.ndim, "softmax"))

    def log_softmax(self, dim, dtype=None):
        if dtype is not None:
            return self.to(dtype).log_softmax(dim)
        self._require_float("log_softmax")
        if self.ndim == 0:
            normalize_dim(dim, 0, "log_softmax")
            return self.reshape(1).log_softmax(0).reshape(())
        return LogSoftmax.apply(self, dim=normalize_dim(dim, self.ndim, "log_softmax"))

    def dropout(self, p, training=True):
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be in [0, 1], got {p}")
        if not training or p == 0:
            return self
        if p == 1:
            return self * 0.0
        return Dropout.apply(self, p=p)

    def layer_norm(self, normalized_shape, weight=None, bias=None, eps=1e-5):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if self.shape[len(self.shape) - len(shape) :] != shape:
            raise ShapeError(f"layer_norm: normalized_shape {shape} does not match the last dims of {self.shape}")
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and t.shape != shape:
                raise ShapeError(f"layer_norm: {name} has shape {t.shape}, expected {shape}")
            if t is not None and t.dtype != self.dtype:  # else its gradient would come back in x's dtype
                raise TypeError(f"layer_norm: {name} is {t.dtype} but the input is {self.dtype} (as in PyTorch)")
        self._require_float("layer_norm")
        return LayerNorm.apply(self, weight, bias, k=len(shape), eps=eps)
