"""The lecture's models: parameter counts, shapes, the points of behaviour the write-up makes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorgrad as tg
from gpt import PRESETS, build_model, count_parameters, get_config
from gpt.model import FeedForward, Head, MultiHeadAttention


@pytest.mark.parametrize("name", list(PRESETS))
def test_parameter_counts_match_the_lecture(name):
    assert count_parameters(build_model(name)) == PRESETS[name].reference["params"]


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "large"])
def test_forward_shapes_and_loss_at_init(name):
    model = build_model(name)
    idx = tg.randint(65, (32, 8))
    logits, loss = model(idx, idx)
    assert logits.shape == (32, 8, 65)
    # At initialisation the prediction is close to uniform over 65 characters: loss ~ ln 65 = 4.17
    # (the write-up's step 0: 4.28-4.31 with PyTorch's default init).  The bigram's N(0, 1) logit
    # table adds E[logsumexp] - ln 65 ~ sigma^2 / 2 = 0.5.  0.4 is several standard errors of a
    # 256-position mean and far below what a broken model gives.
    expected = math.log(65) + (0.5 if name == "bigram" else 0.1)
    assert abs(loss.item() - expected) < 0.4
    logits, loss = model(idx)
    assert loss is None


def test_state_dict_keys_are_the_lectures():
    keys = set(build_model("small").state_dict())
    for k in [
        "token_embedding_table.weight",
        "position_embedding_table.weight",
        "blocks.0.sa.heads.0.key.weight",
        "blocks.0.sa.heads.3.value.weight",
        "blocks.0.sa.heads.0.tril",
        "blocks.0.sa.proj.weight",
        "blocks.2.ffwd.net.0.weight",
        "blocks.2.ffwd.net.2.bias",
        "blocks.0.ln1.weight",
        "blocks.0.ln2.bias",
        "ln_f.weight",
        "lm_head.weight",
        "lm_head.bias",
    ]:
        assert k in keys, k


@pytest.mark.parametrize("name", ["head", "multihead", "small"])
def test_fast_attention_equals_the_lectures_loop_over_heads(name):
    """The batched path stacks the same per-head weights: same logits, same gradients."""
    tg.manual_seed(3)
    fast = build_model(name)
    slow = build_model(name, fast_attention=False)
    slow.load_state_dict(fast.state_dict())
    fast.double()
    slow.double()
    idx = tg.randint(65, (3, 8))
    lf, loss_f = fast(idx, idx)
    ls, loss_s = slow(idx, idx)
    # float64, same math in another order: agreement to rounding.
    np.testing.assert_allclose(lf.numpy(), ls.numpy(), rtol=1e-10, atol=1e-12)
    loss_f.backward()
    loss_s.backward()
    slow_grads = dict(slow.named_parameters())
    for n, p in fast.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), slow_grads[n].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)


def test_attention_scales_by_head_size_not_n_embd():
    tg.manual_seed(0)
    head = Head(n_embd=32, head_size=8, block_size=8).double()
    x = tg.tensor(np.random.default_rng(0).standard_normal((1, 4, 32)))
    k, q, v = head.key(x), head.query(x), head.value(x)
    wei = (q @ k.transpose(-2, -1)) * 8**-0.5  # head_size ** -0.5, not 32 ** -0.5
    wei = wei.masked_fill(tg.tril(tg.ones(4, 4)) == 0, float("-inf")).softmax(-1)
    np.testing.assert_allclose(head(x).numpy(), (wei @ v).numpy(), rtol=1e-12)
    video = Head(32, 8, 8, attn_scale="n_embd").double()
    video.load_state_dict(head.state_dict())
    assert not np.allclose(video(x).numpy(), head(x).numpy())


def test_causal_mask_is_sliced_so_short_contexts_work():
    model = build_model("small")
    for T in (1, 3, 8):
        logits, _ = model(tg.randint(65, (2, T)))
        assert logits.shape == (2, T, 65)


def test_future_tokens_do_not_change_the_past():
    tg.manual_seed(1)
    model = build_model("small").double()
    idx = tg.randint(65, (1, 8))
    other = idx.numpy().copy()
    other[0, 5:] = (other[0, 5:] + 1) % 65
    a, _ = model(idx)
    b, _ = model(tg.tensor(other))
    np.testing.assert_allclose(a.numpy()[0, :5], b.numpy()[0, :5], rtol=1e-12)
    assert not np.allclose(a.numpy()[0, 5:], b.numpy()[0, 5:])


def test_ffn_acts_on_each_position_alone():
    tg.manual_seed(2)
    ffwd = FeedForward(32).double()
    x = tg.tensor(np.random.default_rng(1).standard_normal((2, 8, 32)))
    np.testing.assert_allclose(ffwd(x)[:, 3].numpy(), ffwd(x[:, 3]).numpy(), rtol=1e-12)


def test_heads_in_a_plain_list_would_be_invisible_but_modulelist_registers_them():
    mha = MultiHeadAttention(4, 8, 32, 8)
    assert len([n for n, _ in mha.named_parameters() if n.startswith("heads.")]) == 12


def test_dropout_is_off_in_eval_and_on_in_train():
    model = build_model("large", n_layer=1, n_embd=48, n_head=2, block_size=16)
    idx = tg.randint(65, (2, 16))
    model.eval()
    a, _ = model(idx)
    b, _ = model(idx)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    model.train()
    c, _ = model(idx)
    assert not np.array_equal(a.numpy(), c.numpy())


def test_mask_buffer_moves_with_the_model():
    model = build_model("small").to("strict")
    assert model.blocks[0].sa.heads[0].tril.device == "strict"
    logits, loss = model(tg.randint(65, (2, 8), device="strict"), tg.randint(65, (2, 8), device="strict"))
    assert logits.device == "strict"
    loss.backward()


def test_bad_inputs_give_clear_errors():
    model = build_model("small")
    with pytest.raises(IndexError, match="65"):
        model(tg.tensor([[1, 2, 70]]))
    with pytest.raises(ValueError, match="block_size"):
        model(tg.randint(65, (1, 9)))
    with pytest.raises(ValueError, match="unknown preset"):
        build_model("huge")
    with pytest.raises(ValueError, match="unknown config field"):
        get_config("small", n_embed=3)


def test_generate_crops_the_context_and_appends_tokens():
    tg.manual_seed(0)
    model = build_model("small")
    model.train()
    out = model.generate(tg.zeros(2, 1, dtype=tg.long), max_new_tokens=20)
    assert out.shape == (2, 21)
    assert out.dtype == tg.long
    assert 0 <= out.numpy().min() and out.numpy().max() < 65
    assert model.training  # restored
    long_prompt = tg.randint(65, (1, 30))
    assert model.generate(long_prompt, 5).shape == (1, 35)
    assert model.generate(long_prompt, 5, top_k=1).shape == (1, 35)


def test_generate_is_reproducible_with_a_seed():
    model = build_model("small")
    tg.manual_seed(5)
    a = model.generate(tg.zeros(1, 1, dtype=tg.long), 30)
    tg.manual_seed(5)
    b = model.generate(tg.zeros(1, 1, dtype=tg.long), 30)
    assert a.tolist() == b.tolist()


def test_top_k_1_is_greedy():
    tg.manual_seed(0)
    model = build_model("small")
    idx = tg.zeros(1, 1, dtype=tg.long)
    out = model.generate(idx, 1, top_k=1)
    logits, _ = model(idx)
    assert out[0, 1].item() == int(logits[0, -1].numpy().argmax())


@pytest.mark.parametrize("temperature", [1e-45, 5e-324, 1e-300])
def test_a_temperature_towards_0_samples_greedily(temperature):
    """The limit T -> 0 of softmax(logits / T) is the most likely id: a temperature so small that
    logits / T overflows (or T rounds to 0 in float32) draws it, not NaN probabilities."""
    tg.manual_seed(0)
    model = build_model("small")
    idx = tg.zeros(2, 1, dtype=tg.long)
    greedy = model.generate(idx, 12, top_k=1)
    assert model.generate(idx, 12, temperature=temperature).tolist() == greedy.tolist()
    assert model.generate(idx, 12, temperature=temperature, top_k=3).tolist() == greedy.tolist()


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan"), float("inf")])
def test_a_temperature_that_is_not_a_finite_positive_number_is_refused(temperature):
    model = build_model("bigram")
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        model.generate(tg.zeros(1, 1, dtype=tg.long), 1, temperature=temperature)


@pytest.mark.parametrize("name", ["small", "head", "deep"])
def test_kv_cache_generates_the_same_tokens_as_recomputing(name):
    """Same seed, same model: the cached path (while the context fits) and the full recompute
    draw the same tokens, through the window sliding past block_size (8) too."""
    tg.manual_seed(0)
    model = build_model(name).double()  # float64: rounding differences cannot flip a draw
    prompt = tg.tensor([[1, 2, 3]])
    tg.manual_seed(11)
    cached = model.generate(prompt, 12, use_cache=True)
    tg.manual_seed(11)
    plain = model.generate(prompt, 12, use_cache=False)
    assert cached.tolist() == plain.tolist()


def test_kv_cache_logits_equal_the_full_forward():
    from gpt.model import KVCache

    tg.manual_seed(0)
    model = build_model("small").double().eval()
    idx = tg.randint(65, (2, 8))
    full, _ = model(idx)
    cache = KVCache(len(model.blocks))
    first, _ = model(idx[:, :5], cache=cache)
    rest = [model(idx[:, t : t + 1], cache=cache)[0] for t in range(5, 8)]
    stepwise = tg.cat([first] + rest, dim=1)
    np.testing.assert_allclose(stepwise.numpy(), full.numpy(), rtol=1e-10, atol=1e-12)  # float64 rounding
