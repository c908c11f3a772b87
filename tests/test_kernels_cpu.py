"""Every CPU kernel (tensorgrad/kernels/cpu.py) equals its reference op (tensorgrad/ops/),
forward and backward, on hypothesis-drawn shapes: odd sizes, T = 1, row counts that are not a
multiple of the thread count or of the row blocks, float32 and float64, with and without mask,
dropout, weight and bias.

The kernel ops are the Function subclasses of kernels/functions.py (bound to cpu.py by
kernels/cpu_ops.py, beside the CPU's own paths of some ops), run here without a graph (op.forward /
op.backward on arrays), beside the reference class on the same arrays; inputs a kernel does not
accept go to the next kernel of the op, or to the reference class (autograd.dispatch, as
Function.apply does).

Tolerances: float64 kernels agree with the reference to ~1e-15 relative per operation; sums
over a row are taken in another order (and in float64 accumulators for float32 inputs), so a
result of magnitude ~1 differs by a few ulps times the row length: 1e-10 (float64) and 2e-5
(float32, ulp 6e-8, rows up to ~60) bound it with room, and a wrong kernel is off by O(0.1).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import time
import unittest.mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad import autograd, backend, kernel_registry, kernels
from tensorgrad.kernels import cpu, cpu_attention, cpu_linear, cpu_ops, cpu_threads
from tensorgrad.ops import activation, adamw, attention, cross_entropy, dropout, embedding, layernorm, linear, softmax
from tensorgrad.ops.adamw import adamw_update_

KERNELS = kernels.substitutes("cpu")  # reference class -> its kernel classes, in the order the engine asks them
KERNEL = {ref: ops[-1] for ref, ops in KERNELS.items()}  # reference class -> its general kernel op (asked last)
TOL = {np.float32: 2e-5, np.float64: 1e-10}
dtypes = st.sampled_from([np.float32, np.float64])
odd = st.integers(1, 37)  # odd sizes and 1 included; 37 rows is no multiple of 2 threads or 16 blocks


def _pair(ref_cls):
    return ref_cls(np), KERNEL[ref_cls](np)


def _dispatched(ref_cls, *args):
    """The reference op and the op the engine runs for these arguments on the CPU."""
    return ref_cls(np), autograd.dispatch(ref_cls, "cpu", *args)(np)


def _close(got, want, dtype):
    if want is None:
        assert got is None
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype], equal_nan=True)


def _randn(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@given(rows=odd, c=st.integers(1, 70), dtype=dtypes, affine=st.booleans(), seed=st.integers(0, 2**16))
def test_layernorm_kernel_equals_reference(rows, c, dtype, affine, seed):
    rng = np.random.default_rng(seed)
    x = _randn(rng, (rows, c), dtype) * 3 + 1
    w = _randn(rng, (c,), dtype) if affine else None
    b = _randn(rng, (c,), dtype) if affine else None
    g = _randn(rng, (rows, c), dtype)
    ref, ker = _pair(layernorm.LayerNorm)
    _close(ker.forward(x, w, b, 1), ref.forward(x, w, b, 1), dtype)
    n_grads = 3 if affine else 1  # without a graph the reference also returns sums for absent w, b
    for got, want in zip(ker.backward(g)[:n_grads], ref.backward(g)[:n_grads]):
        _close(got, want, dtype)


def test_layernorm_kernel_over_several_axes_and_bias_only():
    """k = 2 normalised axes (folded into one row); bias without weight runs the reference."""
    rng = np.random.default_rng(1)
    x, w, b, g = (_randn(rng, s, np.float64) for s in ((3, 4, 5), (4, 5), (4, 5), (3, 4, 5)))
    ref, ker = _pair(layernorm.LayerNorm)
    _close(ker.forward(x, w, b, 2), ref.forward(x, w, b, 2), np.float64)
    for got, want in zip(ker.backward(g), ref.backward(g)):
        _close(got, want, np.float64)
    ref, ker = _dispatched(layernorm.LayerNorm, x, None, b, 2)
    _close(ker.forward(x, None, b, 2), ref.forward(x, None, b, 2), np.float64)
    assert type(ker) is layernorm.LayerNorm
    for got, want in zip(ker.backward(g)[::2], ref.backward(g)[::2]):  # dx, db
        _close(got, want, np.float64)


def _attention_equals_reference(ker, q, k, v, g, mask, dropout_p, seed, dtype):
    """The attention kernel op `ker` against the reference op: output and the three gradients, with
    the same dropout mask on both (both draw it from backend.rng after the same seed)."""
    outs = []
    for op in (attention.ScaledDotProductAttention(np), ker):
        tg.manual_seed(seed)
        d = q.shape[-1]
        outs.append((op.forward(q, k, v, mask, d**-0.5, dropout_p), *op.backward(g.copy())))
    for got, want in zip(outs[1], outs[0]):
        _close(got, want, dtype)


@st.composite
def attention_cases(draw):
    batch = draw(st.sampled_from([(), (1,), (3,), (2, 3)]))
    t = draw(st.integers(1, 9))
    s = draw(st.sampled_from([t, draw(st.integers(1, 9))]))
    d, dv = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    mask = draw(st.sampled_from(["none", "causal", "random"]))
    dropout_p = draw(st.sampled_from([0.0, 0.3]))
    return batch, t, s, d, dv, mask, dropout_p, draw(dtypes), draw(st.integers(0, 2**16))


@given(case=attention_cases())
def test_attention_kernel_equals_reference(case):
    batch, t, s, d, dv, mask_kind, dropout_p, dtype, seed = case
    rng = np.random.default_rng(seed)
    q, k = _randn(rng, batch + (t, d), dtype), _randn(rng, batch + (s, d), dtype)
    v, g = _randn(rng, batch + (s, dv), dtype), _randn(rng, batch + (t, dv), dtype)
    mask = None
    if mask_kind == "causal":
        mask = np.tril(np.ones((t, s), bool))
    elif mask_kind == "random":
        mask = rng.random((t, s)) < 0.6
        mask[:, 0] = True  # every row attends somewhere (a fully masked row is NaN on both paths)
    kernel = KERNEL[attention.ScaledDotProductAttention]
    _attention_equals_reference(kernel(np), q, k, v, g, mask, dropout_p, seed, dtype)
    assert kernel.accepts(q, k, v, mask, d**-0.5, dropout_p)


class _SmallBlocks(KERNEL[attention.ScaledDotProductAttention]):
    """The CPU attention kernel op with query blocks of 3 rows, so that small shapes run the blocked path."""

    query_block = 3


@st.composite
def blocked_attention_cases(draw):
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    t = draw(st.integers(4, 13))  # more rows than one block, and no multiple of 3 among some
    s = draw(st.sampled_from([t, draw(st.integers(1, 13))]))
    d, dv = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    # causal: the blocks skip the keys after each block; "prefix": each row attends a random prefix
    # of the keys (so a block's key count is its longest prefix); "late": the last row attends the
    # last key, which leaves nothing to skip (the blocks are declined)
    mask = draw(st.sampled_from(["causal", "prefix", "late"]))
    dropout_p = draw(st.sampled_from([0.0, 0.3]))
    return batch, t, s, d, dv, mask, dropout_p, draw(dtypes), draw(st.integers(0, 2**16))


@given(case=blocked_attention_cases())
def test_attention_query_blocks_equal_reference(case):
    """The blocked forward and backward (kernels/functions.py: query blocks over the keys a block
    may attend) give the reference's output and gradients, dropout included."""
    batch, t, s, d, dv, mask_kind, dropout_p, dtype, seed = case
    rng = np.random.default_rng(seed)
    q, k = _randn(rng, batch + (t, d), dtype), _randn(rng, batch + (s, d), dtype)
    v, g = _randn(rng, batch + (s, dv), dtype), _randn(rng, batch + (t, dv), dtype)
    if mask_kind == "causal":
        mask = np.tril(np.ones((t, s), bool))
    else:
        lengths = rng.integers(1, s + 1, size=t)  # every row attends at least one key
        if mask_kind == "late":
            lengths[-1] = s
        mask = np.arange(s) < lengths[:, None]
    _attention_equals_reference(_SmallBlocks(np), q, k, v, g, mask, dropout_p, seed, dtype)


