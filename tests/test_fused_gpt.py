"""The fused GPT (tensorgrad/kernels/fused_gpt.py, kernels/cpu_gpt.py, chosen by gpt/fused.py)
against the op-by-op model it replaces: logits, loss and every parameter's gradient on random
configurations, the dropout masks bit for bit, a few AdamW steps, and the switches that turn it off.

The op-by-op side is the same model object with `model.fused = False`: the same parameters, the
lecture's code through the kernel ops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from gpt import build_model, get_config
from tensorgrad.ops.dropout import keep_mask


def _run(model, idx, targets, fused, seed):
    """logits, loss and every parameter's gradient of one forward and backward, the generator
    seeded first; and one draw from the generator after (its state)."""
    model.fused = fused
    model.zero_grad(set_to_none=True)
    tg.manual_seed(seed)
    logits, loss = model(idx, targets)
    _run.loss_op = type(loss._ctx).__name__
    loss.backward()
    after = tg.rand(4).numpy()
    grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    return logits, loss.item(), grads, after


def _close(a, b, what, floor=0.0):
    # float32 rounding: the two paths compute the same sums in other orders (float64 accumulators
    # in the loops against float32 BLAS, the heads' products as loops), through up to 3 layers of
    # LayerNorm and attention; 2e-5 of the tensor's largest entry is ~170 float32 ulps of it
    # (the differences seen are 3e-7 to 5e-7 of it).  `floor`: see test_fused_matches_op_by_op.
    scale = float(np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=0, atol=2e-5 * scale + floor, err_msg=what)


def _assert_matches(fused, reference):
    """Two `_run` results, the fused op's and the op-by-op model's: logits, loss, every gradient and
    the generator's state after."""
    f_logits, f_loss, f_grads, f_after = fused
    r_logits, r_loss, r_grads, r_after = reference
    _close(f_logits.numpy(), r_logits.numpy(), "logits")
    # the loss: a mean of B * T cross-entropies of those logits, so their rounding, relative to it
    assert f_loss == pytest.approx(r_loss, rel=2e-5, abs=2e-5)
    assert f_grads.keys() == r_grads.keys()
    # A gradient that cancels to ~0 is the rounding of terms as large as the model's other
    # gradients: 1e-6 of the largest of them.
    floor = 1e-6 * max(float(np.abs(g).max()) for g in r_grads.values())
    for name in r_grads:
        _close(f_grads[name], r_grads[name], name, floor)
    np.testing.assert_array_equal(f_after, r_after)  # the same draws: the generator left in one state


