"""The CPU flash attention (tensorgrad/kernels/cpu_flash.py) equals the reference op,
ops.attention.ScaledDotProductAttention, forward and backward, on hypothesis-drawn shapes: sequences
of one to several query blocks and key tiles (`BLOCK` = 64), T != S, head sizes that differ between
q/k and v, no mask, the causal mask and arbitrary masks (fully masked rows included), dropout on and
off, float32 and float64.  The dropout keep mask is drawn by `kernels.cpu.keep_mask` after the same
seed as the reference's draw: the same bits.

Tolerances: the kernel takes every sum in another order than the reference (tile by tile, rescaled
by the online softmax's alpha) and its float32 exp is a polynomial within 2 ulp; in float64 each
value differs from the reference by a few ulps times the row length (1e-10 bounds it with room), in
float32 (ulp 6e-8) by up to ~1e-5 on sums over ~150 keys and head sizes up to 64 (1e-4 bounds it);
a wrong kernel is off by O(0.1).
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad import backend
from tensorgrad.kernels import cpu, cpu_flash, cpu_ops, cpu_threads
from tensorgrad.ops import attention

TOL = {np.float32: 1e-4, np.float64: 1e-10}  # reasons in the module docstring


def _reference(q, k, v, g, mask, scale, dropout_p, seed):
    """(out, dq, dk, dv) of the reference op, its dropout drawn after `tg.manual_seed(seed)`."""
    op = attention.ScaledDotProductAttention(np)
    tg.manual_seed(seed)
    with np.errstate(invalid="ignore"):  # a fully masked row: -inf - (-inf), NaN as in PyTorch
        out = op.forward(q, k, v, mask, scale, dropout_p)
        dq, dk, dv, _ = op.backward(g.copy())
    return out, dq, dk, dv


def _flash(q, k, v, g, mask, scale, dropout_p, seed):
    """(out, dq, dk, dv) of cpu_flash on (R, T, d) rows, the keep mask drawn as the kernel path draws it."""
    tg.manual_seed(seed)
    keep = cpu.keep_mask(backend.rng("cpu"), q.shape[:-1] + (k.shape[-2],), dropout_p) if dropout_p else None
    out, lse = cpu_flash.attention_forward(q, k, v, mask, keep, 1 - dropout_p, scale)
    return (out, *cpu_flash.attention_backward(q, k, v, out, lse, g, mask, keep, 1 - dropout_p, scale))


def _assert_equal_to_reference(q, k, v, g, mask, dropout_p, seed, dtype):
    scale = q.shape[-1] ** -0.5
    want = _reference(q, k, v, g, mask, scale, dropout_p, seed)
    got = _flash(q, k, v, g, mask, scale, dropout_p, seed)
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype], equal_nan=True, err_msg=name)


@st.composite
def flash_cases(draw):
    rows = draw(st.integers(1, 3))
    t = draw(st.sampled_from([draw(st.integers(1, 9)), draw(st.integers(60, 150))]))  # one block, or 1-3 of 64
    s = draw(st.sampled_from([t, draw(st.integers(1, 140))]))
    d = draw(st.sampled_from([1, 5, 16, 64]))
    dv = draw(st.sampled_from([d, 3]))
    mask = draw(st.sampled_from(["none", "causal", "random", "random with a fully masked row"]))
    dropout_p = draw(st.sampled_from([0.0, 0.3]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return rows, t, s, d, dv, mask, dropout_p, dtype, draw(st.integers(0, 2**16))


@given(case=flash_cases())
def test_flash_attention_equals_reference(case):
    rows, t, s, d, dv, mask_kind, dropout_p, dtype, seed = case
    rng = np.random.default_rng(seed)
    q, k = (rng.standard_normal(shape).astype(dtype) for shape in ((rows, t, d), (rows, s, d)))
    v, g = (rng.standard_normal(shape).astype(dtype) for shape in ((rows, s, dv), (rows, t, dv)))
    mask = None
    if mask_kind == "causal":
        mask = np.tri(t, s, dtype=bool)
    elif mask_kind.startswith("random"):
        mask = rng.random((t, s)) < 0.4
        mask[:, rng.integers(s)] = True  # every row attends somewhere ...
        if mask_kind.endswith("row"):
            mask[rng.integers(t)] = False  # ... but one: NaN, spreading to dk and dv, as in the reference
    _assert_equal_to_reference(q, k, v, g, mask, dropout_p, seed, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dropout_p", [0.0, 0.2])
def test_flash_attention_causal_several_blocks_equals_reference(dtype, dropout_p):
    """The `large` preset's head size and a sequence of three blocks and a part, causal: the tiles past
    the diagonal skipped, the diagonal tiles masked per row, dropout's keep mask read per tile."""
    rng = np.random.default_rng(7)
    q, k, v, g = (rng.standard_normal((2, 200, 64)).astype(dtype) for _ in range(4))
    _assert_equal_to_reference(q, k, v, g, np.tri(200, 200, dtype=bool), dropout_p, 7, dtype)


