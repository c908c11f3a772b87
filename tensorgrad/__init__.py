"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.  creation.py (tg.tensor, tg.zeros, ...)
and functions.py (tg.cat, tg.where, tg.sum, ...) are the functions of this namespace.
"""

__version__ = "0.1.0"  # the one place the version is written; setup.cfg reads it

# custom_function registers the PyTorch form of Function with the engine, and kernels registers
# each device's kernel loader with the engine's registry: both must be imported here.
from . import autograd, backend, cuda, custom_function, host_memory, kernels, nn, optim, profiler, random, testing  # noqa: F401
from .autograd import Function, enable_grad, is_anomaly_check_nan_enabled, is_anomaly_enabled, is_grad_enabled, no_grad
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
    normal,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    tensor,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .functions import (  # noqa: A004 - PyTorch's names (abs, all, any, max, min, pow, round, sum)
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
    diagonal,
    div,
    einsum,
    exp,
    exp2,
    flip,
    floor,
    floor_divide,
    fmod,
    gather,
    histc,
    histogram,
    index_select,
    isclose,
    log,
    log2,
    log10,
    log_softmax,
    logcumsumexp,
    logsumexp,
    masked_fill,
    masked_select,
    matmul,
    max,
    maximum,
    mean,
    meshgrid,
    min,
    minimum,
    mul,
    nonzero,
    pow,
    prod,
    relu,
    remainder,
    repeat_interleave,
    roll,
    round,
    scatter,
    scatter_add,
    scatter_reduce,
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
    tile,
    topk,
    trunc,
    var,
    var_mean,
    where,
)
from .gradcheck import GradcheckError, gradcheck
from .hooks import grad as _autograd_grad
from .random import Generator, default_generator
from .serialization import CheckpointError, load, save
from .tensor import Tensor
from .tensor_methods.common import MemoryFormat as memory_format
from .tensor_methods.common import channels_last, channels_last_3d, contiguous_format, preserve_format
from .threads import get_num_threads, set_num_threads

# PyTorch's dtype aliases, and the integer dtypes the backend has no name for
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
int16 = backend.as_dtype("int16")
int8 = backend.as_dtype("int8")
short = int16

__all__ = [
    # modules: tg.autograd.Function, tg.testing.assert_close, tg.nn.Linear, ...
    "autograd", "cuda", "host_memory", "kernels", "nn", "optim", "profiler", "random", "testing",
    # the Tensor, autograd and gradient checks
    "Tensor", "Function", "enable_grad", "is_grad_enabled", "no_grad", "gradcheck", "GradcheckError",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    # errors
    "CheckpointError", "DeviceError", "ShapeError",
    # dtypes and their aliases
    "bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "double", "float", "half", "int", "long", "short",
    # memory formats (checked as PyTorch checks them; the layout is always contiguous)
    "memory_format", "channels_last", "channels_last_3d", "contiguous_format", "preserve_format",
    # creation and random numbers (creation.py)
    "arange", "empty", "eye", "full", "full_like", "linspace", "ones", "ones_like", "tensor", "tril", "triu",
    "zeros", "zeros_like", "manual_seed", "multinomial", "rand", "randint", "randn",
    "Generator", "default_generator", "normal", "randperm",
    # elementwise
    "abs", "add", "ceil", "clamp", "clip", "copysign", "cos", "div", "exp", "exp2", "floor", "floor_divide", "fmod",
    "log", "log2", "log10", "mul", "pow", "relu", "remainder", "round", "sigmoid", "sign", "sin", "sqrt", "sub", "tan",
    "tanh", "trunc",
    # comparisons, selection and masking
    "allclose", "isclose", "amax", "amin", "argmax", "argmin", "argsort", "max", "maximum", "min", "minimum",
    "sort", "topk", "masked_fill", "where",
    # reductions and scans
    "all", "any", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp", "logsumexp", "mean", "prod", "std",
    "std_mean", "sum", "var", "var_mean",
    # counting values (no gradient)
    "histc", "histogram",
    # softmax and matmul
    "log_softmax", "softmax", "einsum", "matmul",
    # shape and indexing
    "cat", "diagonal", "flip", "gather", "index_select", "masked_select", "meshgrid", "nonzero",
    "repeat_interleave", "roll", "scatter", "scatter_add", "scatter_reduce", "stack", "tile",
    # saving and loading
    "load", "save",
    # the CPU threads (tg.set_num_threads, as torch.set_num_threads)
    "get_num_threads", "set_num_threads",
]  # fmt: skip

# tg.autograd.gradcheck, as torch.autograd.gradcheck: gradcheck works on Tensors, a layer above the
# engine, so the engine module cannot import it; the package that imports both joins them here.
autograd.gradcheck, autograd.GradcheckError = gradcheck, GradcheckError
# tg.autograd.grad, as torch.autograd.grad: it lives in hooks.py, beside the tensor hooks it shares
# the engine's reverse pass with (the engine module imports nothing of them).
autograd.grad = _autograd_grad