@st.composite
def configs(draw):
    n_head = draw(st.integers(1, 4))
    # n_embd >= 4: a LayerNorm of 2 or 3 elements divides by their spread, which can be as small as
    # the draw makes it (at n_embd = 2 its outputs are +-1), so it amplifies the two paths' float32
    # roundings by more than any fixed count of ulps (a found case: 5e-4 relative at n_embd = 2)
    head_size = draw(st.integers(-(-4 // n_head), 8))
    block_size = draw(st.integers(1, 12))
    return dict(
        config=get_config(
            "small", n_head=n_head, n_embd=n_head * head_size, n_layer=draw(st.integers(1, 3)),
            block_size=block_size, dropout=draw(st.sampled_from([0.0, 0.1, 0.5])),
            attn_scale=draw(st.sampled_from(["head_size", "n_embd"])),
        ),
        vocab=draw(st.integers(2, 70)),
        B=draw(st.integers(1, 4)),
        T=draw(st.integers(1, block_size)),
        training=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )  # fmt: skip


@given(case=configs())
def test_fused_matches_op_by_op(case):
    """Logits, loss, every gradient and the generator's state after, dropout on and off, train and eval."""
    c = case
    tg.manual_seed(c["seed"])
    model = build_model(c["config"], vocab_size=c["vocab"])
    model.train(c["training"])
    rng = np.random.default_rng(c["seed"])
    idx = tg.tensor(rng.integers(0, c["vocab"], (c["B"], c["T"])))
    targets = tg.tensor(rng.integers(0, c["vocab"], (c["B"], c["T"])))
    fused = _run(model, idx, targets, True, c["seed"] + 1)
    assert type(fused[0]._ctx).__name__ == "FusedGPT"  # the fused op ran, and its loss
    assert _run.loss_op == "FusedGPTLoss"
    reference = _run(model, idx, targets, False, c["seed"] + 1)
    assert type(reference[0]._ctx).__name__ != "FusedGPT"
    _assert_matches(fused, reference)


@given(case=configs(), positions=st.integers(1, 12))
def test_parts_of_the_batch_match_op_by_op(case, positions):
    """The batch in parts of rows (fused_gpt.part_count: here parts of at least `positions`
    positions, a run of them on each of two threads, even on one core) against the op-by-op
    model, as test_fused_matches_op_by_op, the dropout masks sliced to each part and the gradients
    summed over the parts; and its logits against the fused op's in one part (each row is computed
    alone: the same products, to float32 rounding)."""
    from tensorgrad.kernels import cpu_threads, fused_gpt  # noqa: PLC0415

    c = case
    tg.manual_seed(c["seed"])
    model = build_model(c["config"], vocab_size=c["vocab"])
    model.train(c["training"])
    rng = np.random.default_rng(c["seed"])
    rows = 2 * c["B"] + 2  # 4 to 10 rows: 2 to 10 parts where the positions allow
    idx = tg.tensor(rng.integers(0, c["vocab"], (rows, c["T"])))
    targets = tg.tensor(rng.integers(0, c["vocab"], (rows, c["T"])))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused_gpt, "PART_POSITIONS", 1 << 30)
        assert fused_gpt.part_count(*idx.shape) == 1
        whole, *_ = _run(model, idx, targets, True, c["seed"] + 1)
        mp.setattr(fused_gpt, "PART_POSITIONS", positions)
        mp.setattr(cpu_threads, "_thread_count", lambda: 2)
        P = fused_gpt.part_count(*idx.shape)
        assert rows % P == 0 and (P == 1 or rows // P * c["T"] >= positions)
        assert model(idx)[0]._ctx.saved[4] == P  # the forward runs in these parts
        fused = _run(model, idx, targets, True, c["seed"] + 1)
    assert type(fused[0]._ctx).__name__ == "FusedGPT"
    _close(fused[0].numpy(), whole.numpy(), "logits in parts against one part")
    _assert_matches(fused, _run(model, idx, targets, False, c["seed"] + 1))


@pytest.mark.parametrize("positions", [1 << 30, 8, 1])
@pytest.mark.parametrize("training", [False, True])
def test_no_grad_forward_gives_the_same_logits(positions, training):
    """Under no_grad the op runs cpu_gpt.logits_parts (no arrays kept for a backward): the same
    logits to the bit as the recorded forward, in one part or several, and with dropout the same
    draws (the generator left in the same state)."""
    from tensorgrad.kernels import fused_gpt  # noqa: PLC0415

    model = build_model(get_config("small", dropout=0.2, n_layer=2)).train(training)
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (6, 8)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused_gpt, "PART_POSITIONS", positions)
        tg.manual_seed(3)
        recorded, _ = model(idx)
        after = tg.rand(3).numpy()
        assert type(recorded._ctx).__name__ == "FusedGPT"
        tg.manual_seed(3)
        with tg.no_grad():
            plain, _ = model(idx)
        np.testing.assert_array_equal(tg.rand(3).numpy(), after)
    np.testing.assert_array_equal(plain.numpy(), recorded.detach().numpy())


def test_accepts_declines_no_blocks_and_blocks_of_other_shapes():
    """The blocks' parameters are stacked, so the op takes at least one block, every block of the
    first's shapes; others go to the lecture's code (a model whose blocks differ, built by hand)."""
    from gpt.fused import _plan  # noqa: PLC0415
    from tensorgrad.kernels.fused_gpt import FusedGPT  # noqa: PLC0415

    model = build_model(get_config("small", n_layer=2))
    idx = np.random.default_rng(0).integers(0, 65, (2, 8))
    params = [p._data for p in _plan(model).params]
    config = dict(n_head=4, vocab_size=65, device="cpu", mask=np.tril(np.ones((8, 8), np.bool_)))
    assert FusedGPT.accepts(idx, *params, n_layer=2, **config)
    per = (len(params) - 6) // 2
    assert not FusedGPT.accepts(idx, *params[:2], *params[-4:], n_layer=0, **config)
    wider = list(params)
    wider[2 + per + per - 4] = np.zeros((256, 32), np.float32)  # block 1's first MLP weight, 8C wide
    assert not FusedGPT.accepts(idx, *wider, n_layer=2, **config)
    strided = list(params)
    strided[-2] = np.asfortranarray(params[-2])  # the lm_head's weight in another layout: the op reads C order
    assert not FusedGPT.accepts(idx, *strided, n_layer=2, **config)


def test_a_replaced_parameter_array_is_checked_again():
    """gpt/fused.py asks FusedGPT.accepts_params once per set of parameter arrays (the plan keeps
    the arrays it took): an array replaced after a fused call (here by a column-major copy of the
    lm_head's weight, which the op reads in place) is checked again and sent to the lecture's
    code, and the op runs again once the array is a C-ordered one."""
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    assert _grad_fn(model, idx) == "FusedGPT"
    weight = model.lm_head.weight
    values = weight.numpy().copy()
    weight.data = tg.tensor(values.T.copy()).t()  # the same values, column-major
    assert _grad_fn(model, idx) != "FusedGPT"
    weight.data = tg.tensor(values)
    assert _grad_fn(model, idx) == "FusedGPT"
    weight.data = tg.tensor(values.astype(np.float64))  # another dtype: the op takes float32 only
    assert _grad_fn(model, idx) != "FusedGPT"


def test_a_block_parameter_in_another_layout_is_fused_with_the_same_logits():
    """The blocks' parameters are copied into the stacked arrays, so their layout does not matter:
    a column-major MLP weight still runs fused, with the lecture's logits and gradients to float32
    rounding."""
    model = build_model("small")
    rng = np.random.default_rng(1)
    idx, targets = (tg.tensor(rng.integers(0, 65, (2, 8))) for _ in range(2))
    weight = model.blocks[1].ffwd.net[0].weight
    weight.data = tg.tensor(weight.numpy().T.copy()).t()
    assert not weight._data.flags.c_contiguous and _grad_fn(model, idx) == "FusedGPT"
    fused = _run(model, idx, targets, True, 0)
    reference = _run(model, idx, targets, False, 0)
    _close(fused[0].detach().numpy(), reference[0].detach().numpy(), "logits")
    for name, g in reference[2].items():  # every gradient, the transposed weight's in its layout
        _close(fused[2][name], g, name)


def test_accepts_declines_heads_of_other_sizes():
    """Every head's query, key and value weight must be (C / n_head, C): the stacked (3C, C) weight
    is split back by that size."""
    from gpt.fused import _plan  # noqa: PLC0415
    from tensorgrad.kernels.fused_gpt import FusedGPT  # noqa: PLC0415

    model = build_model(get_config("small", n_layer=1))  # one block: no other block to compare with
    params = [p._data for p in _plan(model).params]
    config = dict(n_layer=1, n_head=4, vocab_size=65)
    assert FusedGPT.accepts_params(*params, **config)
    uneven = list(params)
    uneven[4], uneven[5] = np.zeros((12, 32), np.float32), np.zeros((4, 32), np.float32)  # two queries, 12 + 4 rows
    assert not FusedGPT.accepts_params(*uneven, **config)


def test_a_parameter_in_another_layout_runs_the_lecture_code_with_the_same_logits():
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    weight = model.lm_head.weight
    weight.data = tg.tensor(weight.numpy().T.copy()).t()  # the same values, column-major: a transposed view
    assert not weight._data.flags.c_contiguous and _grad_fn(model, idx) != "FusedGPT"
    model.fused = False
    reference, _ = model(idx)
    model.fused = True
    np.testing.assert_array_equal(model(idx)[0].numpy(), reference.numpy())  # the lecture's code, both times
    weight.data = tg.tensor(np.ascontiguousarray(weight.numpy()))  # row-major again: the fused op
    assert _grad_fn(model, idx) == "FusedGPT"


def test_part_count():
    """Parts divide the batch, hold at least PART_POSITIONS positions each, and are as many as that
    allows; the small model's training batch is one part, its evaluation batches 64."""
    from tensorgrad.kernels.fused_gpt import PART_POSITIONS, part_count  # noqa: PLC0415

    assert PART_POSITIONS == 256
    assert part_count(32, 8) == 1 and part_count(2048, 8) == 64
    assert part_count(64, 8) == 2 and part_count(62, 8) == 1  # 2 parts of 31 rows fall short: one
    assert part_count(124, 8) == 2  # 3 parts would hold 331 positions, but 3 does not divide 124
    assert part_count(1, 64) == 1 and part_count(12, 64) == 3


def test_dropout_masks_are_the_references_bit_for_bit():
    """The fused op's keep masks are those the reference's keep_mask draws from the same seed, in
    the reference's order (per block: attention weights, projection, MLP)."""
    config = get_config("small", dropout=0.3, n_layer=2)
    model = build_model(config)
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (3, 8)))
    tg.manual_seed(7)
    logits, _ = model(idx)
    *masks, inv = logits._ctx.saved[3]  # attention, projection, MLP: each stacked over the blocks
    tg.manual_seed(7)
    B, T, H, C = 3, 8, config.n_head, config.n_embd
    for i in range(config.n_layer):
        for k, shape in enumerate(((B, H, T, T), (B, T, C), (B, T, C))):
            expected = keep_mask("cpu", shape, 0.3)
            np.testing.assert_array_equal(masks[k][i], expected.reshape(masks[k][i].shape), err_msg=f"block {i}, {k}")
            assert inv[i, k] == 1 / (1 - 0.3)


