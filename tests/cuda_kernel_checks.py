"""Every CUDA kernel (tensorgrad/kernels/cuda.py) against the reference op it must equal.

These tests run in two places, never in the main test process:
- Numba's CUDA simulator, on NumPy arrays: tests/test_cuda_kernels.py runs this file in a
  subprocess with NUMBA_ENABLE_CUDASIM=1 (it must be set before numba.cuda is first imported).
  The simulator runs each GPU thread as a Python thread, so shapes are tiny; they are drawn so
  that rows are shorter than, equal to and longer than a block (4 threads per row block, 8 per
  elementwise block, at most 4 elementwise blocks there), and counts of rows are odd.
- A real GPU, on CuPy arrays: tests/test_cuda_kernels_gpu.py imports these tests (marked `gpu`).
Elsewhere (no simulator, no GPU) each test skips.

The references are the ops of tensorgrad/ops (and ops.adamw.adamw_update_) on the same device.
"""

from __future__ import annotations

import functools
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorgrad as tg
from tensorgrad.ops.activation import GELU, ReLU
from tensorgrad.ops.adamw import adamw_update_
from tensorgrad.ops.cross_entropy import CrossEntropy
from tensorgrad.ops.dropout import Dropout, keep_mask
from tensorgrad.ops.embedding import Embedding
from tensorgrad.ops.layernorm import LayerNorm
from tensorgrad.ops.softmax import Softmax


def _lock_simulator_shared_arrays():
    """Numba's CUDA simulator makes a block's `cuda.shared.array` when the first of its threads asks
    for it, keyed by the calling line, with a check and a store that no lock holds together: two
    threads that ask at once can each get an array of their own, share nothing, and reduce garbage
    (one run in several failed so, a different example each time).  The same lookup, under a lock."""
    import threading
    import traceback

    from numba.core import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    lock = threading.Lock()
    plain = kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory (one buffer) and the refusal
            return plain(self, shape, dtype, alignment)
        caller = tuple(traceback.extract_stack(sys._getframe(1), limit=1)[-1])[0:2]  # the kernel's line
        dtype = numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
        with lock:
            found = self._allocations.get(caller)
            if found is None:
                found = self._allocations[caller] = np.empty(shape, dtype)
        return found

    kernelapi.FakeCUDAShared.array = array


SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
if SIMULATOR:
    # The simulator's block manager polls its threads while holding the GIL; with Python's
    # default 5 ms switch interval every __syncthreads__ costs milliseconds.  This test process
    # only (a subprocess of the suite) switches threads more often: ~5x faster here.
    sys.setswitchinterval(1e-4)
    _lock_simulator_shared_arrays()

# Few examples: each simulated launch runs dozens of Python threads.  The rest of the profile
# (derandomized in CI) stays as loaded by conftest.py.
EXAMPLES = settings(max_examples=10 if SIMULATOR else 20)

TOL = {
    # float64: the same operations in another order (tree sums over a block instead of NumPy's
    # pairwise sums; fused multiply-adds on a GPU): a few ulps, amplified at most ~100x by the
    # normalisations and exp/log of these O(1)-sized inputs.
    np.float64: {"rtol": 1e-12, "atol": 1e-12},
    # float32: the same reasons at float32's 6e-8 ulp; on a GPU expf/erff/logf are also within
    # 2 ulps of the correctly rounded value (CUDA's documented bounds), NumPy's within 1.
    np.float32: {"rtol": 2e-5, "atol": 2e-6},
}

FLOATS = st.sampled_from([np.float32, np.float64])
SEEDS = st.integers(0, 2**16)


@functools.cache
def _env():
    """(kernel module, array namespace, device name for backend.rng), or skip."""
    if SIMULATOR:
        from tensorgrad.kernels import cuda as kernels  # noqa: PLC0415

        return kernels, np, "cpu"
    if not tg.cuda.is_available():
        pytest.skip("needs a GPU with CuPy, or NUMBA_ENABLE_CUDASIM=1 (see tests/test_cuda_kernels.py)")
    import cupy  # noqa: PLC0415

    from tensorgrad.kernels import cuda as kernels  # noqa: PLC0415

    return kernels, cupy, "cuda"


