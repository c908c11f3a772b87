"""The Tensor: a backend array, plus what autodiff needs (.grad, .requires_grad, the op
that made it).  Every method that computes is written out here and calls one op's
`apply`, so `grep "def relu"` finds where relu is wired."""

from __future__ import annotations

import collections
import math

from . import autograd, backend
from .autograd import is_grad_enabled, run_backward
from .backend import ShapeError
from .ops.activation import Sigmoid
from .ops.dropout import Dropout
from .ops.elementwise import GELU, Add, Cast, Clone, Div, Exp, Log, Mul, Neg, Pow, ReLU, Sqrt, Sub, Tanh
from .ops.indexing import Gather, IndexSelect, Scatter, ScatterAdd, ScatterReduce
from .ops.layernorm import LayerNorm
from .ops.masking import MaskedFill
from .ops.matmul import MatMul
from .ops.pointwise import Abs, Clamp, Copysign, Cos, Fmod, Piecewise, PowTensor, Remainder, Sin, Tan
from .ops.rearrange import Diagonal, Flip, Repeat, Roll, Unfold
from .ops.reduce import Amax, Amin, Logsumexp, Mean, Prod, Std, Sum, Var
from .ops.scan import Cumprod, Cumsum, Logcumsumexp
from .ops.selection import Maximum, Minimum, TakeAlongDim, cumulative_extreme_indices, sort_indices
from .ops.shape import Expand, Index, Permute, Reshape
from .ops.softmax import LogSoftmax, Softmax
from .ops.transfer import ToDevice

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
SortResult = collections.namedtuple("sort", ["values", "indices"])
CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])


# PyTorch's legacy type names, as Tensor.type() speaks them
_TYPE_NAMES = {
    "FloatTensor": backend.float32, "DoubleTensor": backend.float64, "HalfTensor": backend.float16,
    "LongTensor": backend.int64, "IntTensor": backend.int32, "ShortTensor": backend.as_dtype("int16"),
    "CharTensor": backend.as_dtype("int8"), "ByteTensor": backend.uint8, "BoolTensor": backend.bool_,
}  # fmt: skip

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # an in-place result may not climb this order


def _torch_name(dtype) -> str:
    """PyTorch's scalar-type name (Float, Long, ...), for errors worded as PyTorch's."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}  # fmt: skip
    return names.get(str(backend.as_dtype(dtype)), str(dtype))


def broadcast_shapes(op: str, a: tuple, b: tuple) -> tuple:
    """NumPy's broadcast rule, with an error that names the op and both shapes."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"{op}: shapes {a} and {b} cannot be broadcast together")
        out.append(y if x == 1 else x)
    return tuple(out)


def normalize_dim(dim: int, ndim: int, op: str) -> int:
    if not isinstance(dim, int):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor of {ndim} dims (expected {lo}..{hi})")
    return dim % max(ndim, 1)


