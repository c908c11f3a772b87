"""The fused AdamW (flat arrays, one update for the whole group) gives the same numbers as the
per-parameter loop, and survives what replaces a parameter's array."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model
from tensorgrad import backend
from tensorgrad.optim import AdamW

IDX = np.random.default_rng(0).integers(0, 65, (4, 8))


def _run(fused, steps=5, model_fn=None, between=None):
    tg.manual_seed(0)
    model = build_model("small").double()
    opt = AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, fused=fused)
    idx = tg.tensor(IDX)
    for i in range(steps):
        _, loss = model(idx, idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if between is not None:
            model = between(i, model, opt) or model
    return model, opt


def test_fused_equals_the_per_parameter_loop():
    a, _ = _run(fused=True)
    b, _ = _run(fused=False)
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        # The same float64 operations on the same numbers, in a flat array or per tensor: identical.
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)


def test_parameters_keep_their_arrays_and_gradients_are_copied_into_the_flat_buffer_at_step_time():
    tg.manual_seed(0)
    model = build_model("small").double()
    arrays = [p._data for p in model.parameters()]
    opt = AdamW(model.parameters(), lr=1e-2, fused=True)
    idx = tg.tensor(IDX)
    for _ in range(2):
        _, loss = model(idx, idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
    flat = next(iter(opt._flat.values()))
    assert type(flat.prepared["update"][1]).__module__ == "tensorgrad.kernels.cpu_ops"  # the CPU's kernel op
    for p, array, gview in zip(model.parameters(), arrays, flat.grad_views):
        assert p._data is array  # its own array, updated in place
        assert not any(np.shares_memory(array, flat_array) for flat_array in (flat.grad, *flat.state.values()))
        assert p.grad._data is not gview  # backward knows nothing of the optimizer
        np.testing.assert_array_equal(gview, p.grad._data)  # the step's copy


def _holdings(lin):
    """Every way of holding a parameter (name -> (what is held, the values it must show given the
    weight's and the bias's)): each shares the parameter's storage, so each must see every step."""
    w, b = lin.weight, lin.bias
    return {
        "state_dict()['weight']": (lin.state_dict()["weight"], lambda w, b: w),
        "state_dict()['bias']": (lin.state_dict()["bias"], lambda w, b: b),
        "weight.detach()": (w.detach(), lambda w, b: w),
        "weight.data": (w.data, lambda w, b: w),
        "weight._data (the backend array)": (w._data, lambda w, b: w),
        "weight.view(-1)": (w.view(-1), lambda w, b: w.reshape(-1)),
        "weight[0:1]": (w[0:1], lambda w, b: w[0:1]),
        "weight[:, 1]": (w[:, 1], lambda w, b: w[:, 1]),
        "weight[0]": (w[0], lambda w, b: w[0]),
        "bias.detach()": (b.detach(), lambda w, b: b),
    }


def _check_holdings(held, lin, when):
    w, b = lin.weight.numpy(), lin.bias.numpy()
    for name, (h, expect) in held.items():
        values = backend.to_numpy(h) if backend.is_array(h) else h.numpy()
        np.testing.assert_array_equal(values, expect(w, b), err_msg=f"{name}, taken {when}")


@pytest.mark.parametrize("fused", [True, False])
def test_every_way_of_holding_a_parameter_sees_the_step(device, fused):
    """A parameter keeps its storage through every step, fused or not: whatever shares it (the
    module's state_dict, detach(), .data, the backend array, views and slices), taken before the
    optimizer was built or between its construction and its first step, shows the updated values;
    and after a model.to round trip or a load_state_dict, what is taken then shows them too."""
    x = tg.ones(3, 2, device=device)
    lin = tg.nn.Linear(2, 2, device=device)
    with tg.no_grad():
        lin.weight.fill_(1.0)
        lin.bias.fill_(0.5)
    arrays = (lin.weight._data, lin.bias._data)
    held = {"before the optimizer": _holdings(lin)}
    opt = AdamW(lin.parameters(), lr=0.1, fused=fused)
    held["before the first step"] = _holdings(lin)

    def step():
        opt.zero_grad()
        lin(x).square().sum().backward()
        opt.step()

    step()
    # 1 * (1 - lr * weight_decay) - lr * m_hat / (sqrt(v_hat) + eps) with m_hat / sqrt(v_hat) = 1 at
    # the first step (PyTorch: 0.899); rtol: 0.999 - 0.1 is rounded to float32 along the way
    np.testing.assert_allclose(lin.weight.numpy(), np.full((2, 2), 0.899), rtol=1e-6)
    for when, h in held.items():
        _check_holdings(h, lin, when)
    step()
    assert lin.weight._data is arrays[0] and lin.bias._data is arrays[1]
    for when, h in held.items():
        _check_holdings(h, lin, when)

    other = tg.nn.Linear(2, 2, device=device)
    lin.load_state_dict(other.state_dict())  # in place, into the parameters the optimizer holds
    step()
    for when, h in held.items():
        _check_holdings(h, lin, when)
    lin.to("strict" if device != "strict" else "cpu")
    lin.to(device)  # every parameter's array replaced: what is taken now holds the new ones
    held = {"after model.to": _holdings(lin)}
    for _ in range(2):
        step()
        _check_holdings(held["after model.to"], lin, "after model.to")


