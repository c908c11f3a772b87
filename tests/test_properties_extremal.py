"""Hypothesis property tests at extremal values (nan, +-inf, -0.0, huge, tiny, overflow): every
path gives the same answer, PyTorch's, and silently.

The ops are those whose NaN / inf conventions follow PyTorch (backend.quiet() where NumPy would
warn, PyTorch's sign, maximum's gradient at NaN, pow's gradient formulas, float casts).  The fused
kernels (tg.kernels "kernels"), the reference ops (tg.kernels.reference()) and the strict device
must give the same forward values and input gradients bit for bit (NaN where NaN, the sign of a
zero included), none may warn (setup.cfg turns tensorgrad's RuntimeWarnings into errors, and the
test asks for none), and the forward values must be PyTorch's (up to the sign of a zero).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")

EXTREMES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300, -1e300, 1e-300, -1e-300, 710.0, -745.5, 1.0, -1.0]


@st.composite
def extremal_arrays(draw, shape=None):
    """A float64 array mixing the extremes with ordinary values in [-3, 3]."""
    shape = draw(S.shapes(max_dims=2, max_side=4)) if shape is None else shape
    values = st.one_of(st.sampled_from(EXTREMES), st.floats(-3, 3, allow_nan=False, allow_subnormal=False))
    return np.array(draw(st.lists(values, min_size=math.prod(shape), max_size=math.prod(shape)))).reshape(shape)


# name -> (tensorgrad, torch): the same op on either library's tensors
UNARY = {
    "exp": (lambda t: t.exp(), torch.exp),
    "exp2": (lambda t: t.exp2(), torch.exp2),
    "log": (lambda t: t.log(), torch.log),
    "log2": (lambda t: t.log2(), torch.log2),
    "log10": (lambda t: t.log10(), torch.log10),
    "sqrt": (lambda t: t.sqrt(), torch.sqrt),
    "sin": (lambda t: t.sin(), torch.sin),
    "cos": (lambda t: t.cos(), torch.cos),
    "tan": (lambda t: t.tan(), torch.tan),
    "abs": (lambda t: t.abs(), torch.abs),
    "sign": (lambda t: t.sign(), torch.sign),
    "silu": (F.silu, torch.nn.functional.silu),
    "mish": (F.mish, torch.nn.functional.mish),
    "softsign": (F.softsign, torch.nn.functional.softsign),
    "logsumexp": (lambda t: t.logsumexp(-1), lambda t: t.logsumexp(-1)),
    "pow_scalar": (lambda t: t**-1.5, lambda t: t**-1.5),
    "rpow": (lambda t: 2.0**t, lambda t: 2.0**t),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "pow": (lambda a, b: a**b, lambda a, b: a**b),
    "maximum": (tg.maximum, torch.maximum),
    "minimum": (tg.minimum, torch.minimum),
    "fmod": (tg.fmod, torch.fmod),
    "remainder": (tg.remainder, torch.remainder),
    "copysign": (tg.copysign, torch.copysign),
    "floor_divide": (tg.floor_divide, torch.floor_divide),
}
# Where PyTorch's CPU answer at the extremes depends on the array's length, only the paths are compared.
TORCH_DIFFERS = {
    "remainder": "PyTorch's vectorized loop computes a - b floor(a / b) (nan where a / b overflows, "
    "0.0 for remainder(0, -inf)), its scalar loop is fmod-based like NumPy's, which tensorgrad uses",
    "fmod": "the same: PyTorch's vectorized fmod is a - b trunc(a / b) (nan where a / b overflows), C's fmod exact",
}
# Gradients not compared with PyTorch's (the paths still are)
GRAD_DIFFERS = {
    "softsign": "PyTorch differentiates x / (|x| + 1) as a quotient: at |x| = 1e300 its 1/d - |x|/d^2 "
    "leaves a subnormal (2e-317) where 1 / (1 + |x|)^2 is 0",
    "floor_divide": "PyTorch has no derivative for floor_divide (tensorgrad's is 0, as div's with rounding_mode)",
}
CASTS = {"int64": tg.int64, "int32": tg.int32, "float16": tg.float16, "float32": tg.float32}

# Transcendental functions of huge arguments (sin(1e300), exp(709.9)) may differ from PyTorch's
# vectorized library in the last bits: 1e-12 relative covers a few ulps and nothing more.  A
# subnormal result (1e-300 / 3) holds fewer bits than that: compared absolutely, to the smallest
# normal float64.
TORCH_TOL = {"rtol": 1e-12, "atol": float(np.finfo(np.float64).tiny)}


def _run(fn, arrays, g, device, reference):
    """(forward, input gradients) of fn on `device`, as NumPy arrays, warnings recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaves = [tg.tensor(a, device=device, requires_grad=True) for a in arrays]
        if reference:
            with tg.kernels.reference():
                out = fn(*leaves)
                out.backward(tg.tensor(g(out.shape), device=device))
        else:
            out = fn(*leaves)
            out.backward(tg.tensor(g(out.shape), device=device))
    warned = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not warned, f"warned: {warned}"
    return out.numpy(), [t.grad.numpy() if t.grad is not None else None for t in leaves]


