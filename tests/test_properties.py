"""Hypothesis property tests over random shapes, broadcast pairs, dims and masks.

Each property runs `max_examples` times per device as set by the hypothesis profile
(tests/conftest.py: 25 under CI, 50 in dev).  The reference values are NumPy's, computed
on the same float64 data; the upstream gradient is random, never ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import backprop, check_unary, leaf
from hypothesis import assume, given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad import backend
from tensorgrad.ops.dropout import keep_mask
from tensorgrad.testing import strategies as S

# Every check here is float64 against NumPy float64 doing the same arithmetic in a possibly
# different order: 1e-10 leaves room for rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


def cotangent(shape):
    return np.random.default_rng(0).standard_normal(shape)


def sum_to(g, shape):
    """NumPy reference for un-broadcasting: sum away leading axes, then axes that were size 1."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def axes_of(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return tuple(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))


# ------------------------------------------------------------------ elementwise, broadcasting
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b, v: (v, v)),
    "sub": (lambda a, b: a - b, lambda a, b, v: (v, -v)),
    "mul": (lambda a, b: a * b, lambda a, b, v: (v * b, v * a)),
    "div": (lambda a, b: a / b, lambda a, b, v: (v / b, -v * a / b**2)),
}


@pytest.mark.parametrize("op", list(BINARY))
@given(data=st.data())
def test_binary_broadcast_forward_and_grad(op, device, data):
    a, b = data.draw(S.broadcastable_arrays(low=0.5, high=3.0))  # positive: no division by ~0
    fn, grads = BINARY[op]
    ta, tb = leaf(a, device), leaf(b, device)
    out = fn(ta, tb)
    np.testing.assert_allclose(out.numpy(), fn(a, b), **TOL)
    v = backprop(out, device)
    da, db = grads(a, b, v)
    for t, want in ((ta, da), (tb, db)):
        assert t.grad.shape == t.shape and t.grad.dtype == np.float64
        # the adjoint of broadcasting is a sum over the broadcast axes
        np.testing.assert_allclose(t.grad.numpy(), sum_to(np.broadcast_to(want, out.shape), t.shape), **TOL)


@given(data=st.data(), scalar=st.floats(-3, 3).filter(lambda s: abs(s) > 0.1), left=st.booleans())
def test_python_scalar_on_either_side(device, data, scalar, left):
    x = data.draw(S.float_arrays(data.draw(S.shapes()), low=0.5, high=3.0))
    t = leaf(x, device)
    for fn in (lambda a, s: a + s, lambda a, s: a - s, lambda a, s: a * s, lambda a, s: a / s):
        out = fn(scalar, t) if left else fn(t, scalar)
        want = fn(scalar, x) if left else fn(x, scalar)
        assert out.dtype == np.float64  # a Python number does not change the tensor's dtype
        np.testing.assert_allclose(out.numpy(), want, **TOL)


UNARY = {
    "exp": (lambda t: t.exp(), np.exp, lambda x: np.exp(x), (-3, 3)),
    "log": (lambda t: t.log(), np.log, lambda x: 1 / x, (0.1, 3)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, lambda x: 0.5 / np.sqrt(x), (0.1, 3)),
    "tanh": (lambda t: t.tanh(), np.tanh, lambda x: 1 - np.tanh(x) ** 2, (-3, 3)),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0, (-3, 3)),
    "neg": (lambda t: -t, np.negative, lambda x: -np.ones_like(x), (-3, 3)),
    "pow3": (lambda t: t**3, lambda x: x**3, lambda x: 3 * x**2, (-3, 3)),
    "pow_-1.5": (lambda t: t**-1.5, lambda x: x**-1.5, lambda x: -1.5 * x**-2.5, (0.1, 3)),
}


@pytest.mark.parametrize("op", list(UNARY))
@given(data=st.data())
def test_unary_forward_and_grad(op, device, data):
    lo, hi = UNARY[op][3]
    x = data.draw(S.float_arrays(data.draw(S.shapes(min_dims=0)), lo, hi))
    check_unary(UNARY[op], x, device)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "tanh", "relu", "gelu", "softmax", "layer_norm", "sum"])
