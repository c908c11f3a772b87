"""Bad input gives a clear error: the right exception type, and a message that names what was
wrong (the op, the shapes, the dim, the dtype, the offending value)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn.functional as F


def randn(*shape, device="cpu"):
    return tg.tensor(np.random.default_rng(0).standard_normal(shape), device=device)


# ------------------------------------------------------------------ shapes
def test_matmul_shape_mismatch_names_both_shapes(device):
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(4, 5\) cannot be multiplied"):
        randn(2, 3, device=device) @ randn(4, 5, device=device)
    with pytest.raises(ValueError, match=r"matmul: shapes \(3,\) and \(4,\) cannot be multiplied"):
        randn(3, device=device) @ randn(4, device=device)
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) cannot be multiplied \(3 columns vs 4 rows\)"):
        randn(2, 3, device=device) @ randn(4, device=device)
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(2, 4, 5\)"):
        randn(3, device=device) @ randn(2, 4, 5, device=device)
    with pytest.raises(ValueError, match=r"matmul \(batch dims\): shapes \(2,\) and \(3,\)"):
        randn(2, 4, 5, device=device) @ randn(3, 5, 6, device=device)
    with pytest.raises(ValueError, match="at least 1 dim"):
        randn(device=device) @ randn(3, device=device)


def test_broadcast_mismatch_names_op_and_shapes(device):
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        randn(2, 3, device=device) + randn(4, device=device)
    with pytest.raises(ValueError, match=r"mul: shapes \(2, 3\) and \(2,\)"):
        randn(2, 3, device=device) * randn(2, device=device)


def test_reshape_to_an_invalid_shape():
    with pytest.raises(ValueError, match=r"reshape: shape \(4, 4\) is invalid for a tensor of shape \(2, 3\)"):
        randn(2, 3).reshape(4, 4)
    with pytest.raises(ValueError, match=r"reshape: shape \(-1, -1\)"):
        randn(2, 3).reshape(-1, -1)
    with pytest.raises(ValueError, match=r"shape \(4, -1\) is invalid.*\(6 elements\)"):
        randn(2, 3).view(4, -1)


def test_other_shape_errors():
    with pytest.raises(ValueError, match=r"permute: \(0, 0\) is not a permutation"):
        randn(2, 3).permute(0, 0)
    with pytest.raises(ValueError, match=r"expand: .*\(2, 3\).*\(4, 3\)"):
        randn(2, 3).expand(4, 3)
    with pytest.raises(ValueError, match=r"cat: shapes \(2, 3\) and \(2, 4\) differ outside dim 0"):
        tg.cat([randn(2, 3), randn(2, 4)])
    with pytest.raises(ValueError, match="non-empty"):
        tg.cat([])
    with pytest.raises(ValueError, match=r"stack: expects tensors of equal shape, got \(2, 3\) and \(3, 2\)"):
        tg.stack([randn(2, 3), randn(3, 2)])
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] do not add up to 3"):
        randn(3, 2).split([1, 1])
    with pytest.raises(IndexError, match=r"out of range for a tensor of shape \(2, 3\)"):
        randn(2, 3)[5]
    with pytest.raises(IndexError, match=r"shape \(2, 3\)"):
        randn(2, 3)[:, [0, 3]]


# ------------------------------------------------------------------ dims
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: x.sum(3), "sum"),
        (lambda x: x.mean((0, -4)), "mean"),
        (lambda x: x.amax(5), "amax"),
        (lambda x: x.var(3), "var"),
        (lambda x: x.max(3), "max"),
        (lambda x: x.softmax(3), "softmax"),
        (lambda x: x.log_softmax(-4), "log_softmax"),
        (lambda x: x.transpose(0, 3), "transpose"),
        (lambda x: x.permute(0, 1, 3), "permute"),
        (lambda x: x.unsqueeze(5), "unsqueeze"),
        (lambda x: x.squeeze(3), "squeeze"),
        (lambda x: x.flatten(3), "flatten"),
        (lambda x: x.split(1, dim=3), "split"),
        (lambda x: tg.cat([x, x], dim=3), "cat"),
        (lambda x: tg.stack([x, x], dim=5), "stack"),
        (lambda x: x.size(3), "size"),
    ],
)
def test_out_of_range_dim_names_the_op_and_the_dim(call, name):
    x = randn(2, 3, 4)
    with pytest.raises(IndexError, match=rf"{name}: dim -?\d is out of range for a tensor of \d dims"):
        call(x)


def test_bad_dim_types_and_repeats():
    with pytest.raises(TypeError, match="sum: dim must be an int, got str"):
        randn(2, 3).sum("rows")
    with pytest.raises(ValueError, match=r"sum: dim \(1, -1\) repeats an axis"):
        randn(2, 3).sum((1, -1))


# ------------------------------------------------------------------ backward
def test_backward_errors():
    with pytest.raises(RuntimeError, match=r"scalar output, but the shape is \(2, 3\)"):
        (randn(2, 3).double().requires_grad_() * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        randn(2).sum().backward()


# ------------------------------------------------------------------ devices
def test_device_mix_names_op_and_devices():
    with pytest.raises(
        tg.DeviceError, match=r"MaskedFill: expected all tensors on the same device, got strict and cpu"
    ):
        randn(2, 2, device="strict").masked_fill(tg.tensor([[True, False], [False, True]]), 0.0)
    with pytest.raises(tg.DeviceError, match=r"Sub: .*cpu and strict"):
        randn(2) - randn(2, device="strict")
    with pytest.raises(tg.DeviceError, match=r"comparison: tensors on cpu and strict"):
        _ = randn(2) < randn(2, device="strict")
    with pytest.raises(tg.DeviceError, match=r"backward\(\): gradient on cpu, tensor on strict"):
        (randn(2, device="strict").requires_grad_() * 2).backward(randn(2))


# ------------------------------------------------------------------ dtypes
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: x.softmax(-1), "softmax"),
        (lambda x: x.log_softmax(-1), "log_softmax"),
        (lambda x: x.mean(), "mean"),
        (lambda x: x.var(), "var"),
        (lambda x: F.layer_norm(x, (3,)), "layer_norm"),
        (lambda x: F.cross_entropy(x, tg.tensor([0, 1])), "cross_entropy"),
    ],
)
def test_float_op_on_int_tensor_names_the_dtype(call, name):
    x = tg.tensor([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(TypeError, match=rf"{name}: .*floating.*int64"):
        call(x)


def test_gradients_only_for_floats():
    with pytest.raises(TypeError, match=r"only floating-point tensors can require gradients, got dtype int64"):
        tg.tensor([1, 2], requires_grad=True)


# ------------------------------------------------------------------ ids
@pytest.mark.parametrize("bad", [7, -1, 5])
def test_embedding_id_out_of_range_names_the_value(bad, device):
    ids = tg.tensor([[0, 1], [bad, 2]], device=device)
    # On the CPU the call raises; on a GPU-like device the check is queued without a sync and
    # raises at the next read of a value (the .numpy() here).
    with pytest.raises(IndexError, match=rf"embedding: .*contains {bad}, outside \[0, 5\)"):
        F.embedding(ids, randn(5, 3, device=device)).numpy()


def test_on_a_gpu_like_device_the_id_check_waits_for_a_read():
    ids = tg.tensor([[0, 9]], device="strict")
    out = F.embedding(ids, randn(5, 3, device="strict"))  # no sync here: the check is queued
    assert out.shape == (1, 2, 3)  # the bad id read a wrapped-around row, as CuPy does
    with pytest.raises(IndexError, match=r"contains 9, outside \[0, 5\) .*queued on strict, reported at this read"):
        out.sum().item()
    assert out.sum().item() == out.sum().item()  # a failed check is reported once


def test_embedding_ids_must_be_integers():
    with pytest.raises(TypeError, match="embedding: .*integer tensor, got dtype float32"):
        F.embedding(tg.tensor([0.0, 1.0]), randn(5, 3))


@pytest.mark.parametrize("bad", [4, -3])
def test_cross_entropy_target_out_of_range_names_the_value(bad, device):
    logits = randn(3, 4, device=device)
    with pytest.raises(IndexError, match=rf"cross_entropy: target contains {bad}, outside \[0, 4\)"):
        F.cross_entropy(logits, tg.tensor([0, bad, 1], device=device)).item()


def test_cross_entropy_ignored_target_is_not_out_of_range():
    loss = F.cross_entropy(randn(3, 4), tg.tensor([0, -100, 1]))
    assert np.isfinite(loss.item())


def test_cross_entropy_shape_and_argument_errors():
    with pytest.raises(ValueError, match=r"target of shape \(2,\) does not match logits \(2, 3, 4\) \(expected class"):
        F.cross_entropy(randn(2, 3, 4), tg.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"classes are dim 1: for \(B, T, C\) logits pass logits.view\(B \* T, C\)"):
        F.cross_entropy(randn(2, 3, 4), tg.tensor([[0, 1, 2], [0, 1, 2]]))
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(randn(2, 4), tg.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"weight must have shape \(4,\), one per class"):
        F.cross_entropy(randn(2, 4), tg.tensor([0, 1]), weight=tg.ones(3))
    with pytest.raises(RuntimeError, match=r"target of shape \(2,\) does not match logits \(3, 4\)"):
        F.cross_entropy(randn(3, 4), tg.tensor([0, 1]))
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(randn(2, 4), tg.tensor([0, 1]), reduction="avg")


# ------------------------------------------------------------------ masks, arguments
def test_masked_fill_needs_a_bool_mask():
    x = randn(2, 3)
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got int64"):
        x.masked_fill(tg.tensor([[0, 1, 0], [1, 0, 0]]), 0.0)
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got ndarray"):
        x.masked_fill(np.zeros((2, 3), dtype=bool), 0.0)
    with pytest.raises(ValueError, match=r"masked_fill_: .*\(2, 1, 3\).*\(2, 3\)"):
        x.masked_fill_(tg.tensor(np.zeros((2, 1, 3), dtype=bool)), 0.0)  # in place: the mask must fit self
    with pytest.raises(ValueError, match=r"masked_fill: shapes \(2, 3\) and \(2, 2\) cannot be broadcast"):
        x.masked_fill(tg.tensor(np.zeros((2, 2), dtype=bool)), 0.0)
    with pytest.raises(TypeError, match="where: condition must be a bool tensor"):
        tg.where(tg.tensor([1, 0]), randn(2), randn(2))


def test_layer_norm_and_linear_shape_errors():
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(4,\) does not match .*\(2, 3\)"):
        F.layer_norm(randn(2, 3), 4)
    with pytest.raises(ValueError, match=r"layer_norm: weight has shape \(4,\), expected \(3,\)"):
        F.layer_norm(randn(2, 3), (3,), weight=randn(4))
    with pytest.raises(TypeError, match="layer_norm: weight is float32 but the input is float64"):
        F.layer_norm(randn(2, 3), (3,), weight=tg.ones(3))
    with pytest.raises(ValueError, match=r"linear: input has 3 features .* expects 4"):
        F.linear(randn(2, 3), randn(5, 4))


def test_argument_errors():
    with pytest.raises(TypeError, match="pow: the exponent must be a number or a tensor, got str"):
        randn(2) ** "2"
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh', got 'fast'"):
        F.gelu(randn(2), approximate="fast")
    with pytest.raises(ValueError, match=r"dropout probability has to be in \[0, 1\], got 1.5"):
        F.dropout(randn(2), 1.5)
    with pytest.raises(ValueError, match=r"item\(\): only a one-element tensor .* shape is \(2,\)"):
        randn(2).item()
    with pytest.raises(ValueError, match=r"randint: empty range \[3, 3\)"):
        tg.randint(3, 3, (2,))
    with pytest.raises(TypeError, match="random floats need a floating dtype"):
        tg.randn(2, dtype=tg.int64)
    with pytest.raises(RuntimeError, match="cannot sample 3 > 2 categories without replacement"):
        tg.multinomial(tg.tensor([0.5, 0.5]), 3)
    with pytest.raises(ValueError, match=r"tril: needs at least 2 dims, got shape \(3,\)"):
        tg.tril(randn(3))


def test_packed_self_attention_names_the_bad_argument(device):
    qkv = randn(2, 4, 12, device=device)
    with pytest.raises(ValueError, match=r"packed_self_attention: qkv must be \(B, T, 3 \* num_heads \* head_size\)"):
        F.packed_self_attention(qkv, 5)
    with pytest.raises(ValueError, match=r"qkv must be .* got shape \(4, 12\)"):
        F.packed_self_attention(randn(4, 12, device=device), 2)
    mask = tg.ones(3, 3, dtype=tg.bool, device=device)
    with pytest.raises(ValueError, match=r"attn_mask must be \(4, 4\), got \(3, 3\)"):
        F.packed_self_attention(qkv, 2, attn_mask=mask)
    with pytest.raises(TypeError, match="attn_mask must be bool"):
        F.packed_self_attention(qkv, 2, attn_mask=tg.ones(4, 4, device=device))
    with pytest.raises(ValueError, match="pass attn_mask or is_causal, not both"):
        F.packed_self_attention(qkv, 2, attn_mask=tg.ones(4, 4, dtype=tg.bool, device=device), is_causal=True)
    with pytest.raises(ValueError, match=r"dropout probability has to be in \[0, 1\)"):
        F.packed_self_attention(qkv, 2, dropout_p=1.0)


# ------------------------------------------------------------------ shape errors: RuntimeError and ValueError
@pytest.mark.parametrize(
    "call",
    [
        lambda: randn(2, 3) @ randn(4, 5),
        lambda: randn(2, 3) + randn(4),
        lambda: randn(2, 3).reshape(4),
        lambda: randn(2, 3).expand(4, 3),
        lambda: randn(2, 3).permute(0, 0),
        lambda: tg.cat([randn(2, 3), randn(2, 4)]),
        lambda: tg.stack([randn(2, 3), randn(3, 2)]),
        lambda: F.linear(randn(2, 3), randn(4, 5)),
        lambda: F.cross_entropy(randn(3, 4), tg.tensor([0, 1])),
        lambda: randn(2, 3).layer_norm(2),
        lambda: randn(2, 3).masked_fill(tg.ones(4, dtype=tg.bool), 0.0),
        lambda: randn(2, 3).split([1, 2]),
        lambda: randn(2, 3).add_(randn(4, 2, 3)),
    ],
)
def test_shape_errors_are_both_runtime_and_value_errors(call):
    # PyTorch raises RuntimeError (ported `except RuntimeError` code catches it); ValueError as before
    with pytest.raises(tg.ShapeError) as e:
        call()
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, ValueError)
    try:
        call()
    except RuntimeError:
        pass
    try:
        call()
    except ValueError:
        pass


# ------------------------------------------------------------------ multinomial: PyTorch's checks
@pytest.mark.parametrize(
    "probs,message",
    [
        ([0.5, float("nan"), 0.5], "probability tensor contains either `inf`, `nan` or element < 0"),
        ([0.5, float("inf")], "probability tensor contains either `inf`, `nan` or element < 0"),
        ([0.5, -0.1, 0.6], "probability tensor contains either `inf`, `nan` or element < 0"),
        ([0.0, 0.0, 0.0], r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
        ([[0.2, 0.8], [0.0, 0.0]], r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
        ([[0.2, 0.8], [0.1, float("nan")]], "contains either `inf`, `nan` or element < 0"),
    ],
)
def test_multinomial_refuses_invalid_probabilities_as_torch(probs, message, device):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=message):
        torch.multinomial(torch.tensor(probs), 1)
    with pytest.raises(RuntimeError, match=message):
        # on a GPU-like device the check is queued and raises at the next read (as id checks do)
        tg.multinomial(tg.tensor(probs, device=device), 1).tolist()


def test_multinomial_sampling_at_temperature_nan_fails_loudly():
    logits = tg.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="`nan`"):
        tg.multinomial((logits / float("nan")).softmax(-1), 1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        tg.multinomial(tg.ones(2, 2, 2), 1)


# ------------------------------------------------------------------ PyTorch's refusals
@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: tg.arange(0, -3, 2), RuntimeError, "inconsistent with step sign"),
        (lambda: tg.arange(0, 3, 0), RuntimeError, "step must be nonzero"),
        (lambda: tg.ones(2).isclose(tg.ones(2), atol=-0.4), RuntimeError, "atol must be greater than or equal to zero"),
        (lambda: tg.ones(2).isclose(tg.ones(2), rtol=-0.4), RuntimeError, "rtol must be greater than or equal to zero"),
        (lambda: tg.linspace(tg.ones(2), tg.ones(2), 3), RuntimeError, "only supports 0-dimensional start"),
        (lambda: F.embedding(tg.tensor([[0, 0]]), tg.ones(1, 1, 1)), ValueError, "'weight' must be 2-D"),
        (lambda: F.avg_pool2d(tg.ones(3, 3, 3), (2, 2), divisor_override=0), RuntimeError, "must not be zero"),
        (lambda: F.conv1d(tg.ones(1, 1, 4), tg.ones(1, 1, 2), tg.ones(1, dtype=tg.float64)), TypeError, "bias is"),
        (lambda: tg.multinomial(tg.ones(2), 0), RuntimeError, "n_sample <= 0"),
        (lambda: tg.multinomial(tg.ones(2), 3), RuntimeError, "without replacement"),
        (lambda: tg.ones(3).normal_(0, -1), RuntimeError, "std >= 0.0"),
        (lambda: tg.ones(2, 3).flatten(1, 0), RuntimeError, "start_dim"),
    ],
)
def test_pytorchs_refusals(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.reference
def test_linspace_takes_a_0d_tensor_value_in_the_requested_dtype():
    """A float32 0-d start gives float64 steps when dtype=float64 (NumPy would compute in float32):
    PyTorch's values, bit for bit."""
    torch = pytest.importorskip("torch")
    start = tg.tensor(4.3, dtype=tg.float32)
    out = tg.linspace(start, -3, 50, dtype=tg.float64).numpy()
    theirs = torch.linspace(torch.tensor(4.3, dtype=torch.float32), -3, 50, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(out, theirs)


def test_multinomial_without_replacement_draws_distinct_classes():
    probs = tg.tensor(np.array([[0.1, 0.2, 0.0, 0.7], [1.0, 1.0, 1.0, 1.0]]))
    firsts = []
    for _ in range(400):
        ids = tg.multinomial(probs, 3).numpy()
        assert all(len(set(row)) == 3 for row in ids) and 2 not in ids[0]  # distinct; probability 0 never drawn
        firsts.append(ids[0, 0])
    freq = np.bincount(firsts, minlength=4) / len(firsts)
    # the first draw is class c with probability p_c: a frequency's sd is <= 0.025 at n = 400, 0.1 is 4 sd
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.0, 0.7], atol=0.1)


