"""Activations (ops/activation.py) and elementwise math (ops/arithmetic.py, ops/elementary.py): hypothesis properties
over random shapes against NumPy formulas for the value and the derivative, integer dtypes and the
operators against PyTorch, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import backprop, check_unary, leaf
from hypothesis import assume, given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

# float64 against NumPy float64 with the same formulas up to rearrangement (e.g. the stable
# sigmoid): 1e-10 leaves room for rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0, x)


# name: (tensorgrad fn, NumPy value, NumPy derivative, value range).  Derivatives at kinks use the
# same one-sided rule as PyTorch (e.g. elu's x > 0), so an input exactly at a kink still agrees.
UNARY = {
    "sigmoid": (lambda t: t.sigmoid(), _sig, lambda x: _sig(x) * (1 - _sig(x)), (-40, 40)),
    "silu": (F.silu, lambda x: x * _sig(x), lambda x: _sig(x) * (1 + x * (1 - _sig(x))), (-40, 40)),
    "softplus": (F.softplus, _softplus, _sig, (-40, 19)),
    "softplus_beta": (
        lambda t: F.softplus(t, beta=2.0, threshold=3.0),
        lambda x: np.where(2 * x > 3, x, _softplus(2 * x) / 2),
        lambda x: np.where(2 * x > 3, 1.0, _sig(2 * x)),
        (-5, 5),
    ),
    "softsign": (F.softsign, lambda x: x / (1 + abs(x)), lambda x: 1 / (1 + abs(x)) ** 2, (-5, 5)),
    "elu": (
        lambda t: F.elu(t, 1.5),
        lambda x: np.where(x > 0, x, 1.5 * np.expm1(np.minimum(x, 0))),
        lambda x: np.where(x > 0, 1.0, 1.5 * np.exp(np.minimum(x, 0))),
        (-5, 5),
    ),
    "celu": (
        lambda t: F.celu(t, 0.5),
        lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0) / 0.5)),
        lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0) / 0.5)),
        (-5, 5),
    ),
    "leaky_relu": (F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x), lambda x: np.where(x > 0, 1, 0.01), (-3, 3)),
    "mish": (
        F.mish,
        lambda x: x * np.tanh(_softplus(x)),
        lambda x: np.tanh(_softplus(x)) + x * (1 - np.tanh(_softplus(x)) ** 2) * _sig(x),
        (-20, 20),
    ),
    "hardtanh": (F.hardtanh, lambda x: np.clip(x, -1, 1), lambda x: ((x > -1) & (x < 1)) * 1.0, (-3, 3)),
    "hardsigmoid": (
        F.hardsigmoid,
        lambda x: np.clip(x / 6 + 0.5, 0, 1),
        lambda x: ((x > -3) & (x < 3)) / 6,
        (-5, 5),
    ),
    "abs": (lambda t: abs(t), np.abs, np.sign, (-3, 3)),
    "sin": (lambda t: t.sin(), np.sin, np.cos, (-5, 5)),
    "cos": (tg.cos, np.cos, lambda x: -np.sin(x), (-5, 5)),
    "tan": (lambda t: t.tan(), np.tan, lambda x: 1 / np.cos(x) ** 2, (-1.4, 1.4)),
    "clamp": (lambda t: t.clamp(-0.5, 1.0), lambda x: np.clip(x, -0.5, 1), lambda x: (x >= -0.5) & (x <= 1), (-2, 2)),
    "sign": (tg.sign, np.sign, np.zeros_like, (-3, 3)),
    "round": (lambda t: (t * 2).round(), lambda x: np.round(x * 2), np.zeros_like, (-3, 3)),
    "floor": (tg.floor, np.floor, np.zeros_like, (-3, 3)),
    "ceil": (lambda t: t.ceil(), np.ceil, np.zeros_like, (-3, 3)),
    "trunc": (lambda t: t.trunc(), np.trunc, np.zeros_like, (-3, 3)),
    "rpow": (lambda t: 3.0**t, lambda x: 3.0**x, lambda x: 3.0**x * math.log(3.0), (-3, 3)),
}


@pytest.mark.parametrize("op", list(UNARY))
@given(data=st.data())
def test_unary_forward_and_grad(op, device, data):
    lo, hi = UNARY[op][3]
    x = data.draw(S.float_arrays(data.draw(S.shapes(min_dims=0)), lo, hi))
    check_unary(UNARY[op], x, device)


@pytest.mark.parametrize("op", ["sigmoid", "silu", "softplus", "mish", "elu", "hardsigmoid", "abs", "rpow"])
def test_float32_stays_float32(op, device):
    t = tg.tensor(np.linspace(-3, 3, 12, dtype=np.float32), device=device, requires_grad=True)
    out = UNARY[op][0](t)
    assert out.dtype == tg.float32
    out.backward(tg.ones(12, device=device))
    assert t.grad.dtype == tg.float32


def _sum_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


# name: (fn, NumPy value, NumPy (dx, dy)); y is positive, x of either sign
BINARY = {
    "pow": (lambda a, b: a**b, lambda a, b: a**b, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    "fmod": (tg.fmod, np.fmod, lambda a, b: (np.ones_like(a * b), -np.trunc(a / b))),
    "remainder": (lambda a, b: a % b, np.remainder, lambda a, b: (np.ones_like(a * b), -np.floor(a / b))),
    "copysign": (tg.copysign, np.copysign, lambda a, b: (np.sign(a) * np.sign(b) + 0 * a * b, 0 * a * b)),
    "maximum": (tg.maximum, np.maximum, lambda a, b: ((a > b) + (a == b) / 2 + 0 * b, (b > a) + (a == b) / 2 + 0 * a)),
}


@pytest.mark.parametrize("op", list(BINARY))
@given(data=st.data(), negate=st.booleans())
def test_binary_broadcast_forward_and_grad(op, device, data, negate):
    a, b = data.draw(S.broadcastable_arrays(low=0.25, high=3.0))
    if negate and op != "pow":  # signs matter to fmod / remainder / copysign
        a = -a
    if op in ("fmod", "remainder"):  # a/b at an integer is a jump: the quotient's rounding picks the side
        q = a / b
        assume(np.all(np.abs(q - np.round(q)) > 1e-6))
    fn, ref, dref = BINARY[op]
    ta, tb = leaf(a, device), leaf(b, device)
    out = fn(ta, tb)
    np.testing.assert_allclose(out.numpy(), ref(a, b), **TOL)
    v = backprop(out, device)
    for t, d in zip((ta, tb), dref(a, b)):
        np.testing.assert_allclose(t.grad.numpy(), _sum_to(np.broadcast_to(v * d, out.shape), t.shape), **TOL)


@given(data=st.data())
def test_clamp_with_tensor_bounds_routes_the_gradient(device, data):
    """The gradient goes to whichever of x, lo, hi the output equals: the three parts add up to it."""
    shape = data.draw(S.shapes())
    x, lo, hi = (data.draw(S.float_arrays(shape, -2, 2)) for _ in range(3))
    tx, tlo, thi = leaf(x, device), leaf(lo, device), leaf(hi, device)
    out = tx.clamp(tlo, thi)
    np.testing.assert_array_equal(out.numpy(), np.minimum(np.maximum(x, lo), hi))
    v = backprop(out, device)
    np.testing.assert_array_equal(tx.grad.numpy() + tlo.grad.numpy() + thi.grad.numpy(), v)
    np.testing.assert_array_equal(tx.grad.numpy(), v * ((x >= lo) & (x <= hi)))


def test_integer_dtypes_and_operators_match_torch():
    torch = pytest.importorskip("torch")
    a, b = np.array([[7, -7, 5], [-3, 0, 9]]), np.array([2, -3, 4])
    fa, fb = a * 0.75, b * 1.25
    cases = [
        lambda lib, x, y: x // y,
        lambda lib, x, y: x % y,
        lambda lib, x, y: 7 // y,
        lambda lib, x, y: 7 % y,
        lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
        lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
        lambda lib, x, y: lib.fmod(x, y),
        lambda lib, x, y: lib.remainder(x, 3),
        lambda lib, x, y: abs(x),
        lambda lib, x, y: x.sign(),
        lambda lib, x, y: x.floor(),
        lambda lib, x, y: x.round(),
        lambda lib, x, y: x.clamp(-2, 3),
        lambda lib, x, y: x.clamp(min=0.5),
        lambda lib, x, y: x.sin(),
        lambda lib, x, y: x.sigmoid(),
        lambda lib, x, y: x ** y.abs(),
        lambda lib, x, y: 2 ** y.abs(),
        lambda lib, x, y: 2.0**y,
        lambda lib, x, y: lib.maximum(x, y),
        lambda lib, x, y: lib.add(x, y, alpha=2),
    ]
    for left, right in ((a, b), (fa, fb)):
        for k, fn in enumerate(cases):
            ours, theirs = fn(tg, tg.tensor(left), tg.tensor(right)), fn(torch, torch.tensor(left), torch.tensor(right))
            assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (k, ours.dtype, theirs.dtype)
            # float32 results (sin, sigmoid of integers): the two libraries' float32 kernels differ by an ulp
            rtol = 1e-12 if ours.dtype != tg.float32 else 3e-7
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0, err_msg=str(k))


def test_piecewise_constant_ops_have_zero_gradients():
    x = tg.tensor([1.3, -2.7, 0.5], requires_grad=True)
    y = tg.tensor([0.6, 0.8, -1.1], requires_grad=True)
    out = x.sign() + x.round() + x.floor() + x.ceil() + x.trunc() + x // y + tg.div(x, y, rounding_mode="trunc")
    out.sum().backward()
    assert np.all(x.grad.numpy() == 0) and np.all(y.grad.numpy() == 0)


def test_errors():
    x = tg.randn(3)
    with pytest.raises(RuntimeError, match="at least one of 'min' or 'max'"):
        x.clamp()
    with pytest.raises(RuntimeError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        x.div(2, rounding_mode="round")
    with pytest.raises(ValueError, match="inplace=True is not supported"):
        F.silu(x, inplace=True)
    with pytest.raises(TypeError, match="exponent must be a number or a tensor"):
        x ** "2"


# ------------------------------------------------------------------ PyTorch's conventions at the edges
def test_rpow_with_a_tensor_base_is_base_to_the_power():
    base, exponent = tg.tensor([2.0, 3.0], requires_grad=True), tg.tensor([3.0, 0.5], requires_grad=True)
    out = exponent.__rpow__(base)
    np.testing.assert_allclose(out.numpy(), [8.0, 3.0**0.5])
    out.sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), [3.0 * 4.0, 0.5 * 3.0**-0.5])
    np.testing.assert_allclose(exponent.grad.numpy(), [8.0 * np.log(2.0), 3.0**0.5 * np.log(3.0)])


def test_pow_gradient_at_zero_to_a_negative_power_is_pytorchs():
    """d(x^y)/dy = x^y log x: inf * -inf = -inf at x = 0, y < 0 (not nan); 0 where x = 0, y >= 0."""
    torch = pytest.importorskip("torch")
    x = tg.tensor([0.0, 0.0, -1.0], dtype=tg.float64, requires_grad=True)
    y = tg.tensor([-0.5, 2.0, 0.5], dtype=tg.float64, requires_grad=True)
    (x**y).sum().backward()
    tx, ty = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in ([0.0, 0.0, -1.0], [-0.5, 2.0, 0.5]))
    (tx**ty).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())  # [-inf, 0, nan]
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_invert_and_positive_as_pytorch():
    ints = tg.tensor([0, 5, -3])
    np.testing.assert_array_equal((~ints).numpy(), [-1, -6, 2])
    assert (~tg.tensor(7)).shape == () and (~tg.tensor(7)).item() == -8  # 0-d stays a tensor
    np.testing.assert_array_equal((~tg.tensor([True, False])).numpy(), [False, True])
    with pytest.raises(TypeError, match="integer and bool"):
        ~tg.tensor([1.5])
    x = tg.tensor([1.0, -2.0], requires_grad=True)
    assert +x is x  # PyTorch's positive: the tensor itself
    with pytest.raises(RuntimeError, match="bool"):
        +tg.tensor([True])


def test_functions_of_two_numbers():
    """torch.add(2.5, 3) is a 0-d tensor of the default dtype; torch.pow / remainder of two numbers refuse."""
    for fn, expected in ((tg.add, 5.5), (tg.sub, -0.5), (tg.mul, 7.5), (tg.div, 2.5 / 3), (tg.floor_divide, 0.0)):
        out = fn(2.5, 3)
        assert isinstance(out, tg.Tensor) and out.shape == () and out.dtype == tg.float32
        assert out.item() == pytest.approx(expected, rel=1e-6)  # float32: its rounding
    assert tg.add(2, 3).dtype == tg.int64
    for fn in (tg.pow, tg.remainder):
        with pytest.raises(TypeError, match="must be a Tensor"):
            fn(2, 3)
    assert tg.floor_divide(7.0, tg.tensor([2.0])).item() == 3.0  # a number input, a tensor other


def test_sign_and_abs_gradient_at_nan_are_zero_as_pytorch():
    torch = pytest.importorskip("torch")
    x = tg.tensor([np.nan, -0.0, -2.0, np.inf], dtype=tg.float64, requires_grad=True)
    np.testing.assert_array_equal(x.sign().numpy(), torch.tensor([np.nan, -0.0, -2.0, np.inf]).sign().numpy())
    x.abs().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, -1.0, 1.0])


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_pass_the_gradient_to_both_at_nan(op):
    """PyTorch zeroes an input's gradient only where the other is strictly larger (smaller): at a NaN
    no order holds, so both inputs get g; a tie splits it."""
    torch = pytest.importorskip("torch")
    a = tg.tensor([np.nan, 1.0, 2.0, 3.0], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([1.0, np.nan, 2.0, 0.0], dtype=tg.float64, requires_grad=True)
    getattr(tg, op)(a, b).sum().backward()
    ta, tb = (torch.tensor(v.detach().numpy(), requires_grad=True) for v in (a, b))
    getattr(torch, op)(ta, tb).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())
    assert a.grad.numpy()[0] == b.grad.numpy()[0] == 1.0


def test_nan_and_inf_arithmetic_is_silent():
    """log(-1), 0 / 0, inf - inf, exp(1000), a NaN cast to an integer: NaN / inf / the hardware's value,
    without NumPy's RuntimeWarning (the suite makes tensorgrad's RuntimeWarnings errors)."""
    x = tg.tensor([-1.0, 0.0, np.inf, 1000.0], dtype=tg.float64, requires_grad=True)
    y = x.log() + x.sqrt() + (x - x) + x.exp() + x / x + x.sin()
    y.sum().backward()
    assert np.isnan(y.numpy()[:3]).all() and y.numpy()[3] == np.inf and np.isnan(x.grad.numpy()[:3]).all()
    assert tg.tensor([np.nan, np.inf]).long().dtype == tg.int64