def _dev(a):
    """A copy of a host array (or None) on the kernels' device (a copy: some kernels write in place)."""
    return None if a is None else _env()[1].array(a, copy=True)


def _host(a):
    xp = _env()[1]
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)


def _close(got, want, dtype, what):
    got, want = _host(got), _host(want)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype), (what, got.shape, want.shape, got.dtype)
    np.testing.assert_allclose(got, want, **TOL[dtype], err_msg=what)


# --------------------------------------------------------------------------- layernorm
@EXAMPLES
@given(n=st.integers(1, 5), c=st.integers(1, 11), dtype=FLOATS, affine=st.sampled_from(["wb", "w", "none"]), seed=SEEDS)
def test_layernorm(n, c, dtype, affine, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c)) * 2 + 1).astype(dtype)
    w = rng.standard_normal(c).astype(dtype) if affine != "none" else None
    b = rng.standard_normal(c).astype(dtype) if affine == "wb" else None
    dy = rng.standard_normal((n, c)).astype(dtype)
    eps = 1e-5

    ref = LayerNorm(xp)
    y_ref = ref.forward(_dev(x), _dev(w), _dev(b), 1, eps)
    dx_ref, dw_ref, _ = ref.backward(_dev(dy))

    y, mean, rstd = kernels.layernorm_forward(_dev(x), _dev(w), _dev(b), eps)
    _close(y, y_ref, dtype, "y")
    x64 = x.astype(np.float64)
    _close(mean, x64.mean(axis=1).astype(dtype), dtype, "mean")
    _close(rstd, (1 / np.sqrt(x64.var(axis=1) + eps)).astype(dtype), dtype, "rstd")

    dx, dw, db = kernels.layernorm_backward(_dev(dy), _dev(x), mean, rstd, _dev(w))
    _close(dx, dx_ref, dtype, "dx")
    if w is None:
        assert dw is None and db is None
    else:
        _close(dw, dw_ref, dtype, "dweight")
        _close(db, dy.astype(np.float64).sum(axis=0).astype(dtype), dtype, "dbias")  # db = sum_n dy


# --------------------------------------------------------------------------- attention softmax
@EXAMPLES
@given(r=st.integers(1, 3), t=st.integers(1, 4), s=st.integers(1, 9), dtype=FLOATS, masked=st.booleans(),
       dropout=st.booleans(), seed=SEEDS)  # fmt: skip