class _UnevenRowParts:
    """kernels/cpu_threads.py with a split of any size: parts of 1 row, 2 rows and the rest (those
    that exist), run on the real threads with the BLAS library at one thread."""

    @staticmethod
    def row_parts(rows, work):
        bounds = sorted({0, min(1, rows), min(3, rows), rows})
        return [slice(lo, hi) for lo, hi in zip(bounds, bounds[1:])]

    run_parts = staticmethod(cpu_threads.run_parts)


class _RowParts(cpu_ops.ScaledDotProductAttentionInParts):
    """The CPU attention in row parts, split however small the work, in blocks of 3 query rows."""

    query_block = 3
    threads = _UnevenRowParts


@given(case=st.one_of(attention_cases(), blocked_attention_cases()), transposed=st.booleans())
def test_attention_row_parts_equal_reference(case, transposed):
    """The (batch, head) rows split over threads (kernels/cpu_threads.py), each part blocked or not,
    give the reference's output and gradients, dropout included; q, k, v may be transposed views."""
    batch, t, s, d, dv, mask_kind, dropout_p, dtype, seed = case
    rng = np.random.default_rng(seed)
    q, k = _randn(rng, batch + (t, d), dtype), _randn(rng, batch + (s, d), dtype)
    v, g = _randn(rng, batch + (s, dv), dtype), _randn(rng, batch + (t, dv), dtype)
    if transposed and len(batch) == 2:  # (B, H, T, d) as the transpose of a (B, T, H, d) array
        q, k, v = (np.ascontiguousarray(a.swapaxes(1, 2)).swapaxes(1, 2) for a in (q, k, v))
    mask = None if mask_kind == "none" else np.tril(np.ones((t, s), bool))
    if mask_kind in ("random", "prefix", "late"):
        lengths = rng.integers(1, s + 1, size=t)  # every row attends at least one key
        mask = np.arange(s) < lengths[:, None]
    _attention_equals_reference(_RowParts(np), q, k, v, g, mask, dropout_p, seed, dtype)


def test_row_parts_cut_large_work_and_run_over_the_blas_threads():
    """Parts of about PART_WORK elements for large work, one part for small work or one row; run_parts
    gives every part's result in order, on one thread or several, and gives the BLAS library its
    thread count back, also when a part raises."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    big, part = cpu_threads.MIN_SPLIT_WORK, cpu_threads.PART_WORK
    assert cpu_threads.row_parts(10, 4 * part) == [slice(0, 2), slice(2, 4), slice(4, 6), slice(6, 8), slice(8, 10)]
    assert cpu_threads.row_parts(3, max(big, 30 * part)) == [slice(0, 1), slice(1, 2), slice(2, 3)]
    assert cpu_threads.row_parts(5, big - 1) == [slice(0, 5)]
    assert cpu_threads.row_parts(1, 100 * big) == [slice(0, 1)]

    def fails(part):
        if part == 1:
            raise ValueError("part 1")
        return part

    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads, user_api="blas"):
            with pytest.raises(ValueError, match="part 1"):
                cpu_threads.run_parts(fails, [0, 1, 2])
            assert cpu_threads.run_parts(lambda part: part * 2, [1, 2, 3, 4, 5]) == [2, 4, 6, 8, 10]
            blas = [info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
            assert set(blas) == {threads}  # every BLAS library loaded (PyTorch's too, once imported)


def _parts_in_child(queue):
    queue.put(cpu_threads.run_parts(lambda part: part * 3, [1, 2, 3]))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_run_parts_works_in_a_forked_child():
    """A child forked after the parent ran parts gets a pool of its own (the parent's threads do not
    exist in it: a task given to the parent's pool would never run)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        # the parent's pool, both threads started (each part waits a moment, so one thread cannot take both)
        assert cpu_threads.run_parts(lambda part: time.sleep(0.05) or part * 2, [1, 2]) == [2, 4]
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_parts_in_child, args=(queue,))
        child.start()
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
        assert child.exitcode == 0 and queue.get(timeout=5) == [3, 6, 9]


class _SplitLinear(KERNEL[linear.Linear]):
    """The CPU Linear kernel op split however small the product: blocks of 1 row, 2 rows and the
    rest (those that exist), run on the real threads with the BLAS library at one thread."""

    def _parts(self, n, k, out, *arrays):
        return _UnevenRowParts.row_parts(n, 0)


@given(lead=st.sampled_from([(), (1,), (5,), (2, 3)]), k=st.integers(1, 9), out=st.integers(1, 9),
       dtype=dtypes, bias=st.booleans(), seed=st.integers(0, 2**16))  # fmt: skip
def test_linear_kernel_split_over_threads_equals_reference(lead, k, out, dtype, bias, seed):
    """Y = X W^T + b, dX, dW and db computed in blocks of rows (Y, dX) and of output features
    (dW, db) on several threads give the reference's values: the blocks split outputs, not sums."""
    rng = np.random.default_rng(seed)
    x, w, g = _randn(rng, lead + (k,), dtype), _randn(rng, (out, k), dtype), _randn(rng, lead + (out,), dtype)
    b = _randn(rng, (out,), dtype) if bias else None
    ref, ker = linear.Linear(np), _SplitLinear(np)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cpu_threads, "_thread_count", lambda: 2)  # two threads even on a one-core machine
        _close(ker.forward(x, w, b), ref.forward(x, w, b), dtype)
        for got, want in zip(ker.backward(g), ref.backward(g)):
            _close(got, want, dtype)