def _cotangent(shape):
    return np.random.default_rng(0).standard_normal(shape)


def _same(a, b):
    """Bit for bit, NaN equal to NaN (any payload), -0.0 not equal to 0.0."""
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    both_nan = np.isnan(a) & np.isnan(b) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    same = (a == b) & (np.signbit(a) == np.signbit(b)) if a.dtype.kind == "f" else a == b
    return bool((both_nan | same).all())


def _check_paths(fn, arrays):
    """The three paths agree bit for bit; returns the kernels path's forward."""
    runs = {
        "kernels": _run(fn, arrays, _cotangent, "cpu", reference=False),
        "reference": _run(fn, arrays, _cotangent, "cpu", reference=True),
        "strict": _run(fn, arrays, _cotangent, "strict", reference=False),
    }
    out, grads = runs["kernels"]
    for path, (o, gs) in runs.items():
        assert _same(o, out), f"{path} forward differs from the kernels': {o} vs {out}"
        for i, (g1, g2) in enumerate(zip(gs, grads)):
            assert _same(g1, g2), f"{path} gradient of input {i} differs from the kernels': {g1} vs {g2}"
    return out


def _matches_torch(ours, theirs):
    theirs = theirs.detach().numpy()
    assert ours.shape == theirs.shape
    # The sign of a zero is not compared: max(-0.0, 0.0) may be either (IEEE), and NumPy and PyTorch choose differently.
    np.testing.assert_allclose(ours, theirs, equal_nan=True, **TORCH_TOL)


@pytest.mark.parametrize("op", list(UNARY))
@given(x=extremal_arrays())
def test_unary_at_extremes(op, x):
    ours, theirs = UNARY[op]
    out = _check_paths(ours, [x])
    t = torch.tensor(x, requires_grad=True)
    y = theirs(t)
    _matches_torch(out, y)
    if op not in GRAD_DIFFERS:
        y.backward(torch.tensor(_cotangent(tuple(y.shape))))
        ours_grad = _run(ours, [x], _cotangent, "cpu", reference=False)[1][0]
        _matches_torch(ours_grad, t.grad)


@pytest.mark.parametrize("op", list(BINARY))
@given(data=st.data())
def test_binary_at_extremes(op, data):
    shape = data.draw(S.shapes(max_dims=2, max_side=4))
    a, b = data.draw(extremal_arrays(shape)), data.draw(extremal_arrays(shape))
    ours, theirs = BINARY[op]
    out = _check_paths(ours, [a, b])
    if op in TORCH_DIFFERS:
        return
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    y = theirs(ta, tb)
    _matches_torch(out, y)
    if op not in GRAD_DIFFERS:
        y.backward(torch.tensor(_cotangent(tuple(y.shape))))
        for ours_grad, t in zip(_run(ours, [a, b], _cotangent, "cpu", reference=False)[1], (ta, tb)):
            _matches_torch(ours_grad, t.grad)


@pytest.mark.parametrize("dtype", list(CASTS))
@given(x=extremal_arrays())
def test_float64_casts_at_extremes(dtype, x):
    """A float cast that cannot hold the value (NaN, inf, out of range to an integer; overflow to
    float16) is silent on every path, the same on each; where the value fits it is PyTorch's
    (float16 rounding through float32, as c10::Half)."""
    outs = []
    for device, reference in (("cpu", False), ("cpu", True), ("strict", False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = tg.tensor(x, device=device)
            if reference:
                with tg.kernels.reference():
                    outs.append(t.to(CASTS[dtype]).numpy())
            else:
                outs.append(t.to(CASTS[dtype]).numpy())
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert all(_same(o, outs[0]) for o in outs)
    theirs = torch.tensor(x).to(getattr(torch, dtype)).numpy()
    fits = np.isfinite(x) & (np.abs(x) < 2**31) if dtype.startswith("int") else np.ones(x.shape, bool)
    assert _same(outs[0][fits], theirs[fits])