def test_softmax_dtype_and_empty_input():
    x = tg.tensor([[1, 2, 3]])  # integers: dtype= casts first, as PyTorch
    for fn in (tg.softmax, F.softmax, tg.log_softmax, F.log_softmax):
        out = fn(x, 1, dtype=tg.float64)
        assert out.dtype == tg.float64 and out.shape == (1, 3)
    assert tg.ones(0, 3).softmax(0).shape == (0, 3) and tg.ones(2, 0).log_softmax(1).shape == (2, 0)
    assert tg.ones(0).logsumexp(0).item() == -np.inf  # PyTorch: an empty sum's log


def test_normalize_takes_p_zero_and_negative_p():
    torch = pytest.importorskip("torch")
    x = np.array([[0.0, 2.0, -3.0], [1.0, 1.0, 0.5]])
    for p in (0.0, -1.0, 0.5):
        t = torch.tensor(x, requires_grad=True)
        y = torch.nn.functional.normalize(t, p=p, dim=1)
        y.backward(torch.ones_like(y))
        ours = tg.tensor(x, requires_grad=True)
        out = F.normalize(ours, p=p, dim=1)
        out.backward(tg.ones(*out.shape, dtype=tg.float64))
        # float64, the same formulas in another order: rounding only
        np.testing.assert_allclose(out.numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ours.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
