"""Custom ops in PyTorch's form: `tg.autograd.Function` with static forward / backward.

tensorgrad has one `Function` class (autograd.py) and two ways to write an op with it:

- the raw-array form, used by every op in `ops/`: `forward(self, *arrays)` and
  `backward(self, grad_array)` are instance methods on backend arrays (NumPy or CuPy), and the
  instance itself is the graph node. Nothing sits between the math and the arrays.
- PyTorch's form, for your own ops, written exactly as for `torch.autograd.Function`:

      class MulAdd(tg.autograd.Function):
          @staticmethod
          def forward(ctx, x, y, alpha):           # Tensors in, a Tensor out
              ctx.save_for_backward(x, y)
              ctx.alpha = alpha                    # non-tensor arguments: attributes on ctx
              return x * y + alpha
          @staticmethod
          def backward(ctx, g):                    # one gradient per forward argument
              x, y = ctx.saved_tensors
              return (g * y if ctx.needs_input_grad[0] else None), g * x, None

      z = MulAdd.apply(x, y, 2.0)

`adopt`, which this module registers with the engine (`autograd.on_subclass`), sees the
staticmethod `forward` of each new `Function` subclass and gives the class the `apply` below
(tensorgrad/__init__.py imports this module, so the form works as soon as tensorgrad is
imported). It adapts the PyTorch form to the engine: the graph node (a raw-array Function, of a
class named after yours, so `z.grad_fn` reads `<MulAddBackward>`) is also the `ctx`. Its raw
`backward(grad_array)` wraps the array as a Tensor, calls your static backward with grad mode
off, and hands the engine back arrays. So the engine's backward pass -- ordering, accumulation,
un-broadcasting, releasing saved tensors -- is the same for both forms.

What PyTorch's form costs: your forward and backward run tensorgrad's Tensor methods, so a
Tensor object (and its checks) per intermediate; the raw form does array math directly. What it
buys: a student's op from a PyTorch tutorial runs unchanged, and `tg.autograd.gradcheck` and
`tensorgrad.testing` check it.

Forward runs with grad mode off (its inner ops record no graph: the op's backward is yours);
backward runs with grad mode off too (no double backward). The forward returns one Tensor;
for several outputs write one Function per output.
"""

from __future__ import annotations

import inspect

from . import autograd, backend, gradient_shapes, versions
from .autograd import Function, no_grad
from .tensor_base import TensorBase


