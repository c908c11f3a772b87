"""Convolution layers: Conv1d, Conv2d, ConvTranspose2d, with torch.nn's arguments, default
initialisation and state_dict keys (weight, bias)."""

from __future__ import annotations

import math

from .. import backend
from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _tuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    """weight and bias U(-k, k) with k = 1/sqrt(fan_in), fan_in = weight.shape[1] * kernel area:
    PyTorch's default (kaiming_uniform_ with a=sqrt(5) works out to exactly this bound)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, n, transposed=False, output_padding=0, device=None, dtype=None):  # fmt: skip
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{type(self).__name__}: in_channels {in_channels} and out_channels {out_channels} "
                             f"must be divisible by groups={groups}")  # fmt: skip
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{type(self).__name__}: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             f"'circular', got {padding_mode!r}")  # fmt: skip
        if transposed and padding_mode != "zeros":
            raise ValueError(f"{type(self).__name__}: only 'zeros' padding_mode is supported")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation, self.groups, self.padding_mode = _tuple(dilation, n), groups, padding_mode
        self.output_padding = _tuple(output_padding, n)
        dtype = backend.as_dtype(dtype) or backend.float32
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*shape, *self.kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def _pad_input(self, x):
        """A non-zeros padding_mode pads the input first (F.pad), then convolves without padding."""
        if self.padding_mode == "zeros":
            return x, self.padding
        if isinstance(self.padding, str):
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            amounts = [(0, 0) if self.padding == "valid" else (t // 2, t - t // 2) for t in totals]
        else:
            amounts = [(p, p) for p in self.padding]
        pad = tuple(v for before, after in reversed(amounts) for v in (before, after))
        return F.pad(x, pad, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0,) * len(self.kernel_size), "valid"):
            s += f", padding={self.padding}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.dilation != (1,) * len(self.kernel_size):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """F.conv1d: (N, C_in, L) -> (N, C_out, L_out); weight (C_out, C_in / groups, K)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 1, device=device, dtype=dtype)  # fmt: skip

    def forward(self, x):
        x, padding = self._pad_input(x)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """F.conv2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out); weight (C_out, C_in / groups, KH, KW)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 2, device=device, dtype=dtype)  # fmt: skip

    def forward(self, x):
        x, padding = self._pad_input(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    """F.conv3d: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out); weight (C_out, C_in / groups, KD, KH, KW)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 3, device=device, dtype=dtype)  # fmt: skip

    def forward(self, x):
        x, padding = self._pad_input(x)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """F.conv_transpose2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out); weight (C_in, C_out / groups, KH, KW)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 2, transposed=True, output_padding=output_padding, device=device,
                         dtype=dtype)  # fmt: skip

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)  # fmt: skip


class ConvTranspose1d(_ConvNd):
    """F.conv_transpose1d: (N, C_in, L) -> (N, C_out, L_out); weight (C_in, C_out / groups, K)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 1, transposed=True, output_padding=output_padding, device=device,
                         dtype=dtype)  # fmt: skip

    def forward(self, x):
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)  # fmt: skip


class Unfold(Module):
    """F.unfold: the sliding windows of (N, C, H, W) as columns (N, C * KH * KW, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x):
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