def test_flash_attention_skips_tiles_past_the_causal_diagonal():
    """Causal: each query block's keys end at its last row (`key_ranges`), so a key tile after the
    diagonal is never read: NaN there reaches no output of the blocks before it, and the rows that do
    attend it are NaN as in the reference."""
    block = cpu_flash.BLOCK
    T = 2 * block + 5
    mask = np.tri(T, T, dtype=bool)
    lo, hi = cpu_flash.key_ranges(mask, cpu_flash.is_causal(mask), T, T, block)
    assert lo.tolist() == [0, 0, 0] and hi.tolist() == [block, 2 * block, T]
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, T, 16)) for _ in range(3))
    k[:, block:] = np.nan  # every key of the second tile on
    out, lse = cpu_flash.attention_forward(q, k, v, mask, None, 1.0, 0.25)
    assert np.isfinite(out[:, :block]).all() and np.isfinite(lse[:, :block]).all()
    assert np.isnan(out[:, block:]).all()
    want = _reference(q, k, v, np.zeros_like(q), mask, 0.25, 0.0, 0)[0]
    np.testing.assert_allclose(out[:, :block], want[:, :block], rtol=1e-10, atol=1e-10)  # float64 (module docstring)


def test_flash_key_ranges_of_an_arbitrary_mask():
    """Another mask: per query block, the keys from the first any of its rows attends to one past the
    last (a block whose rows attend nothing has an empty range)."""
    mask = np.zeros((10, 12), bool)
    mask[1, 3] = mask[2, 7] = mask[6, 11] = True
    lo, hi = cpu_flash.key_ranges(mask, False, 10, 12, 4)  # blocks of rows 0-3, 4-7, 8-9
    assert lo.tolist() == [3, 11, 0] and hi.tolist() == [8, 12, 0]


def test_flash_exp32_within_2_ulp():
    """The float32 exponential (a polynomial, so that the tile loops run in SIMD registers) against
    float64's: within 2 ulp for x in [-87.3, 0], 0 below (and for -inf), NaN for NaN."""
    xs = np.concatenate([-np.geomspace(1e-8, 87.3, 3000), [0.0, -0.5, -1.0, -math.log(2)]]).astype(np.float32)
    got = np.array([cpu_flash._exp32(x) for x in xs], np.float64)
    want = np.exp(xs.astype(np.float64))
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - want) / ulp) <= 2
    assert cpu_flash._exp32(np.float32(-np.inf)) == 0 and cpu_flash._exp32(np.float32(-100)) == 0
    assert math.isnan(cpu_flash._exp32(np.float32(np.nan)))


def test_flash_block_size_keeps_tile_products_on_one_thread():
    """Head sizes above 64 take smaller tiles: a tile product stays at most 64^3."""
    assert cpu_flash.block_size(64, 64) == 64
    assert cpu_flash.block_size(128, 64) == 32
    assert cpu_flash.block_size(1, 1) == 64
    for d in (65, 128, 200, 256, 512):
        b = cpu_flash.block_size(d, d)
        assert b * b * d <= 64**3