@given(shape=S.shapes())
def test_float32_stays_float32(op, device, shape):
    """float32 in, float32 out, float32 gradient (no silent float64 upcast)."""
    x = np.random.default_rng(0).uniform(0.5, 2, shape).astype(np.float32)
    t = tg.tensor(x, device=device, requires_grad=True)
    fns = {
        "gelu": lambda t: t.gelu(),
        "softmax": lambda t: t.softmax(-1),
        "layer_norm": lambda t: F.layer_norm(t, shape[-1:]),
        "sum": lambda t: t.sum(-1),
    }
    out = fns.get(op, lambda t: getattr(t, op)())(t)
    assert out.dtype == np.float32
    out.backward(tg.tensor(cotangent(out.shape), dtype=tg.float32, device=device))
    assert t.grad.dtype == np.float32 and t.grad.shape == t.shape


# ------------------------------------------------------------------ matmul
@given(data=st.data())
def test_matmul_broadcast_batch(device, data):
    n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
    ba, bb = data.draw(S.broadcastable_shapes(max_dims=2))
    a = data.draw(S.float_arrays(ba + (n, k)))
    b = data.draw(S.float_arrays(bb + (k, m)))
    ta, tb = leaf(a, device), leaf(b, device)
    out = ta @ tb
    np.testing.assert_allclose(out.numpy(), a @ b, **TOL)
    v = backprop(out, device)
    np.testing.assert_allclose(
        ta.grad.numpy(),
        sum_to(v @ np.swapaxes(np.broadcast_to(b, v.shape[:-2] + b.shape[-2:]), -1, -2), a.shape),
        **TOL,
    )
    np.testing.assert_allclose(
        tb.grad.numpy(),
        sum_to(np.swapaxes(np.broadcast_to(a, v.shape[:-2] + a.shape[-2:]), -1, -2) @ v, b.shape),
        **TOL,
    )


# ------------------------------------------------------------------ reductions
@given(data=S.array_and_reduce_dims(), keepdim=st.booleans())
def test_sum_mean(device, data, keepdim):
    x, dim = data
    axes = axes_of(dim, x.ndim)
    for name, ref, scale in (("sum", np.sum, 1.0), ("mean", np.mean, 1.0 / np.prod([x.shape[a] for a in axes]))):
        t = leaf(x, device)
        out = getattr(t, name)(dim, keepdim=keepdim)
        np.testing.assert_allclose(out.numpy(), ref(x, axis=axes, keepdims=keepdim), **TOL)
        v = backprop(out, device)
        vk = v if keepdim else np.expand_dims(v, axes)
        np.testing.assert_allclose(t.grad.numpy(), np.broadcast_to(vk * scale, x.shape), **TOL)


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans())
def test_amax_gradient_sums_to_upstream(device, data, keepdim):
    """Ties (frequent here) share the gradient; over each reduced slice it sums to the upstream value,
    and it is zero away from the maxima."""
    x, dim = data
    axes = axes_of(dim, x.ndim)
    t = leaf(x, device)
    out = t.amax(dim, keepdim=keepdim)
    np.testing.assert_array_equal(out.numpy(), np.amax(x, axis=axes, keepdims=keepdim))
    v = backprop(out, device)
    g = t.grad.numpy()
    np.testing.assert_allclose(g.sum(axis=axes, keepdims=keepdim), v, **TOL)
    assert np.all(g[x < np.amax(x, axis=axes, keepdims=True)] == 0)


@given(data=S.array_and_reduce_dims(), keepdim=st.booleans(), correction=st.sampled_from([0, 1]))
def test_var(device, data, keepdim, correction):
    x, dim = data
    axes = axes_of(dim, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes]))
    assume(n > correction)  # N - correction = 0 divides by zero (nan, as in PyTorch)
    t = leaf(x, device)
    out = t.var(dim, keepdim=keepdim, correction=correction)
    np.testing.assert_allclose(out.numpy(), np.var(x, axis=axes, keepdims=keepdim, ddof=correction), **TOL)
    v = backprop(out, device)
    vk = v if keepdim else np.expand_dims(v, axes)
    want = vk * 2 * (x - x.mean(axis=axes, keepdims=True)) / (n - correction)
    np.testing.assert_allclose(t.grad.numpy(), want, **TOL)