def test_linear_kernel_splits_large_float_products_only(monkeypatch):
    """One block per BLAS thread for a product of at least MIN_SPLIT_FLOPS in float32 or float64,
    all of one dtype; the reference's single call otherwise (a small product, integers, two dtypes,
    one thread).  Through the engine, a split Linear without bias gives the reference's gradients."""
    monkeypatch.setattr(cpu_threads, "_thread_count", lambda: 2)
    ker, big = KERNEL[linear.Linear](np), cpu_linear.MIN_SPLIT_FLOPS
    f32, f64, i64 = (np.zeros((1, 1), t) for t in (np.float32, np.float64, np.int64))
    assert ker._parts(big // 2, 1, 1, f32, f32) == [slice(0, big // 4), slice(big // 4, big // 2)]
    assert ker._parts(big // 2 - 1, 1, 1, f32, f32) == [slice(0, big // 2 - 1)]
    assert len(ker._parts(big, 1, 1, i64, i64)) == 1 and len(ker._parts(big, 1, 1, f32, f64)) == 1
    monkeypatch.setattr(cpu_threads, "_thread_count", lambda: 1)
    assert len(ker._parts(big, 1, 1, f32, f32)) == 1
    monkeypatch.setattr(cpu_linear, "MIN_SPLIT_FLOPS", 0)
    monkeypatch.setattr(cpu_threads, "_thread_count", lambda: 2)
    x = tg.randn(6, 3, requires_grad=True)
    w = tg.randn(4, 3, requires_grad=True)
    y = tg.nn.functional.linear(x, w)
    assert type(y._ctx) is KERNEL[linear.Linear] and len(y._ctx._parts(6, 3, 4, x._data, w._data)) == 2
    y.sum().backward()
    with tg.kernels.reference():
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        tg.nn.functional.linear(x2, w2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-6)


class _SplitDropout(cpu_ops.DropoutOnThreads):
    """The CPU's Dropout on threads split however small the input: blocks of 1 row, 2 rows and the rest."""

    class threads:
        MIN_SPLIT_WORK = 0
        thread_parts = staticmethod(lambda rows: _UnevenRowParts.row_parts(rows, 0))
        run_parts = staticmethod(cpu_threads.run_parts)


@given(shape=st.sampled_from([(), (1,), (7,), (3, 5), (2, 3, 9), (4, 0)]), p=st.sampled_from([0.2, 0.5]),
       dtype=dtypes, seed=st.integers(0, 2**16))  # fmt: skip
def test_dropout_kernel_split_over_threads_draws_the_references_mask(shape, p, dtype, seed):
    """Each thread draws its own rows of the mask (cpu.KeepRows) and applies them: the reference's
    mask bit for bit, its output and gradient, and the generator left where the reference leaves it.
    An input of fewer than two rows goes to the general kernel op (`accepts`)."""
    rng = np.random.default_rng(seed)
    x, g = _randn(rng, shape, dtype), _randn(rng, shape, dtype)
    split = _SplitDropout.accepts(x, p)
    assert split == (len(shape) >= 2 and shape[-1] > 0 and x.size // shape[-1] >= 2)
    results = []
    for op in (dropout.Dropout(np), _SplitDropout(np) if split else KERNEL[dropout.Dropout](np)):
        tg.manual_seed(seed)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cpu_threads, "_thread_count", lambda: 2)  # two threads even on a one-core machine
            results.append((op.forward(x, p), op.backward(g), backend.rng("cpu").generator.random()))
    (want_y, want_g, want_next), (got_y, got_g, got_next) = results
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_g, want_g)
    assert got_next == want_next


def test_the_cpus_own_paths_run_where_they_accept_the_inputs(monkeypatch):
    """Each of the CPU's own paths is a kernel op of its own, asked before the general kernel op of
    its reference op (kernels/cpu_ops.py's KERNEL_OPS): the row parts for an attention large enough
    to split, flash attention for long sequences (T, S >= 64) of finite inputs below that, the fused
    packed attention for short sequences, flash for long ones (the heads read in place, a run of
    batches per thread), the batch parts for the large short ones left, the threads for a large
    dropout; the general kernel op for the other inputs."""
    monkeypatch.setattr(cpu_threads, "_thread_count", lambda: 2)  # two threads even on a one-core machine
    sdpa, packed = attention.ScaledDotProductAttention, attention.PackedSelfAttention
    n = cpu_ops.FlashAttention.min_len
    q = np.zeros((32, 256, 8), np.float32)  # 32 rows of 256 x 256 scores
    causal = np.tril(np.ones((256, 256), bool))
    assert autograd.dispatch(sdpa, "cpu", q, q, q, None, 0.5) is cpu_ops.ScaledDotProductAttentionInParts  # 2M scores
    assert autograd.dispatch(sdpa, "cpu", q[:8], q[:8], q[:8], None, 0.5) is cpu_ops.FlashAttention  # 512K: one part
    assert autograd.dispatch(sdpa, "cpu", q[:8], q[:8], q[:8], causal, 0.5, 0.5) is cpu_ops.FlashAttention  # dropout
    assert autograd.dispatch(sdpa, "cpu", q[:1, :n], q[:1, :n], q[:1, :n], None, 0.5) is cpu_ops.FlashAttention
    assert autograd.dispatch(sdpa, "cpu", q[:1, : n - 1], q[:1], q[:1], None, 0.5) is cpu_ops.ScaledDotProductAttention
    short_keys = q[:1, : n - 1]
    assert autograd.dispatch(sdpa, "cpu", q[:1], short_keys, short_keys, None, 0.5) is not cpu_ops.FlashAttention
    big_head = np.zeros((1, n, cpu_ops.FlashAttention.max_head + 1), np.float32)
    assert autograd.dispatch(sdpa, "cpu", big_head, big_head, big_head, None, 0.5) is cpu_ops.ScaledDotProductAttention
    assert autograd.dispatch(sdpa, "cpu", q[:0], q[:0], q[:0], None, 0.5) is not cpu_ops.FlashAttention  # zero rows
    float_mask = causal.astype(np.float32)
    assert autograd.dispatch(sdpa, "cpu", q[:1], q[:1], q[:1], float_mask, 0.5) is not cpu_ops.FlashAttention
    half = q[:1].astype(np.float16)
    assert autograd.dispatch(sdpa, "cpu", half, half, half, None, 0.5) is sdpa  # float16: the reference
    assert autograd.dispatch(sdpa, "cpu", q[:2], q[:1], q[:2], None, 0.5) is sdpa  # a broadcast batch
    for bad in (np.nan, np.inf):  # a NaN or inf anywhere: the GEMM path, which spreads it as the reference does
        k = q[:1].copy()
        k[0, -1, 0] = bad
        assert autograd.dispatch(sdpa, "cpu", q[:1], k, q[:1], causal, 0.5) is cpu_ops.ScaledDotProductAttention
        assert autograd.dispatch(sdpa, "cpu", q[:1], q[:1], k, causal, 0.5) is cpu_ops.ScaledDotProductAttention
    many = np.zeros((544, n - 1, 8), np.float32)  # 544 rows of 63 x 63 scores: two parts of PART_WORK
    assert autograd.dispatch(sdpa, "cpu", many, many, many, None, 0.5) is cpu_ops.ScaledDotProductAttentionInParts
    qkv = np.zeros((16, 256, 3 * 2 * 8), np.float32)  # 16 batches of 2 heads' 256 x 256 scores
    assert autograd.dispatch(packed, "cpu", qkv, None, 2, 0.5) is cpu_ops.FlashPackedSelfAttention  # 2M: flash first
    assert autograd.dispatch(packed, "cpu", qkv[:4], None, 2, 0.5) is cpu_ops.FlashPackedSelfAttention  # 512K
    assert autograd.dispatch(packed, "cpu", qkv[:4], causal, 2, 0.5, 0.1) is cpu_ops.FlashPackedSelfAttention
    assert autograd.dispatch(packed, "cpu", qkv[:1, :n], None, 2, 0.5) is cpu_ops.FlashPackedSelfAttention
    nan_qkv = qkv[:4].copy()
    nan_qkv[0, -1, -1] = np.nan  # in a value
    assert autograd.dispatch(packed, "cpu", nan_qkv, None, 2, 0.5) is cpu_ops.PackedSelfAttention
    qkv_many = np.zeros((272, n - 1, 3 * 2 * 8), np.float32)  # 272 batches of 2 heads' 63 x 63 scores: two parts
    assert autograd.dispatch(packed, "cpu", qkv_many, None, 2, 0.5) is cpu_ops.PackedSelfAttentionInParts
    assert autograd.dispatch(packed, "cpu", qkv[:, :16], None, 2, 0.5) is cpu_ops.FusedPackedSelfAttention
    assert autograd.dispatch(packed, "cpu", qkv[:, :17], None, 2, 0.5) is cpu_ops.PackedSelfAttention
    assert autograd.dispatch(packed, "cpu", qkv.astype(np.float16), None, 2, 0.5) is cpu_ops.PackedSelfAttention
    x = np.zeros((2, cpu_threads.MIN_SPLIT_WORK // 2), np.float32)
    assert autograd.dispatch(dropout.Dropout, "cpu", x, 0.1) is cpu_ops.DropoutOnThreads
    assert autograd.dispatch(dropout.Dropout, "cpu", x[:, 1:], 0.1) is cpu_ops.Dropout  # under MIN_SPLIT_WORK
    monkeypatch.setattr(cpu_threads, "_thread_count", lambda: 1)
    assert autograd.dispatch(dropout.Dropout, "cpu", x, 0.1) is cpu_ops.Dropout  # one thread


def test_attention_query_blocks_are_taken_where_they_skip_keys():
    """The blocks run where they leave keys out (a causal mask), not without a mask or where every
    block reaches the last key; a block's key count is the longest prefix any of its rows attends."""
    ker = _SmallBlocks(np)
    causal = np.tril(np.ones((10, 10), bool))
    assert ker._query_blocks(causal, 10, 10) == [(0, 3, 3), (3, 6, 6), (6, 9, 9), (9, 10, 10)]
    assert ker._query_blocks(None, 10, 10) is None
    assert ker._query_blocks(np.ones((10, 10), bool), 10, 10) is None
    assert ker._query_blocks(causal[:, :0], 10, 0) is None  # no keys: nothing to block
    assert KERNEL[attention.ScaledDotProductAttention].query_block > 0  # the CPU's ops run them


def test_attention_kernel_fully_masked_row_is_nan_like_the_reference():
    rng = np.random.default_rng(2)
    q, k, v = (_randn(rng, (2, 3, 4), np.float64) for _ in range(3))
    mask = np.ones((3, 3), bool)
    mask[1] = False
    ref, ker = _pair(attention.ScaledDotProductAttention)
    with np.errstate(invalid="ignore"):  # the masked row is -inf - (-inf): NaN, as in PyTorch
        want, got = ref.forward(q, k, v, mask, 0.5), ker.forward(q, k, v, mask, 0.5)
    assert np.isnan(got[:, 1]).all() and np.isnan(want[:, 1]).all()
    _close(got, want, np.float64)


def test_attention_kernel_runs_the_reference_for_broadcast_batches():
    rng = np.random.default_rng(3)
    q, k, v = _randn(rng, (2, 3, 4), np.float64), _randn(rng, (1, 3, 4), np.float64), _randn(rng, (2, 3, 4), np.float64)
    ref, ker = _dispatched(attention.ScaledDotProductAttention, q, k, v, None, 0.5)
    _close(ker.forward(q, k, v, None, 0.5), ref.forward(q, k, v, None, 0.5), np.float64)
    assert type(ker) is attention.ScaledDotProductAttention


class _BatchParts(cpu_ops.PackedSelfAttentionInParts):
    """The CPU packed attention in batch parts, the batch split however small the work: parts of 1
    batch, 2 batches and the rest (those that exist), on the real threads."""

    class threads:
        row_parts = staticmethod(_UnevenRowParts.row_parts)
        run_parts = staticmethod(cpu_threads.run_parts)


@pytest.mark.parametrize(
    "op_cls, path", [(cpu_ops.FusedPackedSelfAttention, "fused"), (KERNEL[attention.PackedSelfAttention], None),
                     (_BatchParts, "parts")],
    ids=["fused", "unfused", "batch-parts"],
)
@given(b=st.integers(1, 4), t=st.integers(1, 7), heads=st.integers(1, 3), d=st.integers(1, 4), dtype=dtypes,
       mask=st.sampled_from(["causal", "none", "4d"]), dropout_p=st.sampled_from([0.0, 0.25]),
       seed=st.integers(0, 2**16))  # fmt: skip
def test_packed_attention_kernel_equals_reference(op_cls, path, b, t, heads, d, dtype, mask, dropout_p, seed):
    """Each CPU path (fused, inherited, the batch in parts) gives the reference's output and dqkv and
    draws its dropout mask; a causal mask takes the query blocks (of 3 rows here) in the parts."""
    rng = np.random.default_rng(seed)
    qkv, g = _randn(rng, (b, t, 3 * heads * d), dtype), _randn(rng, (b, t, heads * d), dtype)
    mask = {"causal": np.tril(np.ones((t, t), bool)), "none": None, "4d": np.tril(np.ones((1, 1, t, t), bool))}[mask]
    ref, ker = attention.PackedSelfAttention(np), op_cls(np)
    outs = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cpu_threads, "_thread_count", lambda: 2)  # two threads even on a one-core machine
        mp.setattr(cpu_ops.ScaledDotProductAttention, "query_block", 3)
        for op in (ref, ker):
            tg.manual_seed(seed)
            outs.append((op.forward(qkv, mask, heads, d**-0.5, dropout_p), *op.backward(g), tg.rand(1).item()))
    # the path takes these inputs (one batch is one part: the engine runs the next kernel op for it)
    assert op_cls.accepts(qkv, mask, heads, d**-0.5, dropout_p) or (path == "parts" and b == 1)
    for got, want in zip(outs[1][:-1], outs[0][:-1]):
        _close(got, want, dtype)
    assert outs[1][-1] == outs[0][-1]  # the generator left in the same state


@st.composite
def fused_attention_cases(draw):
    b, heads, d = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    t = draw(st.integers(1, cpu_ops.FusedPackedSelfAttention.fused_max_len))
    # causal: key prefixes of every length; "random": masked keys inside the prefixes too (every row
    # attends its first key: a fully masked row is NaN, its own test); "4d": a (1, 1, T, T) mask
    mask = draw(st.sampled_from(["none", "causal", "random", "4d"]))
    dropout_p = draw(st.sampled_from([0.0, 0.3]))
    scale = draw(st.sampled_from([d**-0.5, 1.7]))
    return b, t, heads, d, mask, dropout_p, scale, draw(dtypes), draw(st.integers(0, 2**16))


@given(case=fused_attention_cases())
def test_fused_packed_attention_equals_reference(case):
    """The fused path (kernels/cpu_attention.py: q, k, v read in the packed qkv, out and dqkv
    written packed) gives the reference's output and gradient dqkv: without a mask, causal, with
    masked keys inside the rows' prefixes, with dropout (the same keep mask: both paths draw it
    from the generator the seed sets), at T = 1, d = 1, one head."""
    b, t, heads, d, mask_kind, dropout_p, scale, dtype, seed = case
    rng = np.random.default_rng(seed)
    qkv, g = _randn(rng, (b, t, 3 * heads * d), dtype), _randn(rng, (b, t, heads * d), dtype)
    mask = None
    if mask_kind in ("causal", "4d"):
        mask = np.tril(np.ones((t, t), bool))
        mask = mask.reshape(1, 1, t, t) if mask_kind == "4d" else mask
    elif mask_kind == "random":
        mask = rng.random((t, t)) < 0.6
        mask[:, 0] = True
    ref, ker = attention.PackedSelfAttention(np), cpu_ops.FusedPackedSelfAttention(np)
    outs = []
    for op in (ref, ker):
        tg.manual_seed(seed)
        outs.append((op.forward(qkv, mask, heads, scale, dropout_p), *op.backward(g)))
    assert ker.accepts(qkv, mask, heads, scale, dropout_p)
    for got, want in zip(outs[1], outs[0]):
        _close(got, want, dtype)


def test_fused_packed_attention_fully_masked_row_is_nan_like_the_reference():
    """A query row with every key masked has no softmax: NaN in its output and, through the
    backward, in the gradients it reaches, in the same places as the reference."""
    rng = np.random.default_rng(5)
    qkv, g = _randn(rng, (2, 4, 3 * 2 * 3), np.float64), _randn(rng, (2, 4, 2 * 3), np.float64)
    mask = np.tril(np.ones((4, 4), bool))
    mask[2] = False
    ref, ker = _dispatched(attention.PackedSelfAttention, qkv, mask, 2, 0.5)
    with np.errstate(invalid="ignore"):  # the masked row is -inf - (-inf): NaN, as in PyTorch
        want, got = ref.forward(qkv, mask, 2, 0.5), ker.forward(qkv, mask, 2, 0.5)
        want_grad, got_grad = ref.backward(g)[0], ker.backward(g)[0]
    assert type(ker) is cpu_ops.FusedPackedSelfAttention
    assert np.isnan(got[:, 2]).all() and np.isnan(want[:, 2]).all()
    _close(got, want, np.float64)
    _close(got_grad, want_grad, np.float64)  # equal_nan: NaN in the same places


def test_fused_packed_attention_is_taken_for_short_sequences_only():
    """The fused path runs for T <= fused_max_len (the `small` GPT's T = 8) and a kernel dtype, not
    for the `large` GPT's T = 256 nor just over the threshold (which then equals the reference on
    the inherited path), nor for float16, a non-bool mask or dropout_p = 1."""
    op_cls = cpu_ops.FusedPackedSelfAttention
    assert KERNELS[attention.PackedSelfAttention][0] is op_cls  # asked first
    n = op_cls.fused_max_len
    small, large = np.empty((32, 8, 3 * 4 * 8), np.float32), np.empty((1, 256, 3 * 6 * 64), np.float32)
    assert op_cls.accepts(small, np.tril(np.ones((8, 8), bool)), 4, 0.5)
    assert op_cls.accepts(np.empty((2, n, 3 * 2 * 64)), None, 2, 0.5)  # float64, a large head size
    assert not op_cls.accepts(large, np.tril(np.ones((256, 256), bool)), 6, 0.5)
    assert not op_cls.accepts(np.empty(small.shape, np.float16), None, 4, 0.5)
    assert not op_cls.accepts(small, np.tril(np.ones((8, 8))), 4, 0.5)  # a float mask
    assert not op_cls.accepts(small, None, 4, 0.5, dropout_p=1.0)
    assert not op_cls.accepts(small[:, :0], None, 4, 0.5)  # T = 0
    rng = np.random.default_rng(6)
    for t in (8, n + 1):
        qkv, g = _randn(rng, (2, t, 3 * 2 * 4), np.float32), _randn(rng, (2, t, 2 * 4), np.float32)
        mask = np.tril(np.ones((t, t), bool))
        ref, ker = _dispatched(attention.PackedSelfAttention, qkv, mask, 2, 0.5)
        _close(ker.forward(qkv, mask, 2, 0.5), ref.forward(qkv, mask, 2, 0.5), np.float32)
        assert (type(ker) is op_cls) == (t <= n)
        _close(ker.backward(g)[0], ref.backward(g)[0], np.float32)
    # through the engine, as the GPT calls it; shown by the name of the op it replaces, as every kernel op is
    x = tg.randn(32, 8, 3 * 4 * 8, requires_grad=True)
    out = tg.nn.functional.packed_self_attention(x, 4, is_causal=True)
    assert type(out._ctx) is op_cls
    assert repr(out).endswith("grad_fn=<PackedSelfAttentionBackward>)")
    assert tg.profiler.op_name(out._ctx) == "PackedSelfAttention [kernel]"


@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple), last=st.integers(1, 70),
       dtype=dtypes, seed=st.integers(0, 2**16))  # fmt: skip
