"""The fused AdamW (flat arrays, one update for the whole group) gives the same numbers as the
per-parameter loop, and survives what replaces a parameter's array."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model
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


def test_parameters_become_views_and_gradients_are_copied_into_the_flat_buffer_at_step_time():
    model, opt = _run(fused=True, steps=2)
    flat = next(iter(opt._flat.values()))
    for p, view, gview in zip(model.parameters(), flat.data_views, flat.grad_views):
        assert p._data is view
        assert p.grad._data is not gview  # backward knows nothing of the optimizer
        np.testing.assert_array_equal(gview, p.grad._data)  # the step's copy


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
    opt = AdamW([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.numpy().tolist() == [1.0, 1.0] and b not in opt.state
    (a.sum() + b.sum()).backward()
    opt.step()  # a at step 2, b at step 1: one flat update each
    assert opt.state[a]["step"] == 2 and opt.state[b]["step"] == 1
    flat = opt._flat[id(opt.param_groups[0])]
    assert a._data is flat.data_views[0] and b._data is flat.data_views[1]  # still the flat arrays


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

    updates = []
    real_update = adamw._update
    monkeypatch.setattr(adamw, "_update", lambda *args: updates.append(args[4]) or real_update(*args))
    a, opt = _run(fused=True, steps=6, between=freeze)
    fused_updates = len(updates)
    b, _ = _run(fused=False, steps=6, between=freeze)
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)  # the same float64 operations
    steps = {opt.state[p]["step"] for p in a.parameters()}
    assert steps == {4, 6}  # the frozen ones two steps behind
    assert fused_updates <= 6 * 5  # a few runs per step; the loop makes one update per parameter with a
    # gradient (72 tensors: 4 * 72 + 2 * 57 = 402 in these 6 steps)
    assert len(updates) - fused_updates > 6 * 30


def test_fused_true_refuses_mixed_dtypes():
    with pytest.raises(ValueError, match="fused"):
        AdamW([tg.nn.Parameter(tg.ones(2)), tg.nn.Parameter(tg.ones(2, dtype=tg.float64))], fused=True)
