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

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad import backend
from tensorgrad.kernels import cpu, cpu_flash
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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flash_attention_parallel_equals_serial_bit_for_bit(dtype, monkeypatch):
    """The parallel compilation (rows over Numba's threads, taken for large work) gives the serial
    one's bits: each (batch, head) row is computed start to end by one thread; and it equals the reference."""
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
