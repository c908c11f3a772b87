"""tg.Generator against torch.Generator: the API's behaviour (not the numbers: the streams are
tensorgrad's own, the same on every run and machine, and not PyTorch's)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
from tensorgrad.testing import strategies as tgst

torch = pytest.importorskip("torch")  # the reference these tests compare with


def _draws(gen, device="cpu"):
    """One draw of every function that takes generator=, as NumPy arrays, in a fixed order."""
    probs = tg.tensor([0.1, 0.2, 0.7], device=device)
    out = [
        tg.rand(3, generator=gen, device=device),
        tg.randn(2, 2, generator=gen, device=device),
        tg.randint(0, 10, (4,), generator=gen, device=device),
        tg.randperm(6, generator=gen, device=device),
        tg.multinomial(probs, 4, replacement=True, generator=gen),
        tg.normal(1.0, 2.0, size=(3,), generator=gen, device=device),
        tg.normal(tg.zeros(3, device=device), 1.0, generator=gen),
        tg.normal(0.0, tg.ones(3, device=device), generator=gen),
        tg.normal(tg.zeros(2, 1, device=device), tg.ones(3, device=device), generator=gen),
        tg.empty(3, device=device).uniform_(-1, 1, generator=gen),
        tg.empty(3, device=device).normal_(0, 2, generator=gen),
        tg.nn.init.uniform_(tg.empty(3, device=device), generator=gen),
        tg.nn.init.normal_(tg.empty(3, device=device), generator=gen),
    ]
    return [t.numpy() for t in out]


def _assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)  # exact: the same stream makes the same bits


def test_the_api_matches_torch_generator():
    for G in (torch.Generator, tg.Generator):
        g = G()
        assert g.initial_seed() == 67280421310721  # a new generator starts from PyTorch's default seed
        assert str(g.device) == "cpu"
        assert g.manual_seed(5) is g  # manual_seed returns the generator
        assert g.initial_seed() == 5
        assert g.manual_seed(-1).initial_seed() == 2**64 - 1  # negative seeds modulo 2**64
        s = g.seed()
        assert isinstance(s, int) and g.initial_seed() == s
        state = g.get_state()
        assert g.set_state(state) is g  # set_state returns the generator too


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1, 10**23])
def test_a_seed_out_of_range_is_refused_as_torch_refuses_it(seed):
    """[-2**63, 2**64) is PyTorch's range; outside it both raise ValueError ("Overflow when unpacking long long")."""
    for manual_seed in (torch.manual_seed, torch.Generator().manual_seed, tg.manual_seed, tg.Generator().manual_seed):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            manual_seed(seed)
    for end in (2**64 - 1, -(2**63)):  # the ends of the range are accepted by both
        assert torch.Generator().manual_seed(end).initial_seed() == tg.Generator().manual_seed(end).initial_seed()


def test_seed_is_not_deterministic():
    assert len({tg.Generator().seed() for _ in range(4)}) == 4  # 63 random bits each: a repeat is ~2**-60


def test_manual_seed_returns_and_seeds_the_default_generator():
    for lib in (torch, tg):
        assert lib.manual_seed(3) is lib.default_generator
        assert lib.default_generator.initial_seed() == 3
        a = lib.rand(4)
        lib.default_generator.manual_seed(3)
        assert lib.equal(a, lib.rand(4)) if lib is torch else np.array_equal(a.numpy(), lib.rand(4).numpy())


def test_the_default_generator_draws_the_stream_it_always_did():
    """Seeded runs keep their numbers: the CPU default after manual_seed(s) is NumPy's PCG64(s),
    drawn as before Generator existed (tests pin losses and resume on these bits)."""
    tg.manual_seed(1234)
    reference = np.random.Generator(np.random.PCG64(1234))
    np.testing.assert_array_equal(tg.rand(5).numpy(), reference.random(5, dtype=np.float32))
    np.testing.assert_array_equal(tg.randn(3, dtype=tg.float64).numpy(), reference.standard_normal(3))
    np.testing.assert_array_equal(tg.randint(0, 9, (4,)).numpy(), reference.integers(0, 9, size=4))


def test_same_seed_same_stream_on_every_function():
    _assert_same(_draws(tg.Generator().manual_seed(7)), _draws(tg.Generator().manual_seed(7)))
    assert not np.array_equal(_draws(tg.Generator().manual_seed(7))[0], _draws(tg.Generator().manual_seed(8))[0])


def test_a_generators_draws_do_not_advance_the_default():
    tg.manual_seed(0)
    expected = tg.rand(5).numpy()
    tg.manual_seed(0)
    _draws(tg.Generator().manual_seed(1))
    np.testing.assert_array_equal(tg.rand(5).numpy(), expected)


