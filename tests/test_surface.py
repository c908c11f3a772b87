"""The PyTorch surface that course notebooks use (issue 20, item 5): F.one_hot, keepdims=,
nelement, log10 / log2 / exp2, histogram / histc, np.asarray(t), iter() of a 0-d tensor and
tensorgrad.nn.parallel as an attribute.  Each is compared with PyTorch (torch CPU), and has a
hypothesis property.  (The gradients of log10 / log2 / exp2 are checked by the op table.)"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

torch = pytest.importorskip("torch")  # the reference these tests compare with


def raises_like(fn_tg, fn_torch):
    """Both raise; the same type and message."""
    with pytest.raises(Exception) as theirs:
        fn_torch()
    with pytest.raises(type(theirs.value)) as ours:
        fn_tg()
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------ F.one_hot
@pytest.mark.parametrize(
    "ids, num_classes",
    [([0, 2, 1], -1), ([0, 2, 1], 5), ([[1, 0], [3, 3]], -1), (2, 4), ([], 3), (np.zeros((2, 0), np.int64), 2)],
)
def test_one_hot_matches_torch(ids, num_classes):
    ours = F.one_hot(tg.tensor(ids, dtype=tg.int64), num_classes)
    theirs = torch.nn.functional.one_hot(torch.tensor(ids, dtype=torch.int64), num_classes)
    assert ours.dtype == tg.int64 and ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "ids, num_classes, dtype",
    [
        ([1, -1], -1, "int64"),
        ([1, 3], 3, "int64"),
        ([1, 2], -2, "int64"),
        ([], -1, "int64"),
        ([], 0, "int64"),
        ([1, 2], 3, "int32"),
    ],
)
def test_one_hot_errors_match_torch(ids, num_classes, dtype):
    raises_like(
        lambda: F.one_hot(tg.tensor(ids, dtype=getattr(tg, dtype)), num_classes),
        lambda: torch.nn.functional.one_hot(torch.tensor(ids, dtype=getattr(torch, dtype)), num_classes),
    )


@given(st.lists(st.integers(0, 6), min_size=1, max_size=20), st.integers(0, 3))
def test_one_hot_property(ids, extra):
    """Each row has one 1, at the class index; the width is max + 1 (+ extra when given)."""
    n = max(ids) + 1 + extra
    out = F.one_hot(tg.tensor(ids, dtype=tg.int64), n if extra else -1).numpy()
    assert out.shape == (len(ids), n)
    np.testing.assert_array_equal(out.sum(-1), 1)
    np.testing.assert_array_equal(out.argmax(-1), ids)


# ------------------------------------------------------------------ keepdims=
REDUCTIONS = ["sum", "mean", "amax", "amin", "max", "min", "var", "std", "prod", "logsumexp", "all", "any", "argmax",
              "argmin"]  # fmt: skip


def values(r):
    return r[0] if isinstance(r, tuple) else r  # max / min with a dim: (values, indices)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("form", ["method", "function"])
def test_keepdims_is_keepdim_as_in_torch(name, form):
    x = np.arange(1.0, 13.0).reshape(3, 4) % 5  # zeros, for all / any
    ours = (
        getattr(tg.tensor(x), name)(1, keepdims=True)
        if form == "method"
        else getattr(tg, name)(tg.tensor(x), 1, keepdims=True)
    )
    theirs = getattr(torch.tensor(x), name)(1, keepdims=True)
    np.testing.assert_allclose(values(ours).numpy(), values(theirs).numpy(), rtol=1e-12)  # float64, same sums
    assert values(ours).shape == tuple(values(theirs).shape) == (3, 1)


def test_keepdim_and_keepdims_together_raise_type_error():
    with pytest.raises(TypeError):
        torch.ones(2).sum(0, keepdim=True, keepdims=True)
    with pytest.raises(TypeError):
        tg.ones(2).sum(0, keepdim=True, keepdims=True)


@given(S.array_and_reduce_dims(), st.sampled_from(["sum", "mean", "amax", "amin", "var", "std", "logsumexp"]),
       st.booleans())  # fmt: skip
def test_keepdims_property(array_dim, name, keep):
    """keepdims=k gives exactly what keepdim=k gives, for every dim a reduction takes."""
    array, dim = array_dim
    x = tg.tensor(array)
    if dim is None and name == "logsumexp":  # its dim is required, as in PyTorch: every dim, spelled out
        dim = tuple(range(array.ndim))
    np.testing.assert_array_equal(
        getattr(x, name)(dim, keepdims=keep).numpy(), getattr(x, name)(dim, keepdim=keep).numpy()
    )


# ------------------------------------------------------------------ nelement, log10 / log2 / exp2
@pytest.mark.parametrize("shape", [(), (0,), (2, 3, 4)])
def test_nelement(shape):
    assert tg.zeros(shape).nelement() == torch.zeros(shape).nelement()


@pytest.mark.parametrize("name", ["log10", "log2", "exp2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log10_log2_exp2_match_torch(name, dtype):
    x = np.array([0.0, 0.5, 1.0, 8.0, 1000.0, -1.0])
    with np.errstate(all="ignore"):
        ours = getattr(tg.tensor(x, dtype=getattr(tg, dtype)), name)()
        ours_fn = getattr(tg, name)(tg.tensor(x, dtype=getattr(tg, dtype)))
    theirs = getattr(torch.tensor(x, dtype=getattr(torch, dtype)), name)()
    assert ours.dtype == getattr(tg, dtype)
    # one correctly rounded libm call on each side: a few ulp of float32 at most
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(ours.numpy(), ours_fn.numpy())


def test_log10_of_integers_is_float_as_in_torch():
    assert tg.tensor([10, 100]).log10().dtype == tg.float32 == tg.tensor([1.0]).dtype
    theirs = torch.tensor([10, 100]).log10().numpy()
    np.testing.assert_allclose(tg.tensor([10, 100]).log10().numpy(), theirs, rtol=2.4e-7)  # 2 float32 ulp: libm's


@given(S.float_arrays(low=-4.0, high=4.0))
def test_log2_exp2_inverse_property(array):
    """log2(exp2(x)) == x and log10(10^x) == x, to float64 rounding."""
    x = tg.tensor(array)
    np.testing.assert_allclose(x.exp2().log2().numpy(), array, atol=1e-12)  # float64, two roundings
    np.testing.assert_allclose((10.0**x).log10().numpy(), array, atol=1e-12)


# ------------------------------------------------------------------ histogram, histc
HIST_CASES = [
    ([1.0, 2, 1, 4], 4, {}),
    ([1.0, 1.0], 2, {}),
    ([], 2, {}),
    (2.0, 3, {}),
    ([1.0, 2, 3], [0.0, 1.5, 5], {"density": True}),
    ([1.0, 2, 3], 3, {"range": (0.0, 2.0), "weight": [1.0, 2, 3]}),
    ([0.1, 0.5, 0.9, 1.0, 5.0, -1.0], 5, {"range": (0.0, 1.0), "density": True}),
]


@pytest.mark.parametrize("x, bins, kw", HIST_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_matches_torch(x, bins, kw, dtype):
    def run(lib):
        t = lambda v: lib.tensor(v, dtype=getattr(lib, dtype))  # noqa: E731
        args = {k: t(v) if k == "weight" else v for k, v in kw.items()}
        return lib.histogram(t(x), t(bins) if isinstance(bins, list) else bins, **args)

    ours, theirs = run(tg), run(torch)
    assert type(ours).__name__ == "histogram" and ours._fields == ("hist", "bin_edges")
    assert ours.hist.dtype == getattr(tg, dtype)
    # same edges by the same linspace; float32 rounding of the density's division
    np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "x, kw",
    [
        ([1.0, 2, 1, 4], {"bins": 4}),
        ([1.0, 1.0], {"bins": 2}),
        ([], {}),
        ([0.0, 0.5, 2.0, 3.0], {"bins": 3, "min": 0, "max": 2}),
    ],
)
def test_histc_matches_torch(x, kw):
    ours, theirs = tg.histc(tg.tensor(x), **kw), torch.histc(torch.tensor(x), **kw)
    assert ours.dtype == tg.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.histc(lib.tensor([1.0, 2]), 3, min=3, max=1),
        lambda lib: lib.histogram(lib.tensor([1.0, 2]), 0),
        lambda lib: lib.histogram(lib.tensor([1.0, 2]), 2, range=(2.0, 1.0)),
    ],
)
def test_histogram_errors_match_torch(fn):
    raises_like(lambda: fn(tg), lambda: fn(torch))


def test_histogram_has_no_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    assert not tg.histogram(x, 2).hist.requires_grad and not tg.histc(x, 2).requires_grad


@given(S.float_arrays(), st.integers(1, 12))
def test_histogram_property(array, bins):
    """Every value is counted once; counts and edges equal PyTorch's on the same float64 data, ties on
    an edge included (the edges are PyTorch's linspace, fused multiply-adds and all); density integrates to 1."""
    hist, edges = tg.histogram(tg.tensor(array), bins)
    theirs = torch.histogram(torch.tensor(array), bins)
    np.testing.assert_array_equal(edges.numpy(), theirs.bin_edges.numpy())
    np.testing.assert_array_equal(hist.numpy(), theirs.hist.numpy())
    assert hist.numpy().sum() == array.size
    density = tg.histogram(tg.tensor(array), bins, density=True).hist.numpy()
    np.testing.assert_allclose((density * np.diff(edges.numpy())).sum(), 1.0, rtol=1e-12)  # float64 sums


# ------------------------------------------------------------------ __array__, iter
def test_array_protocol_as_torch():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(x), np.asarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray(tg.tensor(3)).shape == ()
    raises_like(
        lambda: np.asarray(tg.ones(2, requires_grad=True)), lambda: np.asarray(torch.ones(2, requires_grad=True))
    )
    np.testing.assert_array_equal(np.asarray(tg.ones(2, requires_grad=True).detach()), [1.0, 1.0])


def test_array_protocol_lets_matplotlib_draw_a_tensor():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    image = plt.imshow(tg.rand(4, 5))
    assert image.get_array().shape == (4, 5)
    plt.close("all")


@given(S.tensors())
def test_array_protocol_property(t):
    """np.asarray(t) is t.numpy(), shape, dtype and values."""
    a = np.asarray(t)
    assert a.shape == t.shape and a.dtype == t.dtype
    np.testing.assert_array_equal(a, t.numpy())


def test_iter_of_0d_raises_at_once_as_torch():
    raises_like(lambda: iter(tg.tensor(1.0)), lambda: iter(torch.tensor(1.0)))
    assert [v.item() for v in tg.tensor([1.0, 2.0])] == [1.0, 2.0]
    assert list(tg.zeros(0, 3)) == []


# ------------------------------------------------------------------ tensorgrad.nn.parallel
def test_nn_parallel_is_an_attribute_after_import_tensorgrad():
    code = "import tensorgrad; print(tensorgrad.nn.parallel.DistributedDataParallel.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "DistributedDataParallel"