# ------------------------------------------------------------------ softmax family
@given(data=S.array_and_dim(low=-30, high=30), shift=st.floats(-1e3, 1e3))
def test_softmax_properties(device, data, shift):
    x, dim = data
    p = tg.tensor(x, device=device).softmax(dim).numpy()
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=dim), 1.0, **TOL)
    # invariant to adding a constant along dim
    shifted = tg.tensor(x + shift, device=device).softmax(dim).numpy()
    np.testing.assert_allclose(shifted, p, rtol=1e-9, atol=1e-12)  # x + shift rounds x by up to 1e3 * 2e-16
    # log_softmax is log(softmax), computed stably
    logp = tg.tensor(x, device=device).log_softmax(dim).numpy()
    np.testing.assert_allclose(np.exp(logp), p, **TOL)
    np.testing.assert_allclose(logp, np.log(p), rtol=1e-9, atol=1e-9)  # log of a tiny p loses digits


@given(data=S.array_and_dim())
def test_softmax_grad_of_sum_is_zero_and_matches_formula(device, data):
    x, dim = data
    t = leaf(x, device)
    t.softmax(dim).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 0.0, atol=1e-12)  # d(sum softmax)/dx = d(1)/dx = 0
    t.grad = None
    out = t.softmax(dim)
    v = backprop(out, device)
    p = out.numpy()
    np.testing.assert_allclose(t.grad.numpy(), p * (v - (v * p).sum(axis=dim, keepdims=True)), **TOL)


@given(data=st.data())
def test_softmax_with_masked_entries(device, data):
    """-inf entries get probability 0 and gradient 0; the others are the softmax of the rest."""
    shape = data.draw(S.shapes(min_dims=2))
    x = data.draw(S.float_arrays(shape))
    mask = data.draw(S.bool_arrays(shape))
    mask[..., 0] = False  # keep one entry per row
    t = leaf(x, device)
    m = tg.tensor(mask, device=device)
    p = t.masked_fill(m, float("-inf")).softmax(-1)
    assert np.all(p.numpy()[mask] == 0)
    e = np.where(mask, 0, np.exp(x - x.max(axis=-1, keepdims=True)))
    np.testing.assert_allclose(p.numpy(), e / e.sum(axis=-1, keepdims=True), **TOL)
    backprop(p, device)
    assert np.all(t.grad.numpy()[mask] == 0) and np.all(np.isfinite(t.grad.numpy()))


@given(data=st.data())
def test_log_softmax_huge_logits(device, data):
    x = data.draw(S.float_arrays(data.draw(S.shapes()), low=-1e6, high=1e6))
    out = tg.tensor(x, device=device).log_softmax(-1).numpy()
    assert np.all(np.isfinite(out)) and np.all(out <= 0)
    np.testing.assert_allclose(np.exp(out).sum(axis=-1), 1.0, rtol=1e-9)  # logsumexp of huge values: 1e-9


# ------------------------------------------------------------------ nn.functional
@given(data=st.data(), k=st.integers(1, 2), affine=st.booleans())
def test_layer_norm_normalises(device, data, k, affine):
    shape = data.draw(S.shapes(min_dims=k))
    x = data.draw(S.distinct_float_arrays(shape))
    ns = shape[len(shape) - k :]
    axes = tuple(range(len(shape) - k, len(shape)))
    eps = 1e-5
    w = leaf(np.full(ns, 2.0), device) if affine else None
    b = leaf(np.full(ns, 0.5), device) if affine else None
    y = F.layer_norm(leaf(x, device), ns, w, b, eps).numpy()
    if affine:
        y = (y - 0.5) / 2.0
    np.testing.assert_allclose(y.mean(axis=axes), 0.0, atol=1e-9)  # float64 sums of O(1) values
    var = x.var(axis=axes)
    np.testing.assert_allclose(y.var(axis=axes), var / (var + eps), rtol=1e-9, atol=1e-12)  # eps in the denominator