def test_every_function_draws_from_the_generator_it_is_given():
    """Each function's draw depends on the generator's seed, and advances that generator."""
    a, b = _draws(tg.Generator().manual_seed(1)), _draws(tg.Generator().manual_seed(2))
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.size < 4 or not np.array_equal(x, y), i  # 4+ draws: equal by chance at most ~1e-3 (multinomial)
    g = tg.Generator().manual_seed(1)
    first = tg.rand(3, generator=g).numpy()
    assert not np.array_equal(first, tg.rand(3, generator=g).numpy())


def test_get_state_set_state_replays_exactly_through_json():
    g = tg.Generator().manual_seed(11)
    tg.randn(17, generator=g)  # leaves a float32 half-word pending in PCG64's state
    tg.rand(3, generator=g)
    state = json.loads(json.dumps(g.get_state()))  # JSON-able, unlike PyTorch's ByteTensor
    first = _draws(g)
    g.set_state(state)
    _assert_same(first, _draws(g))
    other = tg.Generator().set_state(state)  # a state moves to another generator
    _assert_same(first, _draws(other))


def test_the_default_generator_state_is_get_rng_state():
    tg.manual_seed(4)
    assert tg.default_generator.get_state() == tg.random.get_rng_state("cpu")
    state = tg.default_generator.get_state()
    a = tg.rand(3).numpy()
    tg.random.set_rng_state(state)
    np.testing.assert_array_equal(tg.rand(3).numpy(), a)


def test_errors_as_pytorch():
    g = tg.Generator("strict")  # NumPy behaving as CuPy: a device other than the CPU, on any machine
    assert g.device == "strict"
    pattern = "Expected a 'cpu' device type for generator but found 'strict'"
    for call in (
        lambda: tg.rand(2, generator=g),
        lambda: tg.randn(2, generator=g),
        lambda: tg.randint(3, (2,), generator=g),
        lambda: tg.randperm(3, generator=g),
        lambda: tg.multinomial(tg.ones(3), 1, generator=g),
        lambda: tg.normal(0.0, 1.0, size=(2,), generator=g),
        lambda: tg.normal(tg.zeros(2), 1.0, generator=g),
        lambda: tg.zeros(2).uniform_(generator=g),
        lambda: tg.zeros(2).normal_(generator=g),
        lambda: tg.nn.init.normal_(tg.zeros(2), generator=g),
    ):
        with pytest.raises(RuntimeError, match=pattern):
            call()
    tg.rand(2, generator=g, device="strict")  # its own device is fine
    with pytest.raises(TypeError):
        torch.randn(2, generator=5)
    with pytest.raises(TypeError, match="generator must be"):
        tg.randn(2, generator=5)


def test_randperm_as_torch():
    g = tg.Generator().manual_seed(0)
    p = tg.randperm(50, generator=g)
    assert p.dtype == torch_dtype_name(torch.randperm(50).dtype) and sorted(p.numpy()) == list(range(50))
    assert tg.randperm(0).shape == (0,) and tg.randperm(4, dtype=tg.float32).dtype == tg.float32
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match="negative dimension"):
            lib.randperm(-1)


def torch_dtype_name(dtype):
    return tg.backend.as_dtype(str(dtype).removeprefix("torch."))


def test_normal_forms_shapes_dtypes_and_errors_as_torch():
    cases = [
        lambda lib: lib.normal(2.0, 3.0, size=(2, 3)),
        lambda lib: lib.normal(lib.zeros(4, dtype=lib.float64), 1.0),
        lambda lib: lib.normal(0.5, lib.ones(2, 2)),
        lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
    ]
    for case in cases:
        t, ours = case(torch), case(tg)
        assert tuple(t.shape) == ours.shape and torch_dtype_name(t.dtype) == ours.dtype
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            lib.normal(0.0, -1.0, size=(2,))
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            lib.normal(lib.zeros(2), -1.0)
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0]))
        with pytest.raises(TypeError):
            lib.normal(0.0, 1.0)  # a float mean and std need a size
        with pytest.raises(NotImplementedError):
            lib.normal(lib.zeros(2, dtype=lib.int64), 1.0)


