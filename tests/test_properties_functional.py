"""Hypothesis property tests of the nn.functional activations, normalisations, losses, distances
and pixel rearrangements over random shapes and options.

Forward values and input gradients against PyTorch (float64, the same formulas: rounding only),
for a random cotangent; pixel_shuffle / pixel_unshuffle and channel_shuffle are also checked as
the permutations they are (each undone by its inverse).  The running statistics of batch and
instance norm are compared with torch.nn's after a few training steps.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# float64 on both sides, the same formulas evaluated in a different order: rounding only.
TOL = {"rtol": 1e-9, "atol": 1e-10}


def check_against_torch(fn, arrays, device, grads=True):
    """fn(lib_functional, *tensors) on tensorgrad and on torch: outputs, and the gradients of
    sum(out * w) for a fixed random cotangent w."""
    ours = [tg.tensor(a, device=device, requires_grad=grads) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=grads) for a in arrays]
    y, ty = fn(F, *ours), fn(TF, *theirs)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **TOL)
    if not grads:
        return
    w = np.random.default_rng(0).standard_normal(ty.shape)
    (y * tg.tensor(w, device=device)).sum().backward()
    torch_grads = torch.autograd.grad((ty * torch.tensor(w)).sum(), theirs, allow_unused=True)
    for ours_x, g in zip(ours, torch_grads):
        expected = np.zeros(ours_x.shape) if g is None else g.numpy()
        got = np.zeros(ours_x.shape) if ours_x.grad is None else ours_x.grad.numpy()
        np.testing.assert_allclose(got, expected, **TOL)


ACTIVATIONS = {
    "selu": lambda F, x: F.selu(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x * 10),
    "hardswish": lambda F, x: F.hardswish(x * 2),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.4),
    "softshrink": lambda F, x: F.softshrink(x, 0.3),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.2, -1.0),
    "softmin": lambda F, x: F.softmin(x, -1),
    "rrelu": lambda F, x: F.rrelu(x, 0.1, 0.3),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@given(x=S.float_arrays(S.shapes(max_dims=3)), device=S.devices(cuda=False))
def test_activation_property(name, x, device):
    check_against_torch(ACTIVATIONS[name], [x], device)


# hardsigmoid is left out: PyTorch's float64 gradient is g * float32(1/6), 3e-8 from g / 6 (ours)
@pytest.mark.parametrize("name", ["hardswish", "relu6", "hardtanh", "hardshrink", "softshrink",
                                  "threshold", "relu", "leaky_relu", "elu", "celu", "softplus"])  # fmt: skip
def test_piecewise_activations_at_their_kinks_match_torch(name):
    """At the points where a piecewise activation changes branch, its gradient takes PyTorch's branch
    (hardswish: 0 at x = -3 and 1 at x = 3); a random float almost never lands there."""
    kinks = [-3.0, -1.0, -0.5, -0.4, -0.3, 0.0, 0.2, 0.3, 0.4, 0.5, 1.0, 3.0, 6.0]
    fns = {"hardswish": lambda F, x: F.hardswish(x),
           "relu6": lambda F, x: F.relu6(x), "hardtanh": lambda F, x: F.hardtanh(x),
           "hardshrink": lambda F, x: F.hardshrink(x, 0.4), "softshrink": lambda F, x: F.softshrink(x, 0.3),
           "threshold": lambda F, x: F.threshold(x, 0.2, -1.0), "relu": lambda F, x: F.relu(x),
           "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1), "elu": lambda F, x: F.elu(x),
           "celu": lambda F, x: F.celu(x), "softplus": lambda F, x: F.softplus(x, 1, 2.0)}  # fmt: skip
    check_against_torch(fns[name], [np.array(kinks)], "cpu")


@given(shape=S.shapes(min_dims=1, max_dims=3), data=st.data(), device=S.devices(cuda=False))
def test_glu_prelu_property(shape, data, device):
    dim = data.draw(st.integers(0, len(shape) - 1))
    shape = shape[:dim] + (2 * shape[dim],) + shape[dim + 1 :]
    x = data.draw(S.float_arrays(shape))
    check_against_torch(lambda F, x: F.glu(x, dim), [x], device)
    slopes = shape[1] if len(shape) >= 2 and data.draw(st.booleans()) else 1
    w = data.draw(S.float_arrays((slopes,), -1, 1))
    check_against_torch(lambda F, x, w: F.prelu(x, w), [x, w], device)


@given(n=st.integers(1, 3), groups=st.integers(1, 3), per=st.integers(1, 2), rest=S.shapes(min_dims=0, max_dims=2),
       data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_normalizations_property(n, groups, per, rest, data, device):
    c = groups * per
    x = data.draw(S.float_arrays((n + 1, c) + rest))  # N >= 2: batch statistics over more than one value
    w, b = data.draw(S.float_arrays((c,))), data.draw(S.float_arrays((c,)))
    check_against_torch(lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b], device)
    check_against_torch(lambda F, x, w, b: F.group_norm(x, groups, w, b), [x, w, b], device)
    if rest and np.prod(rest) > 1:
        check_against_torch(lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), [x, w, b], device)
    k = data.draw(st.integers(1, x.ndim - 1))
    wk = data.draw(S.float_arrays(x.shape[x.ndim - k :]))
    check_against_torch(lambda F, x, w: F.rms_norm(x, w.shape, w), [x, wk], device)
    size = data.draw(st.integers(1, 4))
    if x.ndim >= 3:
        check_against_torch(lambda F, x: F.local_response_norm(x, size, alpha=0.3), [x], device)


@pytest.mark.parametrize("module", ["BatchNorm1d", "InstanceNorm1d"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_running_statistics_match_torch(module, momentum):
    """Three training steps and one eval step: the running buffers and the outputs as torch.nn's."""
    kw = {} if module == "BatchNorm1d" else {"track_running_stats": True, "affine": True}
    ours = getattr(tg.nn, module)(3, momentum=momentum, dtype=tg.float64, **kw)
    theirs = getattr(torch.nn, module)(3, momentum=momentum, dtype=torch.float64, **kw)
    rng = np.random.default_rng(0)
    for step in range(4):
        if step == 3:
            ours.eval(), theirs.eval()
        x = rng.standard_normal((4, 3, 5)) * (step + 1) + step
        np.testing.assert_allclose(ours(tg.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), **TOL)
        np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), **TOL)
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), **TOL)


