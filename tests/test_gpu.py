"""CuPy against NumPy: every op of the table (tests/helpers.py:OPS), forward and backward,
on the same host-generated inputs in float32 and float64.  Skipped without a usable GPU.

(The gradient checks and property tests also run on "cuda" through the `device` fixture
when a GPU is present; this file compares the two backends directly.)
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import OPS, Case, forward_backward, make_inputs

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
