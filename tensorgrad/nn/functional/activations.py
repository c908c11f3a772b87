"""The activation functions: softmax and log_softmax, relu, gelu, sigmoid, tanh and the smooth
and piecewise ones (ops/activation.py, ops/softmax.py); each calls one op."""

from __future__ import annotations

from ... import backend
from ...ops.activation import CELU, ELU, Hardsigmoid, Hardtanh, LeakyReLU, Mish, SiLU, Softplus, Softsign
from ...tensor import Tensor


def softmax(input: Tensor, dim: int, _stacklevel: int = 3, dtype=None) -> Tensor:
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int, _stacklevel: int = 3, dtype=None) -> Tensor:
    return input.log_softmax(dim, dtype)


def relu(input: Tensor) -> Tensor:
    return input.relu()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return input.gelu(approximate)


def _activation(op, input: Tensor, name: str, inplace: bool, **params) -> Tensor:
    if inplace:
        raise ValueError(f"{name}: inplace=True is not supported; use the returned tensor (inplace=False)")
    if not backend.is_floating(input.dtype):
        input = input.float()
    return op.apply(input, **params)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _activation(SiLU, input, "silu", inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _activation(Mish, input, "mish", inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return _activation(Softsign, input, "softsign", False)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold."""
    return _activation(Softplus, input, "softplus", False, beta=beta, threshold=threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _activation(Hardtanh, input, "hardtanh", inplace, min_val=min_val, max_val=max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clamp(x / 6 + 1/2, 0, 1)."""
    return _activation(Hardsigmoid, input, "hardsigmoid", inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return _activation(ELU, input, "elu", inplace, alpha=alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha (exp(x / alpha) - 1) otherwise."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides x)")
    return _activation(CELU, input, "celu", inplace, alpha=alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return _activation(LeakyReLU, input, "leaky_relu", inplace, negative_slope=negative_slope)