def test_softmax_kernel_equals_reference(shape, last, dtype, seed):
    rng = np.random.default_rng(seed)
    x = _randn(rng, shape + (last,), dtype) * 4
    if last > 1:
        x.flat[0] = -np.inf  # a masked entry: exp(-inf) = 0 (a row of only -inf is NaN: its own test)
    g = _randn(rng, x.shape, dtype)
    for dim in (-1, x.ndim - 1):
        ref, ker = _pair(softmax.Softmax)
        _close(ker.forward(x, dim), ref.forward(x, dim), dtype)
        assert KERNEL[softmax.Softmax].accepts(x, dim)
        _close(ker.backward(g), ref.backward(g), dtype)


def test_softmax_kernel_runs_the_reference_off_the_last_dim():
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    ref, ker = _dispatched(softmax.Softmax, x, 1)
    _close(ker.forward(x, 1), ref.forward(x, 1), np.float64)
    assert type(ker) is softmax.Softmax
    _close(ker.backward(x), ref.backward(x), np.float64)


@given(n=odd, c=st.integers(1, 50), dtype=dtypes, reduction=st.sampled_from(["mean", "sum", "none"]),
       ignore=st.booleans(), seed=st.integers(0, 2**16))  # fmt: skip
def test_cross_entropy_kernel_equals_reference(n, c, dtype, reduction, ignore, seed):
    rng = np.random.default_rng(seed)
    x = _randn(rng, (n, c), dtype) * 4
    t = rng.integers(0, c, n)
    if ignore:
        t[rng.random(n) < 0.3] = -100
        t[0] = 0  # one row kept: with every row ignored, "mean" divides by 0 (the reference's gradient is
        # then NaN on the ignored rows, 0 * inf; the kernel's is 0 there, as PyTorch's)
    g = _randn(rng, (n,), dtype) if reduction == "none" else np.asarray(rng.standard_normal(), dtype)
    ref, ker = _pair(cross_entropy.CrossEntropy)
    want, got = ref.forward(x, t, reduction), ker.forward(x, t, reduction)
    _close(np.asarray(got), np.asarray(want), dtype)
    _close(ker.backward(g)[0], ref.backward(g)[0], dtype)


