"""Module behaviour the lecture teaches: what registers, what moves with to(), what is saved."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn

OTHER = "strict"  # the CuPy-like guard device: a second device on any machine


class Masked(nn.Module):
    """A buffer (moves, saved), a non-persistent buffer (moves, not saved), a plain tensor (neither)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("tril", tg.tril(tg.ones(4, 4)))
        self.register_buffer("scratch", tg.zeros(2), persistent=False)
        self.plain = tg.ones(4)

    def forward(self, x):
        return self.fc(x * self.tril[0])


class PlainList(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]  # a Python list: invisible


class Listed(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])


def test_buffer_moves_with_to_and_is_in_state_dict_plain_tensor_does_neither():
    m = Masked()
    assert set(m.state_dict()) == {"fc.weight", "fc.bias", "tril"}
    assert [n for n, _ in m.named_buffers()] == ["tril", "scratch"]
    m.to(OTHER)
    assert m.tril.device == OTHER and m.scratch.device == OTHER and m.fc.weight.device == OTHER
    assert m.plain.device == "cpu"
    with pytest.raises(tg.DeviceError):  # mixing devices in one op fails clearly
        m.fc.weight * m.plain
    x = tg.randn(2, 4, device=OTHER)
    assert m(x).device == OTHER


def test_persistent_false_buffer_is_not_in_state_dict():
    m = Masked()
    assert "scratch" not in m.state_dict()
    m.load_state_dict(Masked().state_dict())  # and is not required when loading


def test_plain_list_is_invisible_module_list_registers():
    assert list(PlainList().parameters()) == []
    listed = Listed()
    assert [n for n, _ in listed.named_parameters()] == [
        "layers.0.weight",
        "layers.0.bias",
        "layers.1.weight",
        "layers.1.bias",
    ]
    assert len(listed.layers) == 2 and isinstance(listed.layers[-1], nn.Linear)
    listed.layers.append(nn.Linear(2, 1))
    listed.layers.extend([nn.ReLU()])
    assert len(listed.layers) == 4 and [type(m).__name__ for m in listed.layers] == ["Linear"] * 3 + ["ReLU"]
    assert "layers.2.weight" in listed.state_dict()
    with pytest.raises(IndexError):
        listed.layers[4]


def test_module_dict_registers_under_its_keys():
    d = nn.ModuleDict({"wte": nn.Embedding(5, 3), "ln_f": nn.LayerNorm(3)})
    assert list(d.state_dict()) == ["wte.weight", "ln_f.weight", "ln_f.bias"]
    assert "wte" in d and len(d) == 2


def test_sequential_chains_and_indexes():
    seq = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    x = tg.randn(4, 3)
    expected = seq[2](seq[1](seq[0](x)))
    np.testing.assert_array_equal(seq(x).numpy(), expected.numpy())
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_named_parameters_keys_and_shared_parameters_listed_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(7, 4)
            self.head = nn.Linear(4, 7, bias=False)
            self.head.weight = self.emb.weight

    m = Tied()
    assert [n for n, _ in m.named_parameters()] == ["emb.weight"]
    assert list(m.state_dict()) == ["emb.weight", "head.weight"]  # as PyTorch: both keys
    assert [n for n, _ in m.named_modules()] == ["", "emb", "head"]
    assert [n for n, _ in m.named_children()] == ["emb", "head"]


def test_train_eval_propagate():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    assert all(x.training for x in m.modules())
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())


def test_repr_like_pytorch():
    m = nn.Sequential(nn.Linear(32, 65), nn.GELU(), nn.LayerNorm(65), nn.Dropout(0.2), nn.ReLU())
    assert repr(nn.Linear(32, 65)) == "Linear(in_features=32, out_features=65, bias=True)"
    assert repr(m) == (
        "Sequential(\n"
        "  (0): Linear(in_features=32, out_features=65, bias=True)\n"
        "  (1): GELU(approximate='none')\n"
        "  (2): LayerNorm((65,), eps=1e-05, elementwise_affine=True)\n"
        "  (3): Dropout(p=0.2, inplace=False)\n"
        "  (4): ReLU()\n"
        ")"
    )
    assert repr(nn.Embedding(65, 32)) == "Embedding(65, 32)"
    assert repr(nn.Parameter(tg.zeros(1))).startswith("Parameter containing:\ntensor(")


