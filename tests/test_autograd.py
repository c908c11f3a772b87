"""The backward pass itself: accumulation, ordering, graph release, grad modes, dtype rules."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F

# Gradients here are small integer-valued or simple float64 expressions: exact up to rounding.
TOL = {"rtol": 1e-12, "atol": 1e-12}


def leaf(values, device="cpu"):
    return tg.tensor(np.asarray(values, dtype=np.float64), device=device, requires_grad=True)


# ------------------------------------------------------------------ accumulation
def test_x_times_x(device):
    x = leaf([1.0, -2.0, 3.0], device)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0], **TOL)


def test_x_plus_x(device):
    x = leaf([1.0, -2.0, 3.0], device)
    (x + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0], **TOL)


def test_two_branches(device):
    """y = exp(x) feeds two branches; both contributions reach x."""
    x = leaf([0.5, -1.0], device)
    y = x.exp()
    z = (y * 3 + y.tanh()).sum()
    z.backward()
    e = np.exp([0.5, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), 3 * e + (1 - np.tanh(e) ** 2) * e, **TOL)


def test_diamond_with_broadcast(device):
    x = leaf(np.arange(6.0).reshape(2, 3), device)
    b = leaf([1.0, 2.0, 3.0], device)
    y = x * b + b  # b used twice, broadcast both times
    y.backward(tg.ones(2, 3, dtype=tg.float64, device=device))
    np.testing.assert_allclose(b.grad.numpy(), x.numpy().sum(0) + 2, **TOL)
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)), **TOL)


def test_leaf_grad_accumulates_across_backward_calls(device):
    x = leaf([1.0, 2.0], device)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3 + 2, 3 + 4], **TOL)


def test_grad_is_not_aliased_to_the_upstream_gradient(device):
    """A leaf's .grad must be its own array: later accumulation must not write into the
    gradient the user passed (or into another leaf's grad)."""
    a, b = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    g = tg.tensor(np.array([1.0, 1.0]), device=device)
    (a + b).backward(g)
    (a + b).backward(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0])
    x = leaf([1.0, 2.0], device)
    x.backward(g)
    x.backward(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_zero_dim_gradients_are_arrays(device):
    """NumPy returns scalars for 0-d arithmetic; gradients must still be tensors on the device."""
    x = tg.tensor(np.float64(2.0), device=device, requires_grad=True)
    ((x * x).exp() + x).backward()
    assert x.grad.device == device and x.grad.shape == ()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp(4.0) + 1, **TOL)
    assert isinstance(x.grad.item(), float)


def test_deep_chain_no_recursion_error(device):
    x = leaf([1.0], device)
    y = x
    for _ in range(5000):
        y = y * 1.0001 + 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001**5000], rtol=1e-9)  # 5000 float64 products


def test_only_leaves_get_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None and x.grad is not None
    assert x.is_leaf and not y.is_leaf and y.grad_fn is not None


def test_no_grad_for_constants():
    x = leaf([1.0, 2.0])
    c = tg.tensor(np.array([3.0, 4.0]))
    (x * c).sum().backward()
    assert c.grad is None and not c.requires_grad


# ------------------------------------------------------------------ graph modes
def test_no_grad_context_builds_no_graph():
    x = leaf([1.0, 2.0])
    with tg.no_grad():
        y = (x * 2).exp()
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_no_grad_decorator():
    @tg.no_grad()
    def f(x):
        return x * 2

    y = f(leaf([1.0]))
    assert not y.requires_grad and y.grad_fn is None
    assert tg.is_grad_enabled()


def test_no_grad_restores_state_after_exception():
    with pytest.raises(ValueError), tg.no_grad():
        raise ValueError("boom")
    assert tg.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with tg.no_grad(), tg.enable_grad():
        y = x * 2
    assert y.requires_grad


def test_detach_cuts_the_graph(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    (x * d).sum().backward()  # d is a constant: dx = d
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 6.0], **TOL)


# ------------------------------------------------------------------ backward errors and release
def test_backward_on_non_scalar_needs_gradient():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"scalar output.*\(2,\).*gradient="):
        y.backward()


def test_backward_with_gradient_of_wrong_shape():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(ValueError, match=r"gradient has shape \(3,\).*\(2,\)"):
        y.backward(tg.ones(3, dtype=tg.float64))


def test_second_backward_raises_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time.*retain_graph"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0], **TOL)


def test_saved_buffers_released_after_backward(device):
    x = leaf(np.ones((2, 3)), device)
    h = x.exp()
    s = h.softmax(-1)
    y = F.layer_norm(s, (3,))
    loss = (y * y).sum()
    nodes = [h.grad_fn, s.grad_fn, y.grad_fn, loss.grad_fn]
    assert all(n.saved is not None for n in nodes[:3])
    loss.backward()
    for n in nodes:
        assert n.saved is None and n.parents is None