LOSSES = {
    # target > 0: at t = 0 PyTorch's target gradient is NaN (0 / 0), tensorgrad's log t + 1 - x is taken as 0
    "kl_div": lambda F, x, y: F.kl_div(x, y.abs() + 0.01, reduction="batchmean"),
    "kl_div_log_target": lambda F, x, y: F.kl_div(x, y, reduction="sum", log_target=True),
    "huber_loss": lambda F, x, y: F.huber_loss(x, y, delta=0.8),
    "smooth_l1_loss": lambda F, x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
    "soft_margin_loss": lambda F, x, y: F.soft_margin_loss(x, y.detach().sign()),
    "hinge_embedding_loss": lambda F, x, y: F.hinge_embedding_loss(x, y.sign(), margin=0.5),
    # target > 0: at 0, PyTorch's target gradient of the masked Stirling term is 0 * log 0 = NaN, tensorgrad's 0
    "poisson_nll_loss": lambda F, x, y: F.poisson_nll_loss(x, y.abs() * 3 + 0.5, full=True, reduction="sum"),
    "gaussian_nll_loss": lambda F, x, y: F.gaussian_nll_loss(x, y, x * x + 0.1),
    "margin_ranking_loss": lambda F, x, y: F.margin_ranking_loss(x, y, (x * y).sign(), margin=0.2),
    "multilabel_soft_margin_loss": lambda F, x, y: F.multilabel_soft_margin_loss(x, (y > 0).to(x.dtype)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@given(data=st.data(), device=S.devices(cuda=False))
def test_loss_property(name, data, device):
    shape = data.draw(S.shapes(max_dims=3))
    x, y = data.draw(S.float_arrays(shape)), data.draw(S.float_arrays(shape))
    check_against_torch(LOSSES[name], [x, y], device)


@given(n=st.integers(1, 4), d=st.integers(1, 4), p=st.sampled_from([1.0, 1.5, 2.0, 3.0, float("inf")]),
       data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_distance_property(n, d, p, data, device):
    a, b, c = (data.draw(S.float_arrays((n, d))) for _ in range(3))
    check_against_torch(lambda F, a, b: F.pairwise_distance(a, b, p), [a, b], device)
    dim = data.draw(st.sampled_from([0, 1]))
    check_against_torch(lambda F, a, b, c: F.triplet_margin_loss(a, b, c, margin=2.0, p=p), [a, b, c], device)
    # vectors of norm >= 0.5: cosine_embedding_loss's 1e-12 makes a zero vector's gradient ~1e5 and ill-conditioned,
    # and below cosine_similarity's eps PyTorch clamps the norms outside autograd (its gradient there is neither
    # that of the clamped nor of the unclamped formula)
    u, v = (data.draw(S.float_arrays((n, d), 0.5, 3)) * np.where(c > 0, 1, -1) for _ in range(2))
    check_against_torch(lambda F, u, v: F.cosine_similarity(u, v, dim=dim), [u, v], device)
    check_against_torch(lambda F, u, v, c: F.cosine_embedding_loss(u, v, (c[:, 0] > 0).to(u.dtype) * 2 - 1),
                        [u, v, c], device)  # fmt: skip
    if n > 1:
        check_against_torch(lambda F, a: F.pdist(a, p), [a], device)


@given(r=st.integers(1, 3), batch=S.shapes(min_dims=0, max_dims=2, max_side=2), c=st.integers(1, 2),
       h=st.integers(1, 3), w=st.integers(1, 3), groups=st.integers(1, 3), device=S.devices(cuda=False))  # fmt: skip
def test_pixel_rearrangements_property(r, batch, c, h, w, groups, device):
    x = np.arange(np.prod(batch + (c * r * r * groups, h, w)), dtype=np.float64).reshape(batch + (-1, h, w))
    check_against_torch(lambda F, x: F.pixel_shuffle(x, r), [x], device)
    check_against_torch(lambda F, x: F.pixel_unshuffle(F.pixel_shuffle(x, r), r), [x], device)
    t = tg.tensor(x, device=device)
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(t, r), r).numpy(), x)  # the inverse
    if batch:
        x4 = x.reshape((-1,) + x.shape[-3:])
        check_against_torch(lambda F, x: F.channel_shuffle(x, groups), [x4], device)
        t4 = tg.tensor(x4, device=device)
        back = F.channel_shuffle(F.channel_shuffle(t4, groups), x4.shape[1] // groups)  # shuffling back
        np.testing.assert_array_equal(back.numpy(), x4)


@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 7), st.integers(1, 7)),
       out=st.tuples(st.integers(1, 5), st.integers(1, 5)), data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_adaptive_and_1d_pooling_property(shape, out, data, device):
    x = data.draw(S.distinct_float_arrays(shape))  # distinct: no ties for the maxima to split
    check_against_torch(lambda F, x: F.adaptive_avg_pool2d(x, out), [x], device)
    check_against_torch(lambda F, x: F.adaptive_max_pool2d(x, out), [x], device)
    check_against_torch(lambda F, x: F.adaptive_avg_pool1d(x[0], out[1]), [x], device)
    check_against_torch(lambda F, x: F.adaptive_max_pool1d(x[0], out[1]), [x], device)
    y, idx = F.adaptive_max_pool2d(tg.tensor(x, device=device), out, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), TF.adaptive_max_pool2d(torch.tensor(x), out, True)[1].numpy())
    out3 = (out[0], shape[0], out[1])  # a 3-d pooling of the (C, H, W) planes as depth
    check_against_torch(lambda F, x: F.adaptive_max_pool3d(x, out3), [x], device)
    y, idx = F.adaptive_max_pool3d(tg.tensor(x, device=device), out3, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), TF.adaptive_max_pool3d(torch.tensor(x), out3, True)[1].numpy())
    k = data.draw(st.integers(1, shape[-1]))
    pad = data.draw(st.integers(0, k // 2))
    check_against_torch(lambda F, x: F.max_pool1d(x[0], k, padding=pad), [x], device)
    check_against_torch(lambda F, x: F.avg_pool1d(x[0], k, padding=pad), [x], device)


def test_new_modules_hold_torch_parameters():
    """The modules with parameters or buffers: torch.nn's names and shapes, and forward = their F.*."""
    pairs = [
        ("ConvTranspose1d", (4, 6, 3), {"groups": 2, "stride": 2}, (2, 4, 5)),
        ("Conv3d", (2, 4, (2, 1, 3)), {"padding": 1, "padding_mode": "replicate"}, (1, 2, 3, 4, 5)),
        ("Bilinear", (3, 2, 4), {}, ((5, 3), (5, 2))),
        ("PReLU", (3,), {}, (2, 3, 4)),
        ("BatchNorm2d", (3,), {}, (2, 3, 2, 2)),
        ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4)),
        ("GroupNorm", (2, 4), {}, (2, 4, 3)),
        ("RMSNorm", ((2, 3),), {}, (4, 2, 3)),
    ]
    rng = np.random.default_rng(0)
    for name, args, kw, shape in pairs:
        ours, theirs = getattr(tg.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
        want = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == want, name
        with torch.no_grad():  # the same parameter values on both sides
            for k, v in ours.state_dict().items():
                if v.is_floating_point():
                    theirs.state_dict()[k].copy_(torch.tensor(v.numpy()))
        xs = [rng.standard_normal(s).astype(np.float32) for s in (shape if isinstance(shape[0], tuple) else [shape])]
        np.testing.assert_allclose(ours(*map(tg.tensor, xs)).numpy(), theirs(*map(torch.tensor, xs)).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)  # float32 modules: float32 rounding  # fmt: skip


@given(mode=st.sampled_from(["nearest", "nearest-exact", "bilinear", "bicubic", "area"]),
       shape=st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 6), st.integers(1, 6)),
       out=st.tuples(st.integers(1, 9), st.integers(1, 9)), by_scale=st.booleans(), align=st.booleans(),
       data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_interpolate_property(mode, shape, out, by_scale, align, data, device):
    x = data.draw(S.float_arrays(shape))
    kw = {"align_corners": align} if mode in ("bilinear", "bicubic") else {}
    if by_scale and mode != "area":
        factors = [st.floats(0.3, 3.0).filter(lambda f, n=n: int(n * f) >= 1) for n in shape[2:]]
        kw["scale_factor"] = tuple(data.draw(f) for f in factors)
    else:
        kw["size"] = out
    check_against_torch(lambda F, x: F.interpolate(x, mode=mode, **kw), [x], device)


