"""Reverse-mode autodiff: the Function base class and the backward pass.

An op is a subclass of `Function` with two methods on raw backend arrays:

    forward(self, *inputs, **params) -> output array    (may call self.save_for_backward)
    backward(self, grad) -> one gradient per input      (None where an input needs none)

`Op.apply(*args, **params)` runs forward on the arrays of its Tensor arguments and,
when a gradient is wanted, records the call as a node of the graph: the output
tensor keeps the Function instance (`tensor._ctx`), which keeps its inputs.

The engine, not each op, does the work every op shares:
- un-broadcasting: a gradient shaped like the broadcast output is summed back to
  the input's shape ("the adjoint of broadcast is sum"), in `unbroadcast`;
- accumulation: a tensor used twice receives the sum of both gradients;
- ordering: nodes are visited in reverse topological order, found without
  recursion so deep graphs do not hit Python's recursion limit;
- releasing: each node's saved arrays are dropped as soon as its backward ran.

Because ops see arrays, a test can run one backward without a graph:

    op = Softmax(np)
    y = op.forward(x, dim=-1)
    dx, = op.backward(dy)

Your own ops can also be written in PyTorch's form, `forward(ctx, ...)` / `backward(ctx, ...)`
as staticmethods on Tensors, subclassing this same `Function` (`tg.autograd.Function`); see
custom_function.py for how that form maps onto this one.
"""

from __future__ import annotations

import functools
import inspect

from . import backend

_grad_enabled = True
Tensor = None  # tensor.py sets this (it imports this module, so it cannot be imported here)


def is_grad_enabled() -> bool:
    return _grad_enabled


class _GradMode:
    """Base of no_grad / enable_grad: a context manager and a decorator."""

    enabled = True

    def __enter__(self):
        global _grad_enabled
        self._prev = _grad_enabled
        _grad_enabled = self.enabled

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """No graph is recorded inside: `with tg.no_grad():` or `@tg.no_grad()`."""

    enabled = False


class enable_grad(_GradMode):
    enabled = True


class Function:
    """One differentiable op: forward and backward side by side (see module docstring)."""

    __slots__ = ("xp", "parents", "saved")

    def __init__(self, xp):
        self.xp = xp  # the array namespace of the inputs' device
        self.parents = None  # the input Tensors (None for non-tensor args), set by apply
        self.saved = None

    def __init_subclass__(cls, **kwargs):
        """A subclass whose `forward` is a staticmethod is written in PyTorch's form
        (forward(ctx, *args) / backward(ctx, *grads) on Tensors): its `apply` is the one in
        custom_function.py.  Ops written on raw arrays (every op in ops/) keep the `apply` below."""
        super().__init_subclass__(**kwargs)
        if isinstance(inspect.getattr_static(cls, "forward"), staticmethod):
            from . import custom_function

            custom_function.adopt(cls)

    def save_for_backward(self, *arrays):
        self.saved = arrays

    def needs_grad(self, i) -> bool:
        """Whether input i wants a gradient (always True when run without a graph)."""
        return self.parents is None or getattr(self.parents[i], "requires_grad", False)

    def forward(self, *args, **params):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, grad):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **params):
        device = None
        requires_grad = False
        arrays = []
        for a in args:
            if isinstance(a, Tensor):
                if device is None:
                    device = a.device
                elif a.device != device:
                    raise backend.DeviceError(
                        f"{cls.__name__}: expected all tensors on the same device, got {device} and {a.device}"
                    )
                requires_grad = requires_grad or a.requires_grad
                arrays.append(a.data)
            else:
                arrays.append(a)
        if device is None:
            raise TypeError(f"{cls.__name__}: needs at least one Tensor argument")
        xp = backend.namespace(device)
        ctx = cls(xp)
        out = backend.ensure_array(xp, ctx.forward(*arrays, **params))
        requires_grad = requires_grad and _grad_enabled
        result = Tensor._make(out, device, requires_grad)
        if requires_grad:
            ctx.parents = args
            result._ctx = ctx
        return result


def unbroadcast(grad, shape):
    """Sum a gradient shaped like a broadcast result back to an input's `shape`.

    Broadcasting copies an input along new leading axes and along axes of size 1;
    the adjoint of a copy is a sum, so those axes are summed away.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


def _topological_order(root):
    """Every tensor `root` depends on (through tensors that require grad), inputs first.

    An explicit stack instead of recursion: a graph thousands of ops deep is fine.
    """
    order = []
    expanded = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        stack.append((node, True))
        ctx = node._ctx
        if ctx is not None:
            if ctx.parents is None:
                raise RuntimeError(
                    "Trying to backward through the graph a second time: its saved arrays were "
                    "released after the first backward. Use backward(retain_graph=True) the first time."
                )
            for p in ctx.parents:
                if p is not None and getattr(p, "requires_grad", False) and id(p) not in expanded:
                    stack.append((p, False))
    return order


def run_backward(root, grad, retain_graph=False):
    """Backpropagate `grad` (an array shaped like root) into every leaf's `.grad`."""
    order = _topological_order(root)
    grads = {id(root): grad}
    owned = set()  # ids whose accumulated gradient is our own array (safe to add into)
    for node in reversed(order):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        ctx = node._ctx
        if ctx is None:  # a leaf: accumulate into .grad
            if node.grad is not None:
                node.grad.data += g
                continue
            buffer = getattr(node, "_grad_buffer", None)  # a Parameter may bring its own array
            if buffer is not None and buffer.shape == g.shape and buffer.dtype == g.dtype:
                buffer[...] = g
                node.grad = Tensor._make(buffer, node.device, False)
            else:
                node.grad = Tensor._make(g if id(node) in owned else g.copy(), node.device, False)
            continue
        in_grads = ctx.backward(g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        for p, pg in zip(ctx.parents, in_grads):
            if pg is None or not isinstance(p, Tensor) or not p.requires_grad:
                continue
            pg = backend.ensure_array(ctx.xp, pg)  # NumPy turns 0-d results into scalars
            if pg.shape != p.shape:
                pg = unbroadcast(pg, p.shape)
            key = id(p)
            acc = grads.get(key)
            if acc is None:
                grads[key] = pg  # may alias another gradient: never written into
            elif key in owned:
                acc += pg
            else:
                grads[key] = backend.ensure_array(ctx.xp, acc + pg)
                owned.add(key)
        if not retain_graph:
            ctx.parents = None
            ctx.saved = None


def __getattr__(name):
    """tg.autograd.gradcheck, as torch.autograd.gradcheck (gradcheck.py imports this module, so lazily)."""
    if name in ("gradcheck", "GradcheckError"):
        import importlib

        return getattr(importlib.import_module("tensorgrad.gradcheck"), name)
    raise AttributeError(f"module 'tensorgrad.autograd' has no attribute {name!r}")