@pytest.mark.parametrize("positions", [1 << 30, 8])
def test_dropout_in_some_blocks_only(positions):
    """Blocks whose dropout differs (one without, one at another p, one site off in another): the
    masks are stacked over the blocks, a block without dropout at a site keeping every element, and
    only the blocks with p > 0 draw, in the reference's order; in one part and in several."""
    from tensorgrad.kernels import fused_gpt  # noqa: PLC0415

    model = build_model(get_config("small", dropout=0.3, n_layer=3))
    model.blocks[0].sa.heads[0].dropout.p = 0.0  # the packed heads read the first head's p
    model.blocks[1].ffwd.net[3].p = 0.1
    model.blocks[2].sa.dropout.p = 0.0
    rng = np.random.default_rng(4)
    idx, targets = (tg.tensor(rng.integers(0, 65, (6, 8))) for _ in range(2))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused_gpt, "PART_POSITIONS", positions)
        fused = _run(model, idx, targets, True, 11)
    assert type(fused[0]._ctx).__name__ == "FusedGPT"
    _assert_matches(fused, _run(model, idx, targets, False, 11))


def test_adamw_training_matches_op_by_op():
    """Five AdamW steps with dropout from one seed: the same parameters on both paths."""
    config = get_config("small", dropout=0.2)
    rng = np.random.default_rng(1)
    batches = [(tg.tensor(rng.integers(0, 65, (8, 8))), tg.tensor(rng.integers(0, 65, (8, 8)))) for _ in range(5)]
    results = {}
    for fused in (True, False):
        tg.manual_seed(0)
        model = build_model(config)
        model.fused = fused
        opt = tg.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        for xb, yb in batches:
            logits, loss = model(xb, yb)
            assert (type(logits._ctx).__name__ == "FusedGPT") == fused
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        results[fused] = {n: p.numpy().copy() for n, p in model.state_dict().items()}
    assert results[True].keys() == results[False].keys()
    for name, ref in results[False].items():
        # each step moves a parameter by at most lr = 1e-3; Adam's m / sqrt(v) turns the gradients'
        # float32 rounding into about that much of a step where a gradient is near 0: 5 steps, 1e-5
        np.testing.assert_allclose(results[True][name], ref, rtol=0, atol=1e-5, err_msg=name)