def test_moving_the_model_between_steps_keeps_the_trajectory():
    def move(i, model, opt):
        if i == 1:
            model.to("strict")
            model.to("cpu")  # every parameter's array replaced: the flat views are broken

    a, _ = _run(fused=True, between=move)
    b, _ = _run(fused=False)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_load_state_dict_into_a_fused_optimizer():
    ref, _ = _run(fused=False, steps=4)
    model, opt = _run(fused=True, steps=1)  # fused, then given another run's state at step 2
    other, other_opt = _run(fused=False, steps=2)
    model.load_state_dict(other.state_dict())
    opt.load_state_dict(other_opt.state_dict())
    idx = tg.tensor(IDX)
    for _ in range(2):
        _, loss = model(idx, idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())  # same float64 ops: identical


def test_a_parameter_without_gradient_is_left_and_the_rest_still_update_in_flat_runs():
    a = tg.nn.Parameter(tg.ones(3))
    b = tg.nn.Parameter(tg.ones(2))
    arrays = (a._data, b._data)
    opt = AdamW([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.numpy().tolist() == [1.0, 1.0] and b not in opt.state
    (a.sum() + b.sum()).backward()
    opt.step()  # a at step 2, b at step 1: one flat update each
    assert opt.state[a]["step"] == 2 and opt.state[b]["step"] == 1
    assert a._data is arrays[0] and b._data is arrays[1]  # their own arrays, updated in place
    assert opt._flat[id(opt.param_groups[0])].params == [a, b]  # by the fused path


def test_parameters_at_different_steps_keep_the_loops_numbers_and_the_fused_path(monkeypatch):
    """Some parameters frozen for a few steps (no gradient), then trained again: their step counts
    stay behind the others' for good.  The fused step updates each run of consecutive parameters at
    one step count on the flat arrays (a few updates, not one per parameter) and gives the loop's
    numbers exactly."""
    from tensorgrad.optim import adamw

    def freeze(i, model, opt):
        frozen = i in (0, 1)  # the token embedding and the first block's attention: no gradient at steps 1, 2
        for p in [model.token_embedding_table.weight, *model.blocks[0].sa.parameters()]:
            p.requires_grad_(not frozen)

    updates = []  # the step count of each update: the fused runs', then the loop's
    real_params_update, real_update = adamw._params_update, adamw._update

    def params_update(flat):
        update = real_params_update(flat)
        return lambda *args, step, **hyper: updates.append(step) or update(*args, step=step, **hyper)

    monkeypatch.setattr(adamw, "_params_update", params_update)
    monkeypatch.setattr(adamw, "_update", lambda *args: updates.append(args[4]) or real_update(*args))
    a, opt = _run(fused=True, steps=6, between=freeze)
    fused_updates = len(updates)
    assert fused_updates >= 6  # the fused path ran, one update per run at least
    b, _ = _run(fused=False, steps=6, between=freeze)
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)  # the same float64 operations
    steps = {opt.state[p]["step"] for p in a.parameters()}
    assert steps == {4, 6}  # the frozen ones two steps behind
    assert fused_updates <= 6 * 5  # a few runs per step; the loop makes one update per parameter with a
    # gradient (72 tensors: 4 * 72 + 2 * 57 = 402 in these 6 steps)
    assert len(updates) - fused_updates > 6 * 30


@pytest.mark.parametrize("shape", [(1,), (3,)])
def test_a_parameter_replaced_in_its_group_is_the_one_the_next_step_updates(shape):
    """`group["params"][0] = b` between steps, as in PyTorch: the next step updates `b` (its first
    step) and leaves the tensor it replaced.  The flat arrays are matched to the group's parameters
    by identity: compared with `==` (values), a one-element `b` equal to the old parameter was taken
    for it, and the fused step wrote the old tensor; a larger one raised "only a one-element tensor
    converts"."""
    results = []
    for fused in (True, False):
        a = tg.nn.Parameter(tg.zeros(shape))
        opt = AdamW([a], lr=0.1, fused=fused)
        a.sum().backward()
        opt.step()
        b = tg.nn.Parameter(a.detach().clone())  # equal values, another tensor
        before = a.numpy().copy()
        opt.param_groups[0]["params"][0] = b
        opt.zero_grad()
        (b * 2).sum().backward()
        opt.step()
        np.testing.assert_array_equal(a.numpy(), before)  # the replaced tensor: left as it was
        assert opt.state[b]["step"] == 1 and not np.array_equal(b.numpy(), before)
        results.append(b.numpy())
    np.testing.assert_array_equal(results[0], results[1])  # the fused step as the per-parameter loop


def test_fused_true_refuses_mixed_dtypes():
    with pytest.raises(ValueError, match="fused"):
        AdamW([tg.nn.Parameter(tg.ones(2)), tg.nn.Parameter(tg.ones(2, dtype=tg.float64))], fused=True)


@pytest.mark.parametrize("fused", [True, False])
def test_the_state_tensors_held_after_load_state_dict_see_the_steps(fused):
    """opt.state_dict()'s tensors are the live state, as in PyTorch: taken after a load_state_dict
    (whose tensors the optimizer copies in), they show every later step on either path."""
    x = tg.ones(3, 2)
    lin = tg.nn.Linear(2, 2)
    opt = AdamW(lin.parameters(), lr=0.1, fused=fused)
    other = AdamW(lin.parameters(), lr=0.1, fused=False)
    for o in (other, opt):
        o.zero_grad()
        lin(x).square().sum().backward()
        o.step()
    opt.load_state_dict(other.state_dict())
    held = opt.state_dict()["state"]
    loaded = {i: {k: t.numpy() for k, t in s.items() if k != "step"} for i, s in held.items()}
    opt.zero_grad()
    lin(x).square().sum().backward()
    opt.step()
    for i, p in enumerate(lin.parameters()):
        for key in ("exp_avg", "exp_avg_sq"):
            now = opt.state[p][key].numpy()
            assert not np.array_equal(now, loaded[i][key])  # the step changed it
            np.testing.assert_array_equal(held[i][key].numpy(), now, err_msg=f"{key} of parameter {i}")


@pytest.mark.parametrize("path", ["kernels", "reference"])
def test_a_fused_step_is_as_the_loops_when_parameters_share_storage(path):
    """Two Parameters made from one tensor share its storage: the loop updates one, then the other,
    and so does the fused step, one parameter after another (a flat copy written back at the end
    would keep only the second update).  The kernel's parts of so few elements run on one thread."""
    previous = tg.kernels.mode()
    tg.kernels.use(path)
    try:
        results = []
        for fused in (False, True):
            base = tg.tensor([1.0, 2.0, 3.0])
            a, b = tg.nn.Parameter(base), tg.nn.Parameter(base)
            opt = AdamW([a, b], lr=0.1, fused=fused)
            for _ in range(3):
                opt.zero_grad()
                ((a * a).sum() + (b * tg.tensor([1.0, -1.0, 2.0])).sum()).backward()
                opt.step()
            results.append(a.numpy().copy())
        np.testing.assert_array_equal(results[1], results[0])  # the same float32 ops in the same order
    finally:
        tg.kernels.use(previous)


def test_a_parameter_made_read_only_after_the_first_step_is_refused_not_written():
    lin = tg.nn.Linear(2, 2)
    opt = AdamW(lin.parameters(), lr=0.1, fused=True)
    for step in range(2):
        opt.zero_grad()
        lin(tg.ones(1, 2)).sum().backward()
        if step == 1:
            lin.weight._data.flags.writeable = False
            before = lin.weight.numpy().copy()
            with pytest.raises(ValueError, match="read-only"):
                opt.step()
            np.testing.assert_array_equal(lin.weight.numpy(), before)
        else:
            opt.step()
