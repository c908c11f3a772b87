"""LayerNorm and RMSNorm over the last dims; BatchNorm, InstanceNorm (with running statistics),
GroupNorm and LocalResponseNorm over the channels (dim 1)."""

from __future__ import annotations

from .. import backend
from ..backend import ShapeError
from ..creation import empty, ones, tensor, zeros
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


class _NormBase(Module):
    """The per-channel affine weight (ones) and bias (zeros), and the running statistics as buffers
    (running_mean zeros, running_var ones, num_batches_tracked), as torch.nn's batch and instance norms."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = backend.as_dtype(dtype) or backend.float32
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype, device=device))
            self.bias = Parameter(empty(num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=backend.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _momentum(self):
        """The update's momentum; with momentum=None the cumulative average 1 / batches seen."""
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                return 1.0 / int(self.num_batches_tracked.item())
        return 0.0 if self.momentum is None else self.momentum

    def _check_input_dim(self, x):
        if x.ndim not in self._ndims:
            raise ShapeError(f"{type(self).__name__}: expected a {' or '.join(map(str, self._ndims))}-d input, got "
                             f"{x.shape}")  # fmt: skip

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")  # fmt: skip


class _BatchNorm(_NormBase):
    """F.batch_norm: batch statistics while training (moving the running ones), the running ones in eval."""

    def forward(self, x):
        self._check_input_dim(x)
        momentum = self._momentum()
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(x, self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)  # fmt: skip


class BatchNorm1d(_BatchNorm):
    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ndims = (4,)


class BatchNorm3d(_BatchNorm):
    _ndims = (5,)


class _InstanceNorm(_NormBase):
    """F.instance_norm; by default no affine and no running statistics, as torch.nn."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, x):
        self._check_input_dim(x)
        batched = x.ndim == self._ndims[-1]
        x = x if batched else x.unsqueeze(0)
        use_input_stats = self.training or not self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum  # (torch.nn's: no cumulative average here)
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                            momentum, self.eps)  # fmt: skip
        return y if batched else y.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    _ndims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _ndims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _ndims = (4, 5)


class GroupNorm(Module):
    """F.group_norm: num_groups groups of channels, each normalised per sample; per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dtype = backend.as_dtype(dtype) or backend.float32
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype, device=device))
            self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """F.rms_norm over the last dims; the weight starts at ones."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dtype = backend.as_dtype(dtype) or backend.float32
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x):
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
