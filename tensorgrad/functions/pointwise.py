"""tg.* functions, elementwise: arithmetic (add, sub, mul, div, pow: a number on either side),
the elementwise math as functions (tg.exp(x) == x.exp(); tensor_methods/pointwise.py), comparing
values (isclose, allclose), and the predicates, logical and bitwise ops (no gradient).  abs, pow
and round are PyTorch's names: here they shadow the built-ins (builtins.X reaches those)."""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor


# ---------------------------------------------------------------- arithmetic and elementwise math as functions
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
    input = _numbers(input, other)
    return input.add(other, alpha=alpha) if isinstance(input, Tensor) else other.__radd__(input)


def sub(input, other, *, alpha=1) -> Tensor:
    input = _numbers(input, other)
    if isinstance(input, Tensor):
        return input.sub(other, alpha=alpha)
    return (other * alpha if alpha != 1 else other).__rsub__(input)


def mul(input, other) -> Tensor:
    input = _numbers(input, other)
    return input * other if isinstance(input, Tensor) else other.__rmul__(input)


def div(input, other, *, rounding_mode=None) -> Tensor:
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


def abs(input: Tensor) -> Tensor:  # noqa: A001 (PyTorch's name)
    return input.abs()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def sin(input: Tensor) -> Tensor:
    return input.sin()


def cos(input: Tensor) -> Tensor:
    return input.cos()


def tan(input: Tensor) -> Tensor:
    return input.tan()


def sign(input: Tensor) -> Tensor:
    return input.sign()


def round(input: Tensor, *, decimals=0) -> Tensor:  # noqa: A001 (PyTorch's name)
    return input.round(decimals)


def floor(input: Tensor) -> Tensor:
    return input.floor()


def ceil(input: Tensor) -> Tensor:
    return input.ceil()


def trunc(input: Tensor) -> Tensor:
    return input.trunc()


def clamp(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002 (PyTorch's names)
    return input.clamp(min, max)


clip = clamp


def fmod(input: Tensor, other) -> Tensor:
    return input.fmod(other)


def remainder(input, other) -> Tensor:
    _one_tensor("remainder", input, other)
    return input.remainder(other) if isinstance(input, Tensor) else other.__rmod__(input)


def copysign(input: Tensor, other) -> Tensor:
    return input.copysign(other)


def floor_divide(input, other) -> Tensor:
    return div(input, other, rounding_mode="floor")


def exp(x: Tensor) -> Tensor:
    return x.exp()


def log(x: Tensor) -> Tensor:
    return x.log()


def exp2(x: Tensor) -> Tensor:
    return x.exp2()


def log2(x: Tensor) -> Tensor:
    return x.log2()


def log10(x: Tensor) -> Tensor:
    return x.log10()


def sqrt(x: Tensor) -> Tensor:
    return x.sqrt()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def relu(x: Tensor) -> Tensor:
    return x.relu()


# ---------------------------------------------------------------- pointwise math (tensor_methods/pointwise.py)
def asin(input: Tensor) -> Tensor:
    return input.asin()


def acos(input: Tensor) -> Tensor:
    return input.acos()


def atan(input: Tensor) -> Tensor:
    return input.atan()


def sinh(input: Tensor) -> Tensor:
    return input.sinh()


def cosh(input: Tensor) -> Tensor:
    return input.cosh()


def asinh(input: Tensor) -> Tensor:
    return input.asinh()


def acosh(input: Tensor) -> Tensor:
    return input.acosh()


def atanh(input: Tensor) -> Tensor:
    return input.atanh()


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # NumPy's names


def expm1(input: Tensor) -> Tensor:
    return input.expm1()


def log1p(input: Tensor) -> Tensor:
    return input.log1p()


def rsqrt(input: Tensor) -> Tensor:
    return input.rsqrt()


def reciprocal(input: Tensor) -> Tensor:
    return input.reciprocal()


def square(input: Tensor) -> Tensor:
    return input.square()


def sinc(input: Tensor) -> Tensor:
    return input.sinc()


def frac(input: Tensor) -> Tensor:
    return input.frac()


def deg2rad(input: Tensor) -> Tensor:
    return input.deg2rad()


def rad2deg(input: Tensor) -> Tensor:
    return input.rad2deg()


def sgn(input: Tensor) -> Tensor:
    return input.sgn()


def logit(input: Tensor, eps=None) -> Tensor:
    return input.logit(eps)


def nan_to_num(input: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    return input.nan_to_num(nan, posinf, neginf)


def erf(input: Tensor) -> Tensor:
    return input.erf()


def erfc(input: Tensor) -> Tensor:
    return input.erfc()


def erfinv(input: Tensor) -> Tensor:
    return input.erfinv()


def lgamma(input: Tensor) -> Tensor:
    return input.lgamma()


def digamma(input: Tensor) -> Tensor:
    return input.digamma()


def i0(input: Tensor) -> Tensor:
    return input.i0()


def polygamma(n: int, input: Tensor) -> Tensor:
    return input.polygamma(n)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    return input.atan2(other)


arctan2 = atan2


def hypot(input: Tensor, other: Tensor) -> Tensor:
    return input.hypot(other)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    return input.logaddexp(other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    return input.logaddexp2(other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    return input.fmax(other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    return input.fmin(other)


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input = 0; either may be a number (not both)."""
    return input.xlogy(other) if isinstance(input, Tensor) else other._xlogy(input, reflected=True)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    return input.lerp(end, weight)


def float_power(input, exponent) -> Tensor:
    """input ** exponent in float64; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input.float_power(exponent)
    return exponent.to(backend.float64).__rpow__(input)


def true_divide(input, other) -> Tensor:
    return div(input, other)


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """other - alpha * input (sub with the operands swapped)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' must be Tensor, not {type(input).__name__}")
    scaled = input * alpha if alpha != 1 else input
    return other - scaled if isinstance(other, Tensor) else scaled.__rsub__(other)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    return input.ldexp(other)


def frexp(input: Tensor):
    return input.frexp()


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.clamp_min(min)


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002 (PyTorch's name)
    return input.clamp_max(max)


# ---------------------------------------------------------------- comparing values
def isclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    return input.isclose(other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return input.allclose(other, rtol, atol, equal_nan)


# ---------------------------------------------------------------- no gradient: predicates, logical and bitwise ops
def isnan(input: Tensor) -> Tensor:
    return input.isnan()


def isinf(input: Tensor) -> Tensor:
    return input.isinf()


def isfinite(input: Tensor) -> Tensor:
    return input.isfinite()


def isposinf(input: Tensor) -> Tensor:
    return input.isposinf()


def isneginf(input: Tensor) -> Tensor:
    return input.isneginf()


def isreal(input: Tensor) -> Tensor:
    return input.isreal()


def signbit(input: Tensor) -> Tensor:
    return input.signbit()


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    return input.heaviside(values)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    return input.nextafter(other)


def logical_not(input: Tensor) -> Tensor:
    return input.logical_not()


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_and(other)


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_or(other)


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return input.logical_xor(other)


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
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other, "bitwise_right_shift")
    return input.bitwise_right_shift(other)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    return input.gcd(other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    return input.lcm(other)
