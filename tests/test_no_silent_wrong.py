"""Inputs that used to give a silently wrong answer now do what PyTorch does: tensors hold only
numbers, checkpoints never hold pickles, seeds take PyTorch's whole range."""

import contextlib

import numpy as np
import pytest

import tensorgrad as tg


@pytest.mark.parametrize(
    "data, error, words",
    [
        (2**70, RuntimeError, "Overflow"),
        ([1, 2**70], RuntimeError, "Overflow"),
        ([2**63], RuntimeError, "Overflow"),
        (None, RuntimeError, "Could not infer dtype of NoneType"),
        ([1.0, None], RuntimeError, "Could not infer dtype of NoneType"),
        ({"a": 1}, RuntimeError, "Could not infer dtype of dict"),
        ("a", TypeError, "invalid data type 'str'"),
        ([1.5, "x"], TypeError, "invalid data type 'str'"),
        (b"ab", TypeError, "invalid data type 'bytes'"),
    ],
)
def test_data_no_tensor_can_hold_is_refused_as_pytorch_does(data, error, words):
    with pytest.raises(error, match=words):
        tg.tensor(data)


def test_the_int64_range_is_accepted_whole():
    assert tg.tensor([-(2**63), 2**63 - 1]).tolist() == [-(2**63), 2**63 - 1]
    assert tg.tensor(2**63 - 1).dtype == tg.int64


def test_save_never_pickles(tmp_path):
    """A tensor of Python objects cannot be made; were one to exist, tg.save refuses it rather than
    write a pickle that tg.load would then refuse."""
    t = tg.tensor([1.0, 2.0])
    t._data = t._data.astype(object)
    with pytest.raises(TypeError, match="pickling"):
        tg.save({"w": t}, tmp_path / "x.npz")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("seed, same_as", [(-1, 2**64 - 1), (-(2**63), 2**64 - 2**63)])
def test_negative_seeds_are_taken_modulo_2_64_as_in_pytorch(seed, same_as):
    tg.manual_seed(seed)
    a = (tg.rand(3).tolist(), tg.randint(0, 100, (3,)).tolist())
    tg.manual_seed(same_as)
    assert a == (tg.rand(3).tolist(), tg.randint(0, 100, (3,)).tolist())


def test_a_seed_out_of_range_is_refused():
    with pytest.raises(ValueError, match="Overflow"):  # PyTorch's error (tests/test_generator.py compares)
        tg.manual_seed(2**64)


@pytest.mark.parametrize("data", [None, [1.0, None], "a"])
def test_an_explicit_dtype_does_not_turn_non_numbers_into_nan(data):
    with pytest.raises((RuntimeError, TypeError)):
        tg.tensor(data, dtype=tg.float32)


def test_an_integer_tensor_cannot_be_made_to_require_grad_by_assignment():
    """`t.requires_grad = True` is checked as requires_grad_() is: its gradient would be truncated."""
    t = tg.tensor([1, 2])
    with pytest.raises(TypeError, match="only floating-point tensors can require gradients"):
        t.requires_grad = True
    assert t.requires_grad is False
    f = tg.tensor([1.0, 2.0])
    f.requires_grad = True
    (f * 2.5).sum().backward()
    assert f.grad.tolist() == [2.5, 2.5]


def test_a_result_of_the_graph_cannot_be_taken_out_of_it_by_assignment():
    y = tg.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False


@pytest.mark.parametrize(
    "leaf_dtype, grad_dtype",
    [(tg.float32, tg.int64), (tg.float64, tg.float16), (tg.float32, tg.float64), (tg.float64, tg.float32)],
)
def test_gradients_have_their_leafs_dtype(leaf_dtype, grad_dtype):
    """As PyTorch: the gradient of every input is cast to that input's dtype, the root's too, so a
    second backward accumulates into .grad without a dtype error."""
    torch = pytest.importorskip("torch")
    x = tg.ones(3, dtype=leaf_dtype, requires_grad=True)
    tx = torch.ones(3, dtype=getattr(torch, str(leaf_dtype)), requires_grad=True)
    for _ in range(2):
        (x * 2).backward(tg.tensor([1, 2, 3], dtype=grad_dtype))
        (tx * 2).backward(torch.tensor([1, 2, 3], dtype=getattr(torch, str(grad_dtype))))
    assert x.grad.dtype == leaf_dtype and str(tx.grad.dtype) == f"torch.{leaf_dtype}"
    assert x.grad.tolist() == tx.grad.tolist() == [4.0, 8.0, 12.0]


def test_a_gradient_through_a_cast_has_the_inputs_dtype():
    x = tg.ones(3, dtype=tg.float64, requires_grad=True)
    (x.float() * 2).sum().backward()
    assert x.grad.dtype == tg.float64


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("args", [(True,), (False,), (0, False), (1, True, True)])
def test_a_positional_bool_is_unbiased_not_a_dim(fn, args):
    """PyTorch's var(input, unbiased) overload: a lone bool was read as dim 1 / 0."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).random((3, 4))
    ours, theirs = getattr(tg, fn)(tg.tensor(x), *args), getattr(torch, fn)(torch.tensor(x), *args)
    ours, theirs = (ours, theirs) if fn in ("var", "std") else (ours[0], theirs[0])
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)  # float64, the same sums


def test_a_masked_fill_value_that_requires_grad_gets_its_gradient():
    """The 0-d tensor value of masked_fill receives the gradient of every place it filled (it got
    none); a value tensor of more dims is refused, as in PyTorch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w, mask = rng.random((3, 4)), rng.random((3, 4)), rng.random((3, 4)) > 0.5
    grads = []
    for lib in (tg, torch):
        a = lib.tensor(x, requires_grad=True)
        v = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        (a.masked_fill(lib.tensor(mask), v) * lib.tensor(w)).sum().backward()
        grads.append((a.grad.numpy() if lib is tg else a.grad.detach().numpy(), float(v.grad)))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    assert grads[0][1] == pytest.approx(grads[1][1], rel=1e-12) and grads[0][1] == pytest.approx(w[mask].sum())
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        tg.tensor(x).masked_fill(tg.tensor(mask), tg.tensor([1.0]))


@pytest.mark.parametrize("path", ["kernels", "reference"])
def test_relu_at_nan_as_pytorch_on_both_paths(path):
    """relu(nan) is nan, and the gradient at a NaN input is passed on (PyTorch's threshold_backward
    zeroes only where the result is <= 0); the kernels gave 0 for both."""
    torch = pytest.importorskip("torch")
    x = [float("nan"), -1.0, 0.0, 2.0]
    g = [0.5, 0.5, 0.5, 0.5]
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with tg.kernels.reference() if path == "reference" else contextlib.nullcontext():
        y = tg.nn.functional.relu(a)
        y.backward(tg.tensor(g))
    z = torch.nn.functional.relu(b)
    z.backward(torch.tensor(g))
    np.testing.assert_array_equal(y.numpy(), z.detach().numpy())
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
