"""dtype names and conversions (.type, .int, .half, ...) and isclose, against PyTorch and NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")


def _name(dtype):
    return str(dtype).replace("torch.", "")


def test_dtype_aliases_match_torch():
    for name in ("int", "short", "int8", "int16", "int32", "int64", "long", "half", "float", "double", "bool", "uint8"):
        assert _name(getattr(tg, name)) == _name(getattr(torch, name)), name


@pytest.mark.parametrize("method", ["int", "short", "byte", "half", "float", "double", "long", "bool"])
def test_conversion_methods_match_torch(method, device):
    x = np.array([[-2.7, 0.0, 1.5], [3.99, -0.2, 250.0]])
    ours, theirs = getattr(tg.tensor(x, device=device), method)(), getattr(torch.tensor(x), method)()
    assert _name(ours.dtype) == _name(theirs.dtype)
    if method != "byte":  # torch wraps a negative float to uint8 differently per platform
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_type_names_and_conversions():
    x = np.array([1.5, -2.0])
    ours, theirs = tg.tensor(x, dtype=tg.float32), torch.tensor(x, dtype=torch.float32)
    assert ours.type() == theirs.type() == "torch.FloatTensor"
    for target in (torch.float64, torch.int32, "torch.LongTensor", "torch.HalfTensor", "torch.BoolTensor"):
        mine = ours.type(target if isinstance(target, str) else getattr(tg, _name(target)))
        want = theirs.type(target)
        assert mine.type() == want.type()
        np.testing.assert_array_equal(mine.numpy(), want.numpy())
    with pytest.raises(ValueError, match="invalid type 'torch.NoTensor'"):
        ours.type("torch.NoTensor")


def test_half_keeps_the_graph():
    x = tg.tensor([0.5, -1.25, 2.0], requires_grad=True)
    y = x.half()
    assert y.dtype == tg.float16 and y.requires_grad
    (y.float() * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])  # 3 and these values are exact in float16


@given(data=S.broadcastable_arrays(), rtol=st.sampled_from([1e-5, 1e-2, 0.5]), atol=st.sampled_from([0.0, 1e-8, 0.1]))
def test_isclose_matches_numpy_and_torch(device, data, rtol, atol):
    a, b = data
    a2 = a + 1e-6 * np.sign(a)  # against a: nearly equal pairs, close or not depending on rtol and atol
    ours = tg.isclose(tg.tensor(a2, device=device), tg.tensor(b, device=device), rtol=rtol, atol=atol)
    assert ours.dtype == tg.bool and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), np.isclose(a2, b, rtol=rtol, atol=atol))
    np.testing.assert_array_equal(ours.numpy(), torch.isclose(torch.tensor(a2), torch.tensor(b), rtol, atol).numpy())
    same = tg.isclose(tg.tensor(a2, device=device), tg.tensor(a, device=device), rtol=rtol, atol=atol)
    np.testing.assert_array_equal(same.numpy(), torch.isclose(torch.tensor(a2), torch.tensor(a), rtol, atol).numpy())


def test_isclose_nan_and_errors():
    a = tg.tensor([1.0, float("nan"), 2.0])
    np.testing.assert_array_equal(tg.isclose(a, a).numpy(), [True, False, True])
    np.testing.assert_array_equal(a.isclose(a, equal_nan=True).numpy(), [True, True, True])
    assert tg.allclose(a[[0, 2]], a[[0, 2]] + 1e-9) and not tg.allclose(a, a)
    with pytest.raises(RuntimeError, match="same dtype"):
        tg.isclose(a, a.double())


# ------------------------------------------------------------------ to() forms and memory formats
def test_to_takes_pytorchs_positional_forms_and_copy():
    x = tg.ones(2, 3)
    assert x.to("cpu", tg.float64, False, False).dtype == tg.float64  # (device, dtype, non_blocking, copy)
    assert x.to(tg.float64, False, True).dtype == tg.float64  # (dtype, non_blocking, copy)
    assert x.to(tg.zeros(1, dtype=tg.int64), True).dtype == tg.int64  # (other, non_blocking)
    assert x.to("cpu") is x and x.to(tg.float32) is x  # nothing changes: self, as in PyTorch
    copied = x.to("cpu", copy=True)
    assert copied is not x and copied.dtype == x.dtype
    copied.add_(1)
    assert x.numpy().max() == 1  # a copy, not a view
    assert x.to(tg.float32, False, True) is not x
    with pytest.raises(TypeError, match="at most 2 positional"):
        x.to(tg.float64, False, False, False)


def test_memory_formats_are_checked_as_pytorch_checks_them():
    x4, x3 = tg.ones(2, 3, 4, 5), tg.ones(3, 4, 5)
    for t in (x4.clone(memory_format=tg.channels_last), x4.to(memory_format=tg.channels_last),
              x4.float(memory_format=tg.channels_last), x3.contiguous(memory_format=tg.contiguous_format),
              x3.long(memory_format=tg.preserve_format), x3.clone(memory_format=tg.contiguous_format)):  # fmt: skip
        assert isinstance(t, tg.Tensor)
    np.testing.assert_array_equal(x4.clone(memory_format=tg.channels_last).numpy(), x4.numpy())  # values kept
    # channels_last needs a 4-d tensor, channels_last_3d a 5-d one: PyTorch's refusals, and ours
    t3, t4 = torch.ones(3, 4, 5), torch.ones(2, 3, 4, 5)
    for call in (
        lambda lib, x, _: x.clone(memory_format=lib.channels_last),
        lambda lib, x, _: x.float(memory_format=lib.channels_last),
        lambda lib, _, x: x.to(memory_format=lib.channels_last_3d),
    ):
        with pytest.raises(RuntimeError, match="required rank"):
            call(torch, t3, t4)
        with pytest.raises(RuntimeError, match="required rank"):
            call(tg, x3, x4)
    with pytest.raises(TypeError, match="memory_format must be a memory format"):
        x3.clone(memory_format="channels_last")


@given(x=S.float_arrays(low=-1e6, high=1e6))
def test_half_rounds_through_float32_as_pytorch(x):
    """float64 -> float16 rounds twice (through float32), as PyTorch: NumPy's direct rounding differs
    from PyTorch's in the last bit near a tie."""
    ours = tg.tensor(x).half().numpy()
    np.testing.assert_array_equal(ours, torch.tensor(x).half().numpy())
    # just below the tie between the float16 values 2.685546875 and 2.6875: float32 rounds it onto
    # the tie, which float16 then rounds to even (2.6875); rounded once, it is 2.685546875
    below_tie = np.array([2.685546875 + 2.0**-10 - 2.0**-30])
    assert below_tie.astype(np.float16)[0] == 2.685546875
    assert tg.tensor(below_tie).half().numpy()[0] == torch.tensor(below_tie).half().item() == 2.6875


def test_type_as_converts_to_the_other_tensors_dtype_as_torch(device):
    torch = pytest.importorskip("torch")
    pairs = [(tg.int64, tg.float64, torch.int64, torch.float64), (tg.float32, tg.int32, torch.float32, torch.int32),
             (tg.float64, tg.float64, torch.float64, torch.float64), (tg.bool, tg.float32, torch.bool, torch.float32)]
    for ours_a, ours_b, theirs_a, theirs_b in pairs:
        a, b = tg.tensor([0, 1, 2], dtype=ours_a, device=device), tg.tensor([1], dtype=ours_b, device=device)
        expected = torch.tensor([0, 1, 2], dtype=theirs_a).type_as(torch.tensor([1], dtype=theirs_b))
        got = a.type_as(b)
        assert str(got.dtype) == str(expected.dtype).removeprefix("torch.") and got.tolist() == expected.tolist()
        assert (got is a) == (ours_a == ours_b)  # the tensor itself where the type matches
    x = tg.tensor([1.0, 2.0], requires_grad=True, device=device)
    x.type_as(tg.zeros(1, dtype=tg.float64, device=device)).sum().backward()  # differentiable, as `to`
    assert x.grad.dtype == tg.float32 and x.grad.tolist() == [1.0, 1.0]
