"""The activation functions: softmax and log_softmax (softmin: softmax of -x), relu, gelu, sigmoid,
tanh and the smooth and piecewise ones (ops/activation.py, ops/softmax.py); each calls one op."""

from __future__ import annotations

import warnings

from ... import backend
from ...backend import ShapeError
from ...ops.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    RReLU,
    SiLU,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from ...tensor import Tensor
from ...tensor_methods.common import normalize_dim


def _implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy dim for softmax, log_softmax and softmin called without one: 0 for 0-, 1- and
    3-d inputs, 1 otherwise, with its deprecation warning (a UserWarning at the caller's line)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Softmax along dim; dim=None is PyTorch's deprecated implicit dim (_implicit_softmax_dim)."""
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.ndim, _stacklevel)
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax) along dim; dim=None is PyTorch's deprecated implicit dim (_implicit_softmax_dim)."""
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.ndim, _stacklevel)
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


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * x for x > 0, scale * alpha (exp(x) - 1) otherwise (alpha ~ 1.6733, scale ~ 1.0507)."""
    return _activation(SELU, input, "selu", inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    _require_float("logsigmoid", input)
    return LogSigmoid.apply(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _activation(Hardswish, input, "hardswish", inplace)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 for |x| <= lambd, x otherwise."""
    _require_float("hardshrink", input)
    return Hardshrink.apply(input, lambd=lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 for |x| <= lambd, x - lambd * sign(x) otherwise; lambd must be >= 0."""
    if not lambd >= 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    _require_float("softshrink", input)
    return Softshrink.apply(input, lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return _activation(Tanhshrink, input, "tanhshrink", False)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """value where x <= threshold, x elsewhere (integer inputs stay integer, as PyTorch)."""
    if inplace:
        raise ValueError("threshold: inplace=True is not supported; use the returned tensor (inplace=False)")
    return Threshold.apply(input, threshold=threshold, value=value)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along dim (a composition: negation, then softmax; each has its backward).
    dim=None picks PyTorch's legacy implicit dim (_implicit_softmax_dim), with its warning."""
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return (-input).softmax(dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim."""
    if input.ndim == 0:
        raise ShapeError("glu: does not support scalars because halving size must be even")
    dim = normalize_dim(dim, input.ndim, "glu")
    if input.shape[dim] % 2:
        raise ShapeError(f"glu: halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    _require_float("glu", input)
    return GLU.apply(input, dim=dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x for x > 0, weight * x otherwise; weight holds one slope, or one per channel (dim 1)."""
    if weight.ndim > 1:
        raise ShapeError(f"prelu: expected `weight` to be a scalar or 1-d tensor, but got ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1:
        if input.ndim == 0:
            raise ShapeError(f"prelu: a 0-d input takes a single slope, got weight of shape {weight.shape}")
        if weight.numel() != channels:
            raise ShapeError(f"prelu: weight has {weight.numel()} slopes but the input has {channels} channels "
                             f"(dim 1 of {input.shape}); give one slope or one per channel")  # fmt: skip
    _require_float("prelu", input)
    if weight.dtype != input.dtype:
        raise TypeError(f"prelu: input is {input.dtype} but weight is {weight.dtype}")
    w = weight.reshape((-1,) + (1,) * (input.ndim - 2)) if weight.numel() != 1 else weight.reshape(())
    return PReLU.apply(input, w)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:  # fmt: skip
    """Randomized leaky ReLU: x for x > 0, a * x otherwise; training draws a ~ U(lower, upper) per element
    (ops/activation.py: RReLU), evaluation uses the mean slope (lower + upper) / 2 (leaky_relu)."""
    if lower > upper:
        raise RuntimeError(f"rrelu: lower bound ({lower}) must be less than or equal to the upper bound ({upper})")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if inplace:
        raise ValueError("rrelu: inplace=True is not supported; use the returned tensor (inplace=False)")
    _require_float("rrelu", input)
    return RReLU.apply(input, lower=lower, upper=upper)


def _require_float(op, input: Tensor):
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: expected a floating-point input, got dtype {input.dtype}")
