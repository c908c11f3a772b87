"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.
"""

from . import cuda, nn, optim
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
from .functions import (
    cat,
    exp,
    log,
    log_softmax,
    masked_fill,
    matmul,
    mean,
    relu,
    softmax,
    sqrt,
    stack,
    sum,
    tanh,
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
__all__ += ["ShapeError"]

from . import autograd, testing  # noqa: E402 - tg.autograd.Function / gradcheck, tg.testing.assert_close

__all__ += ["autograd", "testing"]
