"""Reading gradients, against PyTorch: retain_grad, register_hook, post-accumulate hooks, module
hooks and autograd.grad on the same small graphs, plus hypothesis properties on random graphs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.testing import strategies as tgs

torch = pytest.importorskip("torch")  # the reference these tests compare with

# Every comparison here runs the same float64 graph in both libraries: the gradients are the same
# few products and sums, so they agree to float64 rounding (1e-12 leaves room for a different order
# of summation).
TOL = dict(rtol=1e-12, atol=1e-12)


def both(values):
    return (
        tg.tensor(np.array(values, dtype=np.float64), requires_grad=True),
        torch.tensor(np.array(values, dtype=np.float64), requires_grad=True),
    )


def close(a, b):
    assert a is not None and b is not None
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), **TOL)


def test_retain_grad_with_hooks_and_accumulation():
    """A hook's replacement is what the retained .grad sees; two backwards accumulate."""
    for lib, x in zip((tg, torch), both([1.0, -2.0, 3.0])):
        y = x * 2
        y.retain_grad()
        assert y.retains_grad and not x.retains_grad
        y.register_hook(lambda g: g * 10)
        z = (y * y).sum()
        z.backward(retain_graph=True)
        first = y.grad.clone()
        z.backward()
        if lib is tg:
            ours = (first, y.grad, x.grad)
        else:
            theirs = (first, y.grad, x.grad)
    for a, b in zip(ours, theirs):
        close(a, b)


def test_retain_grad_on_leaf_is_noop_and_refused_without_grad():
    x = tg.tensor([1.0], requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        tg.tensor([1.0]).retain_grad()


def test_hook_order_values_and_removal():
    """Hooks run in registration order, each on the previous one's result; a leaf's run before
    accumulation, then the post-accumulate hooks; a removed hook no longer runs."""

    def run(x, w):
        log = []
        y = x * w
        y.register_hook(lambda g: log.append(("y1", g.tolist())) or g + 1)
        y.register_hook(lambda g: log.append(("y2", g.tolist())) or g * 3)
        removed = y.register_hook(lambda g: log.append(("removed",)))
        removed.remove()
        x.register_hook(lambda g: log.append(("x", g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("x post", t.grad.tolist())))
        (y * y).sum().backward()
        log.append(("x.grad", x.grad.tolist()))
        return log

    (x, tx), (w, tw) = both([1.0, 2.0]), both([0.5, -1.0])
    assert run(x, w) == run(tx, tw)


def _hooked_then_written(lib, x, w, where):
    """y = x * 2 with a hook registered on it before an in-place write into it (`where`: directly or
    through a view), a hook and retain_grad after it; what each hook saw, y.grad, x.grad."""
    seen = []
    y = x * 2
    if where == "y":
        before = y.register_hook(lambda g: seen.append(("before", g.tolist())))
        y.mul_(w)
    else:  # the base, written through a view
        before = y.register_hook(lambda g: seen.append(("before", g.tolist())))
        y.t()[0].mul_(w[:, 0])
    y.register_hook(lambda g: seen.append(("after", g.tolist())))
    y.retain_grad()
    (y * y * w).sum().backward(retain_graph=True)
    before.remove()
    (y * w).sum().backward()
    return seen, y.grad.tolist(), x.grad.tolist()


@pytest.mark.parametrize("where", ["y", "base, written through a view"])
def test_a_hook_registered_before_an_inplace_write_sees_the_version_before_it_as_pytorch(where):
    """PyTorch: a hook registered on a tensor before an in-place write to it receives the gradient
    of the tensor before the write; one registered after, the gradient after it; retain_grad keeps
    the gradient of the tensor as it is now.  tensorgrad's hooks stayed with the tensor object and
    saw the version after the write (silently another gradient).  The hook's handle still removes
    it."""
    x_tg, x_torch = both(np.arange(1.0, 7.0).reshape(2, 3))
    w = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    ours = _hooked_then_written(tg, x_tg, tg.tensor(w), where)
    theirs = _hooked_then_written(torch, x_torch, torch.tensor(w), where)
    assert [name for name, _ in ours[0]] == [name for name, _ in theirs[0]]
    for (_, a), (_, b) in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, **TOL)
    np.testing.assert_allclose(ours[1], theirs[1], **TOL)
    np.testing.assert_allclose(ours[2], theirs[2], **TOL)


def test_hook_errors_match_pytorch():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            lib.tensor([1.0]).register_hook(lambda g: g)
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
@pytest.mark.parametrize(
    "change, message",
    [
        (lambda g: g.double(), r"has changed the type of value \(was (float32|torch.FloatTensor) got"),
        (lambda g: g.long(), r"has changed the type of value \(was (float32|torch.FloatTensor) got"),
        (lambda g: g[:2], "has changed the size of value"),
        (lambda g: g.reshape(3, 1), "has changed the size of value"),
        (lambda g: g.sum().reshape(1), "has changed the size of value"),
    ],
    ids=["float64", "int64", "fewer", "reshaped", "broadcastable"],
)
def test_a_hook_that_changes_the_gradient_type_or_size_raises_as_pytorch(change, message, leaf):
    """A float64 gradient from a hook on a float32 tensor was cast back silently; PyTorch raises."""
    for lib in (tg, torch):
        x = lib.ones(3, requires_grad=True)
        y = x if leaf else x * 2
        y.register_hook(change)
        with pytest.raises(RuntimeError, match=message):
            (y * 3).sum().backward()


def test_a_hook_that_moves_the_gradient_to_another_device_raises():
    x = tg.ones(3, requires_grad=True)
    x.register_hook(lambda g: g.to("strict"))
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was float32 got float32 on strict\)"):
        (x * 3).sum().backward()