@pytest.mark.parametrize("dtype", [np.float32])
def test_flash_attention_parallel_equals_serial_bit_for_bit(dtype, monkeypatch):
    """The parallel compilation (rows over Numba's threads, taken for large work) gives the serial
    one's bits: each (batch, head) row is computed start to end by one thread; and it equals the reference.
    float32 only, the training dtype: the loops are the same for float64 (which the serial tests
    cover), and compiling the parallel float64 variants took 80 s of the suite's time."""
    rng = np.random.default_rng(3)
    q, k, v, g = (rng.standard_normal((5, 130, 16)).astype(dtype) for _ in range(4))
    mask = rng.random((130, 130)) < 0.5
    mask[:, 0] = True
    serial = _flash(q, k, v, g, mask, 0.25, 0.3, 11)
    monkeypatch.setattr(cpu, "_PARALLEL_MIN", 0)  # every size runs the parallel compilation
    parallel = _flash(q, k, v, g, mask, 0.25, 0.3, 11)
    for a, b in zip(parallel, serial):
        np.testing.assert_array_equal(a, b)
    _assert_equal_to_reference(q, k, v, g, mask, 0.3, 11, dtype)


# --------------------------------------------------------------------------- wired in: the kernel ops
# kernels/cpu_ops.py's FlashAttention and FlashPackedSelfAttention, which the engine runs for T, S >= 64,
# against the reference path (tg.kernels.reference()), through the functions people call.
@contextlib.contextmanager
def _kernels(mode):
    previous = tg.kernels.mode()
    tg.kernels.use(mode)
    try:
        yield
    finally:
        tg.kernels.use(previous)


def _sdpa_run(mode, arrays, causal, dropout_p, seed):
    """(out, dq, dk, dv, the dropout keep mask or None, the node's class) of the functional on one path."""
    with _kernels(mode):
        q, k, v = (tg.tensor(a, requires_grad=True) for a in arrays)
        tg.manual_seed(seed)
        out = tg.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal)
        ctx = out._ctx
        keep = ctx.graph_params()[0]  # the keep mask in the weights' shape, on both paths (before backward frees it)
        (out * out).sum().backward()
        after = tg.rand(1).item()  # the generator's state after the draw
    return out.numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy(), keep, after, type(ctx)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal, dropout_p", [(True, 0.0), (False, 0.0), (True, 0.3), (False, 0.2)])
def test_flash_kernel_op_through_the_functional_equals_the_reference_path(dtype, causal, dropout_p):
    """tg.nn.functional.scaled_dot_product_attention at T = 80 (two query blocks, the second partial),
    S = 72 without a mask, runs FlashAttention and gives the reference path's output and gradients,
    with a seed the same dropout keep mask (the reference's draw) and the generator left in the
    same state."""
    rng = np.random.default_rng(21)
    T, S = 80, (80 if causal else 72)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((2, 3, T, 16), (2, 3, S, 16), (2, 3, S, 8))]
    got = _sdpa_run("kernels", arrays, causal, dropout_p, 5)
    want = _sdpa_run("reference", arrays, causal, dropout_p, 5)
    assert got[-1] is cpu_ops.FlashAttention and want[-1] is attention.ScaledDotProductAttention
    for a, b in zip(got[:4], want[:4]):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype])  # reasons in the module docstring
    if dropout_p:
        np.testing.assert_array_equal(got[4], want[4])  # bit for bit the same masks
        assert not got[4].all()
    else:
        assert got[4] is None and want[4] is None
    assert got[5] == want[5]