def test_normal_is_mean_plus_std_times_the_generators_normals():
    z = tg.randn(4, dtype=tg.float64, generator=tg.Generator().manual_seed(3)).numpy()
    mean, std = tg.tensor([0.0, 1.0, 2.0, 3.0], dtype=tg.float64), tg.tensor([1.0, 0.5, 2.0, 0.0], dtype=tg.float64)
    out = tg.normal(mean, std, generator=tg.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(out, mean.numpy() + std.numpy() * z)  # the same arithmetic in float64: exact
    big = tg.normal(5.0, 2.0, size=(100_000,), generator=tg.Generator().manual_seed(0)).numpy()
    # The sample mean's standard error is 2 / sqrt(1e5) ~ 0.0063 and the sample std's ~0.0045: 5 sigma.
    assert abs(big.mean() - 5.0) < 0.032 and abs(big.std() - 2.0) < 0.023


_DRAWS = {
    "rand": lambda g, shape, dev: tg.rand(shape, generator=g, device=dev),
    "randn": lambda g, shape, dev: tg.randn(shape, generator=g, dtype=tg.float64, device=dev),
    "randint": lambda g, shape, dev: tg.randint(-5, 5, shape, generator=g, device=dev),
    "randperm": lambda g, shape, dev: tg.randperm(shape[0], generator=g, device=dev),
    "multinomial": lambda g, shape, dev: tg.multinomial(tg.ones(shape, device=dev), 2, replacement=True, generator=g),
    "normal": lambda g, shape, dev: tg.normal(0.0, 1.0, size=shape, generator=g, device=dev),
    "uniform_": lambda g, shape, dev: tg.empty(shape, device=dev).uniform_(generator=g),
    "normal_": lambda g, shape, dev: tg.empty(shape, device=dev).normal_(generator=g),
}


@given(
    seed=st.integers(-(2**63), 2**64 - 1),
    steps=st.lists(st.tuples(st.sampled_from(sorted(_DRAWS)), tgst.shapes(max_dims=2), st.booleans()), max_size=12),
    device=tgst.devices(cuda=False),
)
def test_identically_seeded_generators_agree_whatever_the_default_draws(seed, steps, device):
    """Two generators with one seed give the same numbers for any sequence of draws (of any
    shape), and draws from the default generator in between (on one side only) change neither
    their streams nor the default's own."""
    a, b = tg.Generator(device).manual_seed(seed), tg.Generator(device).manual_seed(seed)
    tg.manual_seed(0)
    default_alone = iter([tg.rand(2, device=device).numpy() for _ in steps])
    tg.manual_seed(0)
    for name, shape, interleave in steps:
        if interleave:
            np.testing.assert_array_equal(tg.rand(2, device=device).numpy(), next(default_alone))
        np.testing.assert_array_equal(_DRAWS[name](a, shape, device).numpy(), _DRAWS[name](b, shape, device).numpy())


def test_calculate_gain_as_torch():
    for name, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                        ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 0), ("selu", None)]:  # fmt: skip
        assert tg.nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for lib in (torch, tg):
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.calculate_gain("swish")


@pytest.mark.parametrize("shape", [(8, 5), (6, 4, 3, 3)])
def test_xavier_and_kaiming_scale_as_torch_from_the_generator(shape):
    """Each draws from its generator= exactly what uniform_ / normal_ draw with torch's bound or
    std (computed here from torch's own fan and gain helpers)."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    gain = torch.nn.init.calculate_gain("leaky_relu", 0.1)
    stds = {
        "xavier": 1.5 * (2.0 / (fan_in + fan_out)) ** 0.5,
        "kaiming_in": gain / fan_in**0.5,
        "kaiming_out": gain / fan_out**0.5,
    }
    init = tg.nn.init
    cases = [
        (lambda w, g: init.xavier_uniform_(w, gain=1.5, generator=g), "uniform", stds["xavier"]),
        (lambda w, g: init.xavier_normal_(w, gain=1.5, generator=g), "normal", stds["xavier"]),
        (lambda w, g: init.kaiming_uniform_(w, a=0.1, generator=g), "uniform", stds["kaiming_in"]),
        (lambda w, g: init.kaiming_normal_(w, a=0.1, mode="fan_out", generator=g), "normal", stds["kaiming_out"]),
    ]
    for fill, kind, std in cases:
        ours = fill(tg.empty(shape, dtype=tg.float64), tg.Generator().manual_seed(2)).numpy()
        g = tg.Generator().manual_seed(2)
        w = tg.empty(shape, dtype=tg.float64)
        bound = 3**0.5 * std  # U(-b, b) has variance b^2 / 3
        expected = (
            init.uniform_(w, -bound, bound, generator=g) if kind == "uniform" else init.normal_(w, 0, std, generator=g)
        )
        # The bound or std agrees with torch's formula up to float64 rounding of its square roots.
        np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-14, atol=0)


def test_init_errors_as_torch():
    for lib in (torch, tg):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init.xavier_uniform_(lib.empty(3))
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            lib.nn.init.kaiming_normal_(lib.empty(3, 2), mode="fan_avg")
