"""The tensor protocol: what the engine reads and writes of a tensor.

`TensorBase` holds the fields (a tensor is its backend array, its device, whether it wants a
gradient, that gradient, the node that made it, its version counter and its hooks) and the checks
PyTorch makes when a user sets `requires_grad` or `grad`.  `Tensor` (tensor.py) derives from it and
adds everything a user calls; the engine (autograd.py, versions.py) sees tensors only through
these fields, and makes each op's output with `type(first tensor argument)._make(...)`, so it never
imports the Tensor (nor anything else of tensorgrad above the backend).
"""

from __future__ import annotations

from . import backend


class TensorBase:
    """What the engine reads and writes of a tensor; `Tensor` (tensor.py) derives from it.

    _data           the backend array (NumPy or CuPy)
    device          its device name ("cpu", "cuda", "strict", ...)
    requires_grad   whether backward computes a gradient for it (a property: only a floating-point
                    tensor may, and only a leaf's can be switched off; the engine reads the field
                    `_requires_grad` itself)
    grad            that gradient (a tensor of the same class, dtype, device and shape), accumulated by
                    backpropagate (a property: an assigned one is checked; the engine writes `_grad`)
    _ctx            the Function node that made it (None for a leaf)
    _counter        its version counter: [number of in-place writes], one list shared with its views
    _hooks          None, or its hooks (hooks.TensorHooks: register_hook, retain_grad, post-accumulate
                    hooks), which the engine calls as `_hooks.on_gradient(tensor, grad)` and
                    `_hooks.post_accumulate` (it imports nothing of them)
    _view_of        set on a view made outside the graph only (the engine's apply, __getitem__):
                    (base, basic index or None, the in-place clock then, grad mode then), so that the
                    view can be re-derived from its base after an in-place write recorded on their
                    storage (`_refresh_view`, tensor_methods/inplace.py)
    """

    __slots__ = ("_data", "device", "_requires_grad", "_grad", "_ctx", "_counter", "_hooks", "_view_of")

    @classmethod
    def _make(cls, data, device, requires_grad):
        """The fast constructor the engine and the ops use: no checks, no copy."""
        t = object.__new__(cls)
        t._data = data
        t.device = device
        t._requires_grad = requires_grad
        t._grad = None
        t._ctx = None
        t._counter = [0]
        t._hooks = None
        return t

    def _refresh_view(self, strict=True):
        """Re-derive this tensor from its base if it is a view that an in-place write recorded on
        their storage left stale (PyTorch regenerates such a view's grad_fn).  The Tensor class's
        is tensor_methods/inplace.py's; here, nothing.  Called only where `len(_counter) > 1` (a
        write was recorded on the storage).  strict=False: a view that cannot be re-derived stays
        as it is, where a use raises."""

    @property
    def requires_grad(self) -> bool:
        if len(self._counter) > 1:  # a write recorded on this storage may make a view of it require grad
            self._refresh_view(strict=False)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        """As PyTorch: an integer or bool tensor cannot require gradients (its gradient would be
        truncated), and a result of the graph cannot be taken out of it (use detach())."""
        value = bool(value)
        if value and not backend.is_floating(self._data.dtype):
            raise TypeError(f"only floating-point tensors can require gradients, got dtype {self._data.dtype}")
        if not value and self._ctx is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._requires_grad = value

    @property
    def grad(self):
        """The gradient backward accumulated (None before the first); the engine writes `_grad`."""
        return self._grad

    @grad.setter
    def grad(self, value):
        """As PyTorch, an assigned gradient must be None or a tensor of this tensor's dtype, device
        and shape: one that is not would be broadcast or cast by whatever reads it (an optimizer)."""
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign a tensor as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value._data.dtype}' to a tensor with dtype "
                    f"'{self._data.dtype}'. The gradient must have the tensor's dtype: assign "
                    f"grad.to({self._data.dtype})"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"attempting to assign a gradient with device '{value.device}' to a tensor with device "
                    f"'{self.device}'. Please ensure that the gradient and the tensor are on the same device"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's storage has had (PyTorch's tensor._version)."""
        return self._counter[0]

    def _bump_version(self):
        """Count one in-place write to this storage: every tensor sharing it (its views, .data,
        detach()) sees the new version, and backward refuses arrays saved before it."""
        self._counter[0] += 1