def test_flash_kernel_op_is_not_taken_for_a_nan_no_query_attends():
    """A NaN in a value that the causal mask hides from every query but the last: flash would keep it
    out of the rows whose tiles leave that key out, the reference's $P v$ spreads it (0 * NaN).  The
    engine runs the GEMM path for it, which spreads it as the reference does."""
    rng = np.random.default_rng(22)
    arrays = [rng.standard_normal((1, 2, 64, 8)) for _ in range(3)]
    arrays[2][0, 0, -1, 3] = np.nan
    with np.errstate(invalid="ignore"):
        got = _sdpa_run("kernels", arrays, True, 0.0, 0)
        want = _sdpa_run("reference", arrays, True, 0.0, 0)
    assert got[-1] is cpu_ops.ScaledDotProductAttention
    assert np.isnan(want[0][0, 0, :, 3]).all()  # every row's column 3: 0 * NaN
    flash = cpu_ops.FlashAttention(np).forward(*arrays, np.tril(np.ones((64, 64), bool)), 8**-0.5)
    assert not np.isnan(flash[0, 0, :, 3]).all()  # what flash would give: NaN only in the rows whose tile reads key 63
    for a, b in zip(got[:4], want[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, equal_nan=True)  # float64: rounding


@st.composite
def packed_flash_cases(draw):
    b = draw(st.integers(1, 3))
    t = draw(st.sampled_from([64, draw(st.integers(65, 140))]))  # one query block, or two to three
    heads = draw(st.integers(1, 3))
    d = draw(st.sampled_from([1, 4, 16]))
    mask = draw(st.sampled_from(["none", "causal", "random with a fully masked row"]))
    dropout_p = draw(st.sampled_from([0.0, 0.25]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return b, t, heads, d, mask, dropout_p, dtype, draw(st.integers(0, 2**16))


@given(case=packed_flash_cases())
def test_packed_flash_on_the_heads_in_place_in_batch_parts_equals_reference(case):
    """FlashPackedSelfAttention reads each head of the packed qkv where it lies (rows 3 H d apart),
    writes the output and dqkv in their packed layouts, and runs a part of the batch per thread (two
    here, even on one core), each drawing its rows of the keep mask: the reference op's output and
    dqkv, the same keep mask bit for bit, the generator left in the same state."""
    b, t, heads, d, mask_kind, dropout_p, dtype, seed = case
    rng = np.random.default_rng(seed)
    qkv, g = (rng.standard_normal(shape).astype(dtype) for shape in ((b, t, 3 * heads * d), (b, t, heads * d)))
    mask = None
    if mask_kind == "causal":
        mask = np.tri(t, t, dtype=bool)
    elif mask_kind.startswith("random"):
        mask = rng.random((t, t)) < 0.4
        mask[:, rng.integers(t)] = True
        mask[rng.integers(t)] = False  # NaN in its row, and through dk, dv in every row, as in the reference
    runs = []
    for op in (attention.PackedSelfAttention(np), cpu_ops.FlashPackedSelfAttention(np)):
        tg.manual_seed(seed)
        with np.errstate(invalid="ignore"), pytest.MonkeyPatch.context() as mp:
            mp.setattr(cpu_threads, "_thread_count", lambda: 2)  # two parts of the batch, even on one core
            out = op.forward(qkv, mask, heads, d**-0.5, dropout_p)
            keep = op.graph_params()[2][0]
            dqkv, _ = op.backward(g)
        runs.append((out, dqkv, keep, tg.rand(1).item()))
    (want_out, want_dqkv, want_keep, want_after), (out, dqkv, keep, after) = runs
    assert cpu_ops.FlashPackedSelfAttention.accepts(qkv, mask, heads, d**-0.5, dropout_p)
    for got, want in ((out, want_out), (dqkv, want_dqkv)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype], equal_nan=True)  # module docstring
    if dropout_p:
        np.testing.assert_array_equal(keep, want_keep)
    assert after == want_after


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_gpts_attention_runs_flash_and_equals_the_reference_path(dtype, monkeypatch):
    """The GPT at block size 64 (dropout 0.2, training): its attention runs FlashPackedSelfAttention
    on the kernel path, and the logits, loss and every parameter's gradient equal the reference
    path's, the same dropout masks drawn from the seed."""
    from gpt import build_model  # noqa: PLC0415 - the GPT only here

    runs = []
    calls = []
    forward = cpu_ops.FlashPackedSelfAttention.forward
    monkeypatch.setattr(cpu_ops.FlashPackedSelfAttention, "forward",
                        lambda self, *a, **kw: calls.append(1) or forward(self, *a, **kw))  # fmt: skip
    for mode in ("kernels", "reference"):
        with _kernels(mode):
            tg.manual_seed(7)
            model = build_model("small", block_size=64, n_embd=32, n_head=2, n_layer=2, dropout=0.2)
            model.fused = False  # the lecture's code op by op (the fused GPT takes float32 up to T = 64 whole)
            if dtype == np.float64:
                model.double()
            idx = tg.randint(65, (3, 64))
            logits, loss = model(idx, idx)
            loss.backward()
            runs.append((logits.numpy(), loss.item(), {n: p.grad.numpy() for n, p in model.named_parameters()}))
    assert len(calls) == 2  # the two layers, on the kernel path only
    # every op of the model on its kernel path: sums in other orders; float32 through two layers,
    # a softmax over 65 logits and the mean of 192 losses: a few 1e-6, 1e-4 bounds it (a wrong mask is O(0.1))
    tol = {np.float32: 1e-4, np.float64: 1e-10}[dtype]
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=tol, atol=tol)
    assert abs(runs[0][1] - runs[1][1]) <= tol
    for name, grad in runs[0][2].items():
        np.testing.assert_allclose(grad, runs[1][2][name], rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("causal, dropout_p", [(True, 0.0), (False, 0.0), (True, 0.25)])
def test_flash_kernel_ops_double_backward_gradgradcheck(causal, dropout_p):
    """create_graph through both flash kernel ops (their graph_params: the reference's formula with
    the kernel's keep mask) passes gradgradcheck in float64 at T = 64, dropout included (each call
    of the function reseeds: the same mask)."""
    rng = np.random.default_rng(23)
    q, k, v = (tg.tensor(rng.standard_normal((1, 64, 2)), requires_grad=True) for _ in range(3))
    qkv = tg.tensor(rng.standard_normal((1, 64, 3 * 2 * 2)), requires_grad=True)

    def sdpa(q, k, v):
        tg.manual_seed(1)
        return tg.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal)

    def packed(qkv):
        tg.manual_seed(1)
        return tg.nn.functional.packed_self_attention(qkv, 2, dropout_p=dropout_p, is_causal=causal)

    with _kernels("kernels"):
        assert type(sdpa(q, k, v)._ctx) is cpu_ops.FlashAttention
        assert type(packed(qkv)._ctx) is cpu_ops.FlashPackedSelfAttention
        assert tg.autograd.gradgradcheck(sdpa, (q, k, v))
        assert tg.autograd.gradgradcheck(packed, (qkv,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flash_reads_a_one_row_view_whatever_its_row_stride(dtype):
    """NumPy gives a dim of size 1 any stride (0 here, and the view still counts as C-contiguous, so
    no copy is made): the kernels take a one-row view's width as its leading dim, so the forward
    and backward equal the copy's, bit for bit."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 4)).astype(dtype)[:, None, :]  # (3, 1, 4), its row stride 0
    g = rng.standard_normal((3, 4)).astype(dtype)[:, None, :]
    k, v = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    assert q.strides[1] == 0 and q.flags.c_contiguous
    want_out, want_lse = cpu_flash.attention_forward(q.copy(), k, v, None, None, 1.0, 0.5)
    out, lse = cpu_flash.attention_forward(q, k, v, None, None, 1.0, 0.5)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(lse, want_lse)
    want = cpu_flash.attention_backward(q.copy(), k, v, want_out, want_lse, g.copy(), None, None, 1.0, 0.5)
    got = cpu_flash.attention_backward(q, k, v, out, lse, g, None, None, 1.0, 0.5)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_flash_refuses_views_whose_rows_it_cannot_read_by_a_leading_dim():
    """Rows read backwards or overlapping: a ValueError that says to copy, not a wrong result."""
    x = np.zeros((1, 1, 8, 4), np.float32)
    out, lse = np.empty_like(x), np.empty((1, 8), np.float32)
    with pytest.raises(ValueError, match="ascontiguousarray"):
        cpu_flash.heads_forward(x[:, :, ::-1], x, x, None, None, 1.0, 0.5, out, lse)
