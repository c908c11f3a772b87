"""Tensor methods, in place: writes into a tensor's storage (t += 1, t[i] = v, fill_, copy_,
normal_, ...), each checked against PyTorch's rules and counted by the version counter.
The other families make new tensors; these are the only methods that change one.

In the graph, as in PyTorch: a write into a tensor that requires grad (out += bias, y[i] = v,
y.mul_(2), y.clamp_(0, 1)), or of a value that requires grad (logits[i] = model(x[i]) into
tg.zeros), is recorded.  Its node (ops/inplace.py, each backward derived there) writes the
storage and becomes the tensor's history: the same Python object now stands for the new values,
and the version before the write, an alias holding the old history, is the node's first parent
(versions.rebase_history; nodes made earlier from the tensor keep reading that version).
- A leaf that requires grad may be written only under no_grad (optimizers, `p -= lr * p.grad`);
  in grad mode that raises PyTorch's error.
- A node that saved the old values (y = x.exp(); y += 1: exp saved y) raises at backward,
  through the version counter, as in PyTorch.
- Through a view, y[i] += v, y.t()[0].mul_(2), y.diagonal().copy_(d): a recorded write into a
  view (through other views, maybe) of a graph tensor, or of a tensor outside the graph (a value
  that requires grad written into `out.t()[0]`), also records, on the tensor holding the storage,
  "base[places] now holds the view's new values" (PyTorch's CopySlices; the places: the view's
  basic index, or where each of its elements lies in the base, backend.positions_in), and the
  view, with each view it was taken through, is re-derived from the new base.  The bases are the
  views' nodes' inputs in the graph, and outside it what the engine noted (`_view_of`).  A view
  made under no_grad refuses such a write with PyTorch's error.
- Any other view of the storage, taken before the write (a sibling `y[2:]` of the written
  `y[:3]`, `y.t()` taken before `y.mul_(2)`, a view of a tensor outside the graph before a value
  that requires grad was written into it), is re-derived from the tensor holding the storage on its
  next use (an op's input, a root of backward, `.grad_fn`, `.requires_grad`): its history becomes
  "the elements at its places in the base, as it is now", so its gradient reaches the write, as
  PyTorch regenerates such a view's grad_fn (`_refresh_view`).  Made under no_grad, such a view
  raises PyTorch's error instead when the graph would read it.
"""

from __future__ import annotations

import warnings

from .. import backend
from ..autograd import is_grad_enabled
from ..backend import ShapeError
from ..grad_mode import in_backward
from ..ops.inplace import AddInplace, ClampInplace, DivInplace, MulInplace, SetItem
from ..ops.shape import Index
from ..versions import rebase_history, taken
from .common import TensorBase, broadcast_shapes
from .common import torch_dtype_name as _torch_name

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
# A tensor whose elements share memory (expand: stride 0; unfold's overlapping windows): PyTorch
# refuses the writes into an expand that read it or give each element its own value (+=, clamp_,
# copy_, normal_ ...), and so does tensorgrad, with its words.  Into overlapping windows PyTorch
# runs them element after element (x[i] += 1 once per window holding it), which NumPy's in-place
# ufuncs do not reproduce: tensorgrad refuses them there too.  One value written everywhere (fill_,
# masked_fill_, t[i] = v) goes into overlapping windows and into an expand, as in PyTorch (NumPy's
# broadcast view is read-only: backend.writable gives the write an alias of the same memory).
_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")  # PyTorch's words
# PyTorch's words for a write into a view made by an op with its own backward (a custom Function's
# output that is a view of its input, or the input itself: a module's full backward hook wraps its
# outputs so): re-derived from its base, the view would lose that backward
_CUSTOM_WHY = (
    "This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
    "logic to handle view+inplace would override the custom backward associated with the custom Function, leading "
    "to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function."
)
_CUSTOM_VIEW = "Output 0 of {}Backward is a view and is being modified inplace. " + _CUSTOM_WHY
# PyTorch's words for a view made by such an op, used after a write into its base (it would be re-derived)
_CUSTOM_VIEW_REBASED = (
    "Output 0 of {}Backward is a view and its base or another view of its base has been modified inplace. "
    + _CUSTOM_WHY
)
# PyTorch's words for a view made under no_grad: written with a value that requires grad (_WRITTEN), or
# used after a write recorded on its base
_NO_GRAD_WHY = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
    "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked)."
)
_NO_GRAD_VIEW_WRITTEN = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. " + _NO_GRAD_WHY
)
_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. " + _NO_GRAD_WHY
)
# A tensor whose array is a view of memory no tensor tensorgrad knows holds (tg.from_numpy(a[::2]), a
# detach() of a view): the write could not be recorded where the storage's other tensors would see it
_UNSEEN_BASE = (
    "{}: an in-place write of a value that requires grad into a view of a tensor outside the graph whose base "
    "tensorgrad does not know (made from a NumPy view, or a detach() of a view) is not supported; write into a "
    "clone()"
)
_OVERLAP_REFUSED = {"copy_", "normal_", "uniform_"}  # the SetItem writes refused; every other op's are
# PyTorch's warnings for an advanced-index write into an expand (which it still carries out), by op
_EXPANDED = {
    "index_put_": "tensor[indices] = tensor",
    "masked_fill_": "tensor[mask] = scalar",
}
_WRITES = {"add": (AddInplace, 1), "subtract": (AddInplace, -1), "multiply": (MulInplace, None),
           "true_divide": (DivInplace, None)}  # fmt: skip

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # an in-place result may not climb this order


