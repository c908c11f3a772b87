"""The Tensor: a backend array, plus what autodiff needs (.grad, .requires_grad, the op
that made it).  This file holds its core: storage, dtype and device, the autograd fields,
conversion to Python and NumPy, and repr.

The methods that compute are grouped by family in tensor_methods/, one mixin class per
file: arithmetic.py (operators, elementwise math, comparisons), pointwise.py (the other pointwise
math: inverse trig, special functions, predicates, logical and bitwise ops), reductions.py
(reductions, scans, sorting), statistics.py (median, quantile, unique, cov, ...), shape.py,
indexing.py, inplace.py, dtype.py, neural.py (softmax, dropout, layer norm), linalg.py (matrix
products, cross, norms) and hooks.py (retain_grad, register_hook).  Each method is written out
and calls one op's `apply`, so `grep "def relu"` finds where relu is wired."""

from __future__ import annotations

import math

from . import backend, graph_walk
from .autograd import backpropagate, is_grad_enabled
from .backend import ShapeError
from .ops.arithmetic import Cast, Clone
from .ops.transfer import ToDevice
from .tensor_methods.arithmetic import ArithmeticMixin
from .tensor_methods.common import MemoryFormat, check_memory_format, contiguous_format, normalize_dim, preserve_format
from .tensor_methods.dtype import DtypeMixin
from .tensor_methods.hooks import HooksMixin
from .tensor_methods.indexing import IndexingMixin
from .tensor_methods.inplace import InplaceMixin
from .tensor_methods.linalg import LinalgMixin
from .tensor_methods.neural import NeuralNetMixin
from .tensor_methods.pointwise import PointwiseMixin
from .tensor_methods.reductions import ReductionMixin
from .tensor_methods.shape import ShapeMixin
from .tensor_methods.statistics import StatisticsMixin


