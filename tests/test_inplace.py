"""In-place ops and version counters: PyTorch's rules on which writes are allowed, which make
backward raise, and that a write never leads to a silently wrong gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn
import tensorgrad.nn.functional as F
from tensorgrad import backend

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def vec(*values, device="cpu", requires_grad=False):
    return tg.tensor(np.array(values, dtype=np.float64), device=device, requires_grad=requires_grad)


# ------------------------------------------------------------------ backward refuses stale saved arrays
def test_write_to_a_saved_input_raises_naming_op_shape_and_versions(device):
    # the case: mul saves x for w's gradient; x[0] = 100 would give w.grad = [100, 1, 1]
    w = vec(1, 2, 3, device=device, requires_grad=True)
    x = vec(1, 1, 1, device=device)
    y = (w * x).sum()
    x[0] = 100.0
    with pytest.raises(RuntimeError, match=MODIFIED) as e:
        y.backward()
    msg = str(e.value)
    assert "\n" not in msg
    assert "float64 tensor of shape (3,)" in msg and "MulBackward" in msg
    assert "is at version 1; expected version 0" in msg


def test_write_to_an_input_that_was_not_saved_is_fine(device):
    # add saves nothing, so PyTorch does not raise either, and the gradient does not depend on x
    w = vec(1, 2, 3, device=device, requires_grad=True)
    x = vec(1, 1, 1, device=device)
    y = (w + x).sum()
    x[0] = 100.0
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1, 1, 1])


def test_write_to_a_saved_output_raises(device):
    w = vec(0.5, 1.0, device=device, requires_grad=True)
    y = w.exp()  # exp saves its output
    loss = y.sum()
    with tg.no_grad():
        y += 1
    with pytest.raises(RuntimeError, match=r"which is output 0 of ExpBackward, is at version 1"):
        loss.backward()


class _ExpReshaped(tg.Function):
    """exp(x) returned as a reshaped view of the array it saves (a fresh array, then its view)."""

    def forward(self, x):
        z = self.xp.exp(x)
        self.save_for_backward(z)
        return z.reshape(-1)

    def backward(self, g):
        (z,) = self.saved
        return g.reshape(z.shape) * z


def test_write_to_an_output_that_views_a_saved_array_raises(device):
    # the saved array is the op's own (no tensor holds it) but the output is a view of it: a write to
    # the output changes it, so its version is recorded (the engine skips only arrays no tensor shares)
    w = tg.tensor(np.array([[0.5, 1.0]]), device=device, requires_grad=True)
    y = _ExpReshaped.apply(w)
    loss = y.sum()  # sum saves nothing: only _ExpReshaped's record can catch the write
    with tg.no_grad():
        y += 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


class _ScaleFlat(tg.Function):
    """w * x, saving x as a flat view of the input's array (as Linear saves x.reshape(-1, C))."""

    def forward(self, x, w):
        self.save_for_backward(x.reshape(-1), w)
        return x * w

    def backward(self, g):
        x_flat, w = self.saved
        return g * w, (g * x_flat.reshape(g.shape)).sum()


def test_write_to_an_input_viewed_by_a_saved_array_raises(device):
    # the saved array is neither an input's array nor the op's own: it views the input's storage, so
    # the engine finds the input by storage (backend.storage_of) and a write to it raises
    x = tg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), device=device)
    w = tg.tensor(0.5, device=device, requires_grad=True)
    loss = _ScaleFlat.apply(x, w).sum()
    x += 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