@given(n=st.integers(1, 3000), dtype=dtypes, decay=st.sampled_from([0.0, 0.1]), seed=st.integers(0, 2**16))
def test_adamw_kernel_equals_reference_bit_for_bit(n, dtype, decay, seed):
    """Each element in torch's order of operations, in the arrays' dtype, nothing contracted: the
    same IEEE operations as the reference, so the same bits (float32 and float64)."""
    rng = np.random.default_rng(seed)
    arrays = [_randn(rng, n, dtype) for _ in range(2)] + [np.zeros(n, dtype), np.zeros(n, dtype)]
    ref_arrays = [a.copy() for a in arrays]
    hyper = {"lr": 3e-3, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": decay}
    for step in range(1, 4):
        cpu.adamw_step(*arrays, **hyper, step=step)
        adamw_update_(*ref_arrays, step=step, xp=np, **hyper)
        arrays[1] = ref_arrays[1] = _randn(rng, n, dtype)  # a new gradient
    for got, want in zip(arrays, ref_arrays):
        np.testing.assert_array_equal(got, want)


@given(
    shapes=st.lists(st.sampled_from([(), (1,), (0,), (7,), (3, 5), (2, 3, 9)]), min_size=1, max_size=6),
    dtype=dtypes, tile=st.sampled_from([1, 4, 1 << 16]), parallel=st.booleans(), seed=st.integers(0, 2**16),
    data=st.data(),
)  # fmt: skip
def test_adamw_params_kernel_equals_reference_bit_for_bit(shapes, dtype, tile, parallel, seed, data):
    """adamw_step_params updates runs of a list of parameter arrays, each where it is (through its
    address), with their parts of flat gradient and moment arrays: the bits of adamw_update_ on the
    concatenated arrays, serial or parallel, in tiles of any size (a tile of 1 or 4 elements cuts
    parameters into several), and nothing outside the run is touched."""
    rng = np.random.default_rng(seed)
    params = [_randn(rng, shape, dtype) for shape in shapes]
    first = data.draw(st.integers(0, len(params) - 1))
    end = data.draw(st.integers(first + 1, len(params)))
    n = sum(p.size for p in params)
    g, m, v = _randn(rng, n, dtype), _randn(rng, n, dtype) * 0.1, np.abs(_randn(rng, n, dtype))
    want = [np.concatenate([p.reshape(-1) for p in params]), g.copy(), m.copy(), v.copy()]
    a, b = sum(p.size for p in params[:first]), sum(p.size for p in params[:end])
    hyper = {"lr": 3e-3, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1}
    adamw_update_(*(x[a:b] for x in want), step=3, xp=np, **hyper)
    arrays = list(params)  # the objects themselves: the kernel must write into them
    with unittest.mock.patch.object(cpu, "_PARALLEL_MIN", 0 if parallel else 1 << 62):
        cpu.adamw_step_params(cpu.param_table(arrays, tile), first, end, g, m, v, step=3, **hyper)
    assert all(x is y for x, y in zip(arrays, params))
    np.testing.assert_array_equal(np.concatenate([p.reshape(-1) for p in params]), want[0])
    for got, expected in zip((g, m, v), want[1:]):
        np.testing.assert_array_equal(got, expected)


def test_the_adamw_params_kernel_op_takes_writable_contiguous_arrays_of_one_kernel_dtype():
    ker = KERNEL[adamw.AdamWParamsUpdate]
    ok = [np.ones((2, 3), np.float32), np.ones(4, np.float32)]
    assert ker.accepts(ok)
    read_only = np.ones(4, np.float32)
    read_only.flags.writeable = False
    for bad in (np.ones((3, 2), np.float32).T, read_only, np.ones(4, np.float64), np.ones(4, np.int64)):
        assert not ker.accepts([ok[0], bad])
    assert autograd.dispatch(adamw.AdamWParamsUpdate, "cpu", [ok[0], ok[0].T]) is adamw.AdamWParamsUpdate
    op = ker(ok)
    twin = copy.deepcopy(op)  # made anew: its table holds the copies' addresses, not the originals'
    assert twin.params[0] is not ok[0]
    assert twin.table[0].tolist() == [a.ctypes.data for a in twin.params] != op.table[0].tolist()


@given(shape=st.sampled_from([(1,), (7,), (3, 5), (2, 3, 9)]), dtype=dtypes, seed=st.integers(0, 2**16))
def test_elementwise_kernels_equal_reference(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x, g = _randn(rng, shape, dtype) * 2, _randn(rng, shape, dtype)
    x.flat[0] = 0.0  # the kink: relu's subgradient 0
    for ref_cls, args in ((activation.ReLU, ()), (activation.GELU, ("none",))):
        ref, ker = _pair(ref_cls)
        _close(ker.forward(x, *args), ref.forward(x, *args), dtype)
        _close(ker.backward(g), ref.backward(g), dtype)
    ref, ker = _pair(dropout.Dropout)
    outs = []
    for op in (ref, ker):
        tg.manual_seed(seed)
        outs.append((op.forward(x, 0.3), op.backward(g)))
    for got, want in zip(outs[1], outs[0]):
        _close(got, want, dtype)


def test_gelu_tanh_and_integer_relu_run_the_reference():
    x = np.linspace(-3, 3, 7)
    ref, ker = _dispatched(activation.GELU, x, "tanh")
    _close(ker.forward(x, "tanh"), ref.forward(x, "tanh"), np.float64)
    assert type(ker) is activation.GELU
    _, ker = _dispatched(activation.ReLU, np.array([-2, 0, 3]))
    np.testing.assert_array_equal(ker.forward(np.array([-2, 0, 3])), [0, 0, 3])
    assert type(ker) is activation.ReLU


@given(n=odd, vocab=st.integers(1, 12), d=st.integers(1, 70), dtype=dtypes, seed=st.integers(0, 2**16))
def test_embedding_backward_kernel_equals_reference(n, vocab, d, dtype, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (n,))  # repeats accumulate
    w, g = _randn(rng, (vocab, d), dtype), _randn(rng, (n, d), dtype)
    ref, ker = _pair(embedding.Embedding)
    _close(ker.forward(ids, w), ref.forward(ids, w), dtype)
    _close(ker.backward(g)[1], ref.backward(g)[1], dtype)


def test_kernels_do_not_depend_on_the_thread_count(monkeypatch):
    """Rows go to threads whole, and sums over rows run over fixed blocks: the serial compilation
    and the parallel one on one thread and on two give the same bits."""
    numba = pytest.importorskip("numba")
    rng = np.random.default_rng(4)
    x, g, w = _randn(rng, (101, 33), np.float32), _randn(rng, (101, 33), np.float32), _randn(rng, (33,), np.float32)
    s = _randn(rng, (5, 9, 9), np.float32)
    ids = rng.integers(0, 7, 101)
    qkv, g_heads = _randn(rng, (7, 9, 3 * 3 * 5), np.float32), _randn(rng, (7, 9, 3 * 5), np.float32)
    causal, keep = np.tril(np.ones((9, 9), bool)), rng.random((7 * 3, 9, 9)) < 0.7
    runs = []
    before = numba.get_num_threads()
    for threads, parallel_min in ((1, 1 << 62), (1, 0), (before, 0)):  # serial; parallel on 1 and 2 threads
        monkeypatch.setattr(cpu, "_PARALLEL_MIN", parallel_min)
        numba.set_num_threads(threads)
        y, mean, rstd = cpu.layernorm_forward(x, w, w, 1e-5)
        runs.append([y, *cpu.layernorm_backward(g, x, mean, rstd, w), cpu.embedding_backward(ids, g, 7)])
        runs[-1].append(cpu.attention_softmax_forward(s.copy(), 0.3, None, None, 1.0)[0])
        out, p, pd, n_keys = cpu_attention.packed_attention_forward(qkv, 3, 0.5, causal, keep, 0.7)
        runs[-1] += [out, cpu_attention.packed_attention_backward(g_heads, qkv, p, pd, n_keys, 3, 0.5, keep, 0.7)]
    numba.set_num_threads(before)
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


def test_a_kernel_that_fails_to_compile_names_itself_and_the_switch():
    x = np.array([[1, "a"]], dtype=object)  # Numba cannot type object arrays
    with pytest.raises(kernels.KernelError, match=r"layernorm_forward.*TENSORGRAD_KERNELS=reference"):
        cpu.layernorm_forward(x, None, None, 1e-5)


def test_the_switch_picks_the_path(monkeypatch):
    x = tg.randn(3, 4, requires_grad=True)
    assert type(x.layer_norm(4)._ctx) is KERNEL[layernorm.LayerNorm] or type(x.layer_norm(4)._ctx).kernels is cpu
    with tg.kernels.reference():
        assert tg.kernels.mode() == "reference"
        assert type(x.layer_norm(4)._ctx) is layernorm.LayerNorm
    assert tg.kernels.mode() == "kernels"
    assert type(x.to("strict").layer_norm(4)._ctx) is layernorm.LayerNorm  # strict: always the reference
    tg.kernels.use("reference")
    try:
        assert type(x.relu()._ctx) is activation.ReLU
    finally:
        tg.kernels.use("kernels")
    assert type(x.relu()._ctx).kernels is cpu
    with pytest.raises(ValueError, match="'kernels' or 'reference'"):
        tg.kernels.use("fast")


def test_the_environment_switch_and_its_errors():
    import os
    import subprocess
    import sys

    code = "import tensorgrad as tg; x = tg.randn(2, 3, requires_grad=True); print(type(x.relu()._ctx).__module__)"
    env = dict(os.environ, TENSORGRAD_KERNELS="reference")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "tensorgrad.ops.activation"
    env["TENSORGRAD_KERNELS"] = "nope"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "TENSORGRAD_KERNELS must be 'kernels' (the default) or 'reference'" in bad.stderr


def test_a_device_without_a_kernel_module_runs_the_reference(monkeypatch):
    monkeypatch.setitem(kernels._KERNEL_MODULES, "cpu", "no_such_module")
    assert kernels.substitutes("cpu") == {}


def test_the_engine_runs_a_registered_kernel_only_for_inputs_it_accepts(monkeypatch):
    """The kernel seam (autograd.register_kernel): a kernel names the op it replaces and accepts
    some inputs; apply runs it for those and the reference op for the others."""

    class TwiceReLU(activation.ReLU):  # wrong on purpose, so that the path taken shows
        replaces = activation.ReLU

        @staticmethod
        def accepts(x):
            return x.dtype == np.float64

        def forward(self, x):
            return 2 * self.xp.maximum(x, 0)

    tables = {}  # the registry as new (the engine's and apply's view of it), restored after the test
    monkeypatch.setattr(kernel_registry, "_kernel_tables", tables)
    monkeypatch.setattr(autograd, "_kernel_tables", tables)
    autograd.register_kernel(TwiceReLU, "strict")
    x = tg.tensor([-1.0, 2.0], dtype=tg.float64, device="strict", requires_grad=True)
    assert x.relu().tolist() == [0, 4] and type(x.relu()._ctx) is TwiceReLU
    assert x.float().relu().tolist() == [0, 2] and type(x.float().relu()._ctx) is activation.ReLU
    assert autograd.dispatch(activation.ReLU, "strict", np.zeros(2, np.float32)) is activation.ReLU


def test_of_an_ops_kernels_the_first_that_accepts_the_inputs_runs(monkeypatch):
    """An op's kernels in the order the device's loader gives them (kernel_registry.py): apply and
    dispatch run the first whose `accepts` holds, the next where it does not, the reference where
    none does; register_kernel puts a kernel ahead of the others."""

    def scaled(factor, accepts):
        class ScaledReLU(activation.ReLU):  # wrong on purpose, so that the path taken shows
            replaces = activation.ReLU

            def forward(self, x):
                return factor * self.xp.maximum(x, 0)

        ScaledReLU.accepts = staticmethod(accepts)
        return ScaledReLU

    long_ones = scaled(3, lambda x: x.size > 2)
    doubles = scaled(2, lambda x: x.dtype == np.float64)
    tables = {}
    monkeypatch.setattr(kernel_registry, "_kernel_tables", tables)
    monkeypatch.setattr(autograd, "_kernel_tables", tables)
    monkeypatch.setitem(kernel_registry._kernel_loaders, "strict", lambda device: (long_ones, doubles))

    def relu(values, dtype):
        out = tg.tensor(values, dtype=dtype, device="strict", requires_grad=True).relu()
        return out.tolist(), type(out._ctx)

    assert relu([-1.0, 1.0, 2.0], tg.float64) == ([0, 3, 6], long_ones)  # both accept: the first runs
    assert relu([-1.0, 2.0], tg.float64) == ([0, 4], doubles)  # the first declines: the next
    assert relu([-1.0, 2.0], tg.float32) == ([0, 2], activation.ReLU)  # none accepts: the reference
    assert autograd.dispatch(activation.ReLU, "strict", np.zeros(2, np.float64)) is doubles
    assert autograd.kernel_table("strict") == {activation.ReLU: (long_ones, doubles)}
    first = scaled(4, lambda x: x.size == 2)
    autograd.register_kernel(first, "strict")
    assert relu([-1.0, 2.0], tg.float32) == ([0, 8], first)
    assert relu([-1.0, 1.0, 2.0], tg.float64) == ([0, 3, 6], long_ones)


def test_both_paths_draw_the_same_dropout_masks_and_train_alike():
    """A seeded run is reproducible on each path, and the two paths agree (same masks from backend.rng)."""
    from gpt import build_model  # noqa: PLC0415

    def run():
        tg.manual_seed(3)
        model = build_model("small", vocab_size=11)
        opt = tg.optim.AdamW(model.parameters(), lr=1e-2)
        gen = np.random.default_rng(0)
        losses = []
        for _ in range(3):
            idx = tg.tensor(gen.integers(0, 11, (4, 8)))
            _, loss_ = model(idx, tg.tensor(gen.integers(0, 11, (4, 8))))
            opt.zero_grad()
            loss_.backward()
            opt.step()
            losses.append(loss_.item())
        return losses

    kernel_run, kernel_again = run(), run()
    with tg.kernels.reference():
        reference_run = run()
    assert kernel_run == kernel_again  # bit for bit
    # float32 through 3 steps of a 2-layer model: op-level differences of ~1e-7 grow to ~1e-6.
    np.testing.assert_allclose(kernel_run, reference_run, rtol=1e-4)
    assert backend.rng("cpu") is not None


@given(rows=st.integers(0, 7), n=st.integers(0, 9), before=st.integers(0, 3), cuts=st.lists(st.integers(0, 7)),
       p=st.sampled_from([0.1, 1 / 3]), seed=st.integers(0, 2**16))  # fmt: skip
def test_keep_rows_draw_keep_masks_bits_range_by_range_and_leave_the_same_state(rows, n, before, cuts, p, seed):
    """kernels/cpu.py's KeepRows (an attention's parts each drawing their own rows of the dropout mask)
    against keep_mask: the same rows bit for bit, the ranges drawn in any order, and the generator
    left in the same state at once, whether or not it held half a word (`before` uniforms first)."""
    tg.manual_seed(seed)
    tg.rand(before)
    want = cpu.keep_mask(backend.rng("cpu"), (rows, n), p)
    want_after = tg.rand(3).tolist()
    tg.manual_seed(seed)
    tg.rand(before)
    keep = cpu.KeepRows(backend.rng("cpu"), rows, n, p)
    assert tg.rand(3).tolist() == want_after
    bounds = sorted({0, rows, *(c for c in cuts if c <= rows)})
    ranges = list(zip(bounds, bounds[1:]))[::-1]  # the last rows first
    for r0, r1 in ranges:
        np.testing.assert_array_equal(keep.rows(r0, r1), want[r0:r1])


@given(shape=st.sampled_from([(0,), (1,), (7,), (4, 5), (3, 33, 17)]), before=st.integers(0, 3),
       p=st.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 0.9999]), seed=st.integers(0, 2**16))  # fmt: skip
def test_keep_mask_kernel_draws_the_references_bits_and_leaves_the_same_state(shape, before, p, seed):
    """kernels/cpu.py's keep_mask against ops.dropout.keep_mask: the same mask, bit for bit, and the
    generator in the same state after it (so the next draw agrees too), whether or not the
    generator holds half a word from an earlier odd-sized draw (`before` uniforms first)."""
    masks, after = [], []
    for draw in (dropout.keep_mask, lambda device, shape, p: cpu.keep_mask(backend.rng(device), shape, p)):
        tg.manual_seed(seed)
        tg.rand(before)
        masks.append(draw("cpu", shape, p))
        after.append((tg.rand(3).tolist(), tg.randint(0, 1000, (2,)).tolist()))
    assert masks[1].shape == masks[0].shape == shape and masks[1].dtype == np.bool_
    np.testing.assert_array_equal(masks[1], masks[0])
    assert after[1] == after[0]
