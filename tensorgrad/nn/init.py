"""In-place initialisers, as torch.nn.init: each overwrites tensor.data and returns the tensor.

Random ones draw from tensorgrad's seeded generator of the tensor's device (through the
tensor's own normal_ / uniform_), so tg.manual_seed(s) makes a freshly built model reproducible;
or, with generator=g, from the tg.Generator g, as in PyTorch.
"""

from __future__ import annotations

import math

from ..autograd import no_grad
from ..tensor import Tensor


@no_grad()
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """U(a, b)."""
    return tensor.uniform_(a, b, generator=generator)


@no_grad()
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """N(mean, std^2)."""
    return tensor.normal_(mean, std, generator=generator)


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    tensor._data[...] = val
    tensor._bump_version()
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1)


def calculate_gain(nonlinearity: str, param=None) -> float:
    """PyTorch's recommended gain for a nonlinearity: the factor by which it shrinks the variance
    of its inputs, undone by the scaled initialisations below (1 for linear and sigmoid, 5/3 for
    tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu, 3/4 for selu)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple:
    """(fan_in, fan_out) of a weight (out, in, *kernel): in and out times the kernel's size."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010): the variance
    a^2 / 3 = gain^2 * 2 / (fan_in + fan_out) keeps activations and gradients at one scale."""
    fan_in, fan_out = _fans(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator=generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode="fan_in", nonlinearity="leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = sqrt(3) * gain / sqrt(fan) (He et al., 2015): the variance
    gain^2 / fan keeps the activations' scale through a (leaky) ReLU; `a` is leaky_relu's slope."""
    if 0 in tensor.shape:
        return tensor  # PyTorch: initialising a zero-element tensor is a no-op
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode="fan_in", nonlinearity="leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        return tensor  # PyTorch: initialising a zero-element tensor is a no-op
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator=generator)