class FunctionCtx(Function):
    """The `ctx` of a PyTorch-form op, which is also its node in the graph (a raw-array Function)."""

    function = None  # the user's Function subclass (set on each per-op subclass by `adopt`)
    custom_backward = True  # an output that is a view of an input takes no in-place write (inplace.py)

    def __init__(self, xp):
        super().__init__(xp)
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_differentiable = False

    # ------------------------------------------------------------------ PyTorch's ctx API
    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is of type "
                    f"{type(t).__name__}; keep other values as attributes: ctx.name = value"
                )
        self.saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        return () if self.saved is None else tuple(self.saved)

    def mark_non_differentiable(self, *outputs):
        """The output gets no gradient (e.g. an index or a mask)."""
        self._non_differentiable = True

    def set_materialize_grads(self, value: bool):
        """Accepted for compatibility: the incoming gradient is always a Tensor here (one output)."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        raise NotImplementedError("mark_dirty: in-place custom Functions are not supported; return a new tensor")

    # ------------------------------------------------------------------ the raw-array node
    def backward(self, grad):
        g = self._tensor_type._make(grad, self._device, False)
        with no_grad():
            grads = self.function.backward(self, g)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return _check_grads(self.function.__name__, grads, self.parents)

    def backward_graph(self, grad, output):
        """A create_graph pass (graph_walk.py): the user's backward on Tensors with grad mode on, so
        the gradients it returns are recorded and differentiable as far as the ops it uses are (as
        PyTorch runs a custom Function's backward under create_graph).  Checked as `backward`'s."""
        grads = self.function.backward(self, grad)
        if not isinstance(grads, tuple):
            grads = (grads,)
        _check_grads(self.function.__name__, grads, self.parents)
        return tuple(g if isinstance(x, TensorBase) else None for x, g in zip(self.parents, grads))


def _check_grads(name, grads, inputs):
    """Arrays for the engine; PyTorch's errors for a wrong count, a shape that does not fit or a
    gradient for a non-tensor argument."""
    n = len(inputs)
    if len(grads) < n or any(g is not None for g in grads[n:]):
        raise RuntimeError(
            f"function {name}Backward returned an incorrect number of gradients (expected {n}, got {len(grads)})"
        )
    out = []
    for i, (x, g) in enumerate(zip(inputs, grads[:n])):
        if g is None:
            out.append(None)
            continue
        if not isinstance(x, TensorBase):
            raise RuntimeError(
                f"function {name}Backward returned a gradient different than None at position {i}, "
                f"but the corresponding forward input was not a Tensor ({type(x).__name__})"
            )
        if not isinstance(g, TensorBase):
            raise TypeError(f"function {name}Backward returned a {type(g).__name__} at position {i}; expected a Tensor")
        if g.shape != x.shape and not gradient_shapes.expandable(x.shape, g.shape):
            raise RuntimeError(
                f"Function {name}Backward returned an invalid gradient at index {i} - got {list(g.shape)} but "
                f"expected shape compatible with {list(x.shape)}"
            )
        data = g._data if g.device == x.device else backend.to_device(g._data, x.device)
        out.append(data if g.dtype == x.dtype else data.astype(x.dtype))  # cast, as PyTorch does
    return tuple(out)


@autograd.on_subclass
def adopt(cls):
    """Give a Function subclass written in PyTorch's form (its `forward` a staticmethod) its
    graph-node class and its `apply`; other subclasses (the raw-array ops) are left as they are."""
    if not isinstance(inspect.getattr_static(cls, "forward"), staticmethod):
        return
    # named as the op, so `z.grad_fn` reads <MulAddBackward> as in PyTorch
    cls._node_class = type(cls.__name__, (FunctionCtx,), {"function": cls, "__module__": cls.__module__})
    cls.apply = classmethod(_apply)


def _apply(cls, *args, **kwargs):
    """Run `cls.forward(ctx, *args)` and record one graph node for the output."""
    split = _overrides_setup_context(cls)  # PyTorch 2's form: forward(*args) and setup_context(ctx, ...)
    if kwargs:  # PyTorch binds keyword arguments to forward's parameters
        bound = inspect.signature(cls.forward).bind(*args, **kwargs) if split else None
        if bound is None:
            bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
        bound.apply_defaults()
        args = bound.args if split else bound.args[1:]
    tensors = [a for a in args if isinstance(a, TensorBase)]
    if not tensors:
        raise TypeError(f"{cls.__name__}.apply: needs at least one Tensor argument")
    device = tensors[0].device
    for t in tensors[1:]:
        if t.device != device:
            raise backend.DeviceError(
                f"{cls.__name__}: expected all tensors on the same device, got {device} and {t.device}"
            )
    grad_on = autograd.is_grad_enabled()
    ctx = cls._node_class(backend.namespace(device))
    ctx._device = device
    ctx._tensor_type = type(tensors[0])  # the class backward wraps the incoming gradient in
    ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a.requires_grad and grad_on for a in args)
    with no_grad():
        if split:
            out = cls.forward(*args)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args)
    if not isinstance(out, TensorBase):
        raise TypeError(
            f"{cls.__name__}.forward returned a {type(out).__name__}; it must return one Tensor "
            "(for several outputs, write one Function per output)"
        )
    requires_grad = any(ctx.needs_input_grad) and not ctx._non_differentiable
    # a new tensor, even if forward returned one of its inputs
    result = type(out)._make(out._data, out.device, requires_grad)
    result._counter = out._counter  # the same storage: the same version counter
    if requires_grad:  # each saved tensor's version now: backward refuses one written in place since
        ctx.attach(result, args, versions.taken_saved(ctx.saved) if ctx.saved else None)
    return result


def _overrides_setup_context(cls) -> bool:
    impl = inspect.getattr_static(cls, "setup_context", None)
    return impl is not None and impl is not inspect.getattr_static(Function, "setup_context", None)
