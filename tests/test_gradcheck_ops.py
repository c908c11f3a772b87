"""Every op's hand-written backward against central differences (tg.gradcheck, float64).

The table of ops is tests/op_table.py:OPS; each runs on every device of the `device`
fixture (NumPy, the strict CuPy-like guard, and a GPU where there is one).  gradcheck
backpropagates a random cotangent, never ones.  Its default tolerances (eps=1e-6, atol=1e-5,
rtol=1e-3) are sized for float64: the central difference's truncation error is O(eps^2) ~ 1e-12
and its rounding error ~ 1e-16 / eps ~ 1e-10, far below them, while a wrong backward is off by O(1).
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import OPS, Case, make_inputs

import tensorgrad as tg
import tensorgrad.nn.functional as F


def _leaves(arrays, device):
    return [tg.tensor(a, device=device, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("case", OPS, ids=lambda c: c.name)
def test_gradcheck_op(case: Case, device):
    inputs = _leaves(make_inputs(case), device)
    assert tg.gradcheck(lambda *xs: case.fn(tg, *xs), inputs, **case.gradcheck)


@pytest.mark.parametrize("case", [c for c in OPS if c.name in ("softmax", "layer_norm_affine", "matmul_batched")])
def test_gradcheck_fast_mode(case: Case, device):
    inputs = _leaves(make_inputs(case), device)
    assert tg.gradcheck(lambda *xs: case.fn(tg, *xs), inputs, fast_mode=True)


def test_gradcheck_larger_inputs_fast_mode(device):
    """Fast mode is for inputs where 2N evaluations would be slow."""
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((16, 32)), device=device, requires_grad=True)
    w = tg.tensor(rng.standard_normal((32,)), device=device, requires_grad=True)
    assert tg.gradcheck(lambda x, w: F.layer_norm(x, (32,), w).gelu().softmax(-1), [x, w], fast_mode=True)


@pytest.mark.parametrize("p", [0.25, 0.5])
def test_gradcheck_dropout(device, p):
    """The backward reuses the forward's mask: every evaluation is reseeded to draw the same one."""
    x = tg.tensor(np.random.default_rng(0).standard_normal((4, 6)), device=device, requires_grad=True)

    def fn(x):
        tg.manual_seed(0)
        return F.dropout(x, p, training=True)

    assert tg.gradcheck(fn, [x])


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"])
def test_gradcheck_dropout_variants(device, name):
    """The channel and alpha dropouts, reseeded per evaluation to draw the same noise."""
    x = tg.tensor(np.random.default_rng(0).standard_normal((2, 3, 2, 2, 2)[: 3 if name == "dropout1d" else 5]),
                  device=device, requires_grad=True)  # fmt: skip

    def fn(x):
        tg.manual_seed(0)
        return getattr(F, name)(x, 0.4, training=True)

    assert tg.gradcheck(fn, [x])


def test_gradcheck_rrelu(device):
    """rrelu in training: the backward reuses the forward's random slopes; every evaluation is
    reseeded to draw the same ones."""
    x = tg.tensor(np.random.default_rng(0).uniform(-2, 2, (3, 4)), device=device, requires_grad=True)

    def fn(x):
        tg.manual_seed(0)
        return F.rrelu(x, 0.1, 0.4, training=True)

    assert tg.gradcheck(fn, [x])


def test_gradcheck_to_strict_device():
    """A cross-device copy is differentiable: the gradient comes back to the source device."""
    x = tg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert tg.gradcheck(lambda x: (x.to("strict").exp() * 2).to("cpu") + x, [x])
    x.grad = None
    y = x.to("strict")
    assert y.device == "strict"
    y.backward(tg.ones(3, 4, dtype=tg.float64, device="strict"))
    assert x.grad.device == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_gradcheck_ignores_inputs_without_grad(device):
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((3, 4)), device=device, requires_grad=True)
    c = tg.tensor(rng.standard_normal((3, 4)), device=device)  # a constant: not checked
    assert tg.gradcheck(lambda x, c: x * c, [x, c])


# ---------------------------------------------------------------- gradcheck must be able to fail
class WrongSquare(tg.Function):
    """z = x^2 with a deliberately wrong backward (3x instead of 2x)."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, g):
        (x,) = self.saved
        return g * 3 * x


class WrongSecondInput(tg.Function):
    """z = x * y whose gradient for y is wrong only at element (1, 2)."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x * y

    def backward(self, g):
        x, y = self.saved
        dy = g * x
        dy[1, 2] += 1.0
        return g * y, dy


def test_gradcheck_catches_wrong_backward(device):
    x = tg.tensor(np.random.default_rng(0).uniform(0.5, 2, (2, 3)), device=device, requires_grad=True)
    with pytest.raises(tg.GradcheckError, match=r"input 0 .*element \(0, 0\).*analytic.*numeric"):
        tg.gradcheck(lambda x: WrongSquare.apply(x), [x])


def test_gradcheck_names_input_and_element(device):
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((2, 3)), device=device, requires_grad=True)
    y = tg.tensor(rng.standard_normal((2, 3)), device=device, requires_grad=True)
    with pytest.raises(tg.GradcheckError, match=r"input 1 \(shape \(2, 3\)\), element \(1, 2\)"):
        tg.gradcheck(lambda x, y: WrongSecondInput.apply(x, y), [x, y])


def test_gradcheck_fast_mode_catches_wrong_backward(device):
    x = tg.tensor(np.random.default_rng(0).uniform(0.5, 2, (8, 8)), device=device, requires_grad=True)
    with pytest.raises(tg.GradcheckError, match=r"fast mode.*input 0"):
        tg.gradcheck(lambda x: WrongSquare.apply(x), [x], fast_mode=True)


def test_gradcheck_catches_ones_blind_spot():
    """A softmax whose backward returns zeros is right for `.sum()` (sum of softmax is 1, so the
    true gradient is 0 there too) and wrong for anything else: the random cotangent catches it."""

    class ZeroGradSoftmax(tg.Function):
        def forward(self, x):
            e = self.xp.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        def backward(self, g):
            return g * 0

    x = tg.tensor(np.random.default_rng(0).standard_normal((2, 4)), requires_grad=True)
    assert tg.gradcheck(lambda x: ZeroGradSoftmax.apply(x).sum(), [x])  # the blind spot of ones
    with pytest.raises(tg.GradcheckError, match="input 0"):
        tg.gradcheck(lambda x: ZeroGradSoftmax.apply(x), [x])


def test_gradcheck_needs_float64():
    x = tg.randn(3, requires_grad=True)  # float32
    with pytest.raises(TypeError, match="float64"):
        tg.gradcheck(lambda x: x * 2, [x])


def test_gradcheck_needs_an_input_with_grad():
    with pytest.raises(ValueError, match="requires_grad"):
        tg.gradcheck(lambda x: x * 2, [tg.tensor(np.ones(3))])
