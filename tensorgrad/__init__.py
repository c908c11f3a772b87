"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.
"""

__version__ = "0.1.0"  # the one place the version is written; setup.cfg reads it

from . import backend, cuda, custom_function, host_memory, kernels, nn, optim, profiler  # noqa: F401
from .autograd import Function, enable_grad, is_grad_enabled, no_grad
from .backend import DeviceError, ShapeError, float16, float32, float64, int32, int64, uint8
from .backend import bool_ as bool  # noqa: A001 - PyTorch's name
from .creation import (
    arange,
    empty,
    eye,
    full,
    full_like,
    linspace,
    manual_seed,
    multinomial,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    tensor,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .functions import (  # noqa: A004  # noqa: A004  # noqa: A004  # noqa: A004
    abs,
    add,
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    cat,
    ceil,
    clamp,
    clip,
    copysign,
    cos,
    cummax,
    cummin,
    cumprod,
    cumsum,
    div,
    exp,
    floor,
    floor_divide,
    fmod,
    isclose,
    log,
    log_softmax,
    logcumsumexp,
    logsumexp,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    pow,
    prod,
    relu,
    remainder,
    round,
    sigmoid,
    sign,
    sin,
    softmax,
    sort,
    sqrt,
    stack,
    std,
    std_mean,
    sub,
    sum,
    tan,
    tanh,
    topk,
    trunc,
    var,
    var_mean,
    where,
)
from .gradcheck import GradcheckError, gradcheck
from .serialization import CheckpointError, load, save
from .tensor import Tensor

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
long = int64
half = float16

__all__ = [
    "DeviceError", "Function", "GradcheckError", "Tensor", "arange", "bool", "cat", "cuda", "double",
    "empty", "enable_grad", "exp", "float", "float16", "float32", "float64", "full", "full_like",
    "gradcheck", "half", "int32", "int64", "is_grad_enabled", "log", "log_softmax", "long",
    "manual_seed", "masked_fill", "matmul", "mean", "multinomial", "no_grad", "ones", "ones_like",
    "rand", "randint", "randn", "relu", "softmax", "sqrt", "stack", "sum", "tanh", "tensor", "tril",
    "triu", "uint8", "where", "zeros", "zeros_like",
]  # fmt: skip
__all__ += ["CheckpointError", "load", "nn", "optim", "save"]
__all__ += ["kernels", "profiler", "host_memory"]
from .functions import (  # noqa: E402  indexing and shape
    diagonal,
    einsum,
    flip,
    gather,
    index_select,
    masked_select,
    meshgrid,
    nonzero,
    repeat_interleave,
    roll,
    scatter,
    scatter_add,
    scatter_reduce,
    tile,
)

__all__ += [
    "diagonal", "einsum", "eye", "flip", "gather", "index_select", "linspace", "masked_select", "meshgrid",
    "nonzero", "repeat_interleave", "roll", "scatter", "scatter_add", "scatter_reduce", "tile",
]  # fmt: skip
__all__ += ["amax", "amin", "argmax", "argmin", "argsort", "max", "maximum", "min", "minimum", "sort", "topk"]
__all__ += [
    "abs", "add", "ceil", "clamp", "clip", "copysign", "cos", "div", "floor", "floor_divide", "fmod", "mul", "pow",
    "remainder", "round", "sigmoid", "sign", "sin", "sub", "tan", "trunc",
]  # fmt: skip
__all__ += [
    "all", "any", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp", "logsumexp", "prod", "std", "std_mean",
    "var", "var_mean",
]  # fmt: skip
__all__ += ["allclose", "isclose"]

# More of PyTorch's dtype names and aliases
int16 = backend.as_dtype("int16")
int8 = backend.as_dtype("int8")
int = int32  # noqa: A001 - PyTorch's aliases
short = int16
__all__ += ["int", "int8", "int16", "short"]
__all__ += ["ShapeError"]

from . import autograd, testing  # noqa: E402 - tg.autograd.Function / gradcheck, tg.testing.assert_close

autograd.gradcheck, autograd.GradcheckError = gradcheck, GradcheckError  # tg.autograd.gradcheck, as in torch

__all__ += ["autograd", "testing"]