def _grad_fn(model, idx):
    logits, _ = model(idx)
    return type(logits._ctx).__name__


def test_switches_and_cases_that_run_the_lecture_code():
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    assert _grad_fn(model, idx) == "FusedGPT"
    model.fused = False
    assert _grad_fn(model, idx) != "FusedGPT"
    model.fused = True
    with tg.kernels.reference():  # TENSORGRAD_KERNELS=reference
        assert _grad_fn(model, idx) != "FusedGPT"
    handle = model.blocks[0].ln1.register_forward_hook(lambda m, i, o: None)  # a module hook sees every op
    assert _grad_fn(model, idx) != "FusedGPT"
    handle.remove()
    model.lm_head.weight.register_hook(lambda g: g)  # a tensor hook
    assert _grad_fn(model, idx) != "FusedGPT"
    assert _grad_fn(build_model("small").double(), idx) != "FusedGPT"  # float64
    slow = build_model("small", dropout=0.1, fast_attention=False)  # per-head masks: another order of draws
    assert _grad_fn(slow, idx) != "FusedGPT"
    assert _grad_fn(slow.eval(), idx) == "FusedGPT"  # no draws: the same math
    assert _grad_fn(build_model("residual"), idx) != "FusedGPT"  # no LayerNorm: not the fused block
    assert "fused" not in " ".join(build_model("small").state_dict())


