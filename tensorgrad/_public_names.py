"""The table of tensorgrad's public names (tg.*), by family: the one place a name is added.

Each family maps a *source* to the names it gives, one string of space-separated names:

- a module path relative to the package ("creation", "functions.shape"): `tg.name` is that module's
  attribute `name`; `public=attr` takes the attribute `attr` under the name `public` (`bool=bool_`);
- `MODULES` ("tensorgrad"): the names are the package's submodules (`tg.nn`, `tg.linalg`, ...);
- `FORWARD` ("Tensor."): `tg.name(input, ...)` is `input.name(...)`, a function generated from the
  Tensor method (tensorgrad/functions/forwarders.py) with its signature and docstring; `public=name`
  is another name of the same function (`arcsin=asin`: `tg.arcsin is tg.asin`).

Every name given here is imported by tensorgrad/__init__.py and listed in its `__all__`, in this
order; tools/api_pages.py writes the API reference from the same families, and
tools/public_stubs.py the type stubs static tools read (tensorgrad/__init__.pyi,
functions/forwarders.pyi: run it after an edit here; tests/test_api_names.py fails while they are
stale).  A function that does more than call its Tensor method is written out in
tensorgrad/functions/ and named here under its module.  This module is data only: it imports
nothing, so any layer may read it.

The other namespaces (tg.nn, tg.nn.functional, tg.optim, tg.linalg, tg.special, tg.testing,
tg.distributed) list their names in their own `__all__`; NAMESPACES says where each one is, and
the reference groups their names, and the Tensor's methods, by the module that defines them
(MODULE_FAMILIES gives those families their titles).
"""

from __future__ import annotations

from typing import NamedTuple

MODULES = "tensorgrad"
FORWARD = "Tensor."


class Family(NamedTuple):
    title: str
    about: str  # one line under the title in the API reference
    names: dict[str, str]  # source -> space-separated names (see the module's docstring)