@given(n=st.integers(1, 4), c=st.integers(1, 5), p=st.sampled_from([1, 2]), seed=st.integers(0, 1000),
       data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_margin_losses_and_bilinear_property(n, c, p, seed, data, device):
    rng = np.random.default_rng(seed)
    x, w = data.draw(S.float_arrays((n, c))), data.draw(S.float_arrays((c,), 0.1, 2))
    ids = rng.integers(0, c, n)
    labels = np.where(rng.random((n, c)) < 0.3, -1, rng.integers(0, c, (n, c)))  # ended by the first -1
    wt = {F: tg.tensor(w, device=device), TF: torch.tensor(w)}  # class weights: constants (PyTorch's are)
    check_against_torch(lambda F, x: F.multi_margin_loss(x, _ids(F, x, ids), p, 0.7, wt[F]), [x], device)
    check_against_torch(lambda F, x: F.multilabel_margin_loss(x, _ids(F, x, labels), reduction="sum"), [x], device)
    a, b = data.draw(S.float_arrays((n, 2))), data.draw(S.float_arrays((n, 3)))
    weight = data.draw(S.float_arrays((c, 2, 3)))
    check_against_torch(lambda F, a, b, weight: F.bilinear(a, b, weight), [a, b, weight], device)


def _ids(F, like, ids):
    """Integer targets for either library, on like's device."""
    return tg.tensor(ids, device=like.device) if F is globals()["F"] else torch.tensor(ids)


@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)),
       kernel=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)), stride=st.integers(1, 2),
       ceil_mode=st.booleans(), include=st.booleans(), data=st.data(), device=S.devices(cuda=False))  # fmt: skip
