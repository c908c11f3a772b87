"""Work split over two threads (backend.parallel) gives the same numbers as one pass."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model
from tensorgrad import backend
from tensorgrad.nn import functional as F


def _run(fn, split: bool, monkeypatch):
    monkeypatch.setattr(backend, "_PARALLEL_MIN", 0 if split else 1 << 62)
    monkeypatch.setattr(backend, "_THREADS", 2)
    return fn()


def _grads(out, *inputs):
    g = np.random.default_rng(5).standard_normal(out.shape)
    (out * tg.tensor(g)).sum().backward()
    return [out.numpy()] + [t.grad.numpy() for t in inputs]


def test_layernorm_attention_and_matmul_split_equal_one_pass(monkeypatch):
    rng = np.random.default_rng(0)

    def case():
        x = tg.tensor(rng.standard_normal((6, 5, 8)), requires_grad=True)
        w = tg.tensor(rng.standard_normal(8), requires_grad=True)
        b = tg.tensor(rng.standard_normal(8), requires_grad=True)
        q, k, v = (tg.tensor(rng.standard_normal((4, 2, 5, 3)), requires_grad=True) for _ in range(3))
        tg.manual_seed(0)
        out = F.layer_norm(x, (8,), w, b)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.3)
        mm = q @ k.transpose(-2, -1)
        return _grads(out, x, w, b) + _grads(att + 0, q, k, v) + [mm.numpy()]

    rng = np.random.default_rng(0)
    one = _run(case, False, monkeypatch)
    rng = np.random.default_rng(0)
    two = _run(case, True, monkeypatch)
    for a, b in zip(one, two):
        # float64; the split only regroups the column sums of dw and db: rounding-level differences.
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_fused_adamw_split_equals_one_pass(monkeypatch):
    def train():
        tg.manual_seed(0)
        model = build_model("small").double()
        opt = tg.optim.AdamW(model.parameters(), lr=1e-2)
        idx = tg.tensor(np.random.default_rng(1).integers(0, 65, (4, 8)))
        for _ in range(3):
            _, loss = model(idx, idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [p.numpy() for p in model.parameters()]

    one = _run(train, False, monkeypatch)
    two = _run(train, True, monkeypatch)
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)  # float64, regrouped sums only


@pytest.mark.parametrize("shape", [(7, 9), (31,), (1, 12)])  # rows split; a single row split flat
def test_relu_and_dropout_split_equal_one_pass(monkeypatch, shape):
    def case():
        x = tg.tensor(np.random.default_rng(2).standard_normal(shape), requires_grad=True)
        tg.manual_seed(4)
        y = F.dropout(F.relu(x), p=0.4)
        return _grads(y, x)

    one = _run(case, False, monkeypatch)
    two = _run(case, True, monkeypatch)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)  # elementwise: the same operations on the same numbers


def test_packed_attention_with_dropout_equals_the_split_heads_path():
    """The packed op draws the same dropout mask as scaled_dot_product_attention on the split
    q, k, v (one (B, H, T, T) draw from the same generator) and gives the same gradients."""
    rng = np.random.default_rng(3)
    B, T, H, d = 3, 5, 2, 4
    qkv_data = rng.standard_normal((B, T, 3 * H * d))
    g = rng.standard_normal((B, T, H * d))

    def packed():
        qkv = tg.tensor(qkv_data, requires_grad=True)
        tg.manual_seed(11)
        out = F.packed_self_attention(qkv, H, is_causal=True, dropout_p=0.4)
        (out * tg.tensor(g)).sum().backward()
        return out.numpy(), qkv.grad.numpy()

    def split():
        qkv = tg.tensor(qkv_data, requires_grad=True)
        q, k, v = qkv.view(B, T, 3, H, d).permute(2, 0, 3, 1, 4)
        tg.manual_seed(11)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.4)
        out = out.transpose(1, 2).reshape(B, T, H * d)
        (out * tg.tensor(g)).sum().backward()
        return out.numpy(), qkv.grad.numpy()

    for a, b in zip(packed(), split()):
        # float64; the same operations in the same order: equal up to the last bits of a sum
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    assert (packed()[0] == 0).any()  # dropout did zero some weights (else this proves nothing)