def test_retain_graph_keeps_saved_buffers():
    x = leaf([1.0, 2.0])
    h = x.exp()
    h.sum().backward(retain_graph=True)
    assert h.grad_fn.saved is not None


def test_ops_run_without_a_graph():
    """Forward and backward are functions of arrays: one backward can be called directly."""
    from tensorgrad.ops.softmax import Softmax

    op = Softmax(np)
    x, g = np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 0.0, 0.0]])
    y = op.forward(x, dim=-1)
    dx = op.backward(g)
    np.testing.assert_allclose(dx, y * (g - y[:, :1]), **TOL)  # y_j (g_j - sum_i g_i y_i)



# ------------------------------------------------------------------ what a backward returns
class _TwoInputs(tg.Function):
    """A raw-array op of two inputs whose backward returns what the test sets in `grads`."""

    grads = None

    def forward(self, x, y):
        return x * y

    def backward(self, g):
        return type(self).grads(g)


def _two_input_op(name, grads):
    return type(name, (_TwoInputs,), {"grads": staticmethod(grads)})


@pytest.mark.parametrize(
    "grads, got",
    [(lambda g: g, 1), (lambda g: (g,), 1), (lambda g: (g, g, g), 3), (lambda g: (g, g, g * 0), 3)],
    ids=["one-array", "one-tuple", "three", "three-zeros"],
)
def test_a_backward_with_the_wrong_number_of_gradients_raises_naming_the_op(grads, got, device):
    """One gradient for two inputs left the second input's .grad silently None; PyTorch's check."""
    op = _two_input_op("Scale", grads)
    x, w = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    expected = rf"function ScaleBackward0 returned an incorrect number of gradients \(expected 2, got {got}\)"
    with pytest.raises(RuntimeError, match=expected):
        op.apply(x, w).sum().backward()


def test_extra_none_gradients_are_allowed(device):
    """As PyTorch: gradients past the inputs' count may be None (nothing is lost)."""
    op = _two_input_op("Scale", lambda g: (g, 2 * g, None))
    x, w = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    op.apply(x, w).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and w.grad.tolist() == [2.0, 2.0]


def test_fresh_gradients_become_the_leaves_grads_and_accumulate(device):
    """A Function that declares `fresh_gradients` hands its arrays to the leaves as they are (no
    copy); a second backward adds into them, each leaf's own, as into copies."""
    made = []

    class Fresh(tg.Function):
        fresh_gradients = True

        def forward(self, x, y):
            return x * y

        def backward(self, g):
            made.append(self.xp.stack([g * 2, g * 3]))
            return made[-1][0], made[-1][1]  # disjoint views of one new array

    x, w = leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)
    Fresh.apply(x, w).sum().backward()
    storage = tg.backend.storage_of(made[0])
    assert tg.backend.storage_of(x.grad._data) is storage is tg.backend.storage_of(w.grad._data)  # kept, not copied
    Fresh.apply(x, w).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0] and w.grad.tolist() == [6.0, 6.0]
    assert made[1].tolist() == [[2.0, 2.0], [3.0, 3.0]]  # the second call's arrays untouched


@pytest.mark.parametrize("shape", [(2,), (6,), (3, 2), (2, 1, 3)])
def test_a_gradient_of_a_shape_that_is_no_broadcast_raises(shape, device):
    """(6,) for a (2, 3) input used to be reshaped into place, a wrong gradient; only a broadcast of the
    input's shape is summed back (the engine's unbroadcast)."""
    op = _two_input_op("Scale", lambda g: (g.reshape(-1)[: int(np.prod(shape))].reshape(shape), g))
    x, w = leaf(np.ones((2, 3)), device), leaf(np.ones((2, 3)), device)
    got = ", ".join(map(str, shape))
    expected = rf"Function ScaleBackward0 returned an invalid gradient at index 0 - got \[{got}\] but expected shape"
    expected += r" compatible with \[2, 3\]"
    with pytest.raises(RuntimeError, match=expected):
        op.apply(x, w).sum().backward()


def test_the_invalid_gradient_named_is_the_one_at_fault(device):
    """A backward returning the same array for both inputs, right for the first and wrong for the
    second: the error names index 1 (found by position, not by which returned object it is)."""

    class PlusSum(tg.Function):  # x + sum(y), with a wrong backward for y
        def forward(self, x, y):
            return x + y.sum()

        def backward(self, g):
            return g, g

    x, y = leaf(np.ones((3,)), device), leaf(np.ones((2,)), device)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 1 - got \[3\] but expected shape compatible"):
        PlusSum.apply(x, y).sum().backward()