@given(data=st.data())
def test_cross_entropy_is_mean_nll_of_log_softmax(device, data):
    n, c = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 5))
    x = data.draw(S.float_arrays((n, c), -10, 10))
    t = np.array(data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
    lx = leaf(x, device)
    loss = F.cross_entropy(lx, tg.tensor(t, device=device))
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(loss.item(), -logp[np.arange(n), t].mean(), **TOL)
    loss.backward()
    g = lx.grad.numpy()
    np.testing.assert_allclose(g.sum(axis=1), 0.0, atol=1e-12)  # each row: sum(p) - 1 = 0
    onehot = np.eye(c)[t]
    np.testing.assert_allclose(g, (np.exp(logp) - onehot) / n, **TOL)


@given(data=st.data(), bias=st.booleans())
def test_linear_is_x_wt_plus_b_over_any_leading_dims(device, data, bias):
    lead = data.draw(S.shapes(min_dims=0, max_dims=3))
    n_in, n_out = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    x = data.draw(S.float_arrays(lead + (n_in,)))
    w = data.draw(S.float_arrays((n_out, n_in)))
    b = data.draw(S.float_arrays((n_out,)))
    tx, tw, tb = leaf(x, device), leaf(w, device), leaf(b, device) if bias else None
    out = F.linear(tx, tw, tb)
    np.testing.assert_allclose(out.numpy(), x @ w.T + (b if bias else 0), **TOL)
    v = backprop(out, device)
    v2, x2 = v.reshape(-1, n_out), x.reshape(-1, n_in)
    np.testing.assert_allclose(tx.grad.numpy(), v @ w, **TOL)
    np.testing.assert_allclose(tw.grad.numpy(), v2.T @ x2, **TOL)
    if bias:
        np.testing.assert_allclose(tb.grad.numpy(), v2.sum(axis=0), **TOL)


def _attention_reference(q, k, v, mask, scale, g):
    """NumPy forward and backward of softmax(mask(q k^T * scale)) v (mask: True = attend)."""
    s = np.where(mask, q @ k.swapaxes(-1, -2) * scale, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = g @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return p @ v, ds @ k * scale, ds.swapaxes(-1, -2) @ q * scale, p.swapaxes(-1, -2) @ g


@given(data=st.data(), causal=st.booleans())
def test_scaled_dot_product_attention_matches_the_composition(device, data, causal):
    batch = data.draw(S.shapes(min_dims=0, max_dims=2))
    t, s = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    if causal:
        s = t
    d, dv = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    q, k, v = (data.draw(S.float_arrays(batch + shape)) for shape in ((t, d), (s, d), (s, dv)))
    mask = np.tril(np.ones((t, s), dtype=bool)) if causal else data.draw(S.bool_arrays((t, s)))
    mask[:, 0] = True  # every query attends somewhere
    scale = data.draw(st.floats(0.1, 2.0))
    tq, tk, tv = leaf(q, device), leaf(k, device), leaf(v, device)
    kwargs = {"is_causal": True} if causal else {"attn_mask": tg.tensor(mask, device=device)}
    out = F.scaled_dot_product_attention(tq, tk, tv, scale=scale, **kwargs)
    g = backprop(out, device)
    ref = _attention_reference(q, k, v, mask, scale, g)
    for got, want in zip((out, tq.grad, tk.grad, tv.grad), ref):
        np.testing.assert_allclose(got.numpy(), want, **TOL)


@given(data=st.data(), p=st.sampled_from([0.2, 0.5]), seed=st.integers(0, 2**16))
def test_scaled_dot_product_attention_with_dropout_matches_the_composition(device, data, p, seed):
    """Dropout on the attention weights: out = (P * R / (1 - p)) v, with R the mask the op draws
    (the same seeded draw is repeated here), and the gradients of that composition."""
    b, t, d = (data.draw(st.integers(1, 4)) for _ in range(3))
    q, k, v = (data.draw(S.float_arrays((b, t, d))) for _ in range(3))
    tg.manual_seed(seed)
    keep = backend.to_numpy(keep_mask(device, (b, t, t), p))  # the op's first draw
    tg.manual_seed(seed)
    tq, tk, tv = leaf(q, device), leaf(k, device), leaf(v, device)
    out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True, dropout_p=p)
    g = backprop(out, device)
    causal = np.tril(np.ones((t, t), dtype=bool))
    s = np.where(causal, q @ k.swapaxes(-1, -2) * d**-0.5, -np.inf)
    P = np.exp(s - s.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    Pd = P * keep / (1 - p)
    dP = g @ v.swapaxes(-1, -2) * keep / (1 - p)
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
    want = (Pd @ v, dS @ k * d**-0.5, dS.swapaxes(-1, -2) @ q * d**-0.5, Pd.swapaxes(-1, -2) @ g)
    for got, w in zip((out, tq.grad, tk.grad, tv.grad), want):
        np.testing.assert_allclose(got.numpy(), w, **TOL)


@given(data=st.data())
def test_packed_self_attention_is_split_heads_attention(device, data):
    b, t, h, d = (data.draw(st.integers(1, 3)) for _ in range(4))
    qkv = data.draw(S.float_arrays((b, t, 3 * h * d)))
    tqkv = leaf(qkv, device)
    out = F.packed_self_attention(tqkv, h, is_causal=True)
    g = backprop(out, device)  # (b, t, h * d)
    q, k, v = qkv.reshape(b, t, 3, h, d).transpose(2, 0, 3, 1, 4)  # each (b, h, t, d)
    g_heads = g.reshape(b, t, h, d).transpose(0, 2, 1, 3)
    mask = np.tril(np.ones((t, t), dtype=bool))
    o, dq, dk, dv = _attention_reference(q, k, v, mask, d**-0.5, g_heads)
    np.testing.assert_allclose(out.numpy(), o.transpose(0, 2, 1, 3).reshape(b, t, h * d), **TOL)
    dqkv = np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(b, t, 3 * h * d)
    np.testing.assert_allclose(tqkv.grad.numpy(), dqkv, **TOL)


@given(data=st.data())
def test_embedding_repeated_ids_accumulate(device, data):
    v, d = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 4))
    ids_shape = data.draw(S.shapes(max_dims=2))
    ids = data.draw(st.lists(st.integers(0, v - 1), min_size=int(np.prod(ids_shape)), max_size=int(np.prod(ids_shape))))
    ids = np.array(ids).reshape(ids_shape)
    w = data.draw(S.float_arrays((v, d)))
    tw = leaf(w, device)
    out = F.embedding(tg.tensor(ids, device=device), tw)
    np.testing.assert_array_equal(out.numpy(), w[ids])
    g = backprop(out, device)
    want = np.zeros_like(w)
    np.add.at(want, ids, g)
    np.testing.assert_allclose(tw.grad.numpy(), want, **TOL)


