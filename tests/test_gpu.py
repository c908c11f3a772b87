"""CuPy against NumPy: every op of the table (tests/op_table.py:OPS), forward and backward,
on the same host-generated inputs in float32 and float64.  Skipped without a usable GPU.

(The gradient checks and property tests also run on "cuda" through the `device` fixture
when a GPU is present; this file compares the two backends directly.)
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import forward_backward
from op_table import OPS, Case, make_inputs

import tensorgrad as tg

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU"),
]

TOL = {
    # float64: the same IEEE operations; only the summation order of reductions and matmul
    # (cuBLAS, tree reductions) differs, which costs a few ulps.
    np.float64: {"rtol": 1e-9, "atol": 1e-9},
    # float32: the point of this case is the GPU's float32 kernels; a different summation order
    # changes the last of float32's ~7 digits, amplified a little by exp/log/normalisation.
    np.float32: {"rtol": 2e-4, "atol": 2e-5},
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", OPS, ids=lambda c: c.name)
def test_cupy_matches_numpy(case: Case, dtype):
    arrays = make_inputs(case, seed=2, dtype=dtype)
    want_out, want_grad = forward_backward(case, tg, arrays, device="cpu")
    out, grad = forward_backward(case, tg, arrays, device="cuda")
    for k, (a, b) in enumerate(zip(out + grad, want_out + want_grad)):
        assert a.shape == b.shape and a.dtype == b.dtype, (k, a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=f"{case.name}: array {k}")


def test_cuda_tensors_live_on_the_gpu():
    x = tg.randn(3, 4, device="cuda", requires_grad=True)
    assert x.device == "cuda" and type(x._data).__module__.startswith("cupy")
    (x * x).sum().backward()
    assert x.grad.device == "cuda"
    host = x.numpy()
    assert isinstance(host, np.ndarray)
    np.testing.assert_allclose(x.grad.numpy(), 2 * host, rtol=1e-6)  # float32: 2x is exact, 1e-6 for safety


def test_cuda_and_cpu_do_not_mix():
    with pytest.raises(tg.DeviceError, match=r"cuda.*cpu|cpu.*cuda"):
        tg.ones(3, device="cuda") + tg.ones(3)
    mask = tg.tensor([True, False, True])  # on the CPU: the classic mistake
    with pytest.raises(tg.DeviceError, match="MaskedFill"):
        tg.ones(3, device="cuda").masked_fill(mask, 0.0)


def test_cuda_manual_seed_reproducible():
    tg.manual_seed(3)
    a = tg.randn(100, device="cuda").numpy()
    tg.manual_seed(3)
    b = tg.randn(100, device="cuda").numpy()
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- the CuPy backend's own parts
def test_a_training_step_and_its_batches_never_synchronize():
    """CuPy's own detector (cupyx.allow_synchronize, deprecated but present in CuPy 14) raises at
    any device-to-host read inside the block: batches, forward, backward and AdamW run without one."""
    import cupyx

    from gpt import build_model
    from gpt.data import ShakespeareData

    tg.manual_seed(0)
    data = ShakespeareData("First Citizen:\nBefore we proceed any further, hear me speak.\n" * 50, device="cuda")
    model = build_model("large", vocab_size=65, n_layer=2, n_embd=64, n_head=4, block_size=32).to("cuda")
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):  # the first step compiles the kernels, the others are the steady state
        with cupyx.allow_synchronize(step == 0):
            xb, yb = data.get_batch("train", 32, 8)
            _, loss = model(xb, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    assert np.isfinite(loss.item())


@pytest.mark.skipif(
    not tg.cuda.is_available() or int(__import__("cupy").cuda.Device().compute_capability) < 80,
    reason="needs TF32 tensor cores (compute capability 8.0 or later)",
)
def test_allow_tf32_switches_2d_and_batched_products_after_cupy_is_loaded():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 512, 512)), rng.standard_normal((4, 512, 512))
    exact = a @ b

    def errors():  # float32 products on the GPU against float64 on the host, relative to the RMS entry
        x, y = tg.tensor(a, dtype=tg.float32, device="cuda"), tg.tensor(b, dtype=tg.float32, device="cuda")
        two_d, batched = (x[0] @ y[0]).numpy(), (x @ y).numpy()
        scale = np.sqrt(np.mean(exact**2))  # ~sqrt(512)
        return np.abs(two_d - exact[0]).max() / scale, np.abs(batched - exact).max() / scale

    try:
        tg.cuda.allow_tf32(False)
        plain = errors()
        tg.cuda.allow_tf32(True)
        tf32 = errors()
    finally:
        tg.cuda.allow_tf32(False)
    # float32 (24-bit significands) over 512 terms: the worst entry is off by ~2e-7 of the RMS
    # entry; TF32 rounds the inputs to 11 bits (~5e-4 each), ~1e-3 for the worst of 1M entries.
    # 1e-5 and 1e-4 leave a factor of ~50 and ~10 on either side.
    assert max(plain) < 1e-5, plain
    assert min(tf32) > 1e-4, tf32


def test_the_gpu_generator_restores_its_state_exactly():
    import json

    tg.manual_seed(5)
    tg.randn(1000, device="cuda")
    rng = tg.backend.rng("cuda")
    state = json.loads(json.dumps(rng.get_state()))
    a = [tg.rand(333, device="cuda").numpy(), tg.randint(7, (1000,), device="cuda").numpy()]
    rng.set_state(state)
    b = [tg.rand(333, device="cuda").numpy(), tg.randint(7, (1000,), device="cuda").numpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert b[1].dtype == np.int64 and b[1].min() >= 0 and b[1].max() == 6  # 1000 draws of 7 values hit the top


def test_erf_keeps_float16_and_index_add_accumulates_on_the_gpu():
    from tensorgrad import backend

    cupy = backend.namespace("cuda")
    assert backend.erf(cupy, cupy.ones(3, dtype=cupy.float16)).dtype == np.float16
    target = backend.add_at(cupy, cupy.zeros(3), cupy.asarray([0, 0, 2]), cupy.ones(3))
    np.testing.assert_array_equal(cupy.asnumpy(target), [2.0, 0.0, 1.0])


def test_a_gpu_run_resumes_on_the_same_trajectory(tmp_path):
    """As tests/test_gpt_train.py on the CPU: batches and dropout masks come from the GPU
    generator, whose state goes into last.npz, so stopping and resuming changes nothing."""
    from gpt import ShakespeareData, get_config
    from gpt.train import train

    data = ShakespeareData("First Citizen:\nBefore we proceed any further, hear me speak.\n" * 50, device="cuda")
    config = get_config("large", n_layer=1, n_embd=32, n_head=2, block_size=16, batch_size=8,
                        max_iters=20, eval_interval=10, eval_iters=2)  # fmt: skip
    full = train(config, data, device="cuda", seed=7, out_dir=tmp_path / "full", log=lambda *a: None)
    train(config.replace(max_iters=11), data, device="cuda", seed=7, out_dir=tmp_path / "cut", log=lambda *a: None)
    resumed = train(config, data, device="cuda", seed=123, out_dir=tmp_path / "cut", resume=True, log=lambda *a: None)
    a, b = full.model.state_dict(), resumed.model.state_dict()
    for k in a:  # the same kernels in the same order on the same GPU: bit for bit
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=k)
