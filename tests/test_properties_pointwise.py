"""Hypothesis property tests of the pointwise math (tensor_methods/pointwise.py) over random shapes.

Each differentiable op runs on random float64 arrays (and broadcast pairs for the binary ones)
inside its domain, against PyTorch on the same data: the forward value and the gradient of a
random cotangent.  The ops with no gradient (predicates, logical and bitwise ops, gcd / lcm) are
held against identities that define them, on values that include nan, inf and -0.0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorgrad as tg
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")

# float64 against PyTorch float64: the same formulas, but SciPy's special functions (cephes) and
# PyTorch's own implementations of them differ by a few ulps, amplified up to ~1e3 near the steep
# parts of the domains drawn (erfinv near +-0.95, lgamma near its minimum): 1e-9 is that, with room.
TOL = {"rtol": 1e-9, "atol": 1e-12}

# name -> (tensorgrad and torch call, (low, high) of the inputs)
UNARY = {
    "asin": (lambda lib, x: lib.asin(x), (-0.95, 0.95)),
    "acos": (lambda lib, x: lib.acos(x), (-0.95, 0.95)),
    "atan": (lambda lib, x: lib.atan(x), (-5, 5)),
    "sinh": (lambda lib, x: lib.sinh(x), (-5, 5)),
    "cosh": (lambda lib, x: lib.cosh(x), (-5, 5)),
    "asinh": (lambda lib, x: lib.asinh(x), (-5, 5)),
    "acosh": (lambda lib, x: lib.acosh(x), (1.05, 5)),
    "atanh": (lambda lib, x: lib.atanh(x), (-0.95, 0.95)),
    "expm1": (lambda lib, x: lib.expm1(x), (-3, 3)),
    "log1p": (lambda lib, x: lib.log1p(x), (-0.9, 3)),
    "rsqrt": (lambda lib, x: lib.rsqrt(x), (0.1, 5)),
    "reciprocal": (lambda lib, x: lib.reciprocal(x), (0.1, 5)),
    "square": (lambda lib, x: lib.square(x), (-3, 3)),
    "sinc": (lambda lib, x: lib.sinc(x), (-3, 3)),
    "frac": (lambda lib, x: lib.frac(x), (-3, 3)),
    "deg2rad": (lambda lib, x: lib.deg2rad(x), (-360, 360)),
    "rad2deg": (lambda lib, x: lib.rad2deg(x), (-7, 7)),
    "logit": (lambda lib, x: lib.logit(x), (0.05, 0.95)),
    "logit_eps": (lambda lib, x: lib.logit(x, eps=0.2), (0.05, 0.95)),
    "nan_to_num": (lambda lib, x: lib.nan_to_num(lib.log(x)), (0.1, 3)),
    "erf": (lambda lib, x: lib.erf(x), (-3, 3)),
    "erfc": (lambda lib, x: lib.erfc(x), (-3, 3)),
    "erfinv": (lambda lib, x: lib.erfinv(x), (-0.95, 0.95)),
    "lgamma": (lambda lib, x: lib.lgamma(x), (0.1, 6)),
    "digamma": (lambda lib, x: lib.digamma(x), (0.1, 6)),
    "i0": (lambda lib, x: lib.i0(x), (-5, 5)),
    "ndtr": (lambda lib, x: lib.special.ndtr(x), (-5, 5)),
    "ndtri": (lambda lib, x: lib.special.ndtri(x), (0.05, 0.95)),
    "log_ndtr": (lambda lib, x: lib.special.log_ndtr(x), (-10, 5)),
    "erfcx": (lambda lib, x: lib.special.erfcx(x), (-3, 10)),
    "entr": (lambda lib, x: lib.special.entr(x), (0.05, 3)),
    "i0e": (lambda lib, x: lib.special.i0e(x), (-5, 5)),
    "i1": (lambda lib, x: lib.special.i1(x), (-5, 5)),
    "i1e": (lambda lib, x: lib.special.i1e(x), (-5, 5)),
    "polygamma_1": (lambda lib, x: lib.polygamma(1, x), (0.1, 6)),
    # |x| >= 1e-3: below 2^-126 PyTorch's gradient takes 2^e in float32, which underflows (inf)
    "frexp": (lambda lib, x: lib.frexp(x).mantissa * x.frexp()[1] + lib.frexp(-x)[0], (1e-3, 10)),
    "polygamma_3": (lambda lib, x: x.polygamma(3), (0.1, 6)),
}

BINARY = {
    "atan2": (lambda lib, a, b: lib.atan2(a, b), (-3, 3)),
    "hypot": (lambda lib, a, b: lib.hypot(a, b), (0.1, 3)),
    "logaddexp": (lambda lib, a, b: lib.logaddexp(a, b), (-5, 5)),
    "logaddexp2": (lambda lib, a, b: lib.logaddexp2(a, b), (-5, 5)),
    "xlogy": (lambda lib, a, b: lib.xlogy(a, b), (0.1, 3)),
    "xlog1py": (lambda lib, a, b: lib.special.xlog1py(a, b), (0.1, 3)),
    "lerp": (lambda lib, a, b: lib.lerp(a, b, 0.3) + lib.lerp(a, b, 0.7), (-3, 3)),
    "fmax": (lambda lib, a, b: lib.fmax(a, b), (-3, 3)),
    "fmin": (lambda lib, a, b: lib.fmin(a, b), (-3, 3)),
    "float_power": (lambda lib, a, b: lib.float_power(a, b), (0.1, 3)),
    "rsub": (lambda lib, a, b: lib.rsub(a, b, alpha=1.5), (-3, 3)),
    "ldexp": (lambda lib, a, b: lib.ldexp(a, b), (-3, 3)),
    "clamp_min": (lambda lib, a, b: lib.clamp_min(a, b), (-3, 3)),
    "clamp_max": (lambda lib, a, b: lib.clamp_max(a, b), (-3, 3)),
}


def _run(lib, fn, arrays, device=None):
    """(forward value, gradients) of fn on float64 leaves of `arrays` with a seeded cotangent."""
    if lib is tg:
        leaves = [tg.tensor(a, device=device, requires_grad=True) for a in arrays]
    else:
        leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    v = np.random.default_rng(0).standard_normal(tuple(out.shape))
    if lib is tg:
        out.backward(tg.tensor(v, device=device))
        return out.numpy(), [t.grad.numpy() for t in leaves]
    out.backward(torch.tensor(v))
    return out.detach().numpy(), [t.grad.numpy() for t in leaves]


def _assert_matches_torch(fn, arrays, device):
    value, grads = _run(tg, fn, arrays, device)
    want, want_grads = _run(torch, fn, arrays)
    np.testing.assert_allclose(value, want, **TOL)
    for got, expected in zip(grads, want_grads):
        np.testing.assert_allclose(got, expected, **TOL)


@pytest.mark.parametrize("op", list(UNARY))
@given(data=st.data())
def test_unary_matches_torch(op, device, data):
    fn, (low, high) = UNARY[op]
    _assert_matches_torch(fn, [data.draw(S.float_arrays(low=low, high=high))], device)


@pytest.mark.parametrize("op", list(BINARY))
@given(data=st.data())
def test_binary_broadcast_matches_torch(op, device, data):
    fn, (low, high) = BINARY[op]
    _assert_matches_torch(fn, list(data.draw(S.broadcastable_arrays(low=low, high=high))), device)


# ------------------------------------------------------------------ no gradient: identities
SPECIAL_VALUES = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.0, 1e-300])


def _with_specials(shape):
    return hnp.arrays(np.float64, shape, elements=st.one_of(SPECIAL_VALUES, st.floats(-3, 3)))


@given(x=_with_specials(S.shapes(min_dims=0)))
def test_predicates_are_their_definitions(x):
    t = tg.tensor(x)
    with np.errstate(invalid="ignore"):
        definitions = {
            "isnan": x != x,
            "isinf": np.abs(x) == np.inf,
            "isfinite": (x == x) & (np.abs(x) != np.inf),
            "isposinf": x == np.inf,
            "isneginf": x == -np.inf,
            "isreal": np.ones(x.shape, dtype=bool),
            "signbit": np.copysign(1.0, x) < 0,
        }
    for name, want in definitions.items():
        got = getattr(t, name)()
        assert got.dtype == tg.bool and not got.requires_grad, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
    np.testing.assert_array_equal(t.nan_to_num(nan=7.0).isnan().numpy(), np.zeros(x.shape, dtype=bool))


@given(pair=S.broadcastable_shapes(), data=st.data())
def test_logical_ops_are_truth_tables(pair, data):
    a = data.draw(hnp.arrays(np.int64, pair[0], elements=st.integers(-2, 2)))
    b = data.draw(_with_specials(pair[1]))
    ta, tb = tg.tensor(a), tg.tensor(b)
    pa, pb = a != 0, b != 0  # nan is true, as in PyTorch
    np.testing.assert_array_equal(ta.logical_and(tb).numpy(), pa & pb)
    np.testing.assert_array_equal(tg.logical_or(ta, tb).numpy(), pa | pb)
    np.testing.assert_array_equal(tg.logical_xor(ta, tb).numpy(), pa != pb)
    np.testing.assert_array_equal(tg.logical_not(tb).numpy(), ~pb)


@given(pair=S.broadcastable_shapes(), data=st.data())
def test_integer_ops_identities(pair, data):
    a = data.draw(hnp.arrays(np.int64, pair[0], elements=st.integers(-1000, 1000)))
    b = data.draw(hnp.arrays(np.int64, pair[1], elements=st.integers(-1000, 1000)))
    ta, tb = tg.tensor(a), tg.tensor(b)
    g, m = tg.gcd(ta, tb).numpy(), tg.lcm(ta, tb).numpy()
    np.testing.assert_array_equal(g * m, np.abs(a * b))  # gcd(a, b) lcm(a, b) = |a b|
    np.testing.assert_array_equal((ta ^ tb).numpy() ^ b, np.broadcast_to(a, g.shape))  # xor twice is the identity
    np.testing.assert_array_equal((3 & ta).numpy(), a & 3)
    np.testing.assert_array_equal((3 | ta).numpy(), a | 3)
    np.testing.assert_array_equal((3 ^ ta).numpy(), a ^ 3)
    shift = np.abs(b) % 70  # counts of 64 and beyond too: PyTorch's 0 / sign fill
    want_left = np.where(shift < 64, a * 2.0 ** np.minimum(shift, 63), 0)
    got = tg.bitwise_left_shift(ta, tg.tensor(shift)).numpy()
    small = np.abs(want_left) < 2**62  # where a * 2^n fits in int64, the shift is the product
    np.testing.assert_array_equal(got[small], want_left[small].astype(np.int64))
    want_right = np.floor(a / 2.0**shift).astype(np.int64)  # exact for |a| <= 1000; 0 or -1 past 63
    np.testing.assert_array_equal((ta >> tg.tensor(shift)).numpy(), want_right)


@pytest.mark.parametrize("op", ["heaviside", "nextafter"])
@given(pair=S.broadcastable_shapes(), data=st.data())
def test_heaviside_nextafter_match_torch(op, pair, data):
    a, b = (data.draw(_with_specials(s)) for s in pair)
    got = getattr(tg, op)(tg.tensor(a), tg.tensor(b)).numpy()
    want = getattr(torch, op)(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ dtypes: promotion and refusals as PyTorch's
UNARY_NAMES = [name for name in UNARY if name not in ("logit_eps", "nan_to_num", "polygamma_1", "polygamma_3", "frexp")]
UNARY_NAMES += ["nan_to_num", "sgn", "signbit"]
BINARY_NAMES = [n for n in BINARY if n not in ("lerp", "xlog1py")] + [
    "true_divide", "heaviside", "nextafter", "logical_and", "logical_xor", "bitwise_xor", "bitwise_left_shift",
    "gcd", "lcm", "xlog1py",
]  # fmt: skip


def _outcome(fn):
    """(result dtype, values) or the exception type's name."""
    try:
        out = fn()
    except Exception as e:  # the refusal itself is the answer compared
        return type(e).__name__
    values = out.numpy() if isinstance(out, tg.Tensor) else out.detach().numpy()
    return str(out.dtype).removeprefix("torch."), values.astype(np.float64)