def test_load_state_dict_refuses_missing_unexpected_and_shape_mismatch():
    m = Masked()
    sd = m.state_dict()
    missing = {k: v for k, v in sd.items() if k != "fc.bias"}
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "fc.bias"'):
        m.load_state_dict(missing)
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "extra"'):
        m.load_state_dict({**sd, "extra": tg.zeros(1)})
    wrong = {**sd, "fc.weight": tg.zeros(5, 4)}
    with pytest.raises(RuntimeError, match=r"size mismatch for fc\.weight: .*\(5, 4\).*\(3, 4\)"):
        m.load_state_dict(wrong)
    with pytest.raises(RuntimeError, match="size mismatch"):  # shapes are checked even when not strict
        m.load_state_dict(wrong, strict=False)
    result = m.load_state_dict(missing, strict=False)
    assert result.missing_keys == ["fc.bias"] and result.unexpected_keys == []


def test_load_state_dict_copies_in_place_onto_the_modules_device_and_dtype():
    src, dst = Masked(), Masked().to(OTHER)
    weight = dst.fc.weight
    dst.load_state_dict(src.state_dict())
    assert dst.fc.weight is weight and weight.device == OTHER and weight.dtype == tg.float32
    np.testing.assert_array_equal(weight.numpy(), src.fc.weight.numpy())
    src.fc.weight._data[...] = 0  # the copy does not alias the source
    assert weight.numpy().any()


def test_to_keeps_parameter_objects_and_moves_grads():
    m = Masked()
    params = list(m.parameters())
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    m(tg.randn(2, 4)).sum().backward()
    m.to(OTHER).double()
    assert all(a is b for a, b in zip(m.parameters(), params, strict=True))
    assert all(p.device == OTHER and p.dtype == tg.float64 for p in params)
    assert all(p.grad.device == OTHER and p.grad.dtype == tg.float64 for p in params)
    assert m.tril.dtype == tg.float64
    opt.step()  # the optimizer still holds the (moved) parameters
    m.float().to("cpu")
    assert m.fc.weight.dtype == tg.float32 and m.fc.weight.device == "cpu"


def test_to_dtype_leaves_integer_buffers_alone():
    m = nn.Module()
    m.register_buffer("ids", tg.arange(3))
    m.double()
    assert m.ids.dtype == tg.int64


def test_apply_visits_children_then_self():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2)))
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "Linear", "Sequential", "Sequential"]

    def zero_linears(mod):
        if isinstance(mod, nn.Linear):
            nn.init.zeros_(mod.weight)

    m.apply(zero_linears)
    assert not m[0].weight.numpy().any() and not m[1][0].weight.numpy().any()


def test_zero_grad():
    m = nn.Linear(3, 2)
    m(tg.randn(4, 3)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is not None and not m.weight.grad.numpy().any()
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_assignment_rules():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        m.weight = tg.zeros(2, 2)
    m.extra = tg.zeros(1)  # a plain attribute
    assert "extra" not in dict(m.named_parameters()) and "extra" not in m.state_dict()
    del m.bias
    assert [n for n, _ in m.named_parameters()] == ["weight"]

    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Forgot()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = m.nope


def test_parameters_are_float32_and_seeded():
    tg.manual_seed(1)
    a = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 4), nn.LayerNorm(4))
    tg.manual_seed(1)
    b = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 4), nn.LayerNorm(4))
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert p.dtype == tg.float32 and p.requires_grad and isinstance(p, nn.Parameter), name
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_default_init_distributions():
    w = nn.Linear(400, 300).weight.numpy()
    bound = 1 / np.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.mean()) < bound / 60  # 120k draws: the mean's sd is bound/600, so this is 10 sd
    e = nn.Embedding(1000, 100).weight.numpy()
    assert abs(e.mean()) < 0.02 and abs(e.std() - 1) < 0.02  # 100k N(0,1) draws: sd of each ~0.003
    ln = nn.LayerNorm(5)
    assert (ln.weight.numpy() == 1).all() and (ln.bias.numpy() == 0).all()


def test_init_functions_in_place():
    t = tg.empty(1000)
    data = t._data
    nn.init.uniform_(t, -2, 3)
    assert t._data is data and t.numpy().min() >= -2 and t.numpy().max() < 3
    nn.init.normal_(t, mean=5.0, std=0.1)
    assert abs(t.numpy().mean() - 5) < 0.05
    nn.init.constant_(t, 0.5)
    assert (t.numpy() == 0.5).all()
    nn.init.ones_(t)
    assert (t.numpy() == 1).all()
    p = nn.Parameter(tg.zeros(3))
    nn.init.normal_(p)  # a leaf that requires grad: allowed (no graph is recorded)
    assert p.is_leaf and p.grad_fn is None


def test_ops_on_a_parameter_and_its_grad_are_plain_tensors():
    """As in PyTorch: only the leaf itself is a Parameter (the engine makes results with the first
    input's _make, which Parameter sets to Tensor's)."""
    w = nn.Parameter(tg.randn(3))
    y = w * 2
    y.sum().backward()
    assert type(y) is tg.Tensor and type(w.grad) is tg.Tensor and type(w) is nn.Parameter