@given(shape=S.shapes(), p=st.sampled_from([0.1, 0.5, 0.9]), seed=st.integers(0, 2**16))
def test_dropout_keeps_scales_and_reuses_mask(device, shape, p, seed):
    x = np.random.default_rng(seed).uniform(0.5, 2, shape)
    t = leaf(x, device)
    tg.manual_seed(seed)
    y = F.dropout(t, p).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / (1 - p), **TOL)
    tg.manual_seed(seed)
    out = F.dropout(t, p)
    v = backprop(out, device)
    np.testing.assert_allclose(t.grad.numpy(), v * kept / (1 - p), **TOL)
    assert F.dropout(t, p, training=False) is t


# ------------------------------------------------------------------ shape ops
@given(data=st.data())
def test_permute_round_trip_and_grad(device, data):
    x = data.draw(S.float_arrays(data.draw(S.shapes())))
    perm = data.draw(st.permutations(range(x.ndim)))
    t = leaf(x, device)
    out = t.permute(*perm)
    np.testing.assert_array_equal(out.numpy(), np.transpose(x, perm))
    back = out.permute(*np.argsort(perm).tolist())
    np.testing.assert_array_equal(back.numpy(), x)
    v = backprop(out, device)
    np.testing.assert_array_equal(t.grad.numpy(), np.transpose(v, np.argsort(perm)))


@given(data=st.data())
def test_reshape_flatten_unsqueeze_squeeze(device, data):
    x = data.draw(S.float_arrays(data.draw(S.shapes())))
    d = data.draw(S.dims(x.ndim + 1))
    t = leaf(x, device)
    u = t.unsqueeze(d)
    assert u.shape == np.expand_dims(x, d).shape
    assert u.squeeze(d).shape == x.shape
    assert t.squeeze().shape == np.squeeze(x).shape
    f = t.flatten()
    np.testing.assert_array_equal(f.numpy(), x.reshape(-1))
    out = f.reshape(x.shape[::-1]).view(-1, x.shape[0])
    v = backprop(out, device)
    np.testing.assert_array_equal(t.grad.numpy(), v.reshape(x.shape))


@given(data=st.data())
def test_expand_grad_sums_over_expanded_axes(device, data):
    sa, sb = data.draw(S.broadcastable_shapes())
    out_shape = np.broadcast_shapes(sa, sb)
    x = data.draw(S.float_arrays(sa))
    t = leaf(x, device)
    out = t.expand(*out_shape)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(x, out_shape))
    v = backprop(out, device)
    np.testing.assert_allclose(t.grad.numpy(), sum_to(v, sa), **TOL)