def _same_outcome(ours, theirs):
    if isinstance(theirs, str) or isinstance(ours, str):
        assert isinstance(ours, str) and isinstance(theirs, str), (ours, theirs)  # both refuse (any error type)
        return
    assert ours[0] == theirs[0], (ours[0], theirs[0])
    # a few float16 ulps (eps 1e-3): PyTorch computes float16 in float32 and rounds once; NumPy and
    # SciPy round some steps in float16.  Absolute too: sinc's zeros come out as +-3e-4 in float16
    # (otherwise float32 results mostly: float32 rounding, 1e-6)
    tol = {"rtol": 5e-3, "atol": 1e-3} if ours[0] == "float16" else {"rtol": 1e-6, "atol": 1e-7}
    np.testing.assert_allclose(ours[1], theirs[1], equal_nan=True, **tol)


def _lookup(lib, name):
    special = name in ("ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "i0e", "i1", "i1e", "xlog1py")
    return getattr(lib.special if special else lib, name.removesuffix("_eps"))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
@pytest.mark.parametrize("name", UNARY_NAMES)
def test_unary_dtype_rules_match_torch(name, dtype):
    """Integers and bools give float32 (or stay integers: square, sgn), float16 stays float16, or
    both libraries refuse."""
    x = np.array([3, -2, 0, 5]).astype(dtype)
    ours = _outcome(lambda: _lookup(tg, name)(tg.tensor(x)))
    _same_outcome(ours, _outcome(lambda: _lookup(torch, name)(torch.tensor(x))))


PAIRS = [("float32", "float64"), ("int64", "float32"), ("int64", "int32"), ("float32", 2.5), ("int64", 2.5),
         ("int64", 2), (2.5, "float32"), ("bool", "bool")]  # fmt: skip


@pytest.mark.parametrize("pair", PAIRS, ids=str)
@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_promotion_matches_torch(name, pair):
    """Tensor-tensor promotion and Python numbers on either side: the same result dtype, or both refuse."""
    a, b = np.array([0.5, -1.5, 2.0]), np.array([1.5, 0.25, -3.0])

    def make(lib, spec, values):
        return spec if not isinstance(spec, str) else lib.tensor(values.astype(spec))

    ours = _outcome(lambda: _lookup(tg, name)(make(tg, pair[0], a), make(tg, pair[1], b)))
    theirs = _outcome(lambda: _lookup(torch, name)(make(torch, pair[0], a), make(torch, pair[1], b)))
    _same_outcome(ours, theirs)


NO_DERIVATIVE = ["modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"]  # fmt: skip


@pytest.mark.parametrize("name", NO_DERIVATIVE)
@given(x=_with_specials(S.shapes(min_dims=0)))
def test_special_functions_without_derivative_match_torch(name, x):
    """Values (nan, inf and 0 included) against PyTorch's, outside the graph as PyTorch has no derivative."""
    got = getattr(tg.special, name)(tg.tensor(x, requires_grad=True))
    assert not got.requires_grad
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got.numpy(), want, equal_nan=True, **TOL)


@given(pair=S.broadcastable_shapes(), data=st.data())
def test_zeta_matches_torch(pair, data):
    s = data.draw(S.float_arrays(pair[0], low=1.1, high=6.0))
    q = data.draw(S.float_arrays(pair[1], low=0.1, high=5.0))
    got = tg.special.zeta(tg.tensor(s), tg.tensor(q)).numpy()
    np.testing.assert_allclose(got, torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(), **TOL)
    got = tg.special.zeta(2.5, tg.tensor(q)).numpy()  # a number s
    np.testing.assert_allclose(got, torch.special.zeta(2.5, torch.tensor(q)).numpy(), **TOL)
