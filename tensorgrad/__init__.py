"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.  creation.py (tg.tensor, tg.zeros, ...)
and functions.py (tg.cat, tg.where, tg.sum, ...) are the functions of this namespace.
"""

__version__ = "0.1.0"  # the one place the version is written; setup.cfg reads it

# custom_function registers the PyTorch form of Function with the engine, and kernels registers
# each device's kernel loader with the engine's registry: both must be imported here.
from . import (  # noqa: F401
    autograd,
    backend,
    cuda,
    custom_function,
    host_memory,
    kernels,
    linalg,  # noqa: F401  (tg.linalg, as torch.linalg)
    nn,
    optim,
    profiler,
    random,
    testing,
)
from .autograd import Function, enable_grad, is_anomaly_check_nan_enabled, is_anomaly_enabled, is_grad_enabled, no_grad
from .backend import DeviceError, ShapeError, float16, float32, float64, int32, int64, uint8
from .backend import bool_ as bool  # noqa: A001 - PyTorch's name
from .creation import (
    arange,
    empty,
    empty_like,
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
    scalar_tensor,
    tensor,
    tril,
    tril_indices,
    triu,
    triu_indices,
    zeros,
    zeros_like,
)
from .functions import (  # noqa: A004 - PyTorch's names (abs, all, any, max, min, pow, round, sum)
    abs,
    add,
    addbmm,
    addcdiv,
    addcmul,
    addmm,
    addmv,
    addr,
    adjoint,
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    baddbmm,
    block_diag,
    bmm,
    broadcast_shapes,
    broadcast_tensors,
    broadcast_to,
    cartesian_prod,
    cat,
    ceil,
    clamp,
    clip,
    column_stack,
    copysign,
    cos,
    cross,
    cummax,
    cummin,
    cumprod,
    cumsum,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    diff,
    dist,
    div,
    dot,
    dsplit,
    dstack,
    einsum,
    exp,
    exp2,
    fill,
    flip,
    fliplr,
    flipud,
    floor,
    floor_divide,
    fmod,
    gather,
    ger,
    histc,
    histogram,
    hsplit,
    hstack,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_reduce,
    index_select,
    inner,
    isclose,
    kron,
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
    mm,
    moveaxis,
    movedim,
    mul,
    mv,
    narrow,
    narrow_copy,
    nonzero,
    norm,
    outer,
    pow,
    prod,
    ravel,
    relu,
    remainder,
    repeat_interleave,
    roll,
    rot90,
    round,
    row_stack,
    scatter,
    scatter_add,
    scatter_reduce,
    select,
    sigmoid,
    sign,
    sin,
    softmax,
    sort,
    split_with_sizes,
    sqrt,
    stack,
    std,
    std_mean,
    sub,
    sum,
    swapaxes,
    swapdims,
    t,
    take,
    take_along_dim,
    tan,
    tanh,
    tensor_split,
    tensordot,
    tile,
    topk,
    trace,
    trunc,
    unbind,
    unflatten,
    var,
    var_mean,
    vdot,
    vsplit,
    vstack,
    where,
)
from .gradcheck import GradcheckError, gradcheck
from .hooks import grad as _autograd_grad
from .linalg import cholesky, cholesky_inverse, cholesky_solve, logdet, matrix_exp, pinverse, triangular_solve
from .linalg import torch_qr as qr  # torch.qr / torch.svd: (A, some=True) and V, not Vh (tg.linalg.qr / svd differ)
from .linalg import torch_svd as svd
from .random import Generator, default_generator
from .serialization import CheckpointError, load, save
from .tensor import Tensor
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
    "autograd", "cuda", "host_memory", "kernels", "linalg", "nn", "optim", "profiler", "random", "testing",
    # the Tensor, autograd and gradient checks
    "Tensor", "Function", "enable_grad", "is_grad_enabled", "no_grad", "gradcheck", "GradcheckError",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    # errors
    "CheckpointError", "DeviceError", "ShapeError",
    # dtypes and their aliases
    "bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "double", "float", "half", "int", "long", "short",
    # creation and random numbers (creation.py)
    "arange", "empty", "empty_like", "eye", "full", "full_like", "linspace", "ones", "ones_like", "scalar_tensor",
    "tensor", "tril", "tril_indices", "triu", "triu_indices",
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
    # linear algebra (tg.linalg holds cross, vecdot and the norms too)
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "baddbmm", "bmm", "cross", "dist", "dot", "ger", "inner",
    "kron", "mm", "mv", "norm", "outer", "tensordot", "trace", "vdot",
    "cholesky", "cholesky_inverse", "cholesky_solve", "logdet", "matrix_exp", "pinverse", "qr", "svd",
    "triangular_solve",
    # more shape and indexing (spellings of the ops above)
    "adjoint", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "cartesian_prod", "column_stack", "diag", "diag_embed", "diagflat", "diff", "dsplit", "dstack",
    "fill", "fliplr", "flipud", "hsplit", "hstack", "index_add", "index_copy", "index_fill", "index_put",
    "index_reduce", "moveaxis", "movedim", "narrow", "narrow_copy", "ravel", "rot90", "row_stack", "select",
    "split_with_sizes", "swapaxes", "swapdims", "t", "take", "take_along_dim", "tensor_split", "unbind", "unflatten",
    "vsplit", "vstack",
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