def test_a_broadcast_gradient_is_summed_back(device):
    """A gradient shaped like a broadcast of the input, (1, 2, 3) and (2, 1) for a (2, 1) input: summed."""
    op = _two_input_op("Scale", lambda g: (g.reshape((1, *g.shape)) * 4, g))
    x, w = leaf(np.ones((2, 1)), device), leaf(np.ones((2, 3)), device)
    op.apply(x, w).sum().backward()
    assert x.grad.tolist() == [[12.0], [12.0]] and w.grad.tolist() == [[1.0] * 3] * 2


# ------------------------------------------------------------------ assigning .grad
def test_assigned_grad_must_fit_the_tensor():
    """A (1,) gradient on a (3,) parameter was accepted and then broadcast by the optimizers; as
    PyTorch, a wrong shape, dtype, device or type raises at the assignment."""
    p = tg.nn.Parameter(tg.ones(3))
    with pytest.raises(RuntimeError, match=r"gradient of size '\[1\]' to a tensor of size '\[3\]'"):
        p.grad = tg.tensor([1.0])
    with pytest.raises(RuntimeError, match=r"gradient of size '\[1, 3\]' to a tensor of size '\[3\]'"):
        p.grad = tg.ones(1, 3)
    with pytest.raises(RuntimeError, match="gradient with dtype 'float64' to a tensor with dtype 'float32'"):
        p.grad = tg.ones(3, dtype=tg.float64)
    with pytest.raises(RuntimeError, match="gradient with device 'strict' to a tensor with device 'cpu'"):
        p.grad = tg.ones(3).to("strict")
    with pytest.raises(TypeError, match="expected to be a Tensor or None but got grad of type list"):
        p.grad = [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="got grad of type ndarray"):
        p.grad = np.ones(3, dtype=np.float32)
    with pytest.raises(RuntimeError, match="its own grad"):
        p.grad = p
    assert p.grad is None  # nothing was assigned
    p.grad = tg.full((3,), 2.0)
    assert p.grad.tolist() == [2.0, 2.0, 2.0]
    p.grad = None
    assert p.grad is None
    p.grad = tg.zeros(3)
    del p.grad
    assert p.grad is None


def test_an_assigned_grad_accumulates_and_steps():
    p = tg.nn.Parameter(tg.tensor([1.0, 2.0, 3.0]))
    p.grad = tg.tensor([1.0, 1.0, 1.0])
    (p * 2).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0, 3.0]
    tg.optim.SGD([p], lr=1.0).step()
    assert p.tolist() == [-2.0, -1.0, 0.0]


@pytest.mark.reference
def test_assigned_grad_errors_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        p = lib.ones(3, requires_grad=True)
        for bad, error in [
            (lib.ones(1), RuntimeError),
            (lib.ones(3, dtype=lib.float64), RuntimeError),
            ([1.0, 2.0, 3.0], TypeError),
        ]:
            with pytest.raises(error, match="attempting to assign a gradient|expected to be a Tensor or None"):
                p.grad = bad
        q = lib.ones(3, dtype=lib.int64)
        q.grad = lib.ones(3, dtype=lib.int64)  # an integer tensor may hold a gradient of its dtype


# ------------------------------------------------------------------ dtypes
def test_requires_grad_on_int_tensor_raises():
    with pytest.raises(TypeError, match="floating-point.*int64"):
        tg.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="floating-point"):
        tg.arange(3).requires_grad_()


@pytest.mark.parametrize(
    "data, dtype",
    [
        (1.5, tg.float32),
        ([1.0, 2.0], tg.float32),
        ([1, 2.5], tg.float32),
        (3, tg.int64),
        ([[1, 2]], tg.int64),
        (True, tg.bool),
        ([True, False], tg.bool),
        (np.array([1.0]), tg.float64),
        (np.array([1.0], dtype=np.float32), tg.float32),
        (np.array([1], dtype=np.int32), tg.int32),
        (np.float64(1.0), tg.float64),
    ],
)
def test_tensor_dtype_rules(data, dtype, device):
    assert tg.tensor(data, device=device).dtype == dtype


def test_dtype_argument():
    assert tg.tensor([1, 2], dtype=tg.float64).dtype == tg.float64
    assert tg.tensor(np.array([1.5]), dtype=tg.float32).dtype == tg.float32
    assert tg.tensor([1.5], dtype="float64").dtype == tg.float64