def normalize_dims(dim, ndim: int, op: str) -> tuple:
    """None -> every axis; int or tuple -> a sorted tuple of distinct non-negative axes.
    A 0-d tensor accepts dim 0 and -1, as in PyTorch, and has no axis to reduce: ()."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(sorted({normalize_dim(d, ndim, op) for d in dims}))
    if ndim == 0:
        return ()
    if len(out) != len(dims):
        raise ValueError(f"{op}: dim {dim} repeats an axis")
    return out


def _shape_arg(shape) -> tuple:
    """reshape(2, 3) and reshape((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


class Tensor(autograd.TensorBase):
    # The fields the engine uses (_data, device, requires_grad, grad, _ctx, _counter: the version
    # counter) and the fast constructor _make are autograd.TensorBase's.
    __slots__ = ("__weakref__",)
    __array_priority__ = 1000  # np_array * tensor defers to Tensor.__rmul__

    # ------------------------------------------------------------------ creation
    def __init__(self, data, dtype=None, device=None, requires_grad=False):
        """Prefer tg.tensor(...); this accepts Python data, NumPy arrays and backend arrays."""
        if backend.is_array(data):
            src = backend.device_of(data)
            device = backend.normalize_device(device) if device is not None else src
            data = backend.to_device(data, device)
            if dtype is not None:
                data = data.astype(backend.as_dtype(dtype), copy=False)
        else:
            device = backend.normalize_device(device)
            dtype = backend.as_dtype(dtype) or backend.default_dtype_for(data)
            data = backend.from_host(data, dtype, device)
        self._data = data
        self.device = device
        self.grad = None
        self._ctx = None
        self._counter = [0]
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not backend.is_floating(self.dtype):
            raise TypeError(f"only floating-point tensors can require gradients, got dtype {self.dtype}")
        self.requires_grad = requires_grad
        return self

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def grad_fn(self):
        return self._ctx

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[normalize_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(math.prod(self.shape))

    def is_floating_point(self) -> bool:
        return backend.is_floating(self.dtype)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        body = repr(backend.to_numpy(self._data))
        body = body[body.index("(") + 1 : body.rindex(")")] if body.startswith("array(") else body
        extras = []
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self._ctx is not None:
            extras.append(f"grad_fn=<{type(self._ctx).__name__}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    def __format__(self, spec):
        """f"{loss:.4f}" formats a one-element tensor as its number, as in PyTorch."""
        if self.ndim == 0 or (spec and self.numel() == 1):
            return format(self.item(), spec)
        return format(repr(self), spec)

    __hash__ = object.__hash__  # tensors are hashed by identity, as in PyTorch

    # ------------------------------------------------------------------ autodiff
    def backward(self, gradient=None, retain_graph=False):
        """Accumulate d(self)/d(leaf) into every leaf's .grad (weighted by `gradient`)."""
        if not self.requires_grad:
            raise RuntimeError("backward(): this tensor does not require grad and has no grad_fn")
        if gradient is None:
            if self.numel() != 1:
                raise RuntimeError(
                    f"backward() without a gradient needs a scalar output, but the shape is {self.shape}; "
                    "pass gradient= (a tensor of that shape) or reduce first, e.g. .sum()"
                )
            grad = backend.namespace(self.device).ones(self.shape, dtype=self.dtype)
        else:
            g = gradient if isinstance(gradient, Tensor) else Tensor(gradient, dtype=self.dtype, device=self.device)
            if g.shape != self.shape:
                raise ShapeError(f"backward(): gradient has shape {g.shape}, but the tensor has shape {self.shape}")
            if g.device != self.device:
                raise backend.DeviceError(f"backward(): gradient on {g.device}, tensor on {self.device}")
            grad = g._data
        run_backward(self, grad, retain_graph=retain_graph)

    def detach(self) -> Tensor:
        """The same storage outside the graph; in-place writes to either show in both and
        bump the version they share, as in PyTorch."""
        t = Tensor._make(self._data, self.device, False)
        t._counter = self._counter
        return t

    # ------------------------------------------------------------------ conversion
    # These read values back from the device: they wait for it anyway, so they also run the
    # checks queued on it (backend.defer_check), which raise here if a check failed.
    def numpy(self):
        """A NumPy copy of the data, from any device."""
        backend.run_deferred_checks()
        return backend.to_numpy(self._data)

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item(): only a one-element tensor converts to a Python number, shape is {self.shape}")
        backend.run_deferred_checks()
        return self._data.item()

    def tolist(self):
        backend.run_deferred_checks()
        return self._data.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError(f"only a one-element integer tensor can be used as an index, got {self.dtype} {self.shape}")
        return int(self.item())

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def to(self, *args, device=None, dtype=None) -> Tensor:
        """to(device), to(dtype), to(device, dtype) or to(other_tensor); self if nothing changes."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, str) or a is None:
                device = a
            else:
                dtype = a
        out = self
        if device is not None:
            out = out._to_device(backend.normalize_device(device))
        if dtype is not None and backend.as_dtype(dtype) != out.dtype:
            dtype = backend.as_dtype(dtype)
            out = Cast.apply(out, dtype=dtype)
            if not backend.is_floating(dtype):  # integers and bools carry no gradient (as in PyTorch)
                out = out.detach()
        return out

    def _to_device(self, device) -> Tensor:
        if device == self.device:
            return self
        requires_grad = self.requires_grad and is_grad_enabled()
        out = Tensor._make(backend.to_device(self._data, device), device, requires_grad)
        if requires_grad:
            ctx = ToDevice(backend.namespace(device))
            ctx.parents = (self,)
            ctx.saved = (self.device,)
            out._ctx = ctx
        return out

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def float(self):
        return self.to(backend.float32)

    def double(self):
        return self.to(backend.float64)

    def long(self):
        return self.to(backend.int64)

    def bool(self):
        return self.to(backend.bool_)

    # ------------------------------------------------------------------ more dtype conversions
    def int(self):
        return self.to(backend.int32)

    def short(self):
        return self.to(backend.as_dtype("int16"))

    def byte(self):
        return self.to(backend.uint8)

    def half(self):
        return self.to(backend.float16)

    def type(self, dtype=None):
        """type() -> PyTorch's type name ("torch.FloatTensor"); type(dtype or that name) -> converted."""
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if dtype is None:
            prefix = "torch.cuda." if self.device == "cuda" else "torch."
            return prefix + names.get(self.dtype, str(self.dtype))
        if isinstance(dtype, str) and dtype.startswith("torch."):
            key = dtype.removeprefix("torch.").removeprefix("cuda.")
            if key not in _TYPE_NAMES:
                raise ValueError(f"type(): invalid type {dtype!r} (expected e.g. 'torch.FloatTensor' or a dtype)")
            return self.to(_TYPE_NAMES[key])
        return self.to(dtype)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|self - other| <= atol + rtol * |other|, elementwise; a bool tensor (as torch.isclose)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"isclose(): argument 'other' must be a Tensor, not {type(other).__name__}")
        if other.dtype != self.dtype:
            raise RuntimeError(f"isclose(): the inputs must have the same dtype, got {self.dtype} and {other.dtype}")
        xp = backend.namespace(self.device)
        return self._compare(other, lambda a, b: xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def clone(self):
        return Clone.apply(self)

    def contiguous(self):
        return self

    # ------------------------------------------------------------------ arithmetic
    def _operands(self, other, op: str, true_divide=False):
        """Bring (self, other) to a common dtype and check devices/shapes for a binary op."""
        a = self
        if isinstance(other, Tensor):
            b = other
            dtype = backend.result_type(a.dtype, b.dtype)
            if true_divide and not backend.is_floating(dtype):
                dtype = backend.float32
            if a.dtype != dtype:
                a = a.to(dtype)
            if b.dtype != dtype:
                b = b.to(dtype)
            if a.shape != b.shape:
                broadcast_shapes(op, a.shape, b.shape)
            return a, b
        if isinstance(other, (bool, int, float)):
            if (isinstance(other, float) or true_divide) and not backend.is_floating(a.dtype):
                a = a.to(backend.float32)
            return a, other
        # NumPy arrays, lists: a constant on self's device
        b = Tensor(other, device=self.device)
        return self._operands(b, op, true_divide)

    def __add__(self, other):
        return Add.apply(*self._operands(other, "add"))

    def __radd__(self, other):
        a, b = self._operands(other, "add")
        return Add.apply(b, a)

    def __sub__(self, other):
        return Sub.apply(*self._operands(other, "sub"))

    def __rsub__(self, other):
        a, b = self._operands(other, "sub")
        return Sub.apply(b, a)

    def __mul__(self, other):
        return Mul.apply(*self._operands(other, "mul"))

    def __rmul__(self, other):
        a, b = self._operands(other, "mul")
        return Mul.apply(b, a)

    def __truediv__(self, other):
        return Div.apply(*self._operands(other, "div", true_divide=True))

    def __rtruediv__(self, other):
        a, b = self._operands(other, "div", true_divide=True)
        return Div.apply(b, a)

    def __neg__(self):
        return Neg.apply(self)

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            return PowTensor.apply(*self._operands(exponent, "pow"))
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"pow: the exponent must be a number or a tensor, got {type(exponent).__name__}")
        if not backend.is_floating(self.dtype) and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")  # PyTorch's error
        a = self if backend.is_floating(self.dtype) or isinstance(exponent, int) else self.float()
        return Pow.apply(a, exponent)

    def __rpow__(self, base):
        """base ** x for a Python number base (a tensor base is __pow__)."""
        if not isinstance(base, (int, float)):
            raise TypeError(f"pow: the base must be a number or a tensor, got {type(base).__name__}")
        a, b = self._operands(base, "pow")
        return PowTensor.apply(b, a)

    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        return Tensor(other, device=self.device).matmul(self)

    def matmul(self, other) -> Tensor:
        """Matrix product; 1-d operands get a unit axis added and removed, as in PyTorch."""
        if not isinstance(other, Tensor):
            other = Tensor(other, device=self.device)
        if self.ndim == 0 or other.ndim == 0:
            raise ShapeError(f"matmul: both arguments need at least 1 dim, got shapes {self.shape} and {other.shape}")
        rows = other.shape[-2] if other.ndim > 1 else other.shape[0]
        if self.shape[-1] != rows:  # checked before 1-d operands are reshaped: the user's shapes
            raise ShapeError(
                f"matmul: shapes {self.shape} and {other.shape} cannot be multiplied "
                f"({self.shape[-1]} columns vs {rows} rows)"
            )
        a, b = self._operands(other, "matmul") if self.dtype != other.dtype else (self, other)
        if a.ndim == 1:
            out = a.unsqueeze(0).matmul(b)  # (..., 1, m); (1,) when b is 1-d too
            return out.squeeze(-2) if b.ndim > 1 else out.squeeze(-1)
        if b.ndim == 1:
            return a.matmul(b.unsqueeze(-1)).squeeze(-1)
        if a.shape[:-2] != b.shape[:-2]:
            broadcast_shapes("matmul (batch dims)", a.shape[:-2], b.shape[:-2])
        return MatMul.apply(a, b)

    # comparisons: bool tensors, outside the graph
    def _compare(self, other, fn):
        b = other._data if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and other.device != self.device:
            raise backend.DeviceError(f"comparison: tensors on {self.device} and {other.device}")
        return Tensor._make(backend.ensure_array(backend.namespace(self.device), fn(self._data, b)), self.device, False)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __invert__(self):
        if self.dtype != backend.bool_:
            raise TypeError(f"~ is only defined for bool tensors here, got {self.dtype}")
        return Tensor._make(~self._data, self.device, False)

    def __and__(self, other):
        return self._compare(other, lambda a, b: a & b)

    def __or__(self, other):
        return self._compare(other, lambda a, b: a | b)

    # ------------------------------------------------------------------ elementwise
    def _floating(self, op: str) -> Tensor:
        """Ops defined on reals promote integers to float32, as PyTorch does."""
        return self if backend.is_floating(self.dtype) else self.float()

    def exp(self):
        return Exp.apply(self._floating("exp"))

    def log(self):
        return Log.apply(self._floating("log"))

    def sqrt(self):
        return Sqrt.apply(self._floating("sqrt"))

    def tanh(self):
        return Tanh.apply(self._floating("tanh"))

    def relu(self):
        return ReLU.apply(self)

    def gelu(self, approximate="none"):
        return GELU.apply(self._floating("gelu"), approximate=approximate)

    # ------------------------------------------------------------------ reductions
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        x, dim = self._reduce_args(dim, axis, dtype, "sum")
        return Sum.apply(x, dim=normalize_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        x, dim = self._reduce_args(dim, axis, dtype, "mean")
        x._require_float("mean")
        return Mean.apply(x, dim=normalize_dims(dim, self.ndim, "mean"), keepdim=keepdim)

    def amax(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "amax")[1]
        return Amax.apply(self, dim=normalize_dims(dim, self.ndim, "amax"), keepdim=keepdim)

    def max(self, dim=None, keepdim=False, *, axis=None):
        """max() -> the largest value (ties share the gradient); max(dim) -> (values, indices), the
        gradient going to the returned index; max(other) -> maximum(other).  As in PyTorch."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        dim = self._reduce_args(dim, axis, None, "max")[1]
        if dim is None:
            return self.amax()
        return MaxResult(*self._extreme(dim, keepdim, largest=True, op="max"))

    def argmax(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "argmax")[1]
        if dim is None:
            out = self._data.reshape(-1).argmax()
        else:
            out = self._data.argmax(axis=normalize_dim(dim, self.ndim, "argmax"), keepdims=keepdim)
        out = backend.ensure_array(backend.namespace(self.device), out).astype(backend.int64, copy=False)
        return Tensor._make(out, self.device, False)

    def var(self, dim=None, unbiased=None, keepdim=False, correction=None, *, axis=None):
        """Variance; correction=1 (the default, unbiased) divides by N - 1."""
        dim = self._reduce_args(dim, axis, None, "var")[1]
        self._require_float("var")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        return Var.apply(self, dim=normalize_dims(dim, self.ndim, "var"), correction=correction, keepdim=keepdim)

    def _require_float(self, op: str):
        if not backend.is_floating(self.dtype):
            raise TypeError(f"{op}: expected a floating-point tensor, got dtype {self.dtype}")

    # ------------------------------------------------------------ more reductions and scans (ops/reduce.py, scan.py)
    def _reduce_args(self, dim, axis, dtype, op):
        """(self cast to dtype, the dim): `axis` is NumPy's spelling of dim, which PyTorch accepts too."""
        if axis is not None:
            if dim is not None:
                raise TypeError(f"{op}(): got both dim and axis; pass one")
            dim = axis
        return (self if dtype is None else self.to(dtype)), dim

    def _accumulating(self, dtype=None):
        """self in `dtype`, or for bools and integers narrower than int64: int64 (PyTorch's sum/prod/cumsum)."""
        if dtype is not None:
            return self.to(dtype)
        if self.dtype.kind == "b" or self.dtype.kind in "iu" and self.dtype.itemsize < 8:
            return self.long()
        return self

    def std(self, dim=None, unbiased=None, keepdim=False, correction=None, *, axis=None):
        """Standard deviation; correction=1 (the default, unbiased) divides by N - 1."""
        dim = self._reduce_args(dim, axis, None, "std")[1]
        self._require_float("std")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        return Std.apply(self, dim=normalize_dims(dim, self.ndim, "std"), correction=correction, keepdim=keepdim)

    def prod(self, dim=None, keepdim=False, *, dtype=None, axis=None):
        """Product of all elements, or along one dim; zeros get their true gradient."""
        dim = self._reduce_args(dim, axis, None, "prod")[1]
        x = self._accumulating(dtype)
        if dim is None:
            return Prod.apply(x, dim=None)
        return Prod.apply(x, dim=normalize_dim(dim, self.ndim, "prod") if self.ndim else None, keepdim=keepdim)

    def logsumexp(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "logsumexp")[1]
        x = self._floating("logsumexp")
        return Logsumexp.apply(x, dim=normalize_dims(dim, self.ndim, "logsumexp"), keepdim=keepdim)

    def _logical_reduce(self, dim, keepdim, axis, op):
        dim = self._reduce_args(dim, axis, None, op)[1]
        axes = normalize_dims(dim, self.ndim, op)
        out = getattr(self._data != 0, op)(axis=axes, keepdims=keepdim)
        return Tensor._make(backend.ensure_array(backend.namespace(self.device), out), self.device, False)

    def all(self, dim=None, keepdim=False, *, axis=None):
        """True where every element (along dim) is nonzero; a bool tensor without gradient."""
        return self._logical_reduce(dim, keepdim, axis, "all")

    def any(self, dim=None, keepdim=False, *, axis=None):
        return self._logical_reduce(dim, keepdim, axis, "any")

    def _scan_dim(self, dim, axis, op):
        dim = self._reduce_args(dim, axis, None, op)[1]
        if dim is None:
            raise TypeError(f"{op}(): missing the dim argument")
        return normalize_dim(dim, self.ndim, op)

    def _scan(self, op, fn):
        """Scans are defined on 1-d slices: a 0-d tensor is scanned as one element."""
        return fn(self.reshape(1)).reshape(()) if self.ndim == 0 else fn(self)

    def cumsum(self, dim=None, *, dtype=None, axis=None):
        d = self._scan_dim(dim, axis, "cumsum")
        x = self._accumulating(dtype)
        return x._scan("cumsum", lambda t: Cumsum.apply(t, dim=d))

    def cumprod(self, dim=None, *, dtype=None, axis=None):
        d = self._scan_dim(dim, axis, "cumprod")
        x = self._accumulating(dtype)
        return x._scan("cumprod", lambda t: Cumprod.apply(t, dim=d))

    def logcumsumexp(self, dim=None, *, axis=None):
        d = self._scan_dim(dim, axis, "logcumsumexp")
        return self._floating("logcumsumexp")._scan("logcumsumexp", lambda t: Logcumsumexp.apply(t, dim=d))

    def _cumulative_extreme(self, dim, axis, largest, op):
        d = self._scan_dim(dim, axis, op)
        x = self.reshape(1) if self.ndim == 0 else self
        index = cumulative_extreme_indices(backend.namespace(self.device), x._data, d, largest)
        values, index = x._take(index, d), Tensor._make(index, self.device, False)
        return (values.reshape(()), index.reshape(())) if self.ndim == 0 else (values, index)

    def cummax(self, dim=None, *, axis=None):
        """(values, indices) of the running max; the gradient goes to each index (ties: the later entry)."""
        return CummaxResult(*self._cumulative_extreme(dim, axis, True, "cummax"))

    def cummin(self, dim=None, *, axis=None):
        return CumminResult(*self._cumulative_extreme(dim, axis, False, "cummin"))

    # ------------------------------------------------------------------ selection (ops/selection.py)
    def _take(self, index, dim: int) -> Tensor:
        """The values at integer positions `index` (an array) along dim; differentiable."""
        return TakeAlongDim.apply(self, index=index, dim=dim)

    def _extreme(self, dim, keepdim, largest, op):
        """(values, indices) of the max or min along dim: the first position of the extreme."""
        d = normalize_dim(dim, self.ndim, op)
        xp = backend.namespace(self.device)
        if self.ndim == 0:
            return self.clone(), Tensor._make(xp.zeros((), dtype=backend.int64), self.device, False)
        index = xp.expand_dims(self._data.argmax(axis=d) if largest else self._data.argmin(axis=d), d)
        values, index = self._take(index.astype(backend.int64, copy=False), d), Tensor._make(index, self.device, False)
        return (values, index) if keepdim else (values.squeeze(d), index.squeeze(d))

    def min(self, dim=None, keepdim=False, *, axis=None):
        """min() -> the smallest value; min(dim) -> (values, indices); min(other) -> minimum(other)."""
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        dim = self._reduce_args(dim, axis, None, "min")[1]
        if dim is None:
            return self.amin()
        return MinResult(*self._extreme(dim, keepdim, largest=False, op="min"))

    def amin(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "amin")[1]
        return Amin.apply(self, dim=normalize_dims(dim, self.ndim, "amin"), keepdim=keepdim)

    def argmin(self, dim=None, keepdim=False, *, axis=None):
        dim = self._reduce_args(dim, axis, None, "argmin")[1]
        if dim is None:
            out = self._data.reshape(-1).argmin()
        else:
            out = self._data.argmin(axis=normalize_dim(dim, self.ndim, "argmin"), keepdims=keepdim)
        out = backend.ensure_array(backend.namespace(self.device), out).astype(backend.int64, copy=False)
        return Tensor._make(out, self.device, False)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """The k largest (or smallest) entries along dim and their indices, largest first; ties keep
        their order.  The gradient goes to the selected entries.  (Always sorted: PyTorch leaves the
        order unspecified when sorted=False.)"""
        d = normalize_dim(dim, self.ndim, "topk")
        n = self.shape[d] if self.ndim else 1
        if not isinstance(k, int) or not 0 <= k <= n:
            raise RuntimeError(f"topk: k={k} is out of range for dim {dim} of size {n} (expected 0..{n})")
        x = self.reshape(1) if self.ndim == 0 else self
        order = sort_indices(backend.namespace(self.device), x._data, d, descending=largest)
        index = order[(slice(None),) * d + (slice(0, k),)]
        values, index = x._take(index, d), Tensor._make(index, self.device, False)
        return TopkResult(values.reshape(()), index.reshape(())) if self.ndim == 0 else TopkResult(values, index)

    def sort(self, dim=-1, descending=False, *, stable=False):
        """(values, indices) sorted along dim; always stable (equal values keep their order)."""
        d = normalize_dim(dim, self.ndim, "sort")
        if self.ndim == 0:
            return SortResult(self.clone(), self.argsort())
        index = sort_indices(backend.namespace(self.device), self._data, d, descending)
        return SortResult(self._take(index, d), Tensor._make(index, self.device, False))

    def argsort(self, dim=-1, descending=False, *, stable=False):
        d = normalize_dim(dim, self.ndim, "argsort")
        xp = backend.namespace(self.device)
        if self.ndim == 0:
            return Tensor._make(xp.zeros((), dtype=backend.int64), self.device, False)
        return Tensor._make(sort_indices(xp, self._data, d, descending), self.device, False)

    def _other_tensor(self, other, op):
        if not isinstance(other, Tensor):
            raise TypeError(f"{op}(): argument 'other' must be a Tensor, not {type(other).__name__}")
        return self._operands(other, op)

    def maximum(self, other):
        """Elementwise max; a tie splits the gradient in halves (as PyTorch)."""
        return Maximum.apply(*self._other_tensor(other, "maximum"))

    def minimum(self, other):
        return Minimum.apply(*self._other_tensor(other, "minimum"))

    # ------------------------------------------------------------ more elementwise (ops/activation.py, pointwise.py)
    def sigmoid(self):
        return Sigmoid.apply(self._floating("sigmoid"))

    def abs(self):
        return Abs.apply(self)

    __abs__ = abs

    def sin(self):
        return Sin.apply(self._floating("sin"))

    def cos(self):
        return Cos.apply(self._floating("cos"))

    def tan(self):
        return Tan.apply(self._floating("tan"))

    def sign(self):
        """-1, 0 or 1; the gradient is zero (as in PyTorch)."""
        return Piecewise.apply(self, mode="sign")

    def round(self, decimals=0):
        """Half to even, as in PyTorch; the gradient is zero."""
        return Piecewise.apply(self, mode="round", decimals=decimals)

    def floor(self):
        return Piecewise.apply(self, mode="floor")

    def ceil(self):
        return Piecewise.apply(self, mode="ceil")

    def trunc(self):
        return Piecewise.apply(self, mode="trunc")

    def clamp(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
        """Each element limited to [min, max]; the bounds are numbers or tensors (broadcast), None
        for none.  The gradient goes to whichever of x, min, max the output equals."""
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        x = self
        for bound in (min, max):
            if bound is not None:
                x = x._operands(bound, "clamp")[0]  # x in the common dtype
        lo, hi = (None if b is None else x._operands(b, "clamp")[1] for b in (min, max))
        return Clamp.apply(x, lo, hi)

    clip = clamp

    def pow(self, exponent):
        return self**exponent

    def div(self, other, *, rounding_mode=None):
        """x / y; rounding_mode "trunc" or "floor" rounds the quotient (integers stay integers, and
        the gradient is zero, as in PyTorch)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
        return Piecewise.apply(*self._operands(other, "div"), mode="div_" + rounding_mode)

    divide = div

    def __floordiv__(self, other):
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other):
        a, b = self._operands(other, "floor_divide")
        return Piecewise.apply(b, a, mode="div_floor")

    def fmod(self, other):
        """x - trunc(x / y) * y: the sign of x (C's fmod)."""
        return Fmod.apply(*self._operands(other, "fmod"))

    def remainder(self, other):
        """x - floor(x / y) * y: the sign of y (Python's %)."""
        return Remainder.apply(*self._operands(other, "remainder"))

    __mod__ = remainder

    def __rmod__(self, other):
        a, b = self._operands(other, "remainder")
        return Remainder.apply(b, a)

    def copysign(self, other):
        a, b = self._operands(other, "copysign")
        return Copysign.apply(a._floating("copysign"), b)

    def add(self, other, *, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, *, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    subtract = sub

    def mul(self, other):
        return self * other

    multiply = mul

    # ------------------------------------------------------------------ shape
    def reshape(self, *shape):
        shape = _shape_arg(shape)
        if shape == self.shape:
            return self
        n, known, unknown = self.numel(), 1, [i for i, s in enumerate(shape) if s == -1]
        for s in shape:
            known *= s if s != -1 else 1
        if len(unknown) > 1 or (not unknown and known != n) or (unknown and (known == 0 or n % known)):
            raise ShapeError(f"reshape: shape {shape} is invalid for a tensor of shape {self.shape} ({n} elements)")
        return Reshape.apply(self, shape=shape)

    def view(self, *shape_or_dtype):
        """view(shape) as reshape; view(dtype) reinterprets the bytes as another dtype (no copy,
        the same storage and version counter, outside the graph), as in PyTorch."""
        arg = shape_or_dtype[0] if len(shape_or_dtype) == 1 else None
        if arg is None or isinstance(arg, (int, tuple, list)):
            return self.reshape(*shape_or_dtype)
        dtype = backend.as_dtype(arg)
        if dtype == self.dtype:
            return self
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                f"view(dtype): reinterpreting {self.dtype} as {dtype} is not differentiable; detach() first"
            )
        if dtype.itemsize != self.dtype.itemsize and (
            self.ndim == 0 or (self.shape[-1] * self.dtype.itemsize) % dtype.itemsize
        ):
            raise RuntimeError(
                f"view(dtype): cannot view a {self.dtype} tensor of shape {self.shape} as {dtype}: with a different "
                "element size the last dim must be contiguous and its size in bytes divisible by the new element size"
            )
        try:
            data = self._data.view(dtype)
        except ValueError as e:
            raise RuntimeError(
                f"view(dtype): cannot view a {self.dtype} tensor of shape {self.shape} as {dtype}: {e}"
            ) from None
        t = Tensor._make(data, self.device, False)
        t._counter = self._counter
        return t

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim, "flatten"), normalize_dim(end_dim, self.ndim, "flatten")
        return self.reshape(self.shape[:s] + (-1,) + self.shape[e + 1 :])

    def permute(self, *dims):
        dims = tuple(normalize_dim(d, self.ndim, "permute") for d in _shape_arg(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise ShapeError(f"permute: {dims} is not a permutation of the {self.ndim} dims of {self.shape}")
        return Permute.apply(self, axes=dims)

    def transpose(self, dim0, dim1):
        axes = list(range(self.ndim))
        d0, d1 = normalize_dim(dim0, self.ndim, "transpose"), normalize_dim(dim1, self.ndim, "transpose")
        axes[d0], axes[d1] = axes[d1], axes[d0]
        return Permute.apply(self, axes=tuple(axes))

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    def unsqueeze(self, dim):
        d = normalize_dim(dim, self.ndim + 1, "unsqueeze")
        return Reshape.apply(self, shape=self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim=None):
        if dim is None:
            shape = tuple(s for s in self.shape if s != 1)
        else:
            dims = normalize_dims(dim, self.ndim, "squeeze")
            shape = tuple(s for i, s in enumerate(self.shape) if not (i in dims and s == 1))
        return self if shape == self.shape else Reshape.apply(self, shape=shape)

    def expand(self, *sizes):
        sizes = _shape_arg(sizes)
        lead = len(sizes) - self.ndim
        shape = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        if broadcast_shapes("expand", self.shape, shape) != shape:
            raise ShapeError(f"expand: cannot expand shape {self.shape} to {sizes}")
        return Expand.apply(self, shape=shape)

    def split(self, split_size_or_sections, dim=0):
        """Pieces of `split_size` along dim (the last may be smaller), or of the given sizes."""
        d = normalize_dim(dim, self.ndim, "split")
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            sizes = [min(step, n - s) for s in range(0, n, step)]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise ShapeError(f"split: sizes {sizes} do not add up to {n}, the size of dim {dim}")
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * d + (slice(start, start + size),)
            pieces.append(self[index])
            start += size
        return tuple(pieces)

    def chunk(self, chunks, dim=0):
        n = self.shape[normalize_dim(dim, self.ndim, "chunk")]
        return self.split(-(-n // chunks), dim)

    # ------------------------------------------------------------------ indexing
    def _index_arrays(self, index, copy=False):
        """Tensors and lists in an index become arrays on self's device; reports advanced indexing.
        copy: copy index tensors' arrays (an op that saves the index must not see later writes)."""
        items = index if isinstance(index, tuple) else (index,)
        out, advanced = [], False
        for it in items:
            if it is None or isinstance(it, (int, slice)) or it is Ellipsis:
                out.append(it)  # basic indexing: the common case, no conversion
                continue
            if isinstance(it, Tensor):
                if it.device != self.device:
                    raise backend.DeviceError(f"index: tensor on {self.device} indexed by a tensor on {it.device}")
                if it.dtype.kind in "iu" and it.ndim > 0:
                    advanced = True
                if it.ndim > 0 or it.dtype == backend.bool_:
                    it = it._data.copy() if copy else it._data
                else:
                    it = int(it.item())
            elif isinstance(it, list) or backend.is_array(it):
                arr = Tensor(it, device=self.device)
                advanced = advanced or arr.dtype.kind in "iu"
                it = arr._data
            out.append(it)
        return (tuple(out) if isinstance(index, tuple) else out[0]), advanced

    def __getitem__(self, index):
        index, advanced = self._index_arrays(index, copy=self.requires_grad and is_grad_enabled())
        try:
            if advanced and isinstance(index, tuple) and any(type(it) is int for it in index):
                # PyTorch applies integers first, as selects, then the rest: x[1, :, t] on (2, 5, 6)
                # is x[1][:, t], shape (5, len(t)).  NumPy counts integers as index arrays, and index
                # arrays split by a slice move to the front: (len(t), 5).  So, in two steps:
                first, rest = [], []
                for it in index:
                    if type(it) is int:
                        first.append(it)
                    elif it is None or isinstance(it, slice):
                        rest.append(it)
                        first.extend([] if it is None else [slice(None)])
                    elif it is Ellipsis:
                        first.append(it)
                        rest.append(it)
                    else:  # an index array walks over 1 axis; a bool mask over as many as it has
                        first.extend([slice(None)] * (it.ndim if it.dtype == backend.bool_ else 1))
                        rest.append(it)
                selected = Index.apply(self, index=tuple(first), advanced=False)
                return Index.apply(selected, index=tuple(rest), advanced=True)
            return Index.apply(self, index=index, advanced=advanced)
        except IndexError as e:
            raise IndexError(f"index {index!r} is out of range for a tensor of shape {self.shape}: {e}") from None

    def __setitem__(self, index, value):
        """In-place write (losses[k] = loss.item()), outside the graph; bumps the version."""
        self._check_inplace("setitem", value)
        index, _ = self._index_arrays(index)
        if isinstance(value, Tensor):
            if value.device != self.device:
                raise backend.DeviceError(f"setitem: tensor on {self.device}, value on {value.device}")
            value = value._data
        elif not isinstance(value, (bool, int, float)):
            value = Tensor(value, dtype=self.dtype, device=self.device)._data
        self._data[index] = value
        self._counter[0] += 1

    # ------------------------------------------------------------------ in-place
    # An in-place op writes into this tensor's storage (which its views share) and bumps the
    # version counter; backward then refuses arrays saved before the write (autograd.py).
    # PyTorch's rules: a leaf that requires grad may be written only under no_grad (how
    # optimizers and manual updates, `p -= lr * p.grad`, run).  An in-place op inside the graph
    # (on a result that requires grad, or writing a value that requires grad) is refused
    # here rather than recorded: write it out of place (x = x + y).
    @property
    def data(self) -> Tensor:
        """This tensor's storage as a tensor outside the graph (PyTorch's .data).  Writes through
        it (p.data += v, p.data.copy_(w)) change this tensor and bump its version."""
        t = Tensor._make(self._data, self.device, False)
        t._counter = self._counter
        return t

    @data.setter
    def data(self, value):
        """p.data = tensor_or_array: this tensor takes the new values (shape and device too)."""
        if isinstance(value, Tensor):
            if value._data is self._data:  # `p.data += v` assigns the same storage back
                return
            array, device = value._data, value.device
        elif backend.is_array(value):
            array, device = value, backend.device_of(value)
        else:
            array, device = Tensor(value, device=self.device)._data, self.device
        self._data, self.device = array, device
        self._counter[0] += 1

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's storage has had (PyTorch's tensor._version)."""
        return self._counter[0]

    def _check_inplace(self, op: str, *values):
        """PyTorch's rules for an in-place op, checked before anything is written."""
        if not is_grad_enabled():
            return
        if self.requires_grad and self._ctx is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if self.requires_grad or any(isinstance(v, Tensor) and v.requires_grad for v in values):
            raise RuntimeError(
                f"{op}: in-place operations inside the autograd graph are not supported (the tensor or the "
                "value requires grad); write it out of place (x = x + y), or under tg.no_grad() if no gradient "
                "should flow through it"
            )

    def _inplace_binary(self, other, ufunc: str, op: str):
        """self <- self (ufunc) other, in self's storage and dtype (other broadcasts to self)."""
        self._check_inplace(op, other)
        if isinstance(other, Tensor):
            if other.device != self.device:
                raise backend.DeviceError(f"{op}: tensor on {self.device}, other on {other.device}")
            b, dtype = other._data, backend.result_type(self.dtype, other.dtype)
        elif isinstance(other, (bool, int, float)):
            b = other
            dtype = self.dtype if backend.is_floating(self.dtype) or not isinstance(other, float) else backend.float32
        else:
            return self._inplace_binary(Tensor(other, device=self.device), ufunc, op)
        if ufunc == "true_divide" and not backend.is_floating(dtype):
            dtype = backend.float32
        if _KIND_RANK[backend.as_dtype(dtype).kind] > _KIND_RANK[self.dtype.kind]:
            raise RuntimeError(
                f"result type {_torch_name(dtype)} can't be cast to the desired output type {_torch_name(self.dtype)}"
            )
        if isinstance(other, Tensor) and broadcast_shapes(op, self.shape, other.shape) != self.shape:
            raise ShapeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                             f"{broadcast_shapes(op, self.shape, other.shape)}")  # fmt: skip
        getattr(backend.namespace(self.device), ufunc)(self._data, b, out=self._data)
        self._counter[0] += 1
        return self

    def __iadd__(self, other):
        return self._inplace_binary(other, "add", "add_")

    def __isub__(self, other):
        return self._inplace_binary(other, "subtract", "sub_")

    def __imul__(self, other):
        return self._inplace_binary(other, "multiply", "mul_")

    def __itruediv__(self, other):
        return self._inplace_binary(other, "true_divide", "div_")

    def add_(self, other, alpha=1):
        return self._inplace_binary(other if alpha == 1 else other * alpha, "add", "add_")

    def sub_(self, other, alpha=1):
        return self._inplace_binary(other if alpha == 1 else other * alpha, "subtract", "sub_")

    def mul_(self, other):
        return self._inplace_binary(other, "multiply", "mul_")

    def div_(self, other):
        return self._inplace_binary(other, "true_divide", "div_")

    def fill_(self, value):
        self._check_inplace("fill_", value)
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(
                    f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
                )
            value = value.item()
        self._data[...] = value
        self._counter[0] += 1
        return self

    def zero_(self):
        return self.fill_(0)

    def copy_(self, src):
        """Copy src's values in (broadcast to self's shape, cast to self's dtype, from any device)."""
        self._check_inplace("copy_", src)
        if not isinstance(src, Tensor):
            src = Tensor(src, device=self.device)
        if broadcast_shapes("copy_", self.shape, src.shape) != self.shape:
            raise ShapeError(f"copy_: the source of shape {src.shape} does not broadcast to {self.shape}")
        self._data[...] = backend.to_device(src._data, self.device)
        self._counter[0] += 1
        return self

    def clamp_(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        self._check_inplace("clamp_", min, max)
        if min is None and max is None:
            raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
        lo, hi = (v._data if isinstance(v, Tensor) else v for v in (min, max))
        backend.namespace(self.device).clip(self._data, lo, hi, out=self._data)
        self._counter[0] += 1
        return self

    def normal_(self, mean=0.0, std=1.0):
        """Fill with samples of N(mean, std^2), drawn as nn.init.normal_ draws them."""
        self._check_inplace("normal_")
        from .nn import init

        return init.normal_(self, mean, std)

    def uniform_(self, from_=0.0, to=1.0):
        """Fill with samples of U[from_, to), drawn as nn.init.uniform_ draws them."""
        self._check_inplace("uniform_")
        from .nn import init

        return init.uniform_(self, from_, to)

    # ------------------------------------------------------------------ neural-net ops
    def softmax(self, dim):
        self._require_float("softmax")
        if self.ndim == 0:  # one element: softmax is 1 (through the graph, so its gradient is 0)
            normalize_dim(dim, 0, "softmax")
            return self.reshape(1).softmax(0).reshape(())
        return Softmax.apply(self, dim=normalize_dim(dim, self.ndim, "softmax"))

    def log_softmax(self, dim):
        self._require_float("log_softmax")
        if self.ndim == 0:
            normalize_dim(dim, 0, "log_softmax")
            return self.reshape(1).log_softmax(0).reshape(())
        return LogSoftmax.apply(self, dim=normalize_dim(dim, self.ndim, "log_softmax"))

    def masked_fill(self, mask, value):
        """value where mask is True, self elsewhere; mask is a bool tensor broadcastable to self."""
        if not isinstance(mask, Tensor) or mask.dtype != backend.bool_:
            got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
            raise TypeError(f"masked_fill: mask must be a bool tensor, got {got}")
        if broadcast_shapes("masked_fill", self.shape, mask.shape) != self.shape:
            raise ShapeError(f"masked_fill: mask of shape {mask.shape} does not broadcast to {self.shape}")
        if isinstance(value, Tensor):
            value = value.item()
        return MaskedFill.apply(self, mask, value=value)

    def dropout(self, p, training=True):
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be in [0, 1], got {p}")
        if not training or p == 0:
            return self
        if p == 1:
            return self * 0.0
        return Dropout.apply(self, p=p, device=self.device)

    def layer_norm(self, normalized_shape, weight=None, bias=None, eps=1e-5):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if self.shape[len(self.shape) - len(shape) :] != shape:
            raise ShapeError(f"layer_norm: normalized_shape {shape} does not match the last dims of {self.shape}")
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and t.shape != shape:
                raise ShapeError(f"layer_norm: {name} has shape {t.shape}, expected {shape}")
            if t is not None and t.dtype != self.dtype:  # else its gradient would come back in x's dtype
                raise TypeError(f"layer_norm: {name} is {t.dtype} but the input is {self.dtype} (as in PyTorch)")
        self._require_float("layer_norm")
        return LayerNorm.apply(self, weight, bias, k=len(shape), eps=eps)

    # ------------------------------------------------------------------ indexing and shape (ops/indexing.py,
    # ops/rearrange.py): integer positions, repeats, flips, windows
    def _index_tensor(self, index, op, dim=None, n=None):
        """An integer index tensor on self's device, its values checked in [0, n) (on a GPU the
        check is queued and reported at the next read, as for embedding ids)."""
        if not isinstance(index, Tensor):
            index = Tensor(index, device=self.device)
        if index.device != self.device:
            raise backend.DeviceError(f"{op}: input on {self.device}, index on {index.device}")
        if index.dtype.kind not in "iu":
            raise TypeError(f"{op}: index must be an integer tensor (e.g. torch.long), got dtype {index.dtype}")
        if n is not None and index.numel():
            bad = (index._data < 0) | (index._data >= n)

            def fail():
                value = int(backend.to_numpy(index._data[bad].reshape(-1)[:1])[0])
                raise IndexError(f"{op}: index {value} is out of bounds for dim {dim} with size {n}")

            if self.device == "cpu":
                if bad.any():
                    fail()
            else:
                backend.defer_check(bad.any(), fail)
        return index

    def _along_checks(self, op, dim, index, src=None):
        """gather / scatter: index has self's number of dims and fits inside self (and src)."""
        d = normalize_dim(dim, self.ndim, op)
        index = self._index_tensor(index, op, d, self.shape[d] if self.ndim else 1)
        if index.ndim != self.ndim:
            raise ShapeError(f"{op}: index has {index.ndim} dims but the input has {self.ndim} ({self.shape})")
        for a, n in enumerate(index.shape):
            if a != d and n > self.shape[a]:
                raise ShapeError(f"{op}: index shape {index.shape} is larger than the input {self.shape} in dim {a}")
            if isinstance(src, Tensor) and (src.ndim != index.ndim or n > src.shape[a]):
                raise ShapeError(f"{op}: index shape {index.shape} does not fit inside src {src.shape}")
        return d, index

    def _src(self, src, op):
        if not isinstance(src, Tensor):
            raise TypeError(f"{op}: src must be a tensor, got {type(src).__name__}")
        if src.device != self.device:
            raise backend.DeviceError(f"{op}: input on {self.device}, src on {src.device}")
        return src if src.dtype == self.dtype else src.to(self.dtype)

    def gather(self, dim, index):
        """out[i][j][k] = self[i][index[i][j][k]][k] (dim=1); the gradient is scattered back, repeats adding."""
        d, index = self._along_checks("gather", dim, index)
        return Gather.apply(self, index._data, dim=d)

    def scatter(self, dim, index, src=None, value=None, reduce=None):
        """A copy of self with out[i][index[i][j][k]][k] = src[i][j][k] (dim=1); src may be a number."""
        if src is None:
            src = value
        if reduce is not None:
            if reduce not in ("add", "multiply"):
                raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
            if not isinstance(src, Tensor):
                src = Tensor(self._data.dtype.type(src), device=self.device).expand(*index.shape)
            return self.scatter_reduce(dim, index, src, "sum" if reduce == "add" else "prod")
        if not isinstance(src, Tensor):
            d, index = self._along_checks("scatter", dim, index)
            return Scatter.apply(self, index._data, src, dim=d)
        src = self._src(src, "scatter")
        d, index = self._along_checks("scatter", dim, index, src)
        return Scatter.apply(self, index._data, src, dim=d)

    def scatter_add(self, dim, index, src):
        """A copy of self with out[i][index[i][j][k]][k] += src[i][j][k] (dim=1), repeats adding."""
        src = self._src(src, "scatter_add")
        d, index = self._along_checks("scatter_add", dim, index, src)
        return ScatterAdd.apply(self, index._data, src, dim=d)

    def scatter_reduce(self, dim, index, src, reduce, include_self=True):
        """Reduce src into self at the scattered positions: "sum", "prod", "mean", "amax" or "amin"."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise ValueError(f"scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got {reduce!r}")
        src = self._src(src, "scatter_reduce")
        d, index = self._along_checks("scatter_reduce", dim, index, src)
        return ScatterReduce.apply(self, index._data, src, dim=d, reduce=reduce, include_self=include_self)

    def index_select(self, dim, index):
        """The slices self[..., index[k], ...] along dim, for a 1-d integer index."""
        d = normalize_dim(dim, self.ndim, "index_select")
        index = self._index_tensor(index, "index_select", d, self.shape[d] if self.ndim else 1)
        if index.ndim > 1:
            raise ShapeError(f"index_select: index must be 1-d, got shape {index.shape}")
        return IndexSelect.apply(self, index._data.reshape(-1), dim=d)

    def masked_select(self, mask):
        """The elements where mask (broadcast with self) is True, as a 1-d tensor."""
        if not isinstance(mask, Tensor) or mask.dtype != backend.bool_:
            raise TypeError("masked_select: mask must be a bool tensor")
        shape = broadcast_shapes("masked_select", self.shape, mask.shape)
        return self.expand(*shape)[mask.expand(*shape)]

    def nonzero(self, as_tuple=False):
        """The indices of the nonzero elements: (count, ndim) int64, or one 1-d tensor per dim."""
        xp = backend.namespace(self.device)
        parts = [p.astype(backend.int64) for p in xp.nonzero(self._data if self.ndim else self._data.reshape(1))]
        if as_tuple:
            return tuple(Tensor._make(p, self.device, False) for p in parts)
        out = xp.stack(parts, axis=1) if self.ndim else xp.zeros((parts[0].shape[0], 0), dtype=backend.int64)
        return Tensor._make(out, self.device, False)

    def repeat(self, *sizes):
        """Tile self sizes[a] times along each dim (len(sizes) >= ndim; leading dims are added)."""
        sizes = _shape_arg(sizes)
        if len(sizes) < self.ndim:
            raise ShapeError(f"repeat: {len(sizes)} repeat counts for a tensor of {self.ndim} dims ({self.shape})")
        if any(r < 0 for r in sizes):
            raise ValueError(f"repeat: repeat counts must be non-negative, got {sizes}")
        return Repeat.apply(self, reps=sizes)

    def tile(self, *dims):
        """repeat, with missing leading counts taken as 1 (torch.tile)."""
        dims = _shape_arg(dims)
        return self.repeat(*((1,) * (self.ndim - len(dims)) + dims))

    def repeat_interleave(self, repeats, dim=None, output_size=None):
        """Each element (dim=None: of the flattened tensor) or slice along dim repeated `repeats` times,
        as an index_select whose index repeats each position (so repeats of one slice add up in backward)."""
        x, d = (self.reshape(-1), 0) if dim is None else (self, normalize_dim(dim, self.ndim, "repeat_interleave"))
        n = x.shape[d]
        xp = backend.namespace(self.device)
        # the counts are read to the host (CuPy's repeat takes a list): the output's size depends on them
        counts = repeats.tolist() if isinstance(repeats, Tensor) else int(repeats)
        if isinstance(counts, list) and len(counts) == 1:
            counts = counts[0]
        if isinstance(counts, list) and len(counts) != n:
            raise ShapeError(f"repeat_interleave: repeats has {len(counts)} counts, expected {n} or one")
        if min(counts if isinstance(counts, list) else [counts], default=0) < 0:
            raise ValueError("repeat_interleave: repeats must be non-negative")
        index = xp.repeat(xp.arange(n), counts)
        return IndexSelect.apply(x, index, dim=d)

    def flip(self, *dims):
        dims = tuple(normalize_dim(d, self.ndim, "flip") for d in _shape_arg(dims))
        return Flip.apply(self, dims=dims)

    def roll(self, shifts, dims=None):
        """Shift elements cyclically along dims (the flattened tensor when dims is None)."""
        if dims is None:
            return Roll.apply(self, shifts=int(shifts if isinstance(shifts, int) else shifts[0]), dims=None)
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        return Roll.apply(self, shifts=shifts, dims=tuple(normalize_dim(d, self.ndim, "roll") for d in dims))

    def tril(self, diagonal=0):
        """The lower triangle (col - row <= diagonal) of the last two dims, zeros above (a masked_fill)."""
        return self._triangle(diagonal, lower=True)

    def triu(self, diagonal=0):
        """The upper triangle (col - row >= diagonal) of the last two dims, zeros below (a masked_fill)."""
        return self._triangle(diagonal, lower=False)

    def _triangle(self, diagonal, lower):
        if self.ndim < 2:
            raise ShapeError(f"{'tril' if lower else 'triu'}: needs at least 2 dims, got shape {self.shape}")
        xp = backend.namespace(self.device)
        n, m = self.shape[-2:]
        keep = xp.tri(n, m, k=diagonal, dtype=bool) if lower else ~xp.tri(n, m, k=diagonal - 1, dtype=bool)
        return self.masked_fill(Tensor._make(~keep, self.device, False), 0)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The diagonal of dims (dim1, dim2), moved last: out[..., k] = self[..., k, k + offset]."""
        d1, d2 = normalize_dim(dim1, self.ndim, "diagonal"), normalize_dim(dim2, self.ndim, "diagonal")
        if d1 == d2:
            raise ValueError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
        return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)

    def unfold(self, dimension, size, step):
        """Windows of `size` along dimension, `step` apart, as a new last dim."""
        d = normalize_dim(dimension, self.ndim, "unfold")
        n = self.shape[d] if self.ndim else 1
        if not 0 <= size <= n or step < 1:
            raise ShapeError(f"unfold: size {size} and step {step} do not fit dim {dimension} of size {n}")
        return Unfold.apply(self if self.ndim else self.reshape(1), dim=d, size=size, step=step)

