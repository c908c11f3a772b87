"""tg.* functions, elementwise, that do more than call their Tensor method: arithmetic (add, sub,
mul, div, pow, ...: a number on either side), round (decimals keyword-only), polygamma (n first),
xlogy and float_power (a number on either side), and the bitwise ops that take a number first.
The elementwise math that only calls its method (tg.exp(x) is x.exp()) is generated
(forwarders.py).  pow and round are PyTorch's names: here they shadow the built-ins (builtins.X
reaches those)."""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor


# ---------------------------------------------------------------- arithmetic: a number on either side
def _numbers(input, other):
    """torch.add(2.5, 3) and the other binary functions of two Python numbers: the first becomes a
    0-d tensor (float32 or int64, PyTorch's defaults), so the answer is a tensor, as in PyTorch."""
    if isinstance(input, Tensor) or isinstance(other, Tensor):
        return input
    return Tensor(input)


def _one_tensor(op: str, input, other):
    """pow and remainder take a number for one side, not both (PyTorch has no such overload)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"{op}(): one of input and other must be a Tensor, got {type(input).__name__} and {type(other).__name__}"
        )


def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha * other; either may be a number (two numbers give a 0-d tensor), as torch.add."""
    input = _numbers(input, other)
    return input.add(other, alpha=alpha) if isinstance(input, Tensor) else other.__radd__(input)


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha * other; either may be a number (two numbers give a 0-d tensor), as torch.sub."""
    input = _numbers(input, other)
    if isinstance(input, Tensor):
        return input.sub(other, alpha=alpha)
    return (other * alpha if alpha != 1 else other).__rsub__(input)


def mul(input, other) -> Tensor:
    """input * other; either may be a number (two numbers give a 0-d tensor), as torch.mul."""
    input = _numbers(input, other)
    return input * other if isinstance(input, Tensor) else other.__rmul__(input)


def div(input, other, *, rounding_mode=None) -> Tensor:
    """input / other, rounded as rounding_mode says (None: true division, 'trunc', 'floor'); either may be a number."""
    input = _numbers(input, other)
    if isinstance(input, Tensor):
        return input.div(other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        return other.__rtruediv__(input)
    return Tensor(input, device=other.device).div(other, rounding_mode=rounding_mode)


def pow(input, exponent) -> Tensor:  # noqa: A001 (PyTorch's name)
    """input ** exponent: either may be a number (not both)."""
    _one_tensor("pow", input, exponent)
    return input**exponent if isinstance(input, Tensor) else exponent.__rpow__(input)


def round(input: Tensor, *, decimals=0) -> Tensor:  # noqa: A001 (PyTorch's name)
    """input rounded to `decimals` decimal places (half to even), as torch.round; decimals is keyword-only there too."""
    return input.round(decimals)


def remainder(input, other) -> Tensor:
    """input - floor(input / other) * other: the sign of other, as Python's %; either may be a number (not both)."""
    _one_tensor("remainder", input, other)
    return input.remainder(other) if isinstance(input, Tensor) else other.__rmod__(input)


def floor_divide(input, other) -> Tensor:
    """input / other rounded down (div with rounding_mode='floor'); either may be a number."""
    return div(input, other, rounding_mode="floor")


# ---------------------------------------------------------------- pointwise math beyond its method
def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of the digamma function at input (n first, as in torch.polygamma)."""
    return input.polygamma(n)


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input = 0; either may be a number (not both)."""
    return input.xlogy(other) if isinstance(input, Tensor) else other._xlogy(input, reflected=True)


def float_power(input, exponent) -> Tensor:
    """input ** exponent in float64; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input.float_power(exponent)
    return exponent.to(backend.float64).__rpow__(input)


def true_divide(input, other) -> Tensor:
    """input / other (div without a rounding mode)."""
    return div(input, other)


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """other - alpha * input (sub with the operands swapped)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' must be Tensor, not {type(input).__name__}")
    scaled = input * alpha if alpha != 1 else input
    return other - scaled if isinstance(other, Tensor) else scaled.__rsub__(other)


# ---------------------------------------------------------------- no gradient: bitwise ops with a number first
def bitwise_xor(input, other) -> Tensor:
    """input ^ other; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input.bitwise_xor(other)
    if not isinstance(other, Tensor):
        names = f"{type(input).__name__} and {type(other).__name__}"
        raise TypeError(f"bitwise_xor(): expected a Tensor argument, got {names}")
    return other.__rxor__(input)


def _number_as_tensor(input, other: Tensor, op) -> Tensor:
    """A number `input` before a tensor `other` (a shift of 2 by a tensor), as a tensor of other's dtype."""
    if not isinstance(other, Tensor) or not isinstance(input, int):
        raise TypeError(f"{op}(): expected a Tensor argument, got {type(input).__name__} and {type(other).__name__}")
    return other._constant(input, dtype=other.dtype)


def bitwise_left_shift(input, other) -> Tensor:
    """input << other; input may be a number before a tensor."""
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other, "bitwise_left_shift")
    return input.bitwise_left_shift(other)


def bitwise_right_shift(input, other) -> Tensor:
    """input >> other; input may be a number before a tensor."""
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other, "bitwise_right_shift")
    return input.bitwise_right_shift(other)