def test_a_post_accumulate_hook_must_return_none_as_pytorch():
    for lib in (tg, torch):
        x = lib.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
            (x * 2).sum().backward()


def test_hook_on_root_sees_initial_gradient():
    seen = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    r = (x * 2).sum()
    r.register_hook(lambda g: seen.append(g.item()) or g * 5)
    r.backward()
    assert seen == [1.0] and x.grad.tolist() == [10.0, 10.0]


def test_autograd_grad_values_and_no_grad_touched():
    for lib, (x, w) in zip((tg, torch), zip(both([1.0, 2.0, 3.0]), both([0.5, -1.0, 2.0]))):
        y = (x * w).exp()
        y.retain_grad()
        out = (y * x).sum()
        res = lib.autograd.grad(out, [x, w])
        assert x.grad is None and w.grad is None
        if lib is tg:
            ours = (*res, y.grad)
        else:
            theirs = (*res, y.grad)
    for a, b in zip(ours, theirs):
        close(a, b)


def test_autograd_grad_outputs_and_intermediate_input():
    (x, tx) = both([[1.0, 2.0], [3.0, -1.0]])
    go = np.array([[1.0, -2.0], [0.5, 3.0]])
    y, ty = x.tanh(), tx.tanh()
    outs = tg.autograd.grad([y * y], [y, x], grad_outputs=[tg.tensor(go)], retain_graph=True)
    touts = torch.autograd.grad([ty * ty], [ty, tx], grad_outputs=[torch.tensor(go)])
    for a, b in zip(outs, touts):
        close(a, b)


def test_autograd_grad_same_0d_output_twice_gives_an_array_gradient():
    """An output listed twice has its grad_outputs added; for a 0-d output NumPy's sum of two 0-d
    arrays is a scalar (np.float64), which must still come back as a tensor one can read."""
    x = tg.tensor(2.0, requires_grad=True)
    (g,) = tg.autograd.grad([x, x], [x], [tg.tensor(0.5), tg.tensor(-2.0)])
    assert g.numpy().shape == () and g.item() == -1.5
    (g,) = tg.autograd.grad([x * 1, x], [x], [tg.tensor(0.5), tg.tensor(-2.0)])
    assert g.item() == -1.5


def test_autograd_grad_errors_match_pytorch():
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="at index 1 appears to not have been used in the graph"):
            lib.autograd.grad((x * 2).sum(), [x, w])
        gx, gw = lib.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
        assert gw is None and gx.tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
            lib.autograd.grad((x * 2).sum(), [lib.ones(2)])
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            lib.autograd.grad(lib.ones(2) * 2, [x])
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
            lib.autograd.grad(x * 2, [x])
        s = (x * x).sum()
        lib.autograd.grad(s, [x])
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            lib.autograd.grad(s, [x])
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (g,) = tg.autograd.grad((x * x).sum(), [x], create_graph=True)  # differentiable (test_double_backward.py)
    assert g.requires_grad


class TwoLayer:
    """The same two-layer MLP in both libraries, float64, with PyTorch's initial weights."""

    def __init__(self, lib):
        torch.manual_seed(0)
        ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
        if lib is torch:
            self.model = ref
        else:
            self.model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
            self.model.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})


