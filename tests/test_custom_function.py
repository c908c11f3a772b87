"""Custom ops in PyTorch's form (tensorgrad/custom_function.py): a Function written for
torch.autograd runs on tensorgrad with only its import line changed."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

# Written for PyTorch: two tensor inputs, one non-tensor argument, saved tensors, needs_input_grad.
TORCH_WRITTEN = '''
import torch


class ScaledTanhProduct(torch.autograd.Function):
    """z = tanh(x) * y * alpha."""

    @staticmethod
    def forward(ctx, x, y, alpha):
        t = torch.tanh(x)
        ctx.save_for_backward(t, y)
        ctx.alpha = alpha
        return t * y * alpha

    @staticmethod
    def backward(ctx, grad_out):
        t, y = ctx.saved_tensors
        ctx.seen_needs_input_grad = ctx.needs_input_grad
        grad_x = grad_out * y * ctx.alpha * (1 - t * t) if ctx.needs_input_grad[0] else None
        grad_y = grad_out * t * ctx.alpha if ctx.needs_input_grad[1] else None
        return grad_x, grad_y, None


def run(x, y):
    z = ScaledTanhProduct.apply(x, y, 0.5)
    z.backward(torch.ones_like(z) * 2)
    return z
'''


def load(import_line: str) -> dict:
    """The module above, with its import line replaced."""
    namespace: dict = {}
    exec(compile(TORCH_WRITTEN.replace("import torch", import_line, 1), "<torch-written op>", "exec"), namespace)
    return namespace


def test_a_torch_written_function_runs_on_tensorgrad_with_the_import_changed():
    mod = load("import tensorgrad as torch")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, y = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    z = mod["run"](x, y)
    assert repr(z.grad_fn.__class__.__name__) == "'ScaledTanhProduct'" and "ScaledTanhProductBackward" in repr(z)
    # float64 and the same formulas as NumPy's: equal to rounding
    np.testing.assert_allclose(z.numpy(), np.tanh(a) * b * 0.5, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * b * 0.5 * (1 - np.tanh(a) ** 2), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), 2 * np.tanh(a) * 0.5, rtol=1e-12)
    assert tg.autograd.gradcheck(mod["ScaledTanhProduct"].apply, (x, y, 0.5))


def test_the_same_source_runs_on_pytorch():
    """The op above really is PyTorch's form: PyTorch runs and gradchecks the same text."""
    torch = pytest.importorskip("torch")
    mod = load("import torch")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, y = (torch.tensor(v, requires_grad=True) for v in (a, b))
    mod["run"](x, y)
    tx, ty = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    load("import tensorgrad as torch")["run"](tx, ty)
    # float64, the same operations: equal to rounding
    np.testing.assert_allclose(tx.grad.numpy(), x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ty.grad.numpy(), y.grad.numpy(), rtol=1e-12)
    assert torch.autograd.gradcheck(mod["ScaledTanhProduct"].apply, (x, y, 0.5))


def test_needs_input_grad_and_none_for_non_tensor_arguments(device):
    mod = load("import tensorgrad as torch")
    op = mod["ScaledTanhProduct"]
    x = tg.randn(2, 3, dtype=tg.float64, device=device, requires_grad=True)
    y = tg.randn(2, 3, dtype=tg.float64, device=device)  # a constant
    z = op.apply(x, y, 3.0)
    ctx = z.grad_fn
    assert ctx.needs_input_grad == (True, False, False) and ctx.alpha == 3.0
    z.sum().backward()
    assert ctx.seen_needs_input_grad == (True, False, False)
    assert x.grad is not None and y.grad is None
    assert ctx.saved_tensors == ()  # released after backward, as the engine's own ops
    with tg.no_grad():
        assert op.apply(x, y, 3.0).grad_fn is None


def test_keyword_arguments_and_broadcast_gradients(device):
    class AddScaled(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, scale=1.0):
            ctx.scale = scale
            return x + y * scale

        @staticmethod
        def backward(ctx, g):
            return g, g * ctx.scale, None  # dy comes back (3, 4): the engine sums it to y's (4,)

    x = tg.randn(3, 4, dtype=tg.float64, device=device, requires_grad=True)
    y = tg.randn(4, dtype=tg.float64, device=device, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x, y: AddScaled.apply(x, y, scale=2.0), (x, y))


def test_setup_context_form():
    """PyTorch 2's split form: forward without ctx, setup_context(ctx, inputs, output)."""

    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    assert tg.autograd.gradcheck(Cube.apply, [tg.randn(5, dtype=tg.float64, requires_grad=True)])


def test_the_engine_ops_stay_raw_array_functions():
    from tensorgrad.ops.softmax import Softmax

    op = Softmax(np)
    y = op.forward(np.array([[1.0, 2.0, 3.0]]), dim=-1)
    assert np.isclose(y.sum(), 1.0) and Softmax.apply.__func__ is tg.Function.apply.__func__


# ---------------------------------------------------------------- the errors are PyTorch's
def _op(backward):
    class Op(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

    Op.backward = staticmethod(backward)
    return Op


def test_wrong_number_of_gradients():
    x = tg.randn(3, requires_grad=True)
    z = _op(lambda ctx, g: g).apply(x, 2.0)
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        z.sum().backward()


def test_gradient_for_a_non_tensor_argument():
    x = tg.randn(3, requires_grad=True)
    z = _op(lambda ctx, g: (g, g)).apply(x, 2.0)
    with pytest.raises(RuntimeError, match="different than None at position 1"):
        z.sum().backward()


def test_gradient_of_the_wrong_shape():
    x = tg.randn(3, requires_grad=True)
    z = _op(lambda ctx, g: (tg.ones(4), None)).apply(x, 2.0)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[4\] but expected shape compatible"):
        z.sum().backward()


@pytest.mark.reference
@pytest.mark.parametrize(
    "grads",
    [lambda g: g, lambda g: (g, g, g), lambda g: (g[:2], g), lambda g: (g.reshape(3, 1)[:2], g)],
    ids=["too-few", "too-many", "shorter", "no-broadcast"],
)
def test_wrong_gradients_raise_pytorch_message(grads):
    """The same custom Function in both libraries: the same error, word for word."""
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (tg, torch):

        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return grads(g)

        x, y = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            Pair.apply(x, y).sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_forward_must_return_a_tensor_and_save_only_tensors():
    class Bad(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

    with pytest.raises(TypeError, match="save_for_backward can only save tensors.*argument 1 is of type int"):
        Bad.apply(tg.randn(2, requires_grad=True))

    class Pair(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x, x

    with pytest.raises(TypeError, match="must return one Tensor"):
        Pair.apply(tg.randn(2))


def test_gradcheck_names_the_input_and_element_of_a_wrong_backward():
    class WrongTanh(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            t = x.tanh()
            ctx.save_for_backward(t)
            return t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * (1 - t)  # should be 1 - t * t

    x = tg.randn(2, 3, dtype=tg.float64, requires_grad=True)
    with pytest.raises(tg.autograd.GradcheckError, match=r"input 0 \(shape \(2, 3\)\), element \(0, 0\)"):
        tg.autograd.gradcheck(WrongTanh.apply, (x,))
    assert tg.autograd.gradcheck(WrongTanh.apply, (x,), raise_exception=False) is False