@pytest.mark.parametrize(
    "make_view",
    [
        lambda x: x[1:],
        lambda x: x.view(2, 2)[0],
        lambda x: x.reshape(4),
        lambda x: x.detach(),
        lambda x: x.data,
        lambda x: x.unsqueeze(0).T,
    ],
)
def test_a_write_through_a_view_bumps_the_base_version(make_view):
    w = vec(1, 2, 3, 4, requires_grad=True)
    x = vec(1, 1, 1, 1)
    y = (w * x).sum()
    view = make_view(x)
    assert view._version == x._version == 0
    view.fill_(7.0)  # view's storage is x's
    assert x._version == 1 and view._version == 1
    assert 7.0 in x.numpy()
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_copy_is_not_a_view():
    x = vec(1, 2, 3)
    c = x.clone()
    c += 1
    assert x._version == 0 and c._version == 1


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: tg.optim.AdamW(ps, lr=0.1, fused=True),
        lambda ps: tg.optim.AdamW(ps, lr=0.1, fused=False),
        lambda ps: tg.optim.SGD(ps, lr=0.1, momentum=0.9),
    ],
    ids=["adamw-fused", "adamw", "sgd"],
)
def test_optimizer_step_between_two_backwards_raises(make_opt):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 1))
    opt = make_opt(model.parameters())
    loss = (model(tg.randn(5, 3)) ** 2).sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match=r"LinearBackward, is at version (\d+); expected version \d+"):
        loss.backward()


def test_second_backward_without_writes_still_works():
    w = vec(1, 2, 3, requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4, 8, 12])


def test_embedding_ids_written_after_the_forward_raise():
    weight = tg.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    ids = tg.tensor([0, 1, 1])
    out = F.embedding(ids, weight).sum()
    ids[0] = 3
    with pytest.raises(RuntimeError, match=r"int64 tensor of shape \(3,\)\], which is input 0 of EmbeddingBackward"):
        out.backward()


def test_index_tensor_written_after_the_forward_keeps_the_gradient_right():
    # indexing keeps its own copy of the index, so the gradient is the untouched graph's
    w = vec(1, 2, 3, requires_grad=True)
    idx = tg.tensor([0, 0, 2])
    y = w[idx].sum()
    idx[0] = 1
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2, 0, 1])


# ------------------------------------------------------------------ PyTorch's rules for in-place ops
INPLACE = [
    ("iadd", lambda t: t.__iadd__(1.0)),
    ("isub", lambda t: t.__isub__(1.0)),
    ("imul", lambda t: t.__imul__(2.0)),
    ("idiv", lambda t: t.__itruediv__(2.0)),
    ("add_", lambda t: t.add_(1.0)),
    ("sub_", lambda t: t.sub_(vec(1, 1, 1), alpha=2)),
    ("mul_", lambda t: t.mul_(2.0)),
    ("div_", lambda t: t.div_(2.0)),
    ("zero_", lambda t: t.zero_()),
    ("fill_", lambda t: t.fill_(3.0)),
    ("copy_", lambda t: t.copy_(vec(4, 5, 6))),
    ("clamp_", lambda t: t.clamp_(min=0.0, max=1.5)),
    ("normal_", lambda t: t.normal_()),
    ("uniform_", lambda t: t.uniform_()),
    ("setitem", lambda t: t.__setitem__(0, 9.0)),
]