def test_float64_survives_every_op_and_its_gradient(device):
    """The gradient checks rely on it: a float64 input stays float64 through every op in the
    table, and so does its gradient."""
    from op_table import OPS, make_inputs

    for case in OPS:
        xs = [tg.tensor(a, device=device, requires_grad=True) for a in make_inputs(case)]
        out = case.fn(tg, *xs)
        outs = out if isinstance(out, tuple) else (out,)
        total = None
        for o in outs:
            if o.dtype == tg.int64 and not o.requires_grad:  # indices (topk, sort, max(dim)): int64 as in PyTorch
                continue
            assert o.dtype == tg.float64, case.name
            t = (o * tg.tensor(np.ones(o.shape), device=device)).sum()
            total = t if total is None else total + t
        total.backward()
        for x in xs:
            assert x.grad.dtype == tg.float64 and x.grad.shape == x.shape, case.name


def test_promotion_float32_float64(device):
    a = tg.tensor(np.ones(3, dtype=np.float32), device=device, requires_grad=True)
    b = tg.tensor(np.ones(3), device=device, requires_grad=True)
    out = a * b + a
    assert out.dtype == tg.float64
    out.sum().backward()
    assert a.grad.dtype == tg.float32 and b.grad.dtype == tg.float64  # each grad in its input's dtype
    assert (a @ b).dtype == tg.float64


def test_int_and_scalar_promotion(device):
    i = tg.tensor([1, 2, 3], device=device)
    assert (i / 2).dtype == tg.float32
    assert (2 / i).dtype == tg.float32
    assert (i / i).dtype == tg.float32
    assert (i * 2).dtype == tg.int64
    assert (i + 1.5).dtype == tg.float32
    assert (i * tg.tensor([True, False, True], device=device)).dtype == tg.int64
    assert (i + tg.tensor(np.ones(3), device=device)).dtype == tg.float64
    assert (i.exp()).dtype == tg.float32  # float ops on ints give float32, as in PyTorch
    assert (i**2).dtype == tg.int64 and (i**0.5).dtype == tg.float32
    f16 = tg.tensor(np.ones(2, dtype=np.float16), device=device)
    assert (f16 * 2.5).dtype == tg.float16  # a Python float does not widen a float tensor


def test_to_dtype_cast_and_its_gradient(device):
    x = leaf([1.25, -2.5], device)
    y = x.to(tg.float32)
    assert y.dtype == tg.float32 and y.requires_grad
    (y * 2).sum().backward()
    assert x.grad.dtype == tg.float64
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    assert x.to(tg.float64) is x and x.double() is x
    assert x.float().dtype == tg.float32 and x.long().dtype == tg.int64 and x.bool().dtype == tg.bool


def test_clone_is_a_copy_with_grad(device):
    x = leaf([1.0, 2.0], device)
    c = x.clone()
    with tg.no_grad():
        c.data[0] = 5.0
    assert x.numpy()[0] == 1.0
    (x.clone() * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_setitem_on_a_tensor_that_requires_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="in-place"):
        x[0] = 3.0
    with tg.no_grad():
        x[0] = 3.0
    assert x.numpy()[0] == 3.0


def test_pow_zero_has_zero_gradient_everywhere(device):
    """x ** 0 = 1 is constant: its gradient is 0, also at x = 0 (not 0 * 0 ** -1 = nan), as in PyTorch."""
    x = leaf([0.0, 2.0], device)
    (x**0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_every_node_is_recorded_through_attach(monkeypatch):
    """Function.attach is the one place a node enters the graph: apply, a copy to another device, a
    recorded in-place write (and the write through a view into its base), a custom Function and a
    create_graph gradient all go through it, so every node reachable from the result was attached."""
    from tensorgrad.autograd import Function

    attached = set()
    attach = Function.attach

    def counting(self, output, parents, records=None):
        attached.add(id(self))
        return attach(self, output, parents, records)

    monkeypatch.setattr(Function, "attach", counting)

    class Twice(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = tg.ones(4, requires_grad=True)
    y = Twice.apply(x * 3).to("strict").to("cpu")  # apply, custom Function, ToDevice
    y += 1  # a recorded in-place write
    v = y[1:3]
    v *= 2  # a write into a view: also recorded on its base
    (g,) = tg.autograd.grad((y.exp() * x).sum(), x, create_graph=True)  # the gradient's own nodes
    nodes, stack = [], [g, y]
    while stack:
        t = stack.pop()
        ctx = t._ctx
        if ctx is None or any(ctx is n for n in nodes):
            continue
        nodes.append(ctx)
        stack.extend(p for p in (*ctx.parents, ctx.previous) if isinstance(p, tg.Tensor))
    names = {type(n).__name__ for n in nodes}
    assert {"Twice", "ToDevice", "AddInplace", "MulInplace", "SetItem", "Index", "Mul"} <= names, names
    assert all(id(n) in attached for n in nodes), [type(n).__name__ for n in nodes if id(n) not in attached]
