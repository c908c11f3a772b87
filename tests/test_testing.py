"""tensorgrad.testing: assert_close, check_gradients, the hypothesis strategies, and the Study page's
"your own op, property-tested" block (docs/study.md) run as it stands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import assert_close, check_gradients
from tensorgrad.testing import strategies as tst

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- assert_close
def test_assert_close_uses_torch_defaults_per_dtype():
    x = tg.tensor([1.0, 2.0, 3.0])
    assert_close(x, x + 5e-6)  # float32: atol 1e-5 allows it
    with pytest.raises(AssertionError):
        assert_close(x, x + 5e-5)
    y = x.double()
    with pytest.raises(AssertionError):
        assert_close(y, y + 5e-6)  # float64: atol 1e-7 does not
    assert_close(tg.tensor([1, 2]), np.array([1, 2]))  # integers: exact, any tensor-like
    with pytest.raises(AssertionError):
        assert_close(tg.tensor([1, 2]), tg.tensor([1, 3]))


def test_assert_close_matches_torch_testing_defaults():
    torch = pytest.importorskip("torch")
    for dtype, tg_dtype in [(torch.float16, tg.float16), (torch.float32, tg.float32), (torch.float64, tg.float64)]:
        assert tg.testing.comparison.default_tolerances(tg_dtype) == torch.testing._comparison.default_tolerances(
            torch.empty(0, dtype=dtype)
        )


def test_assert_close_message_is_readable():
    actual = tg.tensor(np.arange(12.0).reshape(3, 4))
    expected = actual.detach().numpy().copy()
    expected[1, 2] += 0.5
    expected[2, 3] -= 2.0
    with pytest.raises(AssertionError) as err:
        assert_close(actual, expected)
    text = str(err.value)
    assert "Mismatched elements: 2 / 12 (16.7%)" in text
    assert "Greatest absolute difference: 2 at index (2, 3) (up to 1e-07 allowed)" in text
    assert "(1, 2): 6.0 vs 6.5 (-0.5)" in text


def test_assert_close_checks_shape_dtype_device_and_nan():
    x = tg.zeros(2, 3)
    with pytest.raises(AssertionError, match=r"'shape' do not match: \(2, 3\) != \(3, 2\)"):
        assert_close(x, tg.zeros(3, 2))
    with pytest.raises(AssertionError, match="'dtype' do not match: float32 != float64"):
        assert_close(x, x.double())
    with pytest.raises(AssertionError, match="'device' do not match: cpu != strict"):
        assert_close(x, x.to("strict"))
    nan = tg.tensor([float("nan"), float("inf")])
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    assert_close(nan, nan, equal_nan=True)
    with pytest.raises(ValueError, match="both rtol and atol"):
        assert_close(x, x, rtol=1e-3)


# ---------------------------------------------------------------- check_gradients
def test_check_gradients_takes_float32_and_non_tensor_arguments():
    x = tg.randn(3, 4)  # float32, no requires_grad: copied to float64 and checked
    ids = tg.tensor([0, 3, 1])
    assert check_gradients(lambda x, ids, k: F_cross_entropy(x * k, ids), x, ids, 2.0)
    assert x.grad is None and x.dtype == tg.float32  # the caller's tensor is untouched


def F_cross_entropy(x, ids):
    import tensorgrad.nn.functional as F

    return F.cross_entropy(x, ids)


def test_check_gradients_catches_a_backward_that_sum_would_miss():
    """softmax(x).sum() is constant: a backward returning zeros passes with ones as cotangent."""

    class ZeroSoftmax(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.softmax(-1)

        @staticmethod
        def backward(ctx, g):
            return g * 0

    x = tg.randn(2, 5, dtype=tg.float64, requires_grad=True)
    assert tg.gradcheck(lambda x: ZeroSoftmax.apply(x).sum(), [x])  # blind
    with pytest.raises(tg.GradcheckError, match="input 0"):
        check_gradients(ZeroSoftmax.apply, x)


def test_check_gradients_fast_mode_for_large_inputs():
    x = tg.randn(40, 30)
    assert check_gradients(lambda x: x.tanh() * x, x)  # 1200 elements: one direction, not 2400 evaluations


# ---------------------------------------------------------------- strategies
@given(tst.tensors())
def test_tensors_with_no_arguments(x):
    assert 1 <= x.ndim <= 4 and x.dtype in (tg.float32, tg.float64) and x.device in ("cpu", "strict", "cuda")
    assert np.all(np.abs(x.numpy()) <= 3.0)


@given(tst.tensors(shape=(2, 3), dtype=tg.float64, device="cpu", low=0.5, high=1.0, requires_grad=True))
def test_tensors_with_given_arguments(x):
    assert x.shape == (2, 3) and x.dtype == tg.float64 and x.device == "cpu" and x.requires_grad
    assert x.numpy().min() >= 0.5 and x.numpy().max() <= 1.0


@given(tst.tensors(dtype=tg.int64, low=-2, high=2), tst.masks(), tst.class_targets())
def test_integer_tensors_masks_and_targets(ints, mask, targets):
    assert ints.dtype == tg.int64 and np.all(np.abs(ints.numpy()) <= 2)
    assert mask.dtype == tg.bool
    assert targets.dtype == tg.int64 and targets.ndim == 1 and np.all((targets.numpy() >= 0) & (targets.numpy() < 4))


@given(tst.broadcastable_shapes(), tst.broadcastable_tensors())
def test_broadcastable_pairs(shapes, pair):
    np.broadcast_shapes(*shapes)  # raises if they do not broadcast
    a, b = pair
    assert (a + b).shape == np.broadcast_shapes(a.shape, b.shape) and a.device == b.device


@given(tst.logits_and_targets(dtype=tg.float64), st.sampled_from(["mean", "sum"]))
def test_logits_and_targets_feed_cross_entropy(pair, reduction):
    import tensorgrad.nn.functional as F

    logits, targets = pair
    assert check_gradients(lambda x: F.cross_entropy(x, targets, reduction=reduction), logits)


def test_importing_tensorgrad_does_not_need_hypothesis():
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import tensorgrad, tensorgrad.testing\n"
        "tensorgrad.testing.assert_close(tensorgrad.ones(2), tensorgrad.ones(2))\n"
        "try:\n    import tensorgrad.testing.strategies\nexcept ImportError:\n    print('strategies need hypothesis')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "strategies need hypothesis"


# ---------------------------------------------------------------- the Study page's block
def readme_block(heading: str) -> str:
    """The python block under a heading of docs/study.md (the site's Study page)."""
    text = (ROOT / "docs" / "study.md").read_text()
    match = re.search(re.escape(heading) + r"\n.*?```python\n(.*?)```", text, re.S)
    assert match, f"docs/study.md has no python block under {heading!r}"
    return match.group(1)


def test_study_page_own_op_block_runs():
    code = readme_block("## Your own op, property-tested")
    namespace: dict = {}
    # "<docs/study.md>", not a file name: hypothesis reads the source of a test by its file and line,
    # and the page at the block's line numbers is not Python (Python 3.13's tokenizer raises on it)
    exec(compile(code, "<docs/study.md>", "exec"), namespace)  # defines Swish and runs its property test
    x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = namespace["Swish"].apply(x)
    y.backward(tg.ones(3))
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), s + x.numpy() * s * (1 - s), rtol=1e-6)  # float32 rounding


def test_compare_grads_prints_exact_approximate_and_the_largest_difference(capsys):
    from tensorgrad.testing import compare_grads

    x = tg.tensor([1.0, -2.0, 3.0], dtype=tg.float64, requires_grad=True)
    (x * x).sum().backward()
    assert compare_grads("x", 2 * x.detach(), x) == (True, True, 0.0)
    near = compare_grads("x", 2 * x.detach() + 1e-9, x)  # within float64's default rtol 1e-7
    assert not near.exact and near.approximate and 0 < near.max_diff < 2e-9
    off = compare_grads("x", 2 * x.detach() + 1e-3, x)
    assert not off.exact and not off.approximate
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("x ") and "exact: True" in lines[0] and "maxdiff: 0" in lines[0]
    with pytest.raises(ValueError, match="retain_grad"):
        compare_grads("y", x.detach(), x * 2)
    with pytest.raises(ValueError, match="shape"):
        compare_grads("x", tg.zeros(2), x)