@pytest.mark.parametrize("name,write", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_on_a_leaf_that_requires_grad(name, write):
    w = vec(1, 2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=LEAF):  # PyTorch's wording, outside no_grad
        write(w)
    assert w._version == 0 and w.is_leaf and w.numpy().tolist() == [1, 2, 3]
    with tg.no_grad():  # allowed there, as optimizers do it
        out = write(w)
    assert out is None or out is w
    assert w._version == 1 and w.is_leaf and w.requires_grad


@pytest.mark.parametrize("name,write", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_inside_the_graph_is_recorded_as_in_torch(name, write):
    # issue 20: an in-place op on a non-leaf that requires grad is a node of the graph, as in PyTorch
    torch = pytest.importorskip("torch")
    w = vec(1, 2, 3, requires_grad=True)
    h = w * 2  # a non-leaf of the graph
    out = write(h)
    assert (out is None or out is h) and h._version == 1 and not h.is_leaf and h.grad_fn is not None
    (h * vec(1, -2, 3)).sum().backward()
    tw = torch.tensor([1.0, 2, 3], dtype=torch.float64, requires_grad=True)
    th = tw * 2
    f64 = torch.float64
    torch_write = {"sub_": lambda t: t.sub_(torch.ones(3, dtype=f64), alpha=2),
                   "copy_": lambda t: t.copy_(torch.tensor([4.0, 5, 6], dtype=f64))}.get(name, write)  # fmt: skip
    torch_write(th)
    (th * torch.tensor([1.0, -2, 3], dtype=torch.float64)).sum().backward()
    if name not in ("normal_", "uniform_"):  # random values: only the gradient (zero) is compared
        np.testing.assert_array_equal(h.detach().numpy(), th.detach().numpy())
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())  # the same float64 ops: exact


def test_writing_a_value_that_requires_grad_into_a_plain_tensor_is_recorded():
    # issue 20: PyTorch records it, and the value's gradient flows (it used to raise here)
    w = vec(1, 2, 3, requires_grad=True)
    weights = vec(1, -2, 3)
    expected = {"setitem": [1, 0, 0], "add_": [1, -2, 3], "copy_": [1, -2, 3]}  # d(sum(out * weights))/dw
    for name, write in (("setitem", lambda o: o.__setitem__(0, w[0])), ("add_", lambda o: o.add_(w)),
                        ("copy_", lambda o: o.copy_(w))):  # fmt: skip
        w.grad = None
        out = tg.zeros(3, dtype=tg.float64)
        write(out)
        assert out.requires_grad and not out.is_leaf
        (out * weights).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), expected[name])
    with tg.no_grad():
        out = tg.zeros(3, dtype=tg.float64)
        out.copy_(w)
    assert out.numpy().tolist() == [1, 2, 3] and not out.requires_grad


def test_inplace_operators_write_the_storage_not_a_new_tensor(device):
    x = vec(1, 2, 3, device=device)
    alias, storage = x, x._data
    x += 1
    x *= vec(2, 2, 2, device=device)
    x -= 1
    x /= 2
    assert x is alias and x._data is storage and x._version == 4
    np.testing.assert_array_equal(x.numpy(), [1.5, 2.5, 3.5])