def test_pool3d_property(shape, kernel, stride, ceil_mode, include, data, device):
    kernel = tuple(min(k, n) for k, n in zip(kernel, shape[1:]))
    padding = tuple(data.draw(st.integers(0, k // 2)) for k in kernel)
    x = data.draw(S.distinct_float_arrays(shape))  # (C, D, H, W), distinct: no ties for the maxima
    kw = {"stride": stride, "padding": padding, "ceil_mode": ceil_mode}
    check_against_torch(lambda F, x: F.max_pool3d(x, kernel, **kw), [x], device)
    check_against_torch(lambda F, x: F.avg_pool3d(x, kernel, count_include_pad=include, **kw), [x], device)
    _, idx = F.max_pool3d(tg.tensor(x, device=device), kernel, return_indices=True, **kw)
    np.testing.assert_array_equal(idx.numpy(), TF.max_pool3d(torch.tensor(x), kernel, return_indices=True, **kw)[1])


@given(x=S.float_arrays(S.shapes(max_dims=3)), bounds=st.tuples(st.floats(0.0, 0.5), st.floats(0.0, 0.5)),
       device=S.devices(cuda=False))  # fmt: skip
def test_rrelu_training_property(x, bounds, device):
    """Training draws one slope per element in [lower, upper] (1 for x > 0); the gradient is that slope.
    (Random: PyTorch's draws differ, so the identities are checked instead of a comparison.)"""
    lower, upper = min(bounds), max(bounds)
    t = tg.tensor(x, device=device, requires_grad=True)
    y = F.rrelu(t, lower, upper, training=True)
    y.sum().backward()
    slope = t.grad.numpy()
    np.testing.assert_array_equal(slope[x > 0], 1.0)
    neg = slope[x <= 0]
    assert ((neg >= lower) & (neg <= upper)).all()
    np.testing.assert_allclose(y.numpy(), x * slope, rtol=1e-15, atol=0)  # y = a x exactly, up to one rounding



@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
       p=st.floats(0.05, 0.95), seed=st.integers(0, 100), device=S.devices(cuda=False))  # fmt: skip
def test_channel_and_alpha_dropout_property(shape, p, seed, device):
    """dropout2d keeps or zeroes whole (n, c) planes (kept ones scaled by 1 / (1 - p)); alpha_dropout's
    outputs are a x + a alpha' p where kept and -a alpha' + a alpha' p where dropped; eval is the identity."""
    x = np.random.default_rng(seed).uniform(0.5, 2.0, shape)  # > 0: a zero output means dropped
    t = tg.tensor(x, device=device)
    tg.manual_seed(seed)
    y = F.dropout2d(t, p, training=True).numpy()
    kept = y[:, :, :1, :1] != 0
    np.testing.assert_allclose(y, np.where(kept, x / (1 - p), 0), rtol=1e-12)
    alpha = 1.0507009873554805 * 1.6732632423543772  # SELU's scale * alpha
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    tg.manual_seed(seed)
    z = F.alpha_dropout(t, p, training=True).numpy()
    dropped = np.isclose(z, -a * alpha + a * alpha * p, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z[~dropped], (a * x + a * alpha * p)[~dropped], rtol=1e-12)
    for f in (F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        np.testing.assert_array_equal(f(t, p, training=False).numpy(), x)