TG: tuple[Family, ...] = (
    Family(
        "Modules",
        "The namespaces under tg: tg.autograd.Function, tg.nn.Linear, tg.testing.assert_close, ...",
        {MODULES: "autograd cuda func host_memory kernels linalg nn optim profiler random special testing"},
    ),
    Family(
        "The Tensor and autograd",
        "The Tensor, the custom Function, the grad modes and anomaly detection.",
        {
            "tensor": "Tensor",
            "autograd": (
                "Function enable_grad is_grad_enabled no_grad set_grad_enabled inference_mode "
                "is_inference_mode_enabled is_anomaly_enabled is_anomaly_check_nan_enabled"
            ),
        },
    ),
    Family(
        "Gradient checks", "Analytic gradients against finite differences.", {"gradcheck": "gradcheck GradcheckError"}
    ),
    Family(
        "Errors",
        "The exceptions tensorgrad raises besides Python's own.",
        {"serialization": "CheckpointError", "backend": "DeviceError ShapeError"},
    ),
    Family(
        "Dtypes",
        "The dtypes and PyTorch's aliases of them (tg.float is tg.float32, tg.long is tg.int64, ...).",
        {
            "backend": (
                "bool=bool_ float16 float32 float64 int32 int64 uint8 double=float64 float=float32 half=float16 "
                "long=int64 int=int32"
            ),
            "backend.dtypes": "int8 int16 short=int16",
        },
    ),
    Family(
        "Memory formats",
        "Checked as PyTorch checks them; the layout is always contiguous.",
        {
            "tensor_methods.common": (
                "memory_format=MemoryFormat channels_last channels_last_3d contiguous_format preserve_format"
            )
        },
    ),
    Family(
        "Creation",
        "New tensors: from data, filled, ranges, and the triangles of a matrix.",
        {
            "creation": (
                "arange empty empty_like eye full full_like linspace logspace ones ones_like scalar_tensor "
                "tensor tril tril_indices triu triu_indices zeros zeros_like"
            )
        },
    ),
    Family(
        "Random numbers",
        "The generators and the random tensors they draw.",
        {
            "creation": "manual_seed multinomial rand randint randn normal randperm",
            "random": "Generator default_generator",
        },
    ),
    Family(
        "Arithmetic",
        "The arithmetic operators as functions; a number on either side where PyTorch allows one.",
        {
            "functions.pointwise": ("add sub mul div true_divide floor_divide pow float_power remainder rsub round"),
            FORWARD: "fmod copysign reciprocal square abs sign sgn frac clamp clip=clamp clamp_max clamp_min",
        },
    ),
    Family(
        "Elementwise math",
        "Exponentials, logarithms, trigonometric and hyperbolic functions, rounding, special functions.",
        {
            FORWARD: (
                "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sigmoid logit relu tanh "
                "sin cos tan asin acos atan sinh cosh asinh acosh atanh atan2 "
                "arcsin=asin arccos=acos arctan=atan arcsinh=asinh arccosh=acosh arctanh=atanh arctan2=atan2 "
                "floor ceil trunc deg2rad rad2deg sinc hypot logaddexp logaddexp2 fmax fmin lerp ldexp frexp "
                "nan_to_num erf erfc erfinv lgamma digamma i0"
            ),
            "functions.pointwise": "polygamma xlogy",
        },
    ),
    Family(
        "Predicates, logical and bitwise ops",
        "No gradient, as in PyTorch.",
        {
            FORWARD: (
                "isfinite isinf isnan isneginf isposinf isreal signbit heaviside nextafter "
                "logical_and logical_not logical_or logical_xor gcd lcm"
            ),
            "functions.pointwise": "bitwise_left_shift bitwise_right_shift bitwise_xor",
        },
    ),
    Family(
        "Comparison and selection",
        "Comparing values, the largest and smallest, sorting, choosing by a condition.",
        {
            FORWARD: (
                "allclose isclose equal maximum minimum max min amax amin argmax argmin aminmax sort argsort msort "
                "topk kthvalue masked_fill"
            ),
            "functions.shape": "where",
        },
    ),
    Family(
        "Reductions and scans",
        "Sums, means, products and their running forms along dims.",
        {
            FORWARD: ("sum mean prod logsumexp all any cumsum cumprod logcumsumexp cummax cummin nansum nanmean"),
            "functions.reductions": "var std var_mean std_mean",
        },
    ),
    Family(
        "Statistics",
        "Order statistics, covariance and the trapezoidal rule.",
        {
            FORWARD: "median nanmedian mode quantile nanquantile cov corrcoef renorm",
            "functions.statistics": "trapezoid trapz cumulative_trapezoid",
        },
    ),
    Family(
        "Counting, distinct values and searching",
        "No gradient, as in PyTorch.",
        {
            FORWARD: "argwhere bincount count_nonzero histc histogram unique unique_consecutive",
            "functions.statistics": "bucketize isin searchsorted",
        },
    ),
    Family(
        "Softmax",
        "Softmax and log-softmax along a dim.",
        {FORWARD: "softmax log_softmax"},
    ),
    Family(
        "Joining and splitting",
        "Several tensors into one, and one into several.",
        {
            "functions.shape": (
                "cat stack hstack vstack row_stack=vstack dstack column_stack block_diag cartesian_prod meshgrid "
                "atleast_1d atleast_2d atleast_3d broadcast_shapes broadcast_tensors"
            ),
            FORWARD: "unbind tensor_split split_with_sizes hsplit vsplit dsplit",
        },
    ),
    Family(
        "Shape",
        "Views and copies that reorder, reshape, flip or take the diagonal.",
        {
            "functions.shape": "flip tile fill",
            FORWARD: (
                "movedim moveaxis=movedim swapaxes swapdims=swapaxes t adjoint ravel broadcast_to unflatten "
                "narrow narrow_copy select roll rot90 fliplr flipud repeat_interleave diagonal diag diag_embed "
                "diagflat diff"
            ),
        },
    ),
    Family(
        "Indexing",
        "Gathering, scattering and masking by index tensors.",
        {
            FORWARD: (
                "gather scatter scatter_add scatter_reduce index_select index_add index_copy index_fill index_put "
                "index_reduce masked_select nonzero take take_along_dim"
            ),
        },
    ),
    Family(
        "Linear algebra",
        "Matrix and vector products and the decompositions under PyTorch's top-level names "
        "(tg.linalg holds the rest: vecdot, the norms, solve, ...).",
        {
            FORWARD: (
                "matmul mm bmm mv dot vdot inner outer ger=outer kron trace addmm addmv addr baddbmm addbmm "
                "addcmul addcdiv cross norm dist"
            ),
            "functions.products": "einsum tensordot",
            "linalg": (
                "cholesky cholesky_inverse cholesky_solve logdet matrix_exp pinverse triangular_solve "
                "qr=torch_qr svd=torch_svd"
            ),
        },
    ),
    Family("Saving and loading", "Checkpoints, as torch.save and torch.load.", {"serialization": "save load"}),
    Family(
        "CPU threads",
        "The threads of the CPU kernels, as torch.set_num_threads.",
        {"threads": "get_num_threads set_num_threads"},
    ),
)