def test_module_hooks_match_pytorch():
    """Forward pre-hooks and forward hooks (with replacements), full backward hooks' grad_input /
    grad_output and a replacement grad_input, all as PyTorch gives them."""
    x_np = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])

    def lists(grads):
        return [g if g is None else g.tolist() for g in grads]

    def run(lib):
        model = TwoLayer(lib).model
        rec = []
        model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        handle = model[2].register_forward_hook(lambda m, args, out: out + 1)
        model[1].register_forward_hook(lambda m, args, out: rec.append(("tanh out", out.tolist())))
        model[2].register_full_backward_hook(lambda m, gi, go: rec.append(("fc2", lists(gi), lists(go))))
        model[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
        model[0].register_full_backward_hook(lambda m, gi, go: rec.append(("fc1", lists(gi), lists(go))))
        x = lib.tensor(x_np, requires_grad=True)
        out = model(x)
        (out * out).sum().backward()
        rec.append(("x.grad", x.grad.tolist()))
        rec.append(("w1.grad", model[0].weight.grad.tolist()))
        handle.remove()
        rec.append(("after remove", model(lib.tensor(x_np)).tolist()))
        return rec

    ours, theirs = run(tg), run(torch)
    assert [r[0] for r in ours] == [r[0] for r in theirs]
    for a, b in zip(ours, theirs):
        nested_close(a[1:], b[1:])


def nested_close(a, b):
    """Nested tuples/lists of numbers and None: the same structure, the numbers within TOL."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for u, v in zip(a, b):
            nested_close(u, v)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, **TOL)


def test_backward_hook_input_without_grad_is_none():
    """A module whose input does not require grad: grad_input is (None,), as in PyTorch."""
    got = {}
    for lib in (tg, torch):
        lin = (nn.Linear if lib is tg else torch.nn.Linear)(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go, lib=lib: got.__setitem__(lib, (gi, len(go))))
        lin(lib.ones(1, 2)).sum().backward()
    assert got[tg][0] == (None,) and got[tg][1] == got[torch][1] == 1 and got[torch][0] == (None,)


# ---------------------------------------------------------------------------------------- properties
UNARY = [lambda t: t.tanh(), lambda t: t * t, lambda t: t.exp() * 0.1, lambda t: t.sigmoid(), lambda t: t * 3 - 1]


@st.composite
def random_graphs(draw):
    """A random chain-and-merge graph over one input: each step applies a unary op to an earlier
    node, or multiplies/adds two earlier nodes."""
    x = draw(tgs.float_arrays(shape=draw(tgs.shapes(max_dims=2)), low=-1.0, high=1.0))
    steps = []
    for k in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            steps.append(("unary", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, k))))
        else:
            steps.append((draw(st.sampled_from(["add", "mul"])), draw(st.integers(0, k)), draw(st.integers(0, k))))
    return x, steps


def build(x, steps):
    nodes = [x]
    for kind, a, b in steps:
        if kind == "unary":
            nodes.append(UNARY[a](nodes[b]))
        elif kind == "add":
            nodes.append(nodes[a] + nodes[b])
        else:
            nodes.append(nodes[a] * nodes[b])
    return nodes


@settings(deadline=None)
@given(random_graphs())
def test_property_autograd_grad_equals_backward_and_retain_grad(graph):
    """On random graphs: autograd.grad equals the .grad backward leaves; retain_grad on every
    intermediate equals autograd.grad with respect to that intermediate."""
    x_np, steps = graph
    x = tg.tensor(x_np, requires_grad=True)
    nodes = build(x, steps)
    for n in nodes[1:]:
        n.retain_grad()
    loss = nodes[-1].sum()
    grads = tg.autograd.grad(loss, nodes, retain_graph=True, allow_unused=True)
    for n in nodes[1:]:
        n.grad = None  # autograd.grad filled the retained ones, as PyTorch's does
    loss.backward()
    for n, g in zip(nodes, grads):
        # the same arrays summed in the same order by the same engine: exact
        if g is None:
            assert n.grad is None
        else:
            np.testing.assert_array_equal(n.grad.numpy(), g.numpy())


def test_queue_callback_runs_once_after_backward():
    """autograd.queue_callback (what DistributedDataParallel finishes its all-reduces with): a hook
    queues it during backward; it runs after every leaf's .grad is accumulated, once."""
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(
        lambda t: tg.autograd.queue_callback(lambda: seen.append((x.grad.tolist(), w.grad.tolist())))
    )
    (x * w).sum().backward()
    (x * w).sum().backward()
    assert seen == [([3.0, 4.0], [1.0, 2.0]), ([6.0, 8.0], [2.0, 4.0])]


@pytest.mark.parametrize("where", ["the view written", "a view between it and the base"])
def test_a_hook_on_a_view_registered_before_a_write_through_it_sees_only_its_earlier_readers_as_pytorch(where):
    """PyTorch's write through a view (CopySlices) reads the base, not the view's old history: a
    hook registered on the view (or on the view it was taken from) before the write gets only the
    gradient of what read that view before the write, and runs not at all when nothing did.
    tensorgrad's write read the view's old history, so such a hook saw the written places'
    gradient too (a hook returning g * 100 gave x.grad 4200 where PyTorch's is 42)."""

    def run(lib, used):
        x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=lib.float64, requires_grad=True)
        seen = []
        y = x * 2
        yt = y.t()
        hooked = yt if where != "the view written" else yt[1]
        hooked.register_hook(lambda g: seen.append(g.tolist()) or g * 100)
        early = (hooked + 1).sum() * 5 if used else 0
        (yt[1] if where != "the view written" else hooked).mul_(3)
        ((yt * 7).sum() + early).backward()
        return seen, x.grad.tolist()

    for used in (False, True):
        assert run(tg, used) == run(torch, used)