@given(data=st.data())
def test_cat_then_split_round_trips(device, data):
    shape = data.draw(S.shapes())
    dim = data.draw(S.dims(len(shape)))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    parts = []
    for s in sizes:
        ps = list(shape)
        ps[dim] = s
        parts.append(data.draw(S.float_arrays(tuple(ps))))
    ts = [leaf(p, device) for p in parts]
    out = tg.cat(ts, dim=dim)
    np.testing.assert_array_equal(out.numpy(), np.concatenate(parts, axis=dim))
    for piece, p in zip(out.split(sizes, dim=dim), parts):
        np.testing.assert_array_equal(piece.numpy(), p)
    v = backprop(out, device)
    for t, g in zip(ts, np.split(v, np.cumsum(sizes)[:-1], axis=dim)):
        np.testing.assert_array_equal(t.grad.numpy(), g)


@given(data=st.data(), n=st.integers(1, 4))
def test_stack_then_index_round_trips(device, data, n):
    shape = data.draw(S.shapes(max_dims=3))
    dim = data.draw(S.dims(len(shape) + 1))
    parts = [data.draw(S.float_arrays(shape)) for _ in range(n)]
    ts = [leaf(p, device) for p in parts]
    out = tg.stack(ts, dim=dim)
    np.testing.assert_array_equal(out.numpy(), np.stack(parts, axis=dim))
    v = backprop(out, device)
    for k, t in enumerate(ts):
        np.testing.assert_array_equal(t.grad.numpy(), np.take(v, k, axis=dim))


@given(data=st.data(), chunks=st.integers(1, 5))
def test_chunk_matches_numpy_sizes(device, data, chunks):
    x = data.draw(S.float_arrays(data.draw(S.shapes(max_side=6))))
    pieces = tg.tensor(x, device=device).chunk(chunks, 0)
    np.testing.assert_array_equal(np.concatenate([p.numpy() for p in pieces]), x)
    step = -(-x.shape[0] // chunks)  # PyTorch's rule: pieces of ceil(n / chunks)
    assert [p.shape[0] for p in pieces[:-1]] == [step] * (len(pieces) - 1)


# ------------------------------------------------------------------ indexing and masks
@given(data=st.data())
def test_integer_array_index_scatter_adds(device, data):
    x = data.draw(S.float_arrays(data.draw(S.shapes())))
    n = x.shape[0]
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=8)))
    t = leaf(x, device)
    out = t[tg.tensor(idx, device=device)]
    np.testing.assert_array_equal(out.numpy(), x[idx])
    v = backprop(out, device)
    want = np.zeros_like(x)
    np.add.at(want, idx, v)
    np.testing.assert_allclose(t.grad.numpy(), want, **TOL)


@given(data=st.data())
def test_bool_mask_index(device, data):
    shape = data.draw(S.shapes())
    x, mask = data.draw(S.float_arrays(shape)), data.draw(S.bool_arrays(shape))
    t = leaf(x, device)
    out = t[tg.tensor(mask, device=device)]
    np.testing.assert_array_equal(out.numpy(), x[mask])
    v = backprop(out, device)
    want = np.zeros_like(x)
    want[mask] = v
    np.testing.assert_array_equal(t.grad.numpy(), want)


@given(data=st.data(), value=st.floats(-5, 5))
def test_masked_fill_and_where(device, data, value):
    sx, sm = data.draw(S.broadcastable_shapes(min_dims=1))
    shape = np.broadcast_shapes(sx, sm)
    x = data.draw(S.float_arrays(shape))
    mask = data.draw(S.bool_arrays(sm))
    t = leaf(x, device)
    out = t.masked_fill(tg.tensor(mask, device=device), value)
    np.testing.assert_array_equal(out.numpy(), np.where(mask, value, x))
    v = backprop(out, device)
    np.testing.assert_array_equal(t.grad.numpy(), np.where(mask, 0.0, v))
    # where: the two gradients partition the upstream one
    a, b = leaf(x, device), leaf(x[::-1].copy() if x.ndim else x, device)
    w = tg.where(tg.tensor(np.broadcast_to(mask, shape).copy(), device=device), a, b)
    v = backprop(w, device)
    np.testing.assert_array_equal(a.grad.numpy() + b.grad.numpy(), v)


@given(data=st.data())
def test_comparisons_give_bool_without_grad(device, data):
    a, b = data.draw(S.broadcastable_arrays())
    ta, tb = leaf(a, device), leaf(b, device)
    for out, want in ((ta < tb, a < b), (ta >= tb, a >= b), (ta == tb, a == b)):
        assert out.dtype == tg.bool and not out.requires_grad
        np.testing.assert_array_equal(out.numpy(), want)