class InplaceMixin(TensorBase):
    # An in-place op writes into this tensor's storage (which its views share) and bumps the
    # version counter; backward then refuses arrays saved before the write (versions.py).
    # In the graph it is recorded (module docstring); `_write` is the one path every op takes.
    # _view_of (a slot of TensorBase): (base, index, clock, grad mode) of a view taken outside the
    # graph (set by the engine's apply; index: the basic index __getitem__ took, None: its places
    # are found from the arrays, backend.positions_in; base None: taken under no_grad), so that a
    # recorded write into it is recorded on its base too, and what `_refresh_view` re-derives it from.
    __slots__ = ()

    def _check_inplace(self, op: str, *values) -> bool:
        """PyTorch's rules, checked before anything is written: whether the write is recorded."""
        if not is_grad_enabled():
            return False
        if self._requires_grad and self._ctx is None:
            raise RuntimeError(_LEAF)
        return self._requires_grad or any(isinstance(v, TensorBase) and v._requires_grad for v in values)

    def _write(self, op: str, cls, args, **params):
        """Run the in-place op `cls` (ops/inplace.py) on self's storage with `args` (tensors or
        numbers); record it in the graph when `_check_inplace` says so."""
        record = self._check_inplace(op, *args)
        if (cls is not SetItem or op in _OVERLAP_REFUSED) and backend.overlaps_itself(self._data):
            raise RuntimeError(_OVERLAP)  # an expand or overlapping unfold view: which element would hold it?
        view = self._viewed_for_write(op) if record else None
        ctx = cls(backend.namespace(self.device))
        ctx.parents = (self, *args) if record else (None,) * (1 + len(args))  # what needs_grad reads
        arrays = [a._data if isinstance(a, TensorBase) else a for a in args]
        ctx.forward(backend.writable(self._data) if cls is SetItem else self._data, *arrays, **params)
        # versions before this write's: a saved value in self's memory, which the write changes,
        # makes backward raise ((y *= y) raises, as in PyTorch)
        records = taken(self, [a for a in args if isinstance(a, TensorBase)]) if record and ctx.saved else None
        self._bump_version()
        if record:
            rebase_history(self, ctx, args, records, parent=None if view is None else _reread(self, *view))
            if view is not None:
                self._write_through(*view)
        return self

    def _viewed_for_write(self, op: str):
        """(base, views) when self is a view whose write is also recorded on `base`, the tensor
        holding the storage; `views`: self and each view between it and the base, with its index
        into the base and whether a place comes twice in it (`_write_through`).  None when self is not
        a view; raises for the views not supported."""
        if len(self._counter) > 1:
            self._refresh_view()  # taken before an earlier write recorded on the storage: re-derived first
        ctx = self._ctx
        view_of = getattr(self, "_view_of", None) if ctx is None else None
        base = _below(self)
        if base is None:
            if view_of is not None and not view_of[3]:
                raise RuntimeError(_NO_GRAD_VIEW_WRITTEN)
            if ctx is None and getattr(self._data, "base", None) is not None:  # a view, of a base we cannot see
                raise RuntimeError(_UNSEEN_BASE.format(op))
            return None
        chain, base = _down_to_storage(self, base)
        if base._ctx is None and (getattr(base, "_view_of", None) or getattr(base._data, "base", None)) is not None:
            # the walk stopped at a view: made under no_grad, or of a base we cannot see
            raise RuntimeError(_NO_GRAD_VIEW_WRITTEN if getattr(base, "_view_of", None) else _UNSEEN_BASE.format(op))
        if base._requires_grad and base._ctx is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if any(v._ctx is None and not v._view_of[3] for v in chain):
            raise RuntimeError(_NO_GRAD_VIEW_WRITTEN)
        if len(chain) == 1 and (index := _own_index(self)) is not None:  # y[i], y[a:b]: its own index
            return base, [(self, index, False)]
        custom = _custom_view(chain)
        if custom is not None:  # re-derived from the base, the view would lose the op's own backward
            raise RuntimeError(_CUSTOM_VIEW.format(type(custom._ctx).__name__))
        if backend.overlaps_itself(self._data):
            raise RuntimeError(_OVERLAP)
        # each view's places in the base, and whether a place may come twice (an expand's: its
        # backward then adds them up)
        views = [(v, backend.positions_in(v._data, base._data), backend.overlaps_itself(v._data)) for v in chain]
        if any(index is None for _, index, _ in views):
            raise RuntimeError(
                f"{op}: an in-place write into a view made by {type(ctx).__name__ if ctx else 'a view op'} is not "
                "supported where the base's memory is not dense; write out of place, or into a clone()"
            )
        return base, views

    def _write_through(self, base, views):
        """After a recorded write into self, a view of `base` (through other views, maybe): record on
        the base that the places self covers now hold self's new values (a SetItem whose values are
        already in place: PyTorch's CopySlices), and re-derive self, and each view between it and the
        base (`views`: each one's index into the base, and whether a place comes twice in it), from
        the new base, so that their histories include the write.  A basic-index view `y[i]` keeps its own
        index; any other view (`y.t()`, `y.diagonal()`, `y[1:][:, 0]`) is taken as the elements at
        its places in the base (backend.positions_in), which it is."""
        xp = backend.namespace(self.device)
        written = self._make(self._data, self.device, True)  # self's version right after the write
        written._ctx, written._counter = self._ctx, self._counter
        _, index, _ = views[0]
        put = SetItem(xp)
        put.save_for_backward(index, self.ndim)
        rebase_history(base, put, (written,))
        for i, (view, index, repeats) in enumerate(views):  # (made after the base's rebase: they read the new base)
            rebase_history(view, _index_node(base, index, repeats), (base,), previous=written if i == 0 else None,
                           view=True)  # fmt: skip

    def _refresh_view(self, strict=True):
        """If self is a view taken before an in-place write recorded on the storage it shares (into
        its base, or through another view of it), re-derive it from the tensor holding the storage
        as it is now: its history becomes an Index node of that tensor at self's places (as
        `_write_through` re-derives the view written), and the version before, with the old history,
        stays with the nodes made from it before (versions.rebase_history).  PyTorch regenerates
        such a view's grad_fn the same way (AsStridedBackward) on its next use.  A view made under
        no_grad, or by a custom Function, raises PyTorch's error instead (strict=False, as for
        `.requires_grad`: it stays as it is).  Never while a backward pass runs (a hook reading the
        view): the pass's order holds the view's history as it found it."""
        counter = self._counter
        if len(counter) < 2 or in_backward():
            return
        newest = counter[-1]  # the stamp of the last write recorded on the storage
        ctx = self._ctx
        if ctx is not None:
            if newest <= (ctx.stamp or ctx.epoch):
                return  # its history was made after that write (or is that write)
        else:
            view_of = getattr(self, "_view_of", None)
            if view_of is None or newest <= view_of[2]:
                return  # not a view, or taken after the write
            if not view_of[3]:  # made under no_grad: PyTorch raises where the graph would read it; under no_grad
                if strict and is_grad_enabled():  # it is plain values
                    raise RuntimeError(_NO_GRAD_VIEW)
                return
        base = _below(self)
        if base is None:
            return  # not a view
        chain, root = _down_to_storage(self, base)
        if not root._requires_grad:
            return  # an alias outside the graph (detach(), .data): the write was recorded on another tensor
        custom = _custom_view(chain)
        if custom is not None:  # re-derived from the base, the view would lose the op's own backward
            if not strict:
                return
            raise RuntimeError(_CUSTOM_VIEW_REBASED.format(type(custom._ctx).__name__))
        index = _own_index(self) if root is base else None
        if index is None:
            index = backend.positions_in(self._data, root._data)  # where each of its elements lies in the base
            if index is None:
                if not strict:
                    return
                raise RuntimeError(
                    "a view was used after an in-place write into the tensor it views, whose memory is not dense: it "
                    "cannot be re-derived from it; take the view again after the write (or clone it before)"
                )
        node = _index_node(root, index, backend.overlaps_itself(self._data))
        rebase_history(self, node, (root,), view=True)

    @property
    def data(self):
        """This tensor's storage as a tensor outside the graph (PyTorch's .data).  Writes through
        it (p.data += v, p.data.copy_(w)) change this tensor and bump its version."""
        t = self._make(self._data, self.device, False)
        t._counter = self._counter
        return t

    @data.setter
    def data(self, value):
        """p.data = tensor_or_array: this tensor takes the new values (shape and device too)."""
        if isinstance(value, TensorBase):
            if value._data is self._data:  # `p.data += v` assigns the same storage back
                return
            array, device = value._data, value.device
        elif backend.is_array(value):
            array, device = value, backend.device_of(value)
        else:
            array, device = self._constant(value)._data, self.device
        self._data, self.device = array, device
        self._bump_version()

    def __setitem__(self, index, value):
        """y[index] = value, in place (ops/inplace.py's SetItem): recorded in the graph when y or
        value requires grad (logits[i] = model(x[i])); bumps the version."""
        index, _ = self._index_arrays(index, copy=True)
        if isinstance(value, TensorBase):
            if value.device != self.device:
                raise backend.DeviceError(f"setitem: tensor on {self.device}, value on {value.device}")
        elif not isinstance(value, (bool, int, float)):
            value = self._constant(value, dtype=self.dtype)
        if isinstance(value, TensorBase) and value.ndim and value.shape[0] == 1:
            value = _without_leading_ones(value)
        if backend.overlaps_itself(self._data):
            if not _basic(index):  # advanced: PyTorch's index_put_ warns (a mask and one value: masked_fill_ too)
                _warn_expanded("index_put_")
                if _is_mask(index) and (not isinstance(value, TensorBase) or value._data.size == 1):
                    _warn_expanded("masked_fill_")
            elif backend.overlaps_itself(self._data[index]):
                raise RuntimeError(_OVERLAP)  # e[:, 0] = v into an expand: PyTorch's copy_ into that view refuses it
        self._write("setitem", SetItem, (value,), index=index)

    def _inplace_binary(self, other, ufunc: str, op: str):
        """self <- self (ufunc) other, in self's storage and dtype (other broadcasts to self)."""
        if isinstance(other, TensorBase):
            if other.device != self.device:
                raise backend.DeviceError(f"{op}: tensor on {self.device}, other on {other.device}")
            dtype = backend.result_type(self.dtype, other.dtype)
        elif isinstance(other, (bool, int, float)):
            dtype = self.dtype if backend.is_floating(self.dtype) or not isinstance(other, float) else backend.float32
        else:
            return self._inplace_binary(self._constant(other), ufunc, op)
        if ufunc == "true_divide" and not backend.is_floating(dtype):
            dtype = backend.float32
        if _KIND_RANK[backend.as_dtype(dtype).kind] > _KIND_RANK[self.dtype.kind]:
            raise RuntimeError(
                f"result type {_torch_name(dtype)} can't be cast to the desired output type {_torch_name(self.dtype)}"
            )
        if isinstance(other, TensorBase) and broadcast_shapes(op, self.shape, other.shape) != self.shape:
            raise ShapeError(f"{op}: output with shape {self.shape} doesn't match the broadcast shape "
                             f"{broadcast_shapes(op, self.shape, other.shape)}")  # fmt: skip
        cls, sign = _WRITES[ufunc]
        return self._write(op, cls, (other,), **({} if sign is None else {"sign": sign}))

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

    def clamp_(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        if min is None and max is None:
            raise RuntimeError("clamp_: At least one of 'min' or 'max' must not be None")
        return self._write("clamp_", ClampInplace, (min, max))

    def fill_(self, value):
        if isinstance(value, TensorBase) and value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return self._write("fill_", SetItem, (value,), index=Ellipsis)

    def zero_(self):
        return self.fill_(0)

    def copy_(self, src):
        """Copy src's values in (broadcast to self's shape, cast to self's dtype, from any device)."""
        if not isinstance(src, TensorBase):
            src = self._constant(src)
        if broadcast_shapes("copy_", self.shape, src.shape) != self.shape:
            raise ShapeError(f"copy_: the source of shape {src.shape} does not broadcast to {self.shape}")
        if src.device != self.device:
            src = src.to(self.device)  # recorded (ToDevice) when src requires grad
        return self._write("copy_", SetItem, (src,), index=Ellipsis)

    def masked_fill_(self, mask, value):
        """value where mask (a bool tensor broadcastable to self) is True: SetItem at the mask."""
        if not isinstance(mask, TensorBase) or mask.dtype != backend.bool_:
            raise TypeError("masked_fill_: mask must be a bool tensor")
        if broadcast_shapes("masked_fill_", self.shape, mask.shape) != self.shape:
            raise ShapeError(f"masked_fill_: mask of shape {mask.shape} does not broadcast to {self.shape}")
        if isinstance(value, TensorBase) and value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")  # fmt: skip
        index = backend.namespace(self.device).broadcast_to(mask._data, self.shape).copy()
        if backend.overlaps_itself(self._data):
            _warn_expanded("masked_fill_")
        return self._write("masked_fill_", SetItem, (value,), index=index)

    def _draw_dtype(self, op: str):
        """The generators make float32 and float64; other float dtypes are drawn in float32 and cast."""
        if not backend.is_floating(self.dtype):
            raise TypeError(f"{op}: expected a floating-point tensor, got dtype {self.dtype}")
        return self.dtype if self.dtype in (backend.float32, backend.float64) else backend.float32

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with samples of N(mean, std^2), from `generator` (a tg.Generator of this tensor's
        device) or the device's default generator (seeded by tg.manual_seed)."""
        self._check_inplace("normal_")  # a leaf that requires grad: PyTorch's error before drawing
        if std < 0:
            raise RuntimeError(f"normal_ expects std >= 0.0, but found std {std}")
        z = backend.generator_for(self.device, generator, "normal_").normal(self.shape, self._draw_dtype("normal_"))
        return self._write("normal_", SetItem, (z * std + mean,), index=Ellipsis)  # new values: dy_old = 0

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        """Fill with samples of U[from_, to), from `generator` (a tg.Generator of this tensor's
        device) or the device's default generator (seeded by tg.manual_seed)."""
        self._check_inplace("uniform_")
        u = backend.generator_for(self.device, generator, "uniform_").uniform(self.shape, self._draw_dtype("uniform_"))
        return self._write("uniform_", SetItem, (u * (to - from_) + from_,), index=Ellipsis)


def _without_leading_ones(value):
    """`value` viewed without its leading dims of size 1, as PyTorch's indexing assignment takes it
    (`y[mask] = v` of shape (1, 1), `y[0:2] = v` of shape (1, 1, 2)): they broadcast away, and a
    boolean index's assignment in NumPy takes no more than one dim."""
    shape = value.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.reshape(shape[lead:])


def _warn_expanded(op: str):
    """PyTorch's UserWarning for `op` writing through an advanced index into an expanded tensor."""
    warnings.warn(
        f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing this "
        f"operation. This also applies to advanced indexing e.g. {_EXPANDED[op]}",
        UserWarning,
        stacklevel=3,
    )


def _is_mask(index) -> bool:
    """Whether `index` is one boolean mask alone (`y[mask]`)."""
    items = index if isinstance(index, tuple) else (index,)
    return len(items) == 1 and backend.is_array(items[0]) and items[0].dtype == backend.bool_


def _basic(index) -> bool:
    """Whether `index` is basic indexing only (ints, slices, None, ...): y[index] is then a view."""
    items = index if isinstance(index, tuple) else (index,)
    return all(it is None or it is Ellipsis or isinstance(it, (int, slice)) for it in items)


def _reread(view, base, views):
    """The write's input for a write through `view`: its places read from `base` as it is before
    the write (PyTorch's CopySlices reads the base, never the view's old history, so a hook
    registered on the view, or on a view between it and the base, before the write sees only the
    gradient of their readers before it).  None where the base is outside the graph."""
    if not base._requires_grad:
        return None
    _, index, repeats = views[0]
    reread = view._make(view._data, view.device, True)
    reread._counter = view._counter
    return _index_node(base, index, repeats).attach(reread, (base,))


def _index_node(base, index, repeats):
    """An Index node of `base` at `index` whose forward has run (its values are a view's, already in
    place): its backward puts the gradient at the places, added up where one comes twice (`repeats`)."""
    node = Index(backend.namespace(base.device))
    node.save_for_backward(base.shape, base.dtype, index, repeats)
    return node


def _down_to_storage(t, base):
    """([t, then each view between it and the tensor holding the storage], that tensor), walking
    down from `base`, the tensor t is a view of."""
    chain = [t]
    while (below := _below(base)) is not None:
        chain.append(base)
        base = below
    return chain, base


def _own_index(t):
    """t's basic index into the tensor it is a view of (y[i], y[a:b], or a view re-derived so), else None."""
    ctx = t._ctx
    if ctx is None:
        view_of = getattr(t, "_view_of", None)
        return None if view_of is None else view_of[1]
    return ctx.saved[2] if type(ctx) is Index and ctx.saved is not None and not ctx.saved[3] else None


def _custom_view(chain):
    """The first of the views made by an op with its own backward (custom_backward), else None."""
    return next((v for v in chain if getattr(v._ctx, "custom_backward", False)), None)


def _below(t):
    """The tensor `t` is a view of, sharing its storage, in the graph (`_base_of`) or outside it
    (`_view_of`), else None: the next step down to the tensor holding the storage."""
    if t._ctx is not None:
        return _base_of(t)
    view_of = getattr(t, "_view_of", None)
    below = view_of[0] if view_of is not None else None
    return below if below is not None and below._counter is t._counter else None


def _base_of(t):
    """The tensor `t` is a view of in the graph (its node's input sharing its storage), else None.
    A node of an in-place write shares the storage with its previous version: not a view."""
    ctx = t._ctx
    if ctx is None or ctx.parents is None or (ctx.stamp and type(ctx) is not Index):
        return None
    return next((p for p in ctx.parents if isinstance(p, TensorBase) and p._counter is t._counter), None)