def test_inplace_matches_torch(device):
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.0]])
    b = np.array([1.5, -2.0, 0.5])
    cases = [
        lambda t, o: t.add_(o, alpha=0.5),
        lambda t, o: t.sub_(o, alpha=3),
        lambda t, o: t.mul_(o),
        lambda t, o: t.div_(o),
        lambda t, o: t.clamp_(min=-0.5, max=1.0),
        lambda t, o: t.clamp_(max=0.0),
        lambda t, o: t.copy_(o),
        lambda t, o: t.fill_(2.5),
        lambda t, o: t.zero_(),
    ]
    for case in cases:
        ours, theirs = tg.tensor(a, device=device), torch.tensor(a.copy())
        case(ours, tg.tensor(b, device=device))
        case(theirs, torch.tensor(b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # the same float64 ops: exact


def test_inplace_dtype_and_shape_rules():
    x = tg.tensor([1.0, 2.0])  # float32
    x += tg.tensor([1.0, 1.0], dtype=tg.float64)  # the result is cast back, as in PyTorch
    assert x.dtype == tg.float32
    i = tg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i += 0.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i /= 2
    i *= 3
    assert i.tolist() == [3, 6] and i.dtype == tg.int64
    with pytest.raises(RuntimeError, match=r"output with shape \(2,\) doesn't match the broadcast shape \(3, 2\)") as e:
        x += tg.ones(3, 2)
    assert isinstance(e.value, ValueError)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        x.clamp_()


def test_normal_and_uniform_draw_as_nn_init():
    a, b = tg.empty(4, 5), tg.empty(4, 5)
    tg.manual_seed(3)
    a.normal_(1.0, 0.5)
    tg.manual_seed(3)
    nn.init.normal_(b, 1.0, 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    tg.manual_seed(3)
    a.uniform_(-2.0, 3.0)
    assert a.numpy().min() >= -2 and a.numpy().max() < 3 and a._version == 2


# ------------------------------------------------------------------ .data
def test_data_is_a_tensor_sharing_storage():
    p = nn.Parameter(tg.tensor([1.0, 2.0, 3.0]))
    d = p.data
    assert isinstance(d, tg.Tensor) and not d.requires_grad and d.is_leaf
    d[0] = 10.0
    assert p.numpy().tolist() == [10, 2, 3] and p._version == 1
    p.data = tg.tensor([4.0, 5.0])  # assignment takes the new values, shape included
    assert p.numpy().tolist() == [4, 5] and p.shape == (2,) and isinstance(p, nn.Parameter)
    p.data = np.array([7.0, 8.0, 9.0], dtype=np.float32)
    assert p.numpy().tolist() == [7, 8, 9] and p.requires_grad


# ------------------------------------------------------------------ the manual update idiom
def _model_and_batch():
    tg.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    x, y = tg.randn(16, 4), tg.randint(2, (16,))
    return model, x, y


@pytest.mark.parametrize("spelling", ["p -= lr * p.grad", "p.data += -lr * p.grad", "p.sub_(p.grad, alpha=lr)"])
def test_manual_sgd_update_changes_the_weights(spelling):
    lr = 0.1
    model, x, y = _model_and_batch()
    F.cross_entropy(model(x), y).backward()
    before = [p.numpy() for p in model.parameters()]
    grads = [p.grad.numpy() for p in model.parameters()]
    with tg.no_grad():
        for p in model.parameters():
            if spelling == "p -= lr * p.grad":
                p -= lr * p.grad
            elif spelling == "p.data += -lr * p.grad":
                p.data += -lr * p.grad
            else:
                p.sub_(p.grad, alpha=lr)
    for p, b, g in zip(model.parameters(), before, grads):
        assert p.is_leaf and p.requires_grad and isinstance(p, nn.Parameter)
        # float32 on both sides, the same single multiply-subtract: exact
        np.testing.assert_array_equal(p.numpy(), b - np.float32(lr) * g)
    # and it is the same update as the SGD optimizer's
    model2, x, y = _model_and_batch()
    F.cross_entropy(model2(x), y).backward()
    tg.optim.SGD(model2.parameters(), lr=lr).step()
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=0, atol=1e-7)  # float32: p - lr*g vs p + (-lr)*g


def test_manual_update_reaches_the_fused_optimizer_flat_buffer():
    # after a fused AdamW step the parameters are views into one flat array: a manual write to
    # a parameter must be what the next step starts from
    model, x, y = _model_and_batch()
    ref, _, _ = _model_and_batch()
    opts = [tg.optim.AdamW(m.parameters(), lr=0.01, fused=f) for m, f in ((model, True), (ref, False))]
    for m, opt in zip((model, ref), opts):
        F.cross_entropy(m(x), y).backward()
        opt.step()
        with tg.no_grad():
            for p in m.parameters():
                p *= 0.5
        opt.zero_grad()
        F.cross_entropy(m(x), y).backward()
        opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=0, atol=1e-7)  # fused vs per-tensor: float32 rounding


def test_tensor_from_an_array_or_tensor_is_a_copy():
    # as torch.tensor: an alias would share storage without sharing the version counter
    a = np.ones(3)
    t = tg.tensor(a)
    u = tg.tensor(t)
    a[0] = 5.0
    t[1] = 7.0
    assert t.tolist() == [1, 7, 1] and u.tolist() == [1, 1, 1]


def test_an_op_returning_its_input_array_shares_the_version_counter():
    class Identity(tg.Function):
        def forward(self, x):
            return x

        def backward(self, g):
            return g

    x = vec(1, 2, 3)
    y = Identity.apply(x)
    assert y._data is x._data
    y[0] = 5.0
    assert x._version == 1 and x.tolist() == [5, 2, 3]


# ------------------------------------------------------------------ custom Functions in PyTorch's form
class MulAdd(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y + 1

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * x


class ExpOut(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


def test_custom_function_saved_input_written_in_place_raises():
    w = vec(1, 2, 3, requires_grad=True)
    x = vec(1, 1, 1)
    y = MulAdd.apply(w, x).sum()
    x[0] = 100.0
    with pytest.raises(RuntimeError, match=r"float64 tensor of shape \(3,\)\], which is input 1 of MulAddBackward"):
        y.backward()


def test_custom_function_saved_output_written_in_place_raises():
    w = vec(0.5, 1.0, requires_grad=True)
    y = ExpOut.apply(w)
    loss = y.sum()
    with tg.no_grad():
        y *= 2  # the output shares its storage (and version counter) with the tensor forward saved
    with pytest.raises(RuntimeError, match=r"which is output 0 of ExpOutBackward, is at version 1"):
        loss.backward()


@pytest.mark.parametrize("device", ["cpu", "strict"])
def test_unfold_is_a_view_of_its_input_as_in_torch(device):
    """Tensor.unfold shares its input's memory (PyTorch's view, backend.windows): a write to the
    input shows in the windows, a write through windows that do not overlap shows in the input,
    and one value written into overlapping windows (fill_, t[i] = v) is what PyTorch writes."""
    torch = pytest.importorskip("torch")
    x, tx = tg.arange(10.0, device=device), torch.arange(10.0)
    windows, twindows = x.unfold(0, 3, 2), tx.unfold(0, 3, 2)
    x.mul_(2), tx.mul_(2)
    assert windows.tolist() == twindows.tolist()
    apart, tapart = x.unfold(0, 2, 2), tx.unfold(0, 2, 2)
    apart.add_(1), tapart.add_(1)
    assert x.tolist() == tx.tolist() and windows.tolist() == twindows.tolist()
    overlapping, toverlapping = x.unfold(0, 4, 1), tx.unfold(0, 4, 1)
    overlapping[2] = 5.0
    toverlapping[2] = 5.0
    assert x.tolist() == tx.tolist() and overlapping.tolist() == toverlapping.tolist()
    assert backend.storage_of(overlapping._data) is backend.storage_of(x._data)  # no copy (9x the memory)


@pytest.mark.parametrize("device", ["cpu", "strict"])
def test_a_write_that_reads_a_tensor_whose_elements_share_memory_is_refused_as_in_torch(device):
    """An expand (stride 0) refuses +=, clamp_, copy_, normal_ with PyTorch's error; so do
    overlapping unfold windows, where PyTorch adds once per window holding an element (which
    NumPy's in-place ufuncs do not reproduce: refused rather than a different value)."""
    torch = pytest.importorskip("torch")
    writes = {"add_": lambda t: t.add_(1), "iadd": lambda t: t.__iadd__(1), "clamp_": lambda t: t.clamp_(0, 1),
              "copy_": lambda t: t.copy_(t.clone()), "normal_": lambda t: t.normal_()}  # fmt: skip
    for name, write in writes.items():
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor") as torch_error:
            write(torch.zeros(3).expand(2, 3))
        with pytest.raises(RuntimeError) as ours:
            write(tg.zeros(3, device=device).expand(2, 3))
        assert str(ours.value) == str(torch_error.value), name
        x = tg.arange(10.0, device=device)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write(x.unfold(0, 3, 1))
        assert x.tolist() == list(range(10)), name  # nothing written
    row = tg.zeros(3, device=device).expand(2, 3)[0]  # one row of an expand overlaps nothing of itself
    assert not backend.overlaps_itself(row._data)


@pytest.mark.parametrize("device", ["cpu", "strict"])
def test_one_value_written_into_an_expand_lands_in_its_memory_as_in_torch(device):
    """fill_, zero_, masked_fill_ and y[i] = v where y[i] overlaps nothing of itself write into an
    expand, as PyTorch's do (NumPy's broadcast view is read-only: backend.writable), with PyTorch's
    deprecation warnings for masked_fill_ and advanced indices, the same ones; y[:, 0] = v, whose
    places share one element, is refused with PyTorch's error, as its copy_ refuses it."""
    torch = pytest.importorskip("torch")
    import warnings  # noqa: PLC0415

    mask = [[True, False, False], [False, False, False]]
    kw = {tg: {"device": device}, torch: {}}
    writes = [lambda t, lib: t.fill_(2.0), lambda t, lib: t.zero_(), lambda t, lib: t.__setitem__((1, 2), 7.0),
              lambda t, lib: t.__setitem__(0, lib.tensor([1.0, 2.0, 3.0], **kw[lib])),
              lambda t, lib: t.masked_fill_(lib.tensor(mask, **kw[lib]), 3.0),
              lambda t, lib: t.__setitem__(lib.tensor(mask, **kw[lib]), 4.0),
              lambda t, lib: t.__setitem__((lib.tensor([0], **kw[lib]), lib.tensor([2], **kw[lib])), 6.0),
              lambda t, lib: t.__setitem__(lib.tensor(mask, **kw[lib]), lib.tensor([8.0], **kw[lib])),
              lambda t, lib: t.__setitem__(lib.tensor(mask, **kw[lib]), lib.tensor([[9.0]], **kw[lib])),
              lambda t, lib: t.__setitem__(lib.tensor([True, False], **kw[lib]), 1.0)]  # fmt: skip

    def warned(write, t, lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write(t, lib)
        return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]

    ours, theirs = tg.zeros(3, device=device), torch.zeros(3)
    for write in writes:
        assert warned(write, ours.expand(2, 3), tg) == warned(write, theirs.expand(2, 3), torch)
        assert ours.tolist() == theirs.tolist()
    assert ours._version == len(writes)  # the expand shares its base's version counter
    assert warned(writes[4], tg.zeros(2, 3, device=device), tg) == []  # no expand: no warning
    for value in (5.0, tg.tensor([1.0, 2.0], device=device)):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            ours.expand(2, 3)[:, 0] = value
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.zeros(3).expand(2, 3)[:, 0] = 5.0
    assert ours.tolist() == theirs.tolist()


class _NoBase(np.ndarray):
    """An array sharing its memory with no `.base`: what CuPy's as_strided returns (unfold on a GPU)."""

    base = property(lambda self: None)


@pytest.mark.parametrize("cupy_like", [False, True])
def test_unfold_windows_are_known_as_a_view_without_a_base(cupy_like, monkeypatch):
    """The engine knows unfold's output as a view of its input by the op's declaration
    (Function.output_views), not by the array's `.base`, which CuPy's as_strided leaves None: a
    write into the input after a recorded op saved the windows raises, windows taken before a recorded
    write into a graph input are re-derived from it when used after it, and a value that requires
    grad written through the windows of a tensor outside the graph is recorded on it, on either kind
    of array (PyTorch's gradients, never a lost one)."""
    if cupy_like:
        windows = backend.windows
        monkeypatch.setattr(backend, "windows", lambda xp, a, *args: windows(xp, a, *args).view(_NoBase))
    x, w = tg.arange(6.0), tg.ones(3, 2, requires_grad=True)
    y = (x.unfold(0, 2, 2) * w).sum()
    x.add_(100.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    a, v = tg.arange(6.0, requires_grad=True), tg.tensor(2.0, requires_grad=True)
    x = a * 1
    windows_of_x = x.unfold(0, 2, 2)
    x[0] = v
    windows_of_x.sum().backward()  # re-derived from x after the write, as PyTorch's
    assert a.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0] and v.grad.item() == 1.0
    plain, ones = tg.zeros(6), tg.ones(2, requires_grad=True)
    plain.unfold(0, 2, 2)[1] = ones * 3  # recorded on plain at places 2 and 3, as PyTorch's
    assert plain.tolist() == [0, 0, 3, 3, 0, 0]
    (plain * tg.arange(6.0)).sum().backward()
    assert ones.grad.tolist() == [6.0, 9.0]


def test_contiguous_copies_a_view_whose_elements_are_not_in_row_major_order_as_torch():
    torch = pytest.importorskip("torch")
    x, tx = tg.arange(6.0), torch.arange(6.0)
    rows, trows = x.unfold(0, 2, 1).contiguous(), tx.unfold(0, 2, 1).contiguous()
    rows[0, 0], trows[0, 0] = 99.0, 99.0  # a copy: the input keeps its values
    assert x.tolist() == tx.tolist() == list(range(6)) and rows.tolist() == trows.tolist()
    grid = x.reshape(2, 3)
    assert grid.contiguous() is grid  # row-major already: itself, as torch
    a = tg.arange(6.0, requires_grad=True)
    flipped = a.reshape(2, 3).t().contiguous()
    flipped[0, 0] = 5.0
    (flipped * flipped).sum().backward()
    assert a.tolist() == list(range(6)) and a.grad.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


@pytest.mark.parametrize("device", ["cpu", "strict"])
@pytest.mark.parametrize(
    "index, value_shape",
    [
        ("mask", (1, 1)),
        ("mask", (1, 1, 2)),
        ("mask", (1,)),
        ("row mask", (1, 1, 3)),
        ("slice", (1, 1, 2)),
        ("ints", (1, 2)),
        ("one row", (1, 3)),
    ],
)
def test_an_assigned_value_loses_its_leading_ones_as_in_torch(device, index, value_shape):
    """y[index] = v takes v without its leading dims of size 1, as PyTorch's indexing does: a
    boolean index's assignment in NumPy takes no more than one dim (its TypeError leaked before).
    The values and both gradients are PyTorch's."""
    torch = pytest.importorskip("torch")
    mask = [[True, False, True], [False, False, False]]
    indices = {
        "mask": lambda lib, kw: lib.tensor(mask, **kw),
        "row mask": lambda lib, kw: lib.tensor([False, True], **kw),
        "slice": lambda lib, kw: (0, slice(0, 2)),
        "ints": lambda lib, kw: (lib.tensor([0, 1], **kw), lib.tensor([1, 2], **kw)),
        "one row": lambda lib, kw: 1,
    }
    results = []
    for lib, kw in ((tg, {"device": device}), (torch, {})):
        base = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True, **kw)
        v = lib.arange(1, 1 + math.prod(value_shape), dtype=lib.float64, **kw).reshape(value_shape)
        v.requires_grad_(True)
        y = base * 2
        y[indices[index](lib, kw)] = v * 10
        (y * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, **kw)).sum().backward()
        results.append((y.tolist(), base.grad.tolist(), v.grad.tolist(), tuple(v.grad.shape)))
    assert results[0] == results[1]


def test_a_read_only_array_is_not_written_through():
    """An in-place write into a tensor over a read-only view of writable memory (a user's
    `flags.writeable = False`, a gradient the engine made as NumPy's broadcast) raises NumPy's
    error: only an expand's one value goes into its read-only memory (backend.writable)."""
    base = np.zeros(6)
    ro = base[:3]
    ro.flags.writeable = False
    t = tg.Tensor(ro)
    for write in (lambda: t.add_(1), lambda: t.__setitem__(0, 5.0), lambda: t.fill_(2.0)):
        with pytest.raises(ValueError, match="read-only"):
            write()
    assert base.tolist() == [0.0] * 6
    # a hook writing into its gradient, made as a broadcast another input's gradient shares: refused
    a = tg.tensor([[1.0], [2.0]], requires_grad=True)
    b = tg.ones(2, requires_grad=True)
    h = a * 1
    h.register_hook(lambda g: g.mul_(10))
    with pytest.raises(ValueError, match="read-only"):
        ((h.sum(1) + b) * 1).sum().backward()
