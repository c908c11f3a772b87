"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.  creation.py (tg.tensor, tg.zeros, ...)
and functions/ (tg.cat, tg.where, tg.sum, ..., one module per family) are the functions of this
namespace.
"""

import sys as _sys

__version__ = "0.1.0"  # the one place the version is written; setup.cfg reads it

# custom_function registers the PyTorch form of Function with the engine, and kernels registers
# each device's kernel loader with the engine's registry: both must be imported here.
from . import (  # noqa: F401
    autograd,
    backend,
    cuda,
    custom_function,
    func,
    host_memory,
    kernels,
    linalg,
    nn,
    optim,
    profiler,
    random,
    special,
    testing,
)
from . import autograd_functional as _autograd_functional
from .autograd import (
    Function,
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
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
    logspace,
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

# the tg.* functions, by family (tensorgrad/functions/): arithmetic, elementwise math, predicates
from .functions.pointwise import (  # noqa: A004 - PyTorch's names (abs, pow, round)
    abs,
    acos,
    acosh,
    add,
    allclose,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_left_shift,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    copysign,
    cos,
    cosh,
    deg2rad,
    digamma,
    div,
    erf,
    erfc,
    erfinv,
    exp,
    exp2,
    expm1,
    float_power,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    frac,
    frexp,
    gcd,
    heaviside,
    hypot,
    i0,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    lcm,
    ldexp,
    lerp,
    lgamma,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logit,
    mul,
    nan_to_num,
    nextafter,
    polygamma,
    pow,
    rad2deg,
    reciprocal,
    relu,
    remainder,
    round,
    rsqrt,
    rsub,
    sgn,
    sigmoid,
    sign,
    signbit,
    sin,
    sinc,
    sinh,
    sqrt,
    square,
    sub,
    tan,
    tanh,
    true_divide,
    trunc,
    xlogy,
)

# matmul, einsum and the matrix and vector products
from .functions.products import (
    addbmm,
    addcdiv,
    addcmul,
    addmm,
    addmv,
    addr,
    baddbmm,
    bmm,
    cross,
    dist,
    dot,
    einsum,
    ger,
    inner,
    kron,
    matmul,
    mm,
    mv,
    norm,
    outer,
    tensordot,
    trace,
    vdot,
)

# reductions, scans, selection and softmax
from .functions.reductions import (  # noqa: A004 - PyTorch's names (all, any, max, min, sum)
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    cummax,
    cummin,
    cumprod,
    cumsum,
    log_softmax,
    logcumsumexp,
    logsumexp,
    max,
    maximum,
    mean,
    min,
    minimum,
    prod,
    softmax,
    sort,
    std,
    std_mean,
    sum,
    topk,
    var,
    var_mean,
)

# cat, stack, where, indexing and shape
from .functions.shape import (
    adjoint,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    broadcast_to,
    cartesian_prod,
    cat,
    column_stack,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    diff,
    dsplit,
    dstack,
    fill,
    flip,
    fliplr,
    flipud,
    gather,
    hsplit,
    hstack,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_reduce,
    index_select,
    masked_fill,
    masked_select,
    meshgrid,
    moveaxis,
    movedim,
    narrow,
    narrow_copy,
    nonzero,
    ravel,
    repeat_interleave,
    roll,
    rot90,
    row_stack,
    scatter,
    scatter_add,
    scatter_reduce,
    select,
    split_with_sizes,
    stack,
    swapaxes,
    swapdims,
    t,
    take,
    take_along_dim,
    tensor_split,
    tile,
    unbind,
    unflatten,
    vsplit,
    vstack,
    where,
)

# statistics, counting, searching and the trapezoidal rule
from .functions.statistics import (
    aminmax,
    argwhere,
    bincount,
    bucketize,
    corrcoef,
    count_nonzero,
    cov,
    cumulative_trapezoid,
    equal,
    histc,
    histogram,
    isin,
    kthvalue,
    median,
    mode,
    msort,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    quantile,
    renorm,
    searchsorted,
    trapezoid,
    trapz,
    unique,
    unique_consecutive,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .hooks import grad as _autograd_grad
from .linalg import cholesky, cholesky_inverse, cholesky_solve, logdet, matrix_exp, pinverse, triangular_solve
from .linalg import torch_qr as qr  # torch.qr / torch.svd: (A, some=True) and V, not Vh (tg.linalg.qr / svd differ)
from .linalg import torch_svd as svd
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
    "autograd", "cuda", "func", "host_memory", "kernels", "linalg", "nn", "optim", "profiler", "random", "special",
    "testing",
    # the Tensor, autograd and gradient checks
    "Tensor", "Function", "enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "gradcheck",
    "GradcheckError",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    # errors
    "CheckpointError", "DeviceError", "ShapeError",
    # dtypes and their aliases
    "bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "double", "float", "half", "int", "long", "short",
    # memory formats (checked as PyTorch checks them; the layout is always contiguous)
    "memory_format", "channels_last", "channels_last_3d", "contiguous_format", "preserve_format",
    # creation and random numbers (creation.py)
    "arange", "empty", "empty_like", "eye", "full", "full_like", "linspace", "logspace", "ones", "ones_like",
    "scalar_tensor", "tensor", "tril", "tril_indices", "triu", "triu_indices",
    "zeros", "zeros_like", "manual_seed", "multinomial", "rand", "randint", "randn",
    "Generator", "default_generator", "normal", "randperm",
    # elementwise
    "abs", "add", "ceil", "clamp", "clip", "copysign", "cos", "div", "exp", "exp2", "floor", "floor_divide", "fmod",
    "log", "log2", "log10", "mul", "pow", "relu", "remainder", "round", "sigmoid", "sign", "sin", "sqrt", "sub", "tan",
    "tanh", "trunc",
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan",
    "atan2", "atanh", "clamp_max", "clamp_min", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "expm1",
    "float_power", "fmax", "fmin", "frac", "frexp", "hypot", "i0", "ldexp", "lerp", "lgamma", "log1p", "logaddexp",
    "logaddexp2", "logit", "nan_to_num", "polygamma", "rad2deg", "reciprocal", "rsqrt", "rsub", "sgn", "sinc", "sinh",
    "square", "true_divide", "xlogy",
    # predicates, logical and bitwise ops (no gradient)
    "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "signbit", "heaviside", "nextafter",
    "logical_and", "logical_not", "logical_or", "logical_xor", "bitwise_left_shift", "bitwise_right_shift",
    "bitwise_xor", "gcd", "lcm",
    # comparisons, selection and masking
    "allclose", "isclose", "amax", "amin", "argmax", "argmin", "argsort", "max", "maximum", "min", "minimum",
    "sort", "topk", "masked_fill", "where",
    # reductions and scans
    "all", "any", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp", "logsumexp", "mean", "prod", "std",
    "std_mean", "sum", "var", "var_mean",
    # statistics: order statistics, NaN-skipping reductions, covariance, integration
    "aminmax", "corrcoef", "cov", "cumulative_trapezoid", "kthvalue", "median", "mode", "msort", "nanmean",
    "nanmedian", "nanquantile", "nansum", "quantile", "renorm", "trapezoid", "trapz",
    # counting, distinct values and searching (no gradient)
    "argwhere", "bincount", "bucketize", "count_nonzero", "equal", "histc", "histogram", "isin", "searchsorted",
    "unique", "unique_consecutive",
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
autograd.gradcheck, autograd.gradgradcheck, autograd.GradcheckError = gradcheck, gradgradcheck, GradcheckError
# tg.autograd.grad, as torch.autograd.grad: it lives in hooks.py, beside the tensor hooks it shares
# the engine's reverse pass with (the engine module imports nothing of them).
autograd.grad = _autograd_grad
# tg.autograd.functional (vjp, jvp, hvp, vhp, jacobian, hessian), as torch.autograd.functional: built
# on Tensors and tg.autograd.grad, so it too is joined here; registered under its dotted name so
# that `from tensorgrad.autograd.functional import jacobian` works as PyTorch's spelling does.
autograd.functional = _autograd_functional
_sys.modules[f"{__name__}.autograd.functional"] = _autograd_functional