def test_out_of_range_ids_raise_the_references_error():
    model = build_model("small")
    with pytest.raises(Exception) as fused_error:
        model(tg.tensor([[0, 65]]))
    model.fused = False
    with pytest.raises(Exception) as reference_error:
        model(tg.tensor([[0, 65]]))
    assert type(fused_error.value) is type(reference_error.value)
    assert str(fused_error.value) == str(reference_error.value)


def test_in_place_write_before_backward_raises():
    """A parameter written in place between forward and backward raises, as on the op-by-op path."""
    model = build_model("small")
    _, loss = model(tg.tensor([[1, 2, 3]]), tg.tensor([[2, 3, 4]]))
    with tg.no_grad():
        model.lm_head.weight.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_no_grad_forward_matches():
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    with tg.no_grad():
        fused, _ = model(idx)
        model.fused = False
        ref, _ = model(idx)
    assert not fused.requires_grad
    _close(fused.numpy(), ref.numpy(), "logits")  # float32 rounding, as test_fused_matches_op_by_op


def test_training_cli_fused_on_and_off_print_the_same_losses(tmp_path, capsys):
    """`tensorgrad-train --fused off` runs the lecture's code op by op; both print the same losses
    (to their 4 decimals) with dropout on."""
    from gpt.cli import train as cli_train  # noqa: PLC0415

    data = tmp_path / "input.txt"
    data.write_text("First Citizen: thou art a villain, you know it. " * 60)
    lines = {}
    for fused in ("on", "off"):
        cli_train.main(["--preset", "small", "--max-iters", "6", "--eval-interval", "5", "--eval-iters", "2",
                        "--dropout", "0.2", "--data", str(data), "--sample-tokens", "0", "--fused", fused])  # fmt: skip
        lines[fused] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step ")]
    assert len(lines["on"]) == 2
    assert lines["on"] == lines["off"]


def test_a_module_or_parameter_replaced_after_a_call_is_seen():
    """gpt/fused.py keeps what it found of the model between calls: a replaced module or
    parameter is seen at the next call."""
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    assert _grad_fn(model, idx) == "FusedGPT"
    model.lm_head = tg.nn.Linear(32, 65)  # new parameters: the fused op reads them
    model.blocks[1].ln2.weight = tg.nn.Parameter(tg.randn(32))
    fused, _ = model(idx)
    model.fused = False
    reference, _ = model(idx)
    _close(fused.numpy(), reference.numpy(), "logits")  # float32 rounding, as test_fused_matches_op_by_op
    model.fused = True
    model.blocks[0].ffwd.net._modules["1"] = tg.nn.GELU()  # not the block the op fuses: the lecture's code runs
    assert _grad_fn(model, idx) != "FusedGPT"


def test_the_plan_sees_an_entry_added_removed_or_replaced():
    """gpt/fused.py's plan is valid while every registry of every module has its size and every
    entry is the same object: an added buffer, its removal, a replaced parameter and a submodule
    set to None each make it invalid (then it is made again)."""
    from gpt.fused import _Plan

    model = build_model("small", n_layer=2)
    block = model.blocks[1]
    plan = _Plan(model)
    assert plan.valid()
    block.register_buffer("extra", tg.zeros(1))  # added: a registry one entry longer
    assert not plan.valid()
    plan = _Plan(model)
    del block.extra  # removed: one shorter
    assert not plan.valid()
    plan = _Plan(model)
    block.ln1.weight = tg.nn.Parameter(tg.ones(32))  # replaced: the same size, another object
    assert not plan.valid()
    plan = _Plan(model)
    block.ln2 = None  # a submodule taken out: the same size, another value
    assert not plan.valid()
    assert _Plan(model).params is None  # ... and the block without it is not the one the op fuses


def test_a_gradient_of_the_gradient_matches_op_by_op():
    """create_graph through the fused op: the logits recomputed op by op (no dropout drawn), so a
    second pass gives the op-by-op model's values."""
    model = build_model("small", n_layer=2)
    rng = np.random.default_rng(0)
    idx, targets = tg.tensor(rng.integers(0, 65, (2, 8))), tg.tensor(rng.integers(0, 65, (2, 8)))
    params = list(model.parameters())
    results = {}
    for fused in (True, False):
        model.fused = fused
        logits, loss = model(idx, targets)
        assert (type(logits._ctx).__name__ == "FusedGPT") == fused
        assert (type(loss._ctx).__name__ == "FusedGPTLoss") == fused
        grads = tg.autograd.grad(loss, params, create_graph=True)
        penalty = sum((g * g).sum() for g in grads)
        results[fused] = [g.numpy() for g in tg.autograd.grad(penalty, params)]
    floor = 1e-6 * max(float(np.abs(g).max()) for g in results[False])  # as test_fused_matches_op_by_op
    for p_name, a, b in zip([n for n, _ in model.named_parameters()], results[True], results[False]):
        _close(a, b, p_name, floor)