def entries(families=TG):
    """(family, source, public name, attribute) for every name, in the table's order."""
    for family in families:
        for source, names in family.names.items():
            for entry in names.split():
                public, _, attr = entry.partition("=")
                yield family, source, public, attr or public


# The other namespaces of the reference: title -> (module, class or None).  Their names are their
# module's __all__ (the Tensor: its public methods and properties).
NAMESPACES: dict[str, tuple[str, str | None]] = {
    "tg": ("tensorgrad", None),
    "Tensor": ("tensorgrad", "Tensor"),
    "tg.nn": ("tensorgrad.nn", None),
    "tg.nn.functional": ("tensorgrad.nn.functional", None),
    "tg.optim": ("tensorgrad.optim", None),
    "tg.linalg": ("tensorgrad.linalg", None),
    "tg.special": ("tensorgrad.special", None),
    "tg.testing": ("tensorgrad.testing", None),
    "tg.distributed": ("tensorgrad.distributed", None),
}

# The families of the namespaces other than tg, in page order: the module that defines a name,
# relative to the package ("nn.loss"; a Tensor method: its tensor_methods/ module; "modules" for a
# submodule, "values" for a constant) -> the family's title.  A "namespace:module" key is that
# namespace's own title for the module.  Names of a module not listed form a family of its name.
MODULE_FAMILIES: dict[str, str] = {
    # the Tensor's methods and properties (tensorgrad/tensor.py, tensorgrad/tensor_methods/)
    "tensor": "The Tensor itself",
    "tensor_base": "The Tensor itself",  # device, grad, requires_grad: the fields the engine reads
    "autograd": "Gradients and hooks",
    "tensor_methods.hooks": "Gradients and hooks",
    "tensor_methods.dtype": "Dtypes, devices and conversion",
    "tensor_methods.arithmetic": "Arithmetic and elementwise math",
    "tensor_methods.pointwise": "Pointwise math, predicates, logical and bitwise ops",
    "tensor_methods.reductions": "Reductions, scans and selection",
    "tensor_methods.statistics": "Statistics",
    "tensor_methods.shape": "Shape",
    "tensor_methods.indexing": "Indexing",
    "tensor_methods.linalg": "Linear algebra",
    "tensor_methods.neural": "Softmax, dropout and layer norm",
    "tensor_methods.inplace": "In-place ops",
    # tg.nn and tg.nn.functional
    "nn.module": "Module and containers",
    "nn.containers": "Module and containers",
    "nn.parameter": "Module and containers",
    "nn.linear": "Linear layers",
    "nn.functional.linear": "Linear layers",
    "nn.activation": "Activations",
    "nn.functional.activations": "Activations",
    "nn.functional.attention": "Attention",
    "nn.normalization": "Normalization",
    "nn.functional.normalization": "Normalization",
    "nn.dropout": "Dropout",
    "nn.functional.dropout": "Dropout",
    "nn.embedding": "Embedding",
    "nn.functional.embedding": "Embedding",
    "functions.statistics": "Encoding",
    "nn.conv": "Convolution",
    "nn.functional.conv": "Convolution",
    "nn.pooling": "Pooling",
    "nn.functional.pooling": "Pooling",
    "nn.functional.padding": "Padding",
    "nn.vision": "Vision",
    "nn.functional.vision": "Vision",
    "nn.distance": "Distances",
    "nn.functional.distance": "Distances",
    "nn.loss": "Losses",
    "nn.functional.losses": "Losses",
    # tg.optim
    "optim.optimizer": "Optimizers",
    "optim.sgd": "Optimizers",
    "optim.adamw": "Optimizers",
    "optim.lr_scheduler": "Learning-rate schedules",
    # tg.linalg
    "linalg.decompositions": "Decompositions",
    "linalg.solvers": "Solvers and inverses",
    "linalg.products": "Products",
    "linalg.norms": "Norms",
    "tg.linalg:tensor_methods.linalg": "Norms",
    "linalg.matrix_functions": "Matrix functions",
    "backend.errors": "Errors",
    # tg.special
    "special": "Special functions",
    "functions.forwarders": "The same functions as tg's",
    "functions.pointwise": "The same functions as tg's",
    # tg.testing
    "testing.comparison": "Comparing tensors",
    "testing.gradients": "Gradient checks",
    "testing.grads": "Gradients against PyTorch",
    # tg.distributed
    "distributed.process_group": "Process groups",
    "distributed.collectives": "Collectives",
    "distributed.job": "Jobs and errors",
    "values": "Constants",
    "modules": "Submodules",
}
