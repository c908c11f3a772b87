"""Differentiable backward passes: backward(create_graph=True) and autograd.grad(create_graph=True).

Each op with a Tensor-level formula (`backward_graph`, autograd.py) is checked against PyTorch in
float64: its second derivative, through a random weighting of the output and of the first
gradient (so every element of the Hessian-vector product counts), on every path (the CPU kernels,
the CPU reference, the strict guard).  An op without a formula raises, naming itself, only when a
second pass reaches its gradient; and without create_graph nothing changes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorgrad as tg
from tensorgrad.autograd import Function

pytestmark = pytest.mark.reference

# float64 throughout: the formulas are exact rewrites of PyTorch's, so the only differences are
# summation orders (a few ulps of values of order 1-100).
TOL = dict(rtol=1e-10, atol=1e-12)


def _pair(device, shape, positive=False, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(shape)
    if positive:
        x0 = np.abs(x0) + 0.5
    return x0


def _second(lib, f, arrays, device=None):
    """[d/dx_i sum(v * d/dx sum(w * f(x)))] for every input x_i: a Hessian-vector product, plus
    the first gradients, in `lib` (tensorgrad or torch)."""
    rng = np.random.default_rng(1)
    if lib is tg:
        xs = [tg.tensor(a, requires_grad=True, device=device) for a in arrays]
    else:
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = f(*xs)
    w = rng.standard_normal(tuple(out.shape))
    w = tg.tensor(w, device=device) if lib is tg else lib.tensor(w)
    first = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
    total = None
    for g in first:
        v = rng.standard_normal(tuple(g.shape))
        v = tg.tensor(v, device=device) if lib is tg else lib.tensor(v)
        term = (g * v).sum()
        total = term if total is None else total + term
    second = lib.autograd.grad(total, xs, allow_unused=True)
    return [g.detach().numpy() for g in first], [None if g is None else g.numpy() for g in second]


def _compare(device, f, ft, arrays):
    torch = pytest.importorskip("torch")
    first, second = _second(tg, f, arrays, device)
    first_t, second_t = _second(torch, ft, arrays)
    for a, b in zip(first, first_t):
        np.testing.assert_allclose(a, b, **TOL)
    for a, b in zip(second, second_t):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, **TOL)


UNARY = {
    # name: (tensorgrad f, torch f, positive inputs)
    "neg": (lambda x: -x * x, lambda x: -x * x, False),
    "pow3": (lambda x: x**3, lambda x: x**3, False),
    "pow2": (lambda x: x**2 * x, lambda x: x**2 * x, False),
    "pow0": (lambda x: x**0 * x, lambda x: x**0 * x, False),
    "pow_half": (lambda x: x**0.5, lambda x: x**0.5, True),
    "exp": (lambda x: x.exp(), lambda x: x.exp(), False),
    "log": (lambda x: x.log(), lambda x: x.log(), True),
    "tanh": (lambda x: x.tanh(), lambda x: x.tanh(), False),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid(), False),
    "relu": (lambda x: x.relu() * x, lambda x: x.relu() * x, False),
    "sum_dim": (lambda x: (x * x).sum(0) * x, lambda x: (x * x).sum(0) * x, False),
    "sum_all": (lambda x: (x * x).sum() * x, lambda x: (x * x).sum() * x, False),
    "mean_keepdim": (lambda x: (x * x).mean(1, keepdim=True) * x, lambda x: (x * x).mean(1, keepdim=True) * x, False),
    "reshape_view": (
        lambda x: (x * x).reshape(4, 3).view(12).view(3, 4) * x,
        lambda x: (x * x).reshape(4, 3).view(12).view(3, 4) * x,
        False,
    ),
    "transpose_permute": (
        lambda x: (x * x).transpose(0, 1).permute(1, 0) * x.T.T,
        lambda x: (x * x).transpose(0, 1).permute(1, 0) * x.T.T,
        False,
    ),
    "expand": (
        lambda x: (x * x).sum(0, keepdim=True).expand(3, 4) * x,
        lambda x: (x * x).sum(0, keepdim=True).expand(3, 4) * x,
        False,
    ),
    "softmax_last": (lambda x: x.softmax(-1), lambda x: x.softmax(-1), False),
    "softmax_first": (lambda x: x.softmax(0), lambda x: x.softmax(0), False),
    "log_softmax": (lambda x: x.log_softmax(-1), lambda x: x.log_softmax(-1), False),
    "tanh_exp": (lambda x: x.tanh() * x.exp(), lambda x: x.tanh() * x.exp(), False),
    "exp2": (lambda x: x.exp2(), lambda x: x.exp2(), False),
    "log2": (lambda x: x.log2(), lambda x: x.log2(), True),
    "log10": (lambda x: x.log10(), lambda x: x.log10(), True),
    "sqrt": (lambda x: x.sqrt(), lambda x: x.sqrt(), True),
    "sin": (lambda x: x.sin(), lambda x: x.sin(), False),
    "cos": (lambda x: x.cos(), lambda x: x.cos(), False),
    "tan": (lambda x: (x * 0.5).tan(), lambda x: (x * 0.5).tan(), False),
    # inputs mapped into the domain (|t| < 1, t > 1) by ops that have formulas themselves
    "asin": (lambda x: (x.tanh() * 0.9).asin(), lambda x: (x.tanh() * 0.9).asin(), False),
    "acos": (lambda x: (x.tanh() * 0.9).acos(), lambda x: (x.tanh() * 0.9).acos(), False),
    "atan": (lambda x: x.atan(), lambda x: x.atan(), False),
    "sinh": (lambda x: x.sinh(), lambda x: x.sinh(), False),
    "cosh": (lambda x: x.cosh(), lambda x: x.cosh(), False),
    "asinh": (lambda x: x.asinh(), lambda x: x.asinh(), False),
    "acosh": (lambda x: (x * x + 1.5).acosh(), lambda x: (x * x + 1.5).acosh(), False),
    "atanh": (lambda x: (x.tanh() * 0.9).atanh(), lambda x: (x.tanh() * 0.9).atanh(), False),
    "expm1": (lambda x: x.expm1(), lambda x: x.expm1(), False),
    "log1p": (lambda x: x.log1p(), lambda x: x.log1p(), True),
    "rsqrt": (lambda x: x.rsqrt(), lambda x: x.rsqrt(), True),
    "reciprocal": (lambda x: x.reciprocal(), lambda x: x.reciprocal(), True),
    "erf": (lambda x: x.erf(), lambda x: x.erf(), False),
    "clamp_tensor_bounds": (
        lambda x: x.clamp(x.detach() * 0 - 0.5, x * 0 + 0.6) * x,
        lambda x: x.clamp(x.detach() * 0 - 0.5, x * 0 + 0.6) * x,
        False,
    ),
    "index_basic": (lambda x: x[1:, ::2] * x[0, ::2], lambda x: x[1:, ::2] * x[0, ::2], False),
    "index_int_array": (lambda x: x[[0, 2, 0]] * x[[1, 1, 2]], lambda x: x[[0, 2, 0]] * x[[1, 1, 2]], False),
    "index_bool": (lambda x: x[x.detach() > 0] ** 3, lambda x: x[x.detach() > 0] ** 3, False),
    "cat": (
        lambda x: tg.cat([x * x, x.exp()], 1) * tg.cat([x, x], 1),
        lambda x: _torch().cat([x * x, x.exp()], 1) * _torch().cat([x, x], 1),
        False,
    ),
    "stack": (
        lambda x: tg.stack([x * x, x.sin()], 0).sum(0) * x,
        lambda x: _torch().stack([x * x, x.sin()], 0).sum(0) * x,
        False,
    ),
    "abs": (lambda x: x.abs() * x, lambda x: x.abs() * x, False),
    "clamp": (lambda x: x.clamp(-0.5, 0.7) * x, lambda x: x.clamp(-0.5, 0.7) * x, False),
    "pow_tensor": (lambda x: x.abs() ** x + 2**x, lambda x: x.abs() ** x + 2**x, False),
    "amax": (lambda x: x.amax(1) * x.amin(0).sum(), lambda x: x.amax(1) * x.amin(0).sum(), False),
    "var": (
        lambda x: x.var(1) * x.var(0, keepdim=True).sum(),
        lambda x: x.var(1) * x.var(0, keepdim=True).sum(),
        False,
    ),
    "std": (lambda x: x.std(1) * x.std(), lambda x: x.std(1) * x.std(), False),
    "logsumexp": (
        lambda x: x.logsumexp(1) * x.logsumexp(0).sum(),
        lambda x: x.logsumexp(1) * x.logsumexp(0).sum(),
        False,
    ),
    "nansum": (lambda x: x.nansum(0) * x, lambda x: x.nansum(0) * x, False),
    "where": (
        lambda x: tg.where(x.detach() > 0, x * x, x.exp()),
        lambda x: _torch().where(x.detach() > 0, x * x, x.exp()),
        False,
    ),
    "gelu": (lambda x: x.gelu(), lambda x: torch_f().gelu(x), False),
    "gelu_tanh": (lambda x: x.gelu(approximate="tanh"), lambda x: torch_f().gelu(x, approximate="tanh"), False),
    "silu": (lambda x: tg.nn.functional.silu(x), lambda x: torch_f().silu(x), False),
}


def _torch():
    import torch  # noqa: PLC0415

    return torch


def torch_f():
    import torch.nn.functional as F  # noqa: PLC0415, N812

    return F


@pytest.mark.parametrize("name", list(UNARY))
def test_second_derivative_matches_pytorch(device, name):
    f, ft, positive = UNARY[name]
    _compare(device, f, ft, [_pair(device, (3, 4), positive)])


BINARY = {
    "add": lambda x, y: (x + y) * x * y,
    "sub": lambda x, y: (x - y) * x * y,
    "mul": lambda x, y: x * y * y,
    "div": lambda x, y: x / y,
    "broadcast": lambda x, y: x * y.sum(0) + y / x.sum(0),
    "matmul": lambda x, y: (x @ y.transpose(0, 1) @ x).tanh(),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_second_derivative_two_inputs_matches_pytorch(device, name):
    x0 = _pair(device, (3, 4), seed=2)
    y0 = _pair(device, (3, 4), positive=name == "div", seed=3)
    _compare(device, BINARY[name], BINARY[name], [x0, y0])


def test_linear_second_derivative(device):
    """x (2, 3, 4) folded into rows, weight (5, 4), bias (5,): every cross term of the bilinear map."""
    torch = pytest.importorskip("torch")
    arrays = [_pair(device, (2, 3, 4), seed=11), _pair(device, (5, 4), seed=12), _pair(device, (5,), seed=13)]
    f = lambda x, w, b: tg.nn.functional.linear(x, w, b).tanh()  # noqa: E731
    ft = lambda x, w, b: torch.nn.functional.linear(x, w, b).tanh()  # noqa: E731
    _compare(device, f, ft, arrays)


def test_dropout_second_derivative_uses_the_same_mask(device):
    """y = x m s: d/dx sum(y^2) = 2 y m s, and its derivative 2 m s^2 (the forward's mask, constant)."""
    tg.manual_seed(0)
    x = tg.tensor(_pair(device, (50,), seed=14), requires_grad=True, device=device)
    y = tg.nn.functional.dropout(x, p=0.4)
    (g,) = tg.autograd.grad((y * y).sum(), x, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x)
    kept = y.detach().numpy() != 0
    assert 0 < kept.sum() < 50
    np.testing.assert_allclose(h.numpy(), 2 * kept / 0.6**2, **TOL)


def test_matmul_batched_broadcast_second_derivative(device):
    """A batch dim broadcast in the forward is summed back by the engine as recorded ops."""
    x0 = _pair(device, (2, 3, 4), seed=4)
    y0 = _pair(device, (4, 5), seed=5)
    f = lambda x, y: (x @ y).sigmoid()  # noqa: E731
    _compare(device, f, f, [x0, y0])


def test_third_order_tanh_exp(device):
    torch = pytest.importorskip("torch")
    x0 = _pair(device, (5,), seed=6)
    results = []
    for lib in (tg, torch):
        x = tg.tensor(x0, requires_grad=True, device=device) if lib is tg else torch.tensor(x0, requires_grad=True)
        y = (x.tanh() * x.exp()).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x, create_graph=True)
        (g4,) = lib.autograd.grad(g3.sum(), x)
        results.append([g.detach().numpy() for g in (g1, g2, g3, g4)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")  # PyTorch's note on the cycle
def test_backward_create_graph_grad_is_in_the_graph_and_accumulates_out_of_place(device):
    torch = pytest.importorskip("torch")
    x0 = _pair(device, (4,), seed=7)
    seen = []
    for lib in (tg, torch):
        x = tg.tensor(x0, requires_grad=True, device=device) if lib is tg else torch.tensor(x0, requires_grad=True)
        (x**3).sum().backward(create_graph=True)
        first = x.grad
        assert first.requires_grad and first.grad_fn is not None
        (x * x).sum().backward(create_graph=True)  # accumulates: a new tensor, the old one untouched
        assert x.grad is not first
        np.testing.assert_allclose(first.detach().numpy(), 3 * x0**2, **TOL)
        (h,) = lib.autograd.grad(x.grad.sum(), x)  # d/dx sum(3x^2 + 2x) = 6x + 2
        seen.append((x.grad.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(seen[0][0], seen[1][0], **TOL)
    np.testing.assert_allclose(seen[0][1], seen[1][1], **TOL)


def test_create_graph_retains_the_graph_by_default():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(create_graph=True)
    y.backward(create_graph=True)  # retain_graph defaults to create_graph, as in PyTorch
    assert x.grad.tolist() == [4.0, 8.0]
    z = (x * x).sum()
    tg.autograd.grad(z, x, create_graph=True)
    tg.autograd.grad(z, x)  # the graph is still there
    with pytest.raises(RuntimeError, match="second time"):
        tg.autograd.grad(z, x)


def test_grad_outputs_that_require_grad_stay_in_the_graph():
    """The double-backward trick: a gradient is linear in grad_outputs, and differentiable in them."""
    torch = pytest.importorskip("torch")
    x0, u0 = _pair("cpu", (3,), seed=8), _pair("cpu", (3,), seed=9)
    out = []
    for lib in (tg, torch):
        x = lib.tensor(x0, requires_grad=True)
        u = lib.tensor(u0, requires_grad=True)
        y = x.tanh()
        (g,) = lib.autograd.grad(y, x, grad_outputs=u, create_graph=True)
        (du,) = lib.autograd.grad((g * g).sum(), u)
        out.append(du.numpy())
    np.testing.assert_allclose(out[0], out[1], **TOL)


def test_hooks_receive_tensors_in_the_graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    got = []
    h.register_hook(lambda g: got.append(g) or g * 2)
    (h * x).sum().backward(create_graph=True)  # h's gradient x, doubled: 2x * dh/dx (2x) + h = 5x^2
    assert got[0].tolist() == [1.0, 2.0] and got[0].requires_grad  # a Tensor in the graph
    assert x.grad.tolist() == [5.0, 20.0]
    assert x.grad.requires_grad


class _Square(Function):
    """An op on raw arrays without a Tensor-level formula (as a user's raw-array op may be)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, g):
        (x,) = self.saved
        return 2 * g * x


def test_op_without_formula_raises_lazily_naming_it(device):
    x = tg.tensor([0.5, 1.0], dtype=tg.float64, requires_grad=True, device=device)
    (g,) = tg.autograd.grad(_Square.apply(x).sum(), x, create_graph=True)  # the first pass runs
    np.testing.assert_allclose(g.detach().numpy(), [1.0, 2.0], **TOL)
    assert g.requires_grad  # never a silently constant gradient
    with pytest.raises(RuntimeError, match="double backward is not implemented for _SquareBackward0: its backward"):
        tg.autograd.grad(g.sum(), x)
    y = tg.tensor([0.5, 1.0], dtype=tg.float64, requires_grad=True, device=device)
    (h,) = tg.autograd.grad((_Square.apply(y) + y.tanh()).sum(), y, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward is not implemented for _SquareBackward0"):
        h.sum().backward()
    (u,) = tg.autograd.grad((_Square.apply(y) * 1.0).sum(), y, create_graph=True)
    u.sum()  # a gradient that is never differentiated again needs no formula: nothing raises


def test_op_without_formula_on_a_view_written_later_raises_its_own_error(device):
    """The no-formula gradient reads the op's inputs as the op saw them: a view the op read,
    whose base an in-place write changed after the op, is not a stale view (the op's epoch)."""

    class Triple(Function):  # saves nothing: the write does not touch what its backward reads
        def forward(self, x):
            return x * 3

        def backward(self, g):
            return g * 3

    x = tg.tensor([[0.5, 1.0], [1.5, 2.0]], dtype=tg.float64, requires_grad=True, device=device)
    y = x * 1
    z = Triple.apply(y[0])  # reads the view before the write
    y.mul_(2)  # a recorded in-place write into the viewed tensor, after the op
    (g,) = tg.autograd.grad((z * z).sum() + y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[11.0, 20.0], [2.0, 2.0]], **TOL)
    with pytest.raises(RuntimeError, match="double backward is not implemented for TripleBackward0"):
        tg.autograd.grad(g.sum(), x)


def test_op_reason_for_no_formula_is_in_the_error():
    class Opaque(_Square):
        double_backward_reason = "it is opaque"

    x = tg.tensor([0.5], dtype=tg.float64, requires_grad=True)
    (g,) = tg.autograd.grad(Opaque.apply(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="not implemented for OpaqueBackward0: it is opaque"):
        g.backward()


def test_kernel_op_uses_its_reference_formula():
    """On the CPU path the softmax along the last dim is a kernel op: it subclasses (`replaces`) the
    reference op, whose `backward_graph` it inherits."""
    from tensorgrad.ops.softmax import Softmax

    previous = tg.kernels.mode()
    tg.kernels.use("kernels")
    try:
        x = tg.tensor(_pair("cpu", (2, 3)), requires_grad=True)
        y = x.softmax(-1)
        assert type(y.grad_fn) is not Softmax and type(y.grad_fn).replaces is Softmax
        assert type(y.grad_fn).backward_graph is Softmax.backward_graph
    finally:
        tg.kernels.use(previous)


def test_first_order_unchanged_without_create_graph(device):
    x0 = _pair(device, (3, 4), seed=10)
    x = tg.tensor(x0, requires_grad=True, device=device)
    (g,) = tg.autograd.grad((x.tanh() * x.exp()).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
    t = np.tanh(x0)
    np.testing.assert_allclose(g.numpy(), (1 - t * t) * np.exp(x0) + t * np.exp(x0), **TOL)
    (x.tanh() * x.exp()).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    np.testing.assert_allclose(x.grad.numpy(), g.numpy(), rtol=0, atol=0)


def test_custom_function_backward_is_recorded_under_create_graph():
    """A Function written in PyTorch's form: its backward runs on Tensors, recorded in the graph."""
    torch = pytest.importorskip("torch")
    out = []
    for lib in (tg, torch):

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * g * x * x

        x = lib.tensor([0.5, -2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)  # 6x
        out.append(h.numpy())
    np.testing.assert_allclose(out[0], out[1], **TOL)


def test_cast_second_derivative(device):
    """A float32 input used in float64: the gradient is cast back by a recorded Cast."""
    x = tg.tensor([0.5, -1.5], dtype=tg.float32, requires_grad=True, device=device)
    (g,) = tg.autograd.grad((x.double() ** 3).sum(), x, create_graph=True)
    assert g.dtype == tg.float32
    (h,) = tg.autograd.grad(g.sum(), x)  # 6x
    np.testing.assert_allclose(h.numpy(), [3.0, -9.0], rtol=1e-6)  # float32 values


def test_layer_norm_second_derivative(device):
    torch = pytest.importorskip("torch")
    arrays = [_pair(device, (2, 3, 4), seed=15), _pair(device, (3, 4), seed=16), _pair(device, (3, 4), seed=17)]
    f = lambda x, w, b: tg.nn.functional.layer_norm(x, (3, 4), w, b, eps=1e-3)  # noqa: E731
    ft = lambda x, w, b: torch.nn.functional.layer_norm(x, (3, 4), w, b, eps=1e-3)  # noqa: E731
    _compare(device, f, ft, arrays)
    g = lambda x: tg.nn.functional.layer_norm(x, (4,))  # noqa: E731
    gt = lambda x: torch.nn.functional.layer_norm(x, (4,))  # noqa: E731
    _compare(device, g, gt, arrays[:1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_second_derivative(device, reduction):
    torch = pytest.importorskip("torch")
    t = [2, 0, -100, 1, 2]  # one row ignored
    f = lambda x: tg.nn.functional.cross_entropy(x, tg.tensor(t, device=device), reduction=reduction)  # noqa: E731
    ft = lambda x: torch.nn.functional.cross_entropy(x, torch.tensor(t), reduction=reduction)  # noqa: E731
    _compare(device, f, ft, [_pair(device, (5, 3), seed=18)])


def test_embedding_second_derivative(device):
    torch = pytest.importorskip("torch")
    ids = [[0, 2, 2], [3, 0, 1]]
    f = lambda w: tg.nn.functional.embedding(tg.tensor(ids, device=device), w).tanh()  # noqa: E731
    ft = lambda w: torch.nn.functional.embedding(torch.tensor(ids), w).tanh()  # noqa: E731
    _compare(device, f, ft, [_pair(device, (4, 5), seed=19)])


@pytest.mark.parametrize("causal", [False, True])
def test_attention_second_derivative(device, causal):
    torch = pytest.importorskip("torch")
    arrays = [_pair(device, (2, 3, 4), seed=20), _pair(device, (2, 5, 4), seed=21), _pair(device, (2, 5, 3), seed=22)]
    if causal:
        arrays[1], arrays[2] = arrays[1][:, :3], arrays[2][:, :3]
    f = lambda q, k, v: tg.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
    ft = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
    _compare(device, f, ft, arrays)


def test_packed_self_attention_second_derivative(device):
    torch = pytest.importorskip("torch")
    B, T, H, d = 2, 3, 2, 2

    def ft(qkv):
        q, k, v = qkv.view(B, T, 3, H, d).permute(2, 0, 3, 1, 4)
        # written out: PyTorch's fused CPU attention has no double backward
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        scores = (q @ k.transpose(-1, -2) * d**-0.5).masked_fill(~causal, float("-inf"))
        out = scores.softmax(-1) @ v
        return out.transpose(1, 2).reshape(B, T, H * d)

    f = lambda qkv: tg.nn.functional.packed_self_attention(qkv, H, is_causal=True)  # noqa: E731
    _compare(device, f, ft, [_pair(device, (B, T, 3 * H * d), seed=23)])


def test_attention_kernel_with_dropout_raises_lazily_with_its_reason():
    previous = tg.kernels.mode()
    tg.kernels.use("kernels")
    try:
        q = tg.tensor(_pair("cpu", (1, 3, 2), seed=24), requires_grad=True)
        out = tg.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
        (g,) = tg.autograd.grad(out.sum(), q, create_graph=True)
        with pytest.raises(
            RuntimeError, match="not implemented for ScaledDotProductAttentionBackward0: the attention kernel"
        ):
            g.sum().backward()
    finally:
        tg.kernels.use(previous)


def test_packed_attention_with_dropout_kernel_matches_reference():
    """The CPU's fused packed attention draws the reference's dropout masks from a seed: its
    formula (the mask from its own saved layout) gives the reference's second derivative."""
    qkv0 = _pair("cpu", (2, 3, 12), seed=25)
    results = []
    previous = tg.kernels.mode()
    try:
        for mode in ("kernels", "reference"):
            tg.kernels.use(mode)
            tg.manual_seed(3)
            qkv = tg.tensor(qkv0, requires_grad=True)
            out = tg.nn.functional.packed_self_attention(qkv, 2, dropout_p=0.3, is_causal=True)
            (g,) = tg.autograd.grad((out * out).sum(), qkv, create_graph=True)
            (h,) = tg.autograd.grad((g * g).sum(), qkv)
            results.append((g.detach().numpy(), h.numpy()))
    finally:
        tg.kernels.use(previous)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **TOL)
    assert np.any(results[0][1])


@pytest.mark.parametrize("case", ["std-constant-row", "var-no-dof", "std-no-dof"])
def test_create_graph_gradients_equal_the_first_order_ones_at_the_edges(case, device):
    """The Tensor-level formulas give the array backward's values where it takes PyTorch's
    conventions: std's gradient 0 on a constant row, var's +-inf/nan and std's nan at N <= c."""
    data = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    fn = {
        "std-constant-row": lambda x: x.std(dim=1).sum(),
        "var-no-dof": lambda x: x.var(dim=1, correction=3).sum(),
        "std-no-dof": lambda x: x.std(dim=1, correction=3).sum(),
    }[case]
    grads = []
    for create_graph in (False, True):
        x = tg.tensor(data, requires_grad=True, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PyTorch's warning for N <= c
            (g,) = tg.autograd.grad(fn(x), x, create_graph=create_graph)
        grads.append(g.detach().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])  # the same values (nan and inf in the same places)


# ------------------------------------------------------------------ the pointwise activations
def _F(lib):
    return tg.nn.functional if lib is tg else _torch().nn.functional


F = tg.nn.functional

# name: f(lib, x), applied to 3x (every branch of the piecewise ones is hit) and multiplied by x,
# so that a linear piece still has a second derivative (through d(dx)/dg).
ACTIVATIONS = {
    "softplus": lambda lib, x: _F(lib).softplus(x, beta=2.0, threshold=3.0),
    "softplus_default": lambda lib, x: _F(lib).softplus(x),
    "hardtanh": lambda lib, x: _F(lib).hardtanh(x, -1.5, 2.0),
    "relu6": lambda lib, x: _F(lib).relu6(x),
    # PyTorch has no double backward for hardsigmoid: its composite form (the same between the kinks)
    "hardsigmoid": lambda lib, x: _F(lib).hardsigmoid(x) if lib is tg else (x / 6 + 0.5).clamp(0, 1),
    "softsign": lambda lib, x: _F(lib).softsign(x),
    "elu": lambda lib, x: _F(lib).elu(x, alpha=1.3),
    # PyTorch's celu gradient is off by ~1e-9 relative in float64 (exp(x / alpha) 0.4037336098774633,
    # its backward 0.4037336105168888 at x = -0.6349): compared with its composite form instead
    "celu": lambda lib, x: (
        _F(lib).celu(x, alpha=0.7) if lib is tg else _torch().where(x > 0, x, 0.7 * (x / 0.7).expm1())
    ),
    "leaky_relu": lambda lib, x: _F(lib).leaky_relu(x, 0.2),
    "mish": lambda lib, x: _F(lib).mish(x),
    "selu": lambda lib, x: _F(lib).selu(x),
    "logsigmoid": lambda lib, x: _F(lib).logsigmoid(x),
    "hardswish": lambda lib, x: _F(lib).hardswish(x),
    "hardshrink": lambda lib, x: _F(lib).hardshrink(x, 1.0),
    "softshrink": lambda lib, x: _F(lib).softshrink(x, 1.0),
    "tanhshrink": lambda lib, x: _F(lib).tanhshrink(x),
    "threshold": lambda lib, x: _F(lib).threshold(x, 0.5, -2.0),
    "glu": lambda lib, x: lib.cat([_F(lib).glu(x, 1)] * 2, 1),
    "glu_first": lambda lib, x: lib.cat([_F(lib).glu(x, 0)] * 2, 0),
    "rrelu_eval": lambda lib, x: _F(lib).rrelu(x, 0.1, 0.3, training=False),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_second_derivative_matches_pytorch(device, name):
    act = ACTIVATIONS[name]
    f = lambda x: act(tg, 3 * x) * x  # noqa: E731
    ft = lambda x: act(_torch(), 3 * x) * x  # noqa: E731
    _compare(device, f, ft, [_pair(device, (4, 4), seed=30)])


def test_prelu_second_derivative(device):
    torch = pytest.importorskip("torch")
    f = lambda x, w: tg.nn.functional.prelu(x, w) * x  # noqa: E731
    ft = lambda x, w: torch.nn.functional.prelu(x, w) * x  # noqa: E731
    _compare(device, f, ft, [_pair(device, (2, 3, 4), seed=31), _pair(device, (3,), seed=32)])
    _compare(device, f, ft, [_pair(device, (2, 3, 4), seed=31), _pair(device, (1,), seed=33)])


def test_rrelu_training_second_derivative_uses_the_forward_slopes(device):
    """y = a x with the drawn slopes a: d/dx sum(y^2 x) = 3 a^2 x^2... through the formula, whose
    slopes are the forward's (a constant): d^2/dx^2 sum(y^2) = 2 a^2."""
    tg.manual_seed(0)
    x = tg.tensor(_pair(device, (20,), seed=34), requires_grad=True, device=device)
    y = tg.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    (g,) = tg.autograd.grad((y * y).sum(), x, create_graph=True)
    (h,) = tg.autograd.grad(g.sum(), x)
    a = y.detach().numpy() / x.detach().numpy()
    assert np.any(a < 1)
    np.testing.assert_allclose(h.numpy(), 2 * a * a, **TOL)


# ------------------------------------------------------------------ arithmetic and elementary rest
# name: (f(lib, *xs), number of inputs); a piecewise-linear f is multiplied by its inputs, so that
# its gradient's own derivative (in g) shows.
POINTWISE = {
    "fmod": (lambda lib, x, y: x.fmod(y) * x * y, 2),
    "remainder": (lambda lib, x, y: x.remainder(y) * x * y, 2),
    "copysign": (lambda lib, x, y: x.copysign(y) * x * y, 2),
    "frac": (lambda lib, x: (3 * x).frac() * x, 1),
    "nan_to_num": (lambda lib, x: x.nan_to_num() * x, 1),
    "atan2": (lambda lib, y, x: y.atan2(x), 2),
    "hypot": (lambda lib, x, y: x.hypot(y), 2),
    "logaddexp": (lambda lib, x, y: x.logaddexp(y), 2),
    "logaddexp2": (lambda lib, x, y: x.logaddexp2(y), 2),
    "lerp": (lambda lib, x, y, w: x.lerp(y, w) * x, 3),
    "lerp_number": (lambda lib, x, y: x.lerp(y, 0.7) * x * y, 2),
    "fmax": (lambda lib, x, y: x.fmax(y) * x * y, 2),
    "fmin": (lambda lib, x, y: x.fmin(y) * x * y, 2),
    "nextafter": (lambda lib, x, y: x.nextafter(y) * x * y, 2),
    "ldexp": (lambda lib, x, n: x.ldexp(n) * x, 2),
    # non-negative integer exponents: PyTorch's ldexp gradient takes 2^n in integers (0 for n < 0)
    "ldexp_int": (lambda lib, x: x.ldexp(lib.tensor([[1, 2, 3, 0]] * 4).to(x.device)) * x, 1),
    "piecewise": (lambda lib, x, y: (x.floor() + x.sign() + x.round() + x.div(y, rounding_mode="floor")) * x * y, 2),
    "sinc": (lambda lib, x: x.sinc(), 1),
    "deg2rad": (lambda lib, x: x.deg2rad() * x.rad2deg(), 1),
    "logit": (lambda lib, x: x.sigmoid().logit(), 1),
    "logit_eps": (lambda lib, x: x.sigmoid().logit(eps=0.2), 1),
}


@pytest.mark.parametrize("name", list(POINTWISE))
def test_pointwise_second_derivative_matches_pytorch(device, name):
    fn, n = POINTWISE[name]
    f = lambda *xs: fn(tg, *xs)  # noqa: E731
    ft = lambda *xs: fn(_torch(), *xs)  # noqa: E731
    _compare(device, f, ft, [_pair(device, (4, 4), seed=40 + i) for i in range(n)])


_EDGES = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0, -3.0, 0.5, -0.5, 1.0, -1.0, 1e200, -1e200, 25.0, 1e-170, 0.7]
)
_EDGES_Y = np.array([0.0, np.inf, 1.0, 0.0, -0.0, 3.0, np.nan, -0.5, 0.5, -np.inf, 2.0, 1e200, 0.0, 25.0, 1e-170, -0.2])


def _in_tg(fn):
    return lambda *xs: fn(tg, *xs)


def _scatter_reduce_edges(reduce, include_self):
    def f(x, y):
        index = tg.tensor([[0, 2, 0], [3, 3, 1], [1, 1, 1], [2, 0, 2]], device=x.device)
        src = (y.nan_to_num(posinf=2.0, neginf=-3.0).clamp(-2, 2) * (y > 0.6).to(y.dtype)).reshape(4, 4)
        return x.reshape(4, 4).scatter_reduce(1, index, src, reduce, include_self=include_self).reshape(16)

    return f


def _inplace_edges(x, y):
    z = x * 1
    z += y
    z -= x
    z *= 2.0
    z /= 3.0
    z.clamp_(-1.0, 1.0)
    z[2:5] = y[:3]
    z.masked_fill_(y.detach() > 2, 0.0)
    return z * x


def _norm_edges(o):
    def f(x, y):
        norm = tg.linalg.vector_norm
        zero = (x * y).clamp(0, 0).reshape(4, 4)
        out = norm(x.reshape(4, 4), o, 1) + norm(zero, o, 1) + norm(y.reshape(4, 4), o, 0)
        return out.repeat_interleave(4)

    return f


EDGE_OPS = {  # name: (f, number of inputs)
    **{f"act-{name}": (_in_tg(act), 1) for name, act in ACTIVATIONS.items() if "glu" not in name},
    "glu": (lambda x: tg.nn.functional.glu(x, 0), 1),
    "prelu": (lambda x, w: tg.nn.functional.prelu(x, w), 2),
    "rrelu": (lambda x: tg.nn.functional.rrelu(x, 0.1, 0.3, training=True), 1),
    **{name: (_in_tg(fn), n) for name, (fn, n) in POINTWISE.items() if n < 3 and "int" not in name},
    "lerp": (lambda x, y: x.lerp(y, y), 2),
    "ldexp_int": (lambda x: x.ldexp(tg.tensor(np.arange(-8, 8), device=x.device)), 1),
    **{
        f"special-{name}": (fn, 2)
        for name, fn in {
            "erfc": lambda x, y: tg.special.erfc(x),
            "erfinv": lambda x, y: tg.special.erfinv(y),
            "erfcx": lambda x, y: tg.special.erfcx(x),
            "ndtr": lambda x, y: tg.special.ndtr(y),
            "ndtri": lambda x, y: tg.special.ndtri(y),
            "log_ndtr": lambda x, y: tg.special.log_ndtr(x),
            "lgamma": lambda x, y: x.lgamma(),
            "digamma": lambda x, y: tg.special.digamma(y),
            "polygamma": lambda x, y: tg.special.polygamma(2, x) + tg.special.polygamma(1, y),
            "i0": lambda x, y: tg.special.i0(y),
            "i0e": lambda x, y: tg.special.i0e(x),
            "i1": lambda x, y: tg.special.i1(y) + tg.special.i1(x * 1e-17),
            "i1e": lambda x, y: tg.special.i1e(x) + tg.special.i1e(y * 1e-17),
            "entr": lambda x, y: tg.special.entr(y),
            "xlogy": lambda x, y: tg.special.xlogy(x, y),
            "xlog1py": lambda x, y: tg.special.xlog1py(y, x),
        }.items()
    },
    **{f"vector_norm-{o}": (_norm_edges(o), 2) for o in (2, 3.0, 0.5, -1.5, 1, float("inf"), float("-inf"), 0)},
    "cross": (lambda x, y: tg.linalg.cross(x[:15].reshape(5, 3), y[:15].reshape(5, 3)).reshape(15).sum().expand(16), 2),
    "quantile": (
        lambda x, y: (
            x.reshape(4, 4).quantile(y[4:8].nan_to_num().sigmoid(), dim=1).reshape(16)
            + y.reshape(4, 4).nanquantile(x[4:8].nan_to_num().sigmoid(), dim=0).reshape(16)
            + (x * 0 + x.log()).reshape(4, 4).nanquantile(0.4, dim=1, interpolation="midpoint").repeat_interleave(4)
        ),
        2,
    ),
    **{
        f"scatter_reduce-{r}-{inc}": (_scatter_reduce_edges(r, inc), 2)
        for r in ("sum", "prod", "mean", "amax", "amin")
        for inc in (True, False)
    },
    "inplace": (_inplace_edges, 2),
    "logit_raw": (lambda x: x.logit(), 1),
    "logit_raw_eps": (lambda x: x.logit(eps=0.2), 1),
    "sinc_raw": (lambda x: x.sinc(), 1),
    "atan2_raw": (lambda y, x: y.atan2(x), 2),
    "softsign_raw": (lambda x: tg.nn.functional.softsign(x), 1),
    "cumsum": (lambda x: x.cumsum(0), 1),
    "cumprod": (lambda x: x.cumprod(0), 1),
    "cumprod_2d": (lambda x: x.reshape(4, 4).cumprod(1).reshape(16), 1),
    "logcumsumexp": (lambda x: x.logcumsumexp(0), 1),
    "logcumsumexp_2d": (lambda x: x.reshape(4, 4).logcumsumexp(1).reshape(16), 1),
    "prod": (lambda x: x.reshape(4, 4).prod(1).repeat_interleave(4), 1),
    "prod_all": (lambda x: x.prod().expand(16), 1),
    "nanmean": (lambda x: x.reshape(4, 4).nanmean(1, keepdim=True).expand(4, 4).reshape(16), 1),
    "nanmean_all_nan": (lambda x: (x * 0 + x.log()).reshape(4, 4).nanmean(1).repeat_interleave(4), 1),
    "batch_norm": (lambda x: tg.nn.functional.batch_norm(x.reshape(4, 4), None, None, training=True).reshape(16), 1),
    "group_norm_constant": (lambda x: tg.nn.functional.group_norm(x.clamp(2, 2).reshape(2, 2, 4), 2).reshape(16), 1),
    "rms_norm": (lambda x: tg.nn.functional.rms_norm(x.reshape(4, 4), (4,)).reshape(16), 1),
    "rms_norm_zero": (lambda x: tg.nn.functional.rms_norm(x.clamp(0, 0).reshape(4, 4), (4,)).reshape(16), 1),
    **{
        f"loss-{name}": (fn, 2)
        for name, fn in {
            "nll_all_ignored": lambda x, y: (
                F.nll_loss(x.reshape(4, 4), tg.tensor([1] * 4, device=x.device), ignore_index=1) * y
            ),
            "nll_none": lambda x, y: (
                F.nll_loss(
                    x.reshape(4, 4), tg.tensor([0, 3, 1, 1], device=x.device), reduction="none"
                ).repeat_interleave(4)
                * y
            ),
            "bce": lambda x, y: F.binary_cross_entropy(
                x.nan_to_num().sigmoid(), y.nan_to_num().sigmoid(), reduction="none"
            ),
            "bce_weight": lambda x, y: F.binary_cross_entropy(
                x.nan_to_num().sigmoid(), y.nan_to_num().sigmoid(), y.exp()
            ),
            "bce_logits": lambda x, y: F.binary_cross_entropy_with_logits(
                x, y.nan_to_num().sigmoid(), y.abs(), reduction="none", pos_weight=y.detach().nan_to_num().abs()
            ),
            "mse": lambda x, y: F.mse_loss(x, y, reduction="none"),
            "l1": lambda x, y: F.l1_loss(x, y, reduction="none"),
            "huber": lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.5),
            "smooth_l1": lambda x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
            "kl_div": lambda x, y: F.kl_div(x, y, reduction="none"),
            "kl_div_log": lambda x, y: F.kl_div(x, y, reduction="none", log_target=True),
            "normalize": lambda x, y: (
                F.normalize(x.reshape(4, 4), dim=1).reshape(16) + F.normalize(y.reshape(4, 4), dim=0).reshape(16)
            ),
            "normalize_zero": lambda x, y: F.normalize((x * y).clamp(0, 0).reshape(4, 4)).reshape(16),
            "normalize_p": lambda x, y: (
                F.normalize(x.reshape(4, 4), p=3.0) + F.normalize(y.reshape(4, 4), p=0.5)
            ).reshape(16),
            "normalize_p0": lambda x, y: (
                F.normalize(x.reshape(4, 4), p=0.0) + F.normalize(y.reshape(4, 4), p=1.0)
            ).reshape(16),
            "pad": lambda x, y: (
                F.pad(x.reshape(1, 4, 4), (1, -1, 0, 1), value=2.0)[:, :4].reshape(16)
                + F.pad(y.reshape(1, 4, 4), (2, 1), mode="reflect")[..., 1:5].reshape(16)
                + F.pad(x.reshape(1, 1, 4, 4), (1, 1, 1, 1), mode="circular")[..., 1:5, 2:6].reshape(16)
            ),
            "einsum": lambda x, y: (
                tg.einsum("ij,jk->ik", x.reshape(4, 4), y.reshape(4, 4)).reshape(16)
                + tg.einsum("ii->i", x.reshape(4, 4)).repeat_interleave(4)
            ),
            "pool": lambda x, y: (
                F.max_pool2d(x.reshape(1, 1, 4, 4), 3, stride=1, padding=1).reshape(16)
                + F.max_pool2d(y.reshape(1, 1, 4, 4).clamp(0, 1), 2, stride=1, ceil_mode=True).reshape(9).repeat(2)[:16]
                + F.avg_pool2d(x.reshape(1, 1, 4, 4), 3, stride=1, padding=1, count_include_pad=False).reshape(16)
            ),
            "select": lambda x, y: (
                tg.maximum(x, y)
                + tg.minimum(y, x)
                + x.reshape(4, 4).median()
                + y.reshape(4, 4).cummax(1)[0].reshape(16)
                + x.reshape(4, 4).gather(1, tg.tensor([[0, 0, 1, 3]] * 4, device=x.device)).reshape(16)
                + x.reshape(4, 4)
                .scatter(1, tg.tensor([[1], [2], [3], [0]], device=x.device), y.reshape(4, 4))
                .reshape(16)
                + x.reshape(4, 4).repeat(1, 2)[:, :4].reshape(16)
                + x.reshape(4, 4).unfold(1, 2, 1).sum(-1).repeat(1, 2)[:, :4].reshape(16)
            ),
            "pdist": lambda x, y: tg.cat(
                [
                    F.pairwise_distance(x.reshape(4, 4), y.reshape(4, 4), p=p, eps=0)
                    for p in (2.0, 1.0, 3.0, 0.5, 0.0, float("inf"), float("-inf"))
                ]
            ).repeat_interleave(4)[:16],
        }.items()
    },
}


@pytest.mark.parametrize("name", list(EDGE_OPS))
def test_new_formulas_first_order_equals_the_array_backward_at_the_edges(device, name):
    """nan, +-inf, +-0, the kinks (0, +-3, +-lambd, the thresholds), overflow and underflow: the
    create_graph gradients are the array backward's, bit for bit (nan and inf in the same places)."""
    fn, n = EDGE_OPS[name]
    arrays = [_EDGES, _EDGES_Y][:n] if name != "prelu" else [_EDGES, np.array([0.25])]
    w = np.random.default_rng(5).standard_normal(16 // (2 if name == "glu" else 1))
    grads = []
    for create_graph in (False, True):
        xs = [tg.tensor(a, requires_grad=True, device=device) for a in arrays]
        tg.manual_seed(0)  # rrelu: the same slopes in both runs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = (fn(*xs) * tg.tensor(w, device=device)).sum()
            got = tg.autograd.grad(out, xs, create_graph=create_graph, allow_unused=True)
        grads.append([None if g is None else g.detach().numpy() for g in got])
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(b, a)


# ------------------------------------------------------------------ reductions and scans
def _with_zero_and_nan(nan):
    x = _pair("cpu", (3, 4), seed=50)
    x[1, 2] = 0.0  # prod and cumprod: no division, a zero gets its true derivatives
    if nan:
        x[0, 1] = x[2, 1] = np.nan
    return x


SCANS = {
    # name: (f(lib, x), a NaN in the input)
    "cumsum": (lambda lib, x: x.cumsum(1) * x, False),
    "cumsum_first": (lambda lib, x: (x * x).cumsum(0), False),
    "cumprod": (lambda lib, x: x.cumprod(1), False),
    "cumprod_first": (lambda lib, x: x.cumprod(0) * x, False),
    "logcumsumexp": (lambda lib, x: x.logcumsumexp(1), False),
    # times exp(x), not x: at a zero gradient PyTorch's logcumsumexp double backward is nan (the
    # derivative of log|g| at 0 through its where); the formula's is finite (log of a masked 1)
    "logcumsumexp_first": (lambda lib, x: x.logcumsumexp(0) * x.exp(), False),
    "flip": (lambda lib, x: (x * x).flip(0, 1) * x, False),
    "prod_dim": (lambda lib, x: x.prod(1), False),
    "prod_keepdim": (lambda lib, x: x.prod(0, keepdim=True) * x, False),
    "prod_all": (lambda lib, x: x.prod() * x, False),
    "prod_one_zero_row": (lambda lib, x: x[1:2].prod(1), False),
    "nanmean": (lambda lib, x: x.nanmean(1) * x.nan_to_num().sum(), True),
    "nanmean_keepdim": (lambda lib, x: x.nanmean(0, keepdim=True) * x.nan_to_num(), True),
}


@pytest.mark.parametrize("name", list(SCANS))
def test_reduction_and_scan_second_derivative_matches_pytorch(device, name):
    fn, nan = SCANS[name]
    _compare(device, lambda x: fn(tg, x), lambda x: fn(_torch(), x), [_with_zero_and_nan(nan)])


# ------------------------------------------------------------------ normalisations
NORMS = {
    # name: (f(lib, x, w, b), x's shape)
    "batch_norm": (lambda lib, x, w, b: _F(lib).batch_norm(x, None, None, w, b, training=True, eps=1e-3), (4, 3, 2)),
    "instance_norm": (lambda lib, x, w, b: _F(lib).instance_norm(x, weight=w, bias=b, eps=1e-3), (2, 3, 4)),
    "group_norm": (lambda lib, x, w, b: _F(lib).group_norm(x.reshape(2, 3, 2, 2), 3, w, b, eps=1e-3), (2, 3, 4)),
    "rms_norm": (lambda lib, x, w, b: _F(lib).rms_norm(x, (3, 4), eps=1e-3) * (w.sum() + b.sum()), (2, 3, 4)),
    "rms_norm_default_eps": (lambda lib, x, w, b: _F(lib).rms_norm(x, (4,)) * (w.sum() + b.sum()), (2, 3, 4)),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_normalization_second_derivative_matches_pytorch(device, name):
    fn, shape = NORMS[name]
    arrays = [_pair(device, shape, seed=60), _pair(device, (3,), seed=61), _pair(device, (3,), seed=62)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


# ------------------------------------------------------------------ losses and norms
def _ids(lib, ids, like):
    return lib.tensor(ids).to(like.device)


LOSSES = {
    # name: (f(lib, *xs), the inputs' shapes); the loss is multiplied by a function of an input
    # where it is linear in it, so that a second derivative shows
    "nll_mean_weight": (
        lambda lib, x: _F(lib).nll_loss(
            x.log_softmax(1), _ids(lib, [2, 0, 1, 2, 0], x), lib.tensor([0.5, 2.0, 1.5]).to(x), ignore_index=1
        ),
        [(5, 3)],
    ),
    "nll_sum": (lambda lib, x: _F(lib).nll_loss(x, _ids(lib, [2, 0, 1, 2, 0], x), reduction="sum") * x.sum(), [(5, 3)]),
    "nll_none": (
        lambda lib, x: _F(lib).nll_loss(x, _ids(lib, [2, 0, 1, 2, 0], x), reduction="none") * x[:, 0],
        [(5, 3)],
    ),
    # PyTorch's bce takes no gradient for its weight: with one, its composite form
    "bce": (
        lambda lib, x, y, w: (
            _F(lib).binary_cross_entropy(x.sigmoid(), y.sigmoid(), w)
            if lib is tg
            else -(w * (y.sigmoid() * x.sigmoid().log() + (1 - y.sigmoid()) * (1 - x.sigmoid()).log())).mean()
        ),
        [(3, 4), (3, 4), (3, 4)],
    ),
    "bce_no_weight": (
        lambda lib, x, y: _F(lib).binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction="sum"),
        [(3, 4)] * 2,
    ),
    "bce_logits": (
        lambda lib, x, y, w, pw: (
            _F(lib).binary_cross_entropy_with_logits(x, y.sigmoid(), w, pos_weight=pw)
            if lib is tg
            else (w * ((1 - y.sigmoid()) * x + (1 + (pw - 1) * y.sigmoid()) * _F(lib).softplus(-x))).mean()
        ),
        [(3, 4), (3, 4), (3, 4), (4,)],
    ),
    "bce_logits_pos_weight": (
        lambda lib, x, y: _F(lib).binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=y[0].detach().exp()),
        [(3, 4), (3, 4)],
    ),
    "bce_logits_plain": (
        lambda lib, x, y: _F(lib).binary_cross_entropy_with_logits(x, y, reduction="none"),
        [(3, 4)] * 2,
    ),
    "mse": (lambda lib, x, y: _F(lib).mse_loss(x, y) * x.sum(), [(3, 4)] * 2),
    "l1": (lambda lib, x, y: _F(lib).l1_loss(x, y, reduction="none") * x * y, [(3, 4)] * 2),
    "huber": (lambda lib, x, y: _F(lib).huber_loss(x, y, delta=0.8, reduction="none") * x, [(3, 4)] * 2),
    "smooth_l1": (lambda lib, x, y: _F(lib).smooth_l1_loss(x, y, beta=0.5) * x.sum(), [(3, 4)] * 2),
    "kl_div": (lambda lib, x, t: _F(lib).kl_div(x, t.softmax(1), reduction="batchmean") * x.sum(), [(3, 4)] * 2),
    "kl_div_log_target": (
        lambda lib, x, t: _F(lib).kl_div(x, t, reduction="sum", log_target=True) * x.sum(),
        [(3, 4)] * 2,
    ),
    "normalize": (lambda lib, x: _F(lib).normalize(x, dim=1), [(3, 4)]),
    "normalize_p3": (lambda lib, x: _F(lib).normalize(x, p=3.0, dim=0), [(3, 4)]),
    "normalize_p1": (lambda lib, x: _F(lib).normalize(x, p=1.0, dim=1) * x, [(3, 4)]),
    "normalize_eps": (lambda lib, x: _F(lib).normalize(x * 1e-3, dim=1, eps=5e-3), [(3, 4)]),
    "pairwise_distance": (lambda lib, x, y: _F(lib).pairwise_distance(x, y), [(3, 4)] * 2),
    "pairwise_distance_p3": (lambda lib, x, y: _F(lib).pairwise_distance(x, y, p=3.0, keepdim=True) * x, [(3, 4)] * 2),
    "pairwise_distance_p1": (lambda lib, x, y: _F(lib).pairwise_distance(x, y, p=1.0) * x.sum(1), [(3, 4)] * 2),
    "pairwise_distance_inf": (
        lambda lib, x, y: _F(lib).pairwise_distance(x, y, p=float("inf")) * x.sum(1),
        [(3, 4)] * 2,
    ),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_second_derivative_matches_pytorch(device, name):
    fn, shapes = LOSSES[name]
    arrays = [_pair(device, s, seed=70 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


# ------------------------------------------------------------------ pad and einsum
PADS = {
    # name: (f(lib, *xs), the inputs' shapes)
    "pad_constant": (
        lambda lib, x: _F(lib).pad(x * x, (1, 2, 0, 1), value=0.5) * _F(lib).pad(x, (1, 2, 0, 1)),
        [(2, 3, 4)],
    ),
    "pad_crop": (lambda lib, x: _F(lib).pad(x * x, (-1, 2, 1, -1)) * _F(lib).pad(x, (-1, 2, 1, -1)), [(2, 3, 4)]),
    "pad_reflect": (
        lambda lib, x: _F(lib).pad(x * x, (2, 1, 1, 2), mode="reflect") * _F(lib).pad(x, (2, 1, 1, 2), mode="reflect"),
        [(1, 3, 4)],
    ),
    "pad_replicate": (
        lambda lib, x: _F(lib).pad(x * x, (2, 3), mode="replicate") * _F(lib).pad(x, (2, 3), mode="replicate"),
        [(2, 3, 4)],
    ),
    "pad_circular": (
        lambda lib, x: (
            _F(lib).pad(x * x, (2, 1, 1, 2), mode="circular") * _F(lib).pad(x, (2, 1, 1, 2), mode="circular")
        ),
        [(1, 2, 3, 4)],
    ),
    "einsum_matmul": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b).tanh(), [(3, 4), (4, 2)]),
    "einsum_batched": (
        lambda lib, a, b: lib.einsum("bij,bkj->bik", a, b) * lib.einsum("bij->bi", a).sum(),
        [(2, 3, 4), (2, 3, 4)],
    ),
    "einsum_diagonal": (lambda lib, a: lib.einsum("ii->i", a * a) * lib.einsum("ii", a), [(4, 4)]),
    "einsum_three": (lambda lib, a, b, c: lib.einsum("ij,jk,k->i", a, b, c).exp(), [(3, 4), (4, 2), (2,)]),
    "einsum_broadcast": (lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b).sin(), [(2, 1, 3, 4), (3, 4, 2)]),
    "einsum_outer": (lambda lib, a, b: lib.einsum("i,j->ij", a, b) ** 2, [(3,), (4,)]),
}


@pytest.mark.parametrize("name", list(PADS))
def test_pad_and_einsum_second_derivative_matches_pytorch(device, name):
    fn, shapes = PADS[name]
    arrays = [_pair(device, s, seed=80 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


POOLS = {
    # name: f(lib, x) on (2, 2, 5, 6); x * x pooled, times a pooling of x: the second derivative
    # goes through the pooling's backward (d(dx)/dg) both ways
    "max_pool": lambda lib, x: _F(lib).max_pool2d(x * x, 2) * _F(lib).max_pool2d(x, 2),
    "max_pool_overlap": lambda lib, x: _F(lib).max_pool2d(x * x, 3, stride=1, padding=1) * x,
    "max_pool_dilation_ceil": lambda lib, x: (
        _F(lib).max_pool2d(x.sin(), 2, stride=2, dilation=2, ceil_mode=True)
        * _F(lib).max_pool2d(x, 2, stride=2, dilation=2, ceil_mode=True)
    ),
    "max_pool1d": lambda lib, x: _F(lib).max_pool1d(x.reshape(4, 5, 6) ** 3, 3, stride=2),
    "avg_pool": lambda lib, x: _F(lib).avg_pool2d(x * x, 2) * _F(lib).avg_pool2d(x, 2),
    "avg_pool_overlap": lambda lib, x: _F(lib).avg_pool2d(x * x, 3, stride=1, padding=1, count_include_pad=False) * x,
    "avg_pool_ceil_override": lambda lib, x: (
        _F(lib).avg_pool2d(x.exp(), 3, stride=2, ceil_mode=True, divisor_override=4)
        * _F(lib).avg_pool2d(x, 3, stride=2, ceil_mode=True, count_include_pad=False)
    ),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pool_second_derivative_matches_pytorch(device, name):
    fn = POOLS[name]
    _compare(device, lambda x: fn(tg, x), lambda x: fn(_torch(), x), [_pair(device, (2, 2, 5, 6), seed=90)])


# ------------------------------------------------------------------ indexing, selection, rearranging
def _index(lib, values, like):
    return lib.tensor(values).to(like.device)


SELECTS = {
    # name: (f(lib, *xs), the inputs' shapes); each op is linear in x's values: multiplied by a
    # function of the inputs so that the second derivative shows
    "gather": (
        lambda lib, x: (x * x).gather(1, _index(lib, [[0, 2, 2], [3, 0, 1], [1, 1, 1]], x)) * x[:, :3],
        [(3, 4)],
    ),
    "index_select": (lambda lib, x: (x * x).index_select(0, _index(lib, [2, 0, 2], x)) * x, [(3, 4)]),
    # src larger than index (its leading block is read): PyTorch's double backward of that fails
    # ("ScatterBackward0 returned an invalid gradient"), so it gets the block itself
    "scatter": (
        lambda lib, x, s: (
            x.exp().scatter(1, _index(lib, [[0, 2], [3, 1], [1, 0]], x), s * s if lib is tg else (s * s)[:, :2]) * x
        ),
        [(3, 4), (3, 3)],
    ),
    "scatter_number": (lambda lib, x: (x * x).scatter(0, _index(lib, [[0, 2, 1, 0]], x), 2.0) * x, [(3, 4)]),
    "scatter_add": (
        lambda lib, x, s: (x * x).scatter_add(1, _index(lib, [[0, 0], [3, 1], [1, 1]], x), s.exp()) * x * s.sum(),
        [(3, 4), (3, 2)],
    ),
    "index_put": (
        lambda lib, x, v: (x * x).index_put((_index(lib, [0, 2, 0], x),), v * v, accumulate=True) * x,
        [(3, 4), (4,)],
    ),
    "repeat": (lambda lib, x: (x * x).repeat(2, 1, 2) * x.repeat(2, 1, 2), [(3, 4)]),
    "roll": (lambda lib, x: (x * x).roll((1, -2), (0, 1)) * x + (x * x).roll(3) * x, [(3, 4)]),
    "diagonal": (lambda lib, x: (x * x).diagonal(1, 0, 2) * x.diagonal(1, 0, 2), [(3, 2, 4)]),
    "diag_embed": (lambda lib, x: lib.diag_embed(x * x, -1) * lib.diag_embed(x, -1), [(3, 4)]),
    "unfold": (lambda lib, x: (x * x).unfold(1, 3, 1) * x.unfold(1, 3, 1), [(3, 5)]),
    "take_along_dim": (
        lambda lib, x: lib.take_along_dim(x * x, _index(lib, [[0, 0], [2, 1], [3, 3]], x), 1) * x[:, :2],
        [(3, 4)],
    ),
    "sort_topk_max": (
        lambda lib, x: (x * x).sort(1)[0] * x + (x**3).topk(2, 0)[0].sum() + x.max(1)[0].exp().sum(),
        [(3, 4)],
    ),
    "cummax": (lambda lib, x: (x * x).cummax(1)[0] * x + x.cummin(0)[0] ** 2, [(3, 4)]),
    "median_all": (lambda lib, x: (x * x).median() * x, [(3, 4)]),
    "maximum": (lambda lib, x, y: lib.maximum(x * x, y) * x * y + lib.minimum(x, y * y) * x, [(3, 4), (3, 4)]),
    "maximum_ties": (lambda lib, x: lib.maximum(x * x, x.detach() ** 2) * x + lib.minimum(x, x.detach()) * x, [(3, 4)]),
}


@pytest.mark.parametrize("name", list(SELECTS))
def test_selection_second_derivative_matches_pytorch(device, name):
    fn, shapes = SELECTS[name]
    arrays = [_pair(device, s, seed=100 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


# ------------------------------------------------------------------ special functions
def _sp(lib):
    return tg.special if lib is tg else _torch().special


SPECIALS = {
    # name: (f(lib, *xs), number of inputs); inputs mapped into each domain by ops with formulas
    "erfc": (lambda lib, x: _sp(lib).erfc(x), 1),
    "erfinv": (lambda lib, x: _sp(lib).erfinv(x.tanh() * 0.9), 1),
    "erfcx": (lambda lib, x: _sp(lib).erfcx(x), 1),
    "ndtr": (lambda lib, x: _sp(lib).ndtr(x), 1),
    "ndtri": (lambda lib, x: _sp(lib).ndtri(x.sigmoid()), 1),
    "log_ndtr": (lambda lib, x: _sp(lib).log_ndtr(3 * x), 1),
    "lgamma": (lambda lib, x: (x * x + 0.2).lgamma(), 1),
    "digamma": (lambda lib, x: _sp(lib).digamma(x * x + 0.2), 1),
    "polygamma": (lambda lib, x: _sp(lib).polygamma(2, x * x + 0.2) + (x * x + 0.3).polygamma(1), 1),
    "i0": (lambda lib, x: _sp(lib).i0(x), 1),
    "i0e": (lambda lib, x: _sp(lib).i0e(x), 1),
    "i1": (lambda lib, x: _sp(lib).i1(x), 1),
    "i1e": (lambda lib, x: _sp(lib).i1e(x), 1),
    "entr": (lambda lib, x: _sp(lib).entr(x.exp()), 1),
    "xlogy": (lambda lib, x, y: _sp(lib).xlogy(x, y.exp()) * x, 2),
    "xlog1py": (lambda lib, x, y: _sp(lib).xlog1py(x, y.exp()) * x, 2),
}


@pytest.mark.parametrize("name", list(SPECIALS))
def test_special_second_derivative_matches_pytorch(device, name):
    fn, n = SPECIALS[name]
    arrays = [_pair(device, (3, 4), seed=110 + i) for i in range(n)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


# ------------------------------------------------------------------ linalg
def _la(lib):
    return tg.linalg if lib is tg else _torch().linalg


def _norm_case(o, d):
    return lambda lib, x: _la(lib).vector_norm(x, o, d) * x.sum() + _la(lib).vector_norm(x * x, o)


LINALG = {
    # name: (f(lib, *xs), the inputs' shapes)
    "cross": (lambda lib, a, b: _la(lib).cross(a * a, b, dim=1) * a, [(2, 3, 4), (2, 3, 4)]),
    "cross_broadcast": (lambda lib, a, b: _la(lib).cross(a, b * b).exp(), [(2, 3), (1, 3)]),
    **{
        f"vector_norm_{name}": (_norm_case(o, d), [(3, 4)])
        for name, o, d in [
            ("2", 2, 1),
            ("3", 3.0, (0, 1)),
            ("half", 0.5, 0),
            ("neg", -1.5, 1),
            ("1", 1, 1),
            ("inf", float("inf"), 1),
            ("ninf", float("-inf"), 0),
            ("0", 0, 1),
        ]
    },  # fmt: skip
    "vector_norm_one_element": (lambda lib, x: _la(lib).vector_norm(x[:, :1], 3.0, 1) * x[:, 0], [(3, 4)]),
}


@pytest.mark.parametrize("name", list(LINALG))
def test_linalg_second_derivative_matches_pytorch(device, name):
    fn, shapes = LINALG[name]
    arrays = [_pair(device, s, seed=120 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


# ------------------------------------------------------------------ convolutions
CONVS = {
    # name: (f(lib, x, w, b), shapes of x, w, b)
    "conv2d": (lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding=1).tanh(), [(2, 2, 5, 4), (3, 2, 3, 2), (3,)]),
    "conv2d_stride_groups": (
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b, stride=2, dilation=(1, 2), groups=2) ** 2,
        [(2, 4, 6, 7), (2, 2, 2, 2), (2,)],
    ),
    # "same" with an even kernel: asymmetric padding
    "conv2d_same": (
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding="same").sin(),
        [(1, 2, 4, 5), (2, 2, 2, 3), (2,)],
    ),
    "conv1d": (lambda lib, x, w, b: _F(lib).conv1d(x, w, b, stride=2).exp(), [(2, 2, 7), (3, 2, 3), (3,)]),
    "conv_transpose2d": (
        lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1).tanh(),
        [(2, 2, 3, 4), (2, 3, 3, 2), (3,)],
    ),
    "conv_transpose2d_groups": (
        lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, groups=2, dilation=2) ** 2,
        [(1, 4, 3, 3), (4, 1, 2, 2), (2,)],
    ),
    # output_padding at least the stride (allowed: below the dilation): the convolution of dy over
    # the full output has more positions than the input
    "conv_transpose2d_output_padding_past_stride": (
        lambda lib, x, w, b: _F(lib).conv_transpose2d(
            x, w, b, stride=(3, 2), padding=(1, 2), output_padding=(2, 3), groups=2, dilation=4
        ).tanh(),
        [(2, 2, 4, 4), (2, 2, 4, 5), (4,)],
    ),
    "unfold": (
        lambda lib, x, w, b: _F(lib).unfold(x * x, (2, 3), padding=1, stride=(1, 2)) ** 2 * (w.sum() + b.sum()),
        [(2, 2, 4, 5), (1,), (1,)],
    ),
}


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")  # PyTorch notes a copy
@pytest.mark.parametrize("name", list(CONVS))
def test_conv_second_derivative_matches_pytorch(device, name):
    fn, shapes = CONVS[name]
    arrays = [_pair(device, s, seed=130 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


@pytest.mark.parametrize("name", list(CONVS))
def test_conv_create_graph_first_order_is_the_array_backward_bit_for_bit(device, name):
    """The formulas run the array backward's products in its order (a transposed convolution for
    dx, per-group 2-d products for dW): the same values, not just close ones."""
    fn, shapes = CONVS[name]
    arrays = [_pair(device, s, seed=140 + i) for i, s in enumerate(shapes)]
    grads = []
    for create_graph in (False, True):
        xs = [tg.tensor(a, requires_grad=True, device=device) for a in arrays]
        got = tg.autograd.grad(fn(tg, *xs).sum(), xs, create_graph=create_graph)
        grads.append([g.detach().numpy() for g in got])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(b, a)


QUANTILES = {
    # name: (f(lib, x, q), q's shape or None for a number)
    "quantile_linear": (
        lambda lib, x, q: x.quantile(q.sigmoid(), dim=1) * x.sum() + (x * x).quantile(q.sigmoid()).sum(),
        (3,),
    ),
    "quantile_scalar_q": (lambda lib, x, q: (x * x).quantile(q.sigmoid(), dim=0, keepdim=True) * x, ()),
    "quantile_midpoint": (lambda lib, x, q: x.quantile(0.3, dim=1, interpolation="midpoint") * x.sum(), None),
    "quantile_lower": (lambda lib, x, q: (x**3).quantile(0.6, dim=0, interpolation="lower") * x, None),
    "nanquantile": (lambda lib, x, q: x.nanquantile(q.sigmoid(), dim=1) * x.nan_to_num().sum(), (2,)),
    "median_dim": (lambda lib, x, q: (x * x).median(1)[0] * x.sum(1), None),
}


@pytest.mark.parametrize("name", list(QUANTILES))
def test_quantile_second_derivative_matches_pytorch(device, name):
    fn, q_shape = QUANTILES[name]
    x = _pair(device, (3, 4), seed=150)
    if name == "nanquantile":
        x[0, 1] = x[2, 3] = np.nan
    if q_shape is None:
        _compare(device, lambda x: fn(tg, x, None), lambda x: fn(_torch(), x, None), [x])
    else:
        arrays = [x, _pair(device, q_shape, seed=151)]
        _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_second_derivative_matches_pytorch(device, reduce, include_self):
    def fn(lib, x, s):
        index = _index(lib, [[0, 2, 0], [3, 3, 1], [1, 1, 1]], x)
        out = (x * x).scatter_reduce(1, index, s * s if reduce == "prod" else s, reduce, include_self=include_self)
        return out * x

    arrays = [_pair(device, (3, 4), seed=160), _pair(device, (3, 3), seed=161)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_with_zeros_second_derivative_matches_pytorch(device, include_self):
    """Groups with zero members: the product of the others of a nonzero member is 0 there, but its
    derivative with respect to the zero member is not (PyTorch's second derivative has it).  At
    most one zero of src per group: PyTorch refuses the double backward for src beyond that."""
    index = [[0, 2, 0], [3, 3, 1], [1, 1, 1]]

    def fn(lib, x, s):
        return x.scatter_reduce(1, _index(lib, index, x), s, "prod", include_self=include_self) * x

    x = _pair(device, (3, 4), seed=162)
    s = _pair(device, (3, 3), seed=163)
    x[0, 0] = s[0, 2] = 0.0  # self and one src zero in a group
    s[1, 0] = 0.0  # one src zero among nonzero members (self included)
    x[2, 1] = 0.0  # self the only zero
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), [x, s])


def test_scatter_reduce_prod_with_several_zeros_in_a_group_gradgradcheck(device):
    """Two and three zeros of src in a group (where PyTorch refuses the double backward for src):
    against central differences of the first derivative (a product is smooth at its zeros)."""
    index = tg.tensor([[0, 0, 0, 1], [2, 2, 3, 2]], device=device)
    s0 = _pair(device, (2, 4), seed=164)
    s0[0, :3] = 0.0
    s0[1, 0] = s0[1, 1] = 0.0
    x = tg.tensor(_pair(device, (2, 4), seed=165), requires_grad=True, device=device)
    s = tg.tensor(s0, requires_grad=True, device=device)
    for include_self in (True, False):
        fn = lambda x, s, inc=include_self: x.scatter_reduce(1, index, s, "prod", include_self=inc)  # noqa: E731
        assert tg.autograd.gradgradcheck(fn, [x, s])


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norm_of_singular_values_second_derivative_matches_pytorch(device, ord):
    fn = lambda lib, a: _la(lib).matrix_norm(a, ord) * a.sum((-1, -2))  # noqa: E731
    _compare(device, lambda a: fn(tg, a), lambda a: fn(_torch(), a), [_pair(device, (2, 3, 4), seed=170)])


def test_nuclear_norm_second_derivative_at_zero_is_nan_without_a_warning(device):
    """The zero matrix: every singular value 0, repeated, so the SVD's backward divides 0 by 0.
    PyTorch's second derivative is NaN there, silently; so is ours (no RuntimeWarning)."""
    torch = pytest.importorskip("torch")
    x = tg.tensor(np.zeros((3, 3)), requires_grad=True, device=device)
    v = tg.tensor(0.7, requires_grad=True, dtype=tg.float64, device=device)
    (g,) = tg.autograd.grad(tg.linalg.norm(x, "nuc"), x, v, create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = tg.autograd.grad(g, [x, v], tg.tensor(np.ones((3, 3)), device=device))
    tx = torch.zeros(3, 3, dtype=torch.float64, requires_grad=True)
    tv = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    (tgrad,) = torch.autograd.grad(torch.linalg.norm(tx, "nuc"), tx, tv, create_graph=True)
    theirs = torch.autograd.grad(tgrad, [tx, tv], torch.ones(3, 3, dtype=torch.float64))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # NaN where PyTorch's is, 3 = trace(I)


def test_matrix_norm_create_graph_first_order_is_the_array_backward(device):
    a0 = _pair(device, (2, 3, 4), seed=171)
    grads = []
    for create_graph in (False, True):
        a = tg.tensor(a0, requires_grad=True, device=device)
        out = sum(tg.linalg.matrix_norm(a, o).sum() for o in ("nuc", 2, -2))
        (g,) = tg.autograd.grad(out, a, create_graph=create_graph)
        grads.append(g.detach().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def _spd(lib, x):
    return x @ x.mT + lib.eye(x.shape[-1], dtype=x.dtype).to(x.device)


DECOMPOSITIONS = {
    # name: (f(lib, *xs), the inputs' shapes); inputs made square / symmetric / SPD by ops with formulas
    "inv": (lambda lib, a: _la(lib).inv(a + 3 * lib.eye(3, dtype=a.dtype).to(a.device)), [(2, 3, 3)]),
    "solve": (lambda lib, a, b: _la(lib).solve(_spd(lib, a), b) * b, [(2, 3, 3), (2, 3, 2)]),
    "solve_triangular": (
        lambda lib, a, b: (
            _la(lib).solve_triangular(_spd(lib, a), b, upper=True) ** 2
            + _la(lib).solve_triangular(_spd(lib, a), b, upper=False, unitriangular=True) * b
        ),
        [(3, 3), (3, 2)],
    ),
    "slogdet": (lambda lib, a: _la(lib).slogdet(a)[1] * a.sum((-1, -2)), [(2, 3, 3)]),
    "det": (lambda lib, a: _la(lib).det(a) * a.sum((-1, -2)) + _la(lib).det(a[0]) ** 2, [(2, 3, 3)]),
    "det_singular": (lambda lib, a: _la(lib).det(a * lib.tensor([1.0, 1.0, 0.0]).to(a)) * a.sum((-1, -2)), [(2, 3, 3)]),
    "svd": (
        lambda lib, a: (
            _la(lib).svd(a, full_matrices=False)[0].abs().sum(-1)
            * _la(lib).svd(a, full_matrices=False)[1].sum(-1, keepdim=True)
            + _la(lib).svd(a, full_matrices=False)[2].abs().sum(-2)[..., :3]
        ),
        [(2, 3, 4)],
    ),
    "svd_tall": (
        lambda lib, a: (
            _la(lib).svd(a, full_matrices=False)[0].abs().sum(-2) + _la(lib).svd(a, full_matrices=False)[1] ** 2
        ),
        [(2, 4, 3)],
    ),
    "cholesky": (lambda lib, a: _la(lib).cholesky(_spd(lib, a)).sin(), [(2, 3, 3)]),
    "eigh": (lambda lib, a: _la(lib).eigh(a + a.mT)[1].abs().sum(-2) * _la(lib).eigh(a + a.mT)[0], [(2, 3, 3)]),
    "eigvalsh": (lambda lib, a: _la(lib).eigvalsh(a + a.mT) ** 3, [(2, 4, 4)]),
    "svdvals": (lambda lib, a: _la(lib).svdvals(a) ** 3, [(2, 3, 4)]),
    "pinv": (lambda lib, a: _la(lib).pinv(a).tanh(), [(2, 4, 3)]),
    "qr_tall": (lambda lib, a: (_la(lib).qr(a)[0].abs() ** 3).sum(-2) * _la(lib).qr(a)[1].abs().sum(-2), [(2, 4, 3)]),
    "qr_wide": (
        lambda lib, a: (_la(lib).qr(a)[0].abs() ** 3).sum(-2) + _la(lib).qr(a)[1].abs().sum(-1) ** 2,
        [(2, 3, 4)],
    ),
    "cholesky_solve": (
        lambda lib, a, b: (
            lib.cholesky_solve(b, _la(lib).cholesky(_spd(lib, a))) * b
            + lib.cholesky_solve(b, _la(lib).cholesky(_spd(lib, a)).mT, upper=True) ** 2
        ),
        [(3, 3), (3, 2)],
    ),
    # The factor as given, its unread triangle not zero: PyTorch's gradient of the factor is
    # (gA + gA^T) L with the input L whole, and its second derivative differentiates that L too.
    "cholesky_solve_whole_factor": (
        lambda lib, a, b: (
            lib.cholesky_solve(b, a + 4 * lib.eye(3, dtype=a.dtype, device=a.device)) ** 2
            + lib.cholesky_solve(b, a.mT + 4 * lib.eye(3, dtype=a.dtype, device=a.device), upper=True) * b
            + lib.cholesky_inverse(a + 4 * lib.eye(3, dtype=a.dtype, device=a.device), upper=True).sum(-1, keepdim=True)
        ),
        [(3, 3), (3, 2)],
    ),
}


@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_decomposition_second_derivative_matches_pytorch(device, name):
    fn, shapes = DECOMPOSITIONS[name]
    arrays = [_pair(device, s, seed=180 + i) for i, s in enumerate(shapes)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_decomposition_create_graph_first_order_is_the_array_backward(device, name):
    fn, shapes = DECOMPOSITIONS[name]
    arrays = [_pair(device, s, seed=190 + i) for i, s in enumerate(shapes)]
    grads = []
    for create_graph in (False, True):
        xs = [tg.tensor(a, requires_grad=True, device=device) for a in arrays]
        got = tg.autograd.grad(fn(tg, *xs).sum(), xs, create_graph=create_graph)
        grads.append([g.detach().numpy() for g in got])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(b, a)


# ------------------------------------------------------------------ in-place writes
def _add_(lib, x, b):
    y = x * x
    y += b * b
    y -= x
    return y * x


def _mul_div_(lib, x, b):
    y = x * x.sin()
    y *= 2.5
    y *= b.detach()
    y /= b.detach() + 3
    y /= 0.5
    return y * x * b


def _clamp_(lib, x, b):
    y = x * b
    y.clamp_(-0.4, 0.5)
    return y * x * b


def _setitem(lib, x, b):
    y = x * x
    y[0] = b[1] * b[1]
    y[:, 1] = x[:, 2].exp()
    y.masked_fill_(x.detach() > 1, 2.0)
    return y * x


INPLACE = {"add_": _add_, "mul_div_": _mul_div_, "clamp_": _clamp_, "setitem": _setitem}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_second_derivative_matches_pytorch(device, name):
    fn = INPLACE[name]
    arrays = [_pair(device, (3, 4), seed=200), _pair(device, (3, 4), seed=201)]
    _compare(device, lambda *xs: fn(tg, *xs), lambda *xs: fn(_torch(), *xs), arrays)


def test_inplace_multiplier_that_needs_a_gradient_raises_lazily_with_its_reason():
    x = tg.tensor([0.5, 1.5], dtype=tg.float64, requires_grad=True)
    s = tg.tensor([2.0, 3.0], dtype=tg.float64, requires_grad=True)
    y = x * 1
    y *= s
    gx, gs = tg.autograd.grad(y.sum(), (x, s), create_graph=True)
    np.testing.assert_array_equal(gs.detach().numpy(), [0.5, 1.5])  # the first-order values
    with pytest.raises(RuntimeError, match="MulInplaceBackward0: the gradient of the multiplier"):
        gs.sum().backward()