def test_a_gradient_of_the_gradient_with_dropout_drawn_raises_the_lazy_error():
    model = build_model("small", dropout=0.1)
    _, loss = model(tg.tensor([[1, 2, 3]]), tg.tensor([[2, 3, 4]]))
    params = list(model.parameters())
    grads = tg.autograd.grad(loss, params, create_graph=True)  # the first order is fine
    with pytest.raises(RuntimeError, match="double backward is not implemented"):
        tg.autograd.grad(sum((g * g).sum() for g in grads), params)


def test_a_mask_row_with_no_key_is_left_to_the_reference():
    """A query that may attend nowhere is NaN in the reference; the fused attention skips masked
    places, so FusedGPT.accepts declines such a mask and the op-by-op model runs."""
    from tensorgrad.kernels.fused_gpt import FusedGPT, param_order  # noqa: PLC0415

    model = build_model("small")
    state = model.state_dict()
    params = [state[name].numpy() for name in param_order(len(model.blocks), len(model.blocks[0].sa.heads))]
    idx = np.zeros((2, 4), np.int64)
    config = dict(n_layer=len(model.blocks), n_head=len(model.blocks[0].sa.heads), vocab_size=65, device="cpu")
    causal = np.tril(np.ones((4, 4), bool))
    assert FusedGPT.accepts(idx, *params, mask=causal, **config)
    blind = causal.copy()
    blind[2] = False
    assert not FusedGPT.accepts(idx, *params, mask=blind, **config)


def test_gradients_accumulate_over_two_backwards_as_op_by_op():
    """The fused op's gradients become the parameters' .grad as they are (fresh_gradients: the
    heads' weights get row blocks of one array); a second backward adds into each its own."""
    model = build_model("small", n_layer=2)
    rng = np.random.default_rng(3)
    idx, targets = tg.tensor(rng.integers(0, 65, (3, 8))), tg.tensor(rng.integers(0, 65, (3, 8)))
    grads = {}
    for fused in (True, False):
        model.fused = fused
        model.zero_grad(set_to_none=True)
        for _ in range(2):
            logits, loss = model(idx, targets)
            assert (type(logits._ctx).__name__ == "FusedGPT") == fused
            loss.backward()
        grads[fused] = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    floor = 1e-6 * max(float(np.abs(g).max()) for g in grads[False].values())  # as test_fused_matches_op_by_op
    for name, ref in grads[False].items():
        _close(grads[True][name], ref, name, floor)


def test_targets_the_fused_loss_does_not_take_run_the_lectures_loss():
    """Ids out of range or ignore_index (-100) go to F.cross_entropy on the views, as the lecture's
    code: the same error, the same ignored positions."""
    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 4)))
    ignored = tg.tensor([[1, -100, 3, 4], [-100, 2, 2, 2]])
    logits, loss = model(idx, ignored)
    assert type(logits._ctx).__name__ == "FusedGPT" and type(loss._ctx).__name__ != "FusedGPTLoss"
    model.fused = False
    _, reference = model(idx, ignored)
    assert loss.item() == pytest.approx(reference.item(), rel=2e-5)  # float32 rounding, as above
    model.fused = True
    errors = []
    for fused in (True, False):
        model.fused = fused
        with pytest.raises(Exception) as error:
            model(idx, tg.tensor([[1, 2, 3, 65], [0, 0, 0, 0]]))
        errors.append((type(error.value), str(error.value)))
    assert errors[0] == errors[1]


def test_the_plan_does_not_keep_a_replaced_array_alive():
    """The arrays accepts_params took are held weakly: replaced (here by moving the model to another
    device), the old ones are freed, and a new array is never taken for a freed one."""
    import gc  # noqa: PLC0415
    import weakref  # noqa: PLC0415

    model = build_model("small")
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (2, 8)))
    assert _grad_fn(model, idx) == "FusedGPT"
    old = weakref.ref(model.lm_head.weight._data)
    model.to("strict")
    gc.collect()
    assert old() is None