class Tensor(
    ArithmeticMixin,
    PointwiseMixin,
    ReductionMixin,
    StatisticsMixin,
    ShapeMixin,
    IndexingMixin,
    InplaceMixin,
    DtypeMixin,
    NeuralNetMixin,
    HooksMixin,
    LinalgMixin,
):
    # The fields the engine uses (_data, device, requires_grad, grad, _ctx, _counter: the version
    # counter) are autograd.TensorBase's, which every method family derives from.
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
            inferred = backend.default_dtype_for(data)  # also refuses data no tensor can hold (None, str)
            data = backend.from_host(data, backend.as_dtype(dtype) or inferred, device)
        self._data = data
        self.device = device
        self._grad = None
        self._ctx = None
        self._counter = [0]
        self._hooks = None
        self._requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def _constant(self, data, dtype=None):
        """Python data or an array (an operand, an index, a value to write) as a new tensor on
        self's device, outside the graph."""
        return Tensor(data, dtype=dtype, device=self.device)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad  # checked by the property (autograd.TensorBase)
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
        if len(self._counter) > 1:  # a view left stale by a write recorded on its storage: re-derived first
            self._refresh_view(strict=False)
        return self._ctx is None

    @property
    def grad_fn(self):
        if len(self._counter) > 1:
            self._refresh_view(strict=False)
        return self._ctx

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[normalize_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(math.prod(self.shape))

    def nelement(self) -> int:
        """The number of elements: numel's other name, as in PyTorch."""
        return self.numel()

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
            op = getattr(type(self._ctx), "replaces", None) or type(self._ctx)  # a kernel op: the op it replaces
            extras.append(f"grad_fn=<{op.__name__}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    def __format__(self, spec):
        """f"{loss:.4f}" formats a one-element tensor as its number, as in PyTorch."""
        if self.ndim == 0 or (spec and self.numel() == 1):
            return format(self.item(), spec)
        return format(repr(self), spec)

    # ------------------------------------------------------------------ autodiff
    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulate d(self)/d(leaf) into every leaf's .grad (weighted by `gradient`).

        create_graph=True (as PyTorch): the backward pass is itself recorded, so each .grad is a
        tensor in the graph that can be differentiated again; .grad accumulates out of place then.
        retain_graph defaults to create_graph."""
        if retain_graph is None:
            retain_graph = create_graph
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
            grad = g._data if g.dtype == self.dtype else g._data.astype(self.dtype)  # as PyTorch: cast
            if create_graph:  # a gradient that requires grad stays in the graph
                grad = g if g.dtype == self.dtype else g.to(self.dtype)
        if create_graph and not isinstance(grad, Tensor):
            grad = Tensor._make(grad, self.device, False)
        backpropagate([self], [grad], retain_graph, walk=graph_walk.walk if create_graph else None)

    def detach(self) -> Tensor:
        """The same storage outside the graph; in-place writes to either show in both and
        bump the version they share, as in PyTorch."""
        t = Tensor._make(self._data, self.device, False)
        t._counter = self._counter
        return t

    def clone(self, *, memory_format=preserve_format):
        check_memory_format("clone", memory_format, self.ndim)
        return Clone.apply(self)

    def is_contiguous(self, memory_format=contiguous_format):
        """Whether the elements lie one after the other in the order of `memory_format`: row-major
        for tg.contiguous_format (and preserve_format, as PyTorch answers it), the channels last
        for tg.channels_last (4-d) and channels_last_3d (5-d), False for those on other ranks; as
        PyTorch, a dim of size 1 has no stride that matters and an empty tensor is contiguous."""
        if not isinstance(memory_format, MemoryFormat):
            raise TypeError(f"is_contiguous(): memory_format must be a memory format, got {memory_format!r}")
        if memory_format.ndim is None:
            return backend.is_contiguous(self._data)
        if self.ndim != memory_format.ndim:
            return False
        return backend.is_dense_in_order(self._data, (1, *range(self.ndim - 1, 1, -1), 0))  # C, then W, H (D), N

    def contiguous(self, memory_format=contiguous_format):
        """self where its elements lie in row-major order, one after the other; else a copy that
        does (`clone`), as PyTorch's: a transpose's or an unfold's view is not, and the copy is no
        longer a view of its input (a memory format is checked, as PyTorch does)."""
        check_memory_format("contiguous", memory_format, self.ndim)
        return self if backend.is_contiguous(self._data) else self.clone()

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
        if self.ndim == 0:  # raised here, at iter(), not at the first next(): as PyTorch
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t), plt.imshow(t): the data as a NumPy array, refused (as PyTorch's numpy())
        for a tensor that requires grad, whose array would leave the graph unnoticed."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    # ------------------------------------------------------------------ dtype and device
    def to(self, *args, device=None, dtype=None, non_blocking=False, copy=False, memory_format=preserve_format):
        """to(device, dtype, non_blocking, copy), to(dtype, non_blocking, copy) or to(other_tensor,
        non_blocking, copy), each with keywords too, as PyTorch's three forms; self if nothing changes
        and copy is false.  non_blocking changes nothing here (transfers complete before returning)."""
        args = list(args)
        if args and isinstance(args[0], Tensor):
            other = args.pop(0)
            device, dtype = other.device, other.dtype
        elif args and (isinstance(args[0], str) or args[0] is None):
            device = args.pop(0)
            if args and not isinstance(args[0], bool):
                dtype = args.pop(0)
        elif args and not isinstance(args[0], bool):
            dtype = args.pop(0)
        if len(args) > 2:
            raise TypeError(f"to() takes at most 2 positional arguments after the device and dtype, got {len(args)}")
        non_blocking, copy = args + [non_blocking, copy][len(args) :]  # noqa: F841 (nothing to wait for)
        check_memory_format("to", memory_format, self.ndim)
        out = self
        if device is not None:
            out = out._to_device(backend.normalize_device(device))
        if dtype is not None and backend.as_dtype(dtype) != out.dtype:
            dtype = backend.as_dtype(dtype)
            out = Cast.apply(out, dtype=dtype)
            if not backend.is_floating(dtype):  # integers and bools carry no gradient (as in PyTorch)
                out = out.detach()
        if copy and out is self:
            out = self.clone()
        return out

    def _to_device(self, device) -> Tensor:
        if device == self.device:
            return self
        requires_grad = self.requires_grad and is_grad_enabled()
        out = Tensor._make(backend.to_device(self._data, device), device, requires_grad)
        if requires_grad:
            ctx = ToDevice(backend.namespace(device))
            ctx.saved = (self.device,)
            ctx.attach(out, (self,))
        return out

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def _floating(self, op: str) -> Tensor:
        """Ops defined on reals promote integers to float32, as PyTorch does."""
        return self if backend.is_floating(self.dtype) else self.float()

    def _require_float(self, op: str):
        if not backend.is_floating(self.dtype):
            raise TypeError(f"{op}: expected a floating-point tensor, got dtype {self.dtype}")