def test_attention_softmax(r, t, s, dtype, masked, dropout, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    scores = (rng.standard_normal((r, t, s)) * 2).astype(dtype)
    scale = 0.37
    mask = None
    if masked:
        mask = rng.random((t, s)) < 0.6
        mask[np.arange(t), rng.integers(0, s, t)] = True  # every query may attend somewhere
    keep_prob = 0.7
    keep = rng.random((r, t, s)) < keep_prob if dropout else None
    dpd = rng.standard_normal((r, t, s)).astype(dtype)

    # Reference: S = where(mask, scores * scale, -inf), P = Softmax(S), Pd = P * keep / keep_prob,
    # and backward dP = dPd * keep / keep_prob, dS = Softmax.backward(dP).
    s_ref = _dev(scores) * scale
    if mask is not None:
        s_ref = xp.where(_dev(mask), s_ref, -xp.inf).astype(dtype)
    softmax = Softmax(xp)
    p_ref = softmax.forward(s_ref, -1)
    dp = _dev(dpd)
    if keep is not None:
        pd_ref = p_ref * _dev(keep) / keep_prob
        dp = dp * _dev(keep) / keep_prob
    ds_ref = softmax.backward(dp)

    p, pd = kernels.attention_softmax_forward(_dev(scores), scale, _dev(mask), _dev(keep), keep_prob)
    _close(p, p_ref, dtype, "p")
    if keep is None:
        assert pd is None
    else:
        _close(pd, pd_ref, dtype, "pd")
    ds = kernels.attention_softmax_backward(_dev(dpd), p, _dev(keep), keep_prob)
    _close(ds, ds_ref, dtype, "ds")


@EXAMPLES
@given(rows=st.integers(1, 5), s=st.integers(1, 9), dtype=FLOATS, seed=SEEDS)
def test_softmax_op_on_the_attention_kernels(rows, s, dtype, seed):
    """F.softmax along the last dim runs the attention softmax kernels (scale 1, no mask, no
    dropout) through kernels/functions.py's Softmax: the op, forward and backward."""
    from tensorgrad.kernels.cuda_ops import Softmax as KernelSoftmax  # noqa: PLC0415

    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    x, g = (_dev((rng.standard_normal((2, rows, s)) * 3).astype(dtype)) for _ in range(2))
    ker, ref = KernelSoftmax(xp), Softmax(xp)
    _close(ker.forward(x, -1), ref.forward(x, -1), dtype, "y")
    assert KernelSoftmax.accepts(x, -1)
    _close(ker.backward(g), ref.backward(g), dtype, "dx")


# --------------------------------------------------------------------------- flash attention
def _attention_inputs(rng, batch, t, s, d, dv, dtype, masked):
    """q, k, v, g of these sizes and a mask: none, causal (tril(ones(t, s))) or random with a
    key allowed in every row (a row with none is NaN on both paths; NumPy warns on it)."""
    q, k, v, g = (rng.standard_normal(batch + shape).astype(dtype) for shape in ((t, d), (s, d), (s, dv), (t, dv)))
    mask = None
    if masked == "causal":
        mask = np.tril(np.ones((t, s), dtype=bool))
    elif masked == "random":
        mask = rng.random((t, s)) < 0.5
        mask[np.arange(t), rng.integers(0, s, t)] = True
    return q, k, v, g, mask


# On the simulator a block has 4 rows and a tile 3 (cuda_flash.ROWS, TILE): t and s up to 9 span
# one to three blocks and tiles, and end inside one as often as on a boundary.  More examples
# than the other kernels (shapes x masks x dropout x dtypes; each example is ~0.1 s here).
@settings(max_examples=60 if SIMULATOR else 20)
@given(batch=st.sampled_from([(1,), (3,), (2, 1)]), t=st.integers(1, 9), s=st.integers(1, 9), d=st.integers(1, 5),
       dv=st.integers(1, 4), dtype=FLOATS, masked=st.sampled_from(["none", "causal", "random"]),
       dropout_p=st.sampled_from([0.0, 0.3]), seed=SEEDS)  # fmt: skip
def test_flash_attention(batch, t, s, d, dv, dtype, masked, dropout_p, seed):
    """CUDA's attention op runs the flash kernels (kernels/cuda_flash.py): its forward and
    backward equal the reference op (ops/attention.py), T != S included, and with dropout it
    draws the reference's keep mask from the same generator."""
    from tensorgrad.kernels.cuda_ops import FlashAttention  # noqa: PLC0415
    from tensorgrad.ops.attention import ScaledDotProductAttention  # noqa: PLC0415

    _, xp, _ = _env()
    q, k, v, g, mask = (_dev(a) for a in _attention_inputs(np.random.default_rng(seed), batch, t, s, d, dv, dtype,
                                                            masked))  # fmt: skip
    scale = d**-0.5
    assert FlashAttention.accepts(q, k, v, mask, scale, dropout_p)  # CUDA's first attention kernel op takes them
    ker, ref = FlashAttention(xp), ScaledDotProductAttention(xp)
    tg.manual_seed(seed)
    want = ref.forward(q, k, v, mask, scale, dropout_p)
    if masked == "causal" and s > t:  # keys t.. are masked for every query: their NaNs stay out of every sum
        k, v = k.copy(), v.copy()
        k[..., t:, :] = v[..., t:, :] = np.nan
    tg.manual_seed(seed)
    _close(ker.forward(q, k, v, mask, scale, dropout_p), want, dtype, "out")
    if mask is not None:  # the causal flag: tiles past the diagonal are skipped only for tril
        assert bool(ker.saved[6][0]) == bool((_host(mask) == np.tri(t, s, dtype=bool)).all())
    # the reference formula's parameters for a double backward (without dropout: no keep mask to keep)
    assert ker.graph_params() == ((None, scale, 1.0) if dropout_p == 0 else None)
    for name, got, want in zip(("dq", "dk", "dv"), ker.backward(g), ref.backward(g)):
        _close(got, want, dtype, name)


def test_flash_attention_leaves_long_heads_to_the_plain_path():
    """A head dim over cuda_flash.D_MAX (the length of the kernels' row arrays) runs the plain path:
    the flash kernel op does not accept it, the next of CUDA's attention kernel ops does."""
    from tensorgrad.kernels.cuda_flash import D_MAX  # noqa: PLC0415
    from tensorgrad.kernels.cuda_ops import FlashAttention  # noqa: PLC0415
    from tensorgrad.kernels.cuda_ops import ScaledDotProductAttention as KernelAttention  # noqa: PLC0415
    from tensorgrad.ops.attention import ScaledDotProductAttention  # noqa: PLC0415

    _, xp, _ = _env()
    q, k, v, g, mask = (_dev(a) for a in _attention_inputs(np.random.default_rng(0), (2,), 3, 4, D_MAX + 1, 2,
                                                            np.float64, "causal"))  # fmt: skip
    assert not FlashAttention.accepts(q, k, v, mask, 0.1, 0.0) and KernelAttention.accepts(q, k, v, mask, 0.1, 0.0)
    ker, ref = KernelAttention(xp), ScaledDotProductAttention(xp)
    out = ker.forward(q, k, v, mask, 0.1, 0.0)
    _close(out, ref.forward(q, k, v, mask, 0.1, 0.0), np.float64, "out")
    for name, got, want in zip(("dq", "dk", "dv"), ker.backward(g), ref.backward(g)):
        _close(got, want, np.float64, name)


# --------------------------------------------------------------------------- cross-entropy
@EXAMPLES
@given(n=st.integers(1, 5), c=st.integers(1, 11), dtype=FLOATS, ignore_index=st.sampled_from([-100, 0]),
       seed=SEEDS)  # fmt: skip
def test_cross_entropy(n, c, dtype, ignore_index, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((n, c)) * 3).astype(dtype)
    targets = rng.integers(0, c, n)
    targets[rng.random(n) < 0.3] = ignore_index
    gscale = rng.standard_normal(n).astype(dtype)

    ref = CrossEntropy(xp)
    losses_ref = ref.forward(_dev(logits), _dev(targets), reduction="none", ignore_index=ignore_index)
    dlogits_ref, _ = ref.backward(_dev(gscale))  # (softmax - onehot) * g[n], 0 where ignored

    losses, lse = kernels.cross_entropy_forward(_dev(logits), _dev(targets), ignore_index)
    _close(losses, losses_ref, dtype, "losses")
    x64 = logits.astype(np.float64)
    hi = x64.max(axis=1)
    _close(lse, (hi + np.log(np.exp(x64 - hi[:, None]).sum(axis=1))).astype(dtype), dtype, "lse")
    dlogits = kernels.cross_entropy_backward(_dev(logits), lse, _dev(targets), ignore_index, _dev(gscale))
    _close(dlogits, dlogits_ref, dtype, "dlogits")


# --------------------------------------------------------------------------- AdamW
@EXAMPLES
@given(size=st.sampled_from([1, 3, 8, 31, 33, 64, 70]),  # past the simulator's 32 threads: each thread loops
       dtype=FLOATS, weight_decay=st.sampled_from([0.0, 0.1]), step=st.integers(1, 4), seed=SEEDS)  # fmt: skip
def test_adamw_step(size, dtype, weight_decay, step, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    param, grad, exp_avg = (rng.standard_normal(size).astype(dtype) for _ in range(3))
    exp_avg_sq = (rng.random(size) * 0.01).astype(dtype)
    hyper = {"lr": 1e-2, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": weight_decay}

    want = [_dev(a) for a in (param, grad, exp_avg, exp_avg_sq)]
    adamw_update_(*want, step=step, xp=xp, **hyper)
    got = [_dev(a) for a in (param, grad, exp_avg, exp_avg_sq)]
    kernels.adamw_step(*got, step=step, **hyper)
    for name, a, b in zip(("param", "grad", "exp_avg", "exp_avg_sq"), got, want):
        _close(a, b, dtype, name)


# --------------------------------------------------------------------------- ReLU, GELU, dropout
# Small shapes, and shapes with more elements than the simulator's 4 x 8 threads (so each thread
# loops: the grid-stride path).
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5) | st.sampled_from([(33,), (5, 7), (3, 4, 5)])


@EXAMPLES
@given(shape=SHAPES, dtype=FLOATS, seed=SEEDS)
def test_relu(shape, dtype, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[::3] = 0  # the subgradient at 0 is 0
    g = rng.standard_normal(shape).astype(dtype)
    ref = ReLU(xp)
    y_ref = ref.forward(_dev(x))
    dx_ref = ref.backward(_dev(g))
    y = kernels.relu_forward(_dev(x))
    _close(y, y_ref, dtype, "y")
    _close(kernels.relu_backward(_dev(g), y), dx_ref, dtype, "dx")


@EXAMPLES
@given(shape=SHAPES, dtype=FLOATS, seed=SEEDS)
def test_gelu(shape, dtype, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    ref = GELU(xp)
    y_ref = ref.forward(_dev(x))
    dx_ref = ref.backward(_dev(g))
    _close(kernels.gelu_forward(_dev(x)), y_ref, dtype, "y")
    _close(kernels.gelu_backward(_dev(g), _dev(x)), dx_ref, dtype, "dx")


@EXAMPLES
@given(shape=SHAPES, dtype=FLOATS, p=st.sampled_from([0.1, 0.5]), seed=SEEDS)
def test_dropout(shape, dtype, p, seed):
    kernels, xp, device = _env()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    tg.manual_seed(seed)
    ref = Dropout(xp)
    y_ref = ref.forward(_dev(x), p)
    dx_ref = ref.backward(_dev(g))
    tg.manual_seed(seed)
    keep = keep_mask(device, shape, p)  # the same draw as the reference's
    scale = 1 / (1 - p)
    _close(kernels.dropout_forward(_dev(x), keep, scale), y_ref, dtype, "y")
    _close(kernels.dropout_forward(_dev(g), keep, scale), dx_ref, dtype, "dx")


# --------------------------------------------------------------------------- embedding backward
@EXAMPLES
@given(n=st.integers(0, 12), v=st.integers(1, 6), d=st.integers(1, 11), dtype=FLOATS, seed=SEEDS)
def test_embedding_backward(n, v, d, dtype, seed):
    kernels, xp, _ = _env()
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, v, n)
    dout = rng.standard_normal((n, d)).astype(dtype)
    ref = Embedding(xp)
    ref.forward(_dev(ids), _dev(np.zeros((v, d), dtype)))
    _, dw_ref = ref.backward(_dev(dout))
    dw = kernels.embedding_backward(_dev(ids), _dev(dout), v)
    _close(dw, dw_ref, dtype, "dweight")
    again = kernels.embedding_backward(_dev(ids), _dev(dout), v)
    np.testing.assert_array_equal(_host(again), _host(dw))  # no atomics: the same bits every run


# --------------------------------------------------------------------------- errors
def test_a_compile_failure_names_the_kernel_and_the_switch():
    from numba.core.errors import TypingError  # noqa: PLC0415

    from tensorgrad.kernels import KernelError  # noqa: PLC0415
    from tensorgrad.kernels.cuda_launch import launch  # noqa: PLC0415

    _env()

    class Broken:  # a kernel whose compilation fails at launch, as Numba's would
        def __getitem__(self, config):
            def run(*args):
                raise TypingError("no implementation for these argument types")

            return run

    with pytest.raises(KernelError, match=r"'layernorm_forward'.*TENSORGRAD_KERNELS=reference"):
        launch("layernorm_forward", Broken(), 1, 1)
