"""The backend boundary, devices, the strict guard, random numbers and creation functions."""

from __future__ import annotations

import ast
import pathlib
import sys
import types

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad import backend
from tensorgrad.backend import cuda_setup
from tensorgrad.backend import strict as backend_strict
from tensorgrad.ops import embedding, indexing

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (setup.cfg's test extra installs it)
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
ENGINE = ROOT / "tensorgrad"
ARRAY_LIBS = {"numpy", "cupy", "cupyx", "numba"}
BACKEND = ENGINE / "backend"  # the backend package
KERNELS = ENGINE / "kernels"  # the kernels are written against their device's arrays


# ------------------------------------------------------------------ the boundary
def _imported_modules(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            if isinstance(node.args[0], ast.Constant):
                yield node.lineno, node.args[0].value


def test_only_the_backend_imports_numpy_or_cupy():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        if path.parent == BACKEND or path.parent == KERNELS:
            continue
        if ENGINE / "kernels" in path.parents:  # the kernels are written against their device's arrays
            continue
        for lineno, module in _imported_modules(path):
            if module.split(".")[0] in ARRAY_LIBS:
                offenders.append(f"{path.relative_to(ROOT)}:{lineno} imports {module}")
    assert not offenders, "only tensorgrad/backend/ and kernels/ may import numpy/cupy/numba:\n" + "\n".join(offenders)


def test_the_scan_would_catch_an_import(tmp_path):
    bad = tmp_path / "op.py"
    bad.write_text("import os\nfrom numpy import exp\nimport cupy as cp\n")
    assert [m for _, m in _imported_modules(bad) if m.split(".")[0] in ARRAY_LIBS] == ["numpy", "cupy"]


def test_ruff_bans_numpy_and_cupy_outside_the_backend():
    config = tomllib.loads((ROOT / "ruff.toml").read_text())
    lint = config["lint"]
    assert "TID251" in lint["select"]
    banned = lint["flake8-tidy-imports"]["banned-api"]
    assert {"numpy", "cupy", "cupyx", "numba"} <= set(banned)
    ignores = lint["per-file-ignores"]
    assert "TID251" in ignores["tensorgrad/backend/*"]
    assert "TID251" in ignores["tensorgrad/kernels/*"]


# ------------------------------------------------------------------ the strict guard
def test_strict_refuses_implicit_host_conversion():
    a = tg.ones(3, device="strict")._data
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.exp(a)  # a NumPy ufunc on a device array
    with pytest.raises(TypeError):
        np.concatenate([a, a])


def test_strict_refuses_mixing_with_numpy():
    a = tg.ones(3, device="strict")._data
    with pytest.raises(TypeError, match="host NumPy array was mixed"):
        a + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) + a
    with pytest.raises(TypeError, match="host NumPy array"):
        backend_strict.xp.where(a > 0, np.zeros(3), a)


def test_strict_allows_what_cupy_allows():
    a = tg.tensor([1.0, 2.0], device="strict")._data
    assert isinstance(a + 1.5, backend_strict.StrictArray)
    assert isinstance(a * np.float32(2.0), backend_strict.StrictArray)  # NumPy scalars are fine
    assert float(a[0]) == 1.0 and a.sum().item() == 3.0
    np.testing.assert_array_equal(backend.to_numpy(a), [1.0, 2.0])  # the explicit transfer


# ------------------------------------------------------------------ devices
def test_ops_that_mix_devices_name_the_op_and_both_devices():
    x = tg.randn(2, 3, device="strict")
    mask = tg.tensor(np.triu(np.ones((2, 3), dtype=bool), 1))  # left on the CPU: the classic mistake
    with pytest.raises(tg.DeviceError, match=r"MaskedFill.*strict.*cpu"):
        x.masked_fill(mask, float("-inf"))
    with pytest.raises(tg.DeviceError, match=r"Add.*cpu.*strict"):
        tg.randn(3) + tg.randn(3, device="strict")
    with pytest.raises(tg.DeviceError, match=r"MatMul.*strict.*cpu"):
        x @ tg.randn(3, 2)
    with pytest.raises(tg.DeviceError, match=r"Cat.*cpu.*strict"):
        tg.cat([tg.randn(3), tg.randn(3, device="strict")])
    with pytest.raises(tg.DeviceError, match=r"Embedding.*cpu.*strict"):
        F.embedding(tg.tensor([0, 1]), tg.randn(4, 2, device="strict"))
    with pytest.raises(tg.DeviceError, match=r"Where.*cpu.*strict"):
        tg.where(tg.tensor([True, False]), tg.randn(2, device="strict"), 0.0)
    with pytest.raises(tg.DeviceError, match=r"strict.*cpu"):
        x[tg.tensor([0, 1])]


def test_device_error_is_a_runtime_error():
    assert issubclass(tg.DeviceError, RuntimeError)


def _reset_cupy(monkeypatch, module):
    monkeypatch.setattr(cuda_setup, "_cupy", None)
    monkeypatch.setitem(sys.modules, "cupy", module)


def test_cuda_without_cupy_is_one_clear_sentence(monkeypatch):
    _reset_cupy(monkeypatch, None)  # `import cupy` now raises ImportError
    with pytest.raises(tg.DeviceError) as info:
        tg.zeros(3, device="cuda")
    msg = str(info.value)
    assert "CuPy" in msg and "not installed" in msg and "pip install" in msg and "cuda12" in msg
    assert "\n" not in msg
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no ImportError traceback
    assert not tg.cuda.is_available()


def test_cuda_without_a_gpu_is_one_clear_sentence(monkeypatch):
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)
    _reset_cupy(monkeypatch, fake)
    with pytest.raises(tg.DeviceError, match=r"no usable NVIDIA GPU.*device='cpu'") as info:
        tg.tensor([1.0, 2.0], device="cuda")
    assert "\n" not in str(info.value)
    assert not tg.cuda.is_available()


def test_cuda_with_a_broken_driver(monkeypatch):
    def broken():
        raise RuntimeError("cudaErrorInsufficientDriver")

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(is_available=broken)
    _reset_cupy(monkeypatch, fake)
    with pytest.raises(tg.DeviceError, match="no usable NVIDIA GPU"):
        tg.randn(2, device="cuda")


def test_unknown_devices():
    with pytest.raises(tg.DeviceError, match="unknown device 'tpu'"):
        tg.zeros(2, device="tpu")
    with pytest.raises(tg.DeviceError, match="only one GPU"):
        tg.zeros(2, device="cuda:1")


def test_numpy_returns_a_copy_from_any_device(device):
    t = tg.tensor(np.array([1.0, 2.0]), device=device)
    a = t.numpy()
    assert type(a) is np.ndarray
    a[0] = 100.0
    assert t.numpy()[0] == 1.0
    assert t.tolist() == [1.0, 2.0] and tg.tensor(np.array(3.5), device=device).item() == 3.5


def test_to_device_round_trip(device):
    x = tg.tensor(np.arange(6.0).reshape(2, 3))
    y = x.to(device)
    assert y.device == device
    np.testing.assert_array_equal(y.to("cpu").numpy(), x.numpy())
    assert x.to("cpu") is x


# ------------------------------------------------------------------ random numbers
def _draws(device):
    probs = tg.tensor(np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]), device=device)
    x = tg.ones(4, 5, device=device)
    return [
        tg.randn(3, 4, device=device).numpy(),
        tg.rand(5, device=device).numpy(),
        tg.randint(0, 10, (6,), device=device).numpy(),
        tg.multinomial(probs, 3, replacement=True).numpy(),
        F.dropout(x, 0.5).numpy(),
    ]


def test_manual_seed_makes_every_random_op_reproducible(device):
    tg.manual_seed(1234)
    a = _draws(device)
    tg.manual_seed(1234)
    b = _draws(device)
    tg.manual_seed(4321)
    c = _draws(device)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[4], c[4])


def test_random_dtypes_and_ranges(device):
    assert tg.randn(2, device=device).dtype == tg.float32
    assert tg.randn(2, dtype=tg.float64, device=device).dtype == tg.float64
    u = tg.rand(10000, device=device).numpy()
    assert u.min() >= 0 and u.max() < 1
    r = tg.randint(3, 7, (10000,), device=device)
    assert r.dtype == tg.int64 and set(np.unique(r.numpy())) == {3, 4, 5, 6}
    assert tg.randint(5, (2, 3)).shape == (2, 3)
    assert tg.randn(3, requires_grad=True).requires_grad


def test_multinomial_frequencies_match_probs(device):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n = 20000
    ids = tg.multinomial(tg.tensor(p * 5, device=device), n, replacement=True).numpy()  # unnormalised
    assert ids.shape == (n,) and ids.dtype == np.int64 and ids.min() >= 0 and ids.max() <= 3
    freq = np.bincount(ids, minlength=4) / n
    # the standard deviation of a frequency is sqrt(p(1-p)/n) <= 0.0035 here: 0.02 is over 5 sigma
    np.testing.assert_allclose(freq, p, atol=0.02)


def test_multinomial_zero_probability_is_never_drawn(device):
    probs = tg.tensor(np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]), device=device)
    ids = tg.multinomial(probs, 2000, replacement=True).numpy()
    assert set(np.unique(ids[0])) == {1} and set(np.unique(ids[1])) == {0, 2}
    one = tg.multinomial(probs, 1)
    assert one.shape == (2, 1)


# ------------------------------------------------------------------ creation against torch
# Range factories: PyTorch's CPU values bit for bit (tensorgrad/ops/ranges.py), each case (name, args,
# kwargs) with the dtype as a name.  Integer dtypes truncate start / end / step toward zero first and
# each value after (linspace: start + step * i with one fused rounding), floats are those of PyTorch's
# loops (linspace's fused multiply-add, arange's vectors of 4 doubles / 8 floats).
RANGE_CASES = [
    ("linspace", (5, -5, 20), "int32"),
    ("linspace", (-5, 5, 20), "int64"),
    ("linspace", (0, -10, 7), "int16"),
    ("linspace", (0.5, 9.7, 6), "int32"),
    ("linspace", (-7.5, 7.5, 8), "int8"),
    ("linspace", (41, -40, 16), "int32"),
    ("linspace", (-3, 3, 4), "uint8"),  # -3 wraps to 253, as an integer Scalar does
    ("linspace", (5, -5, 20), "uint8"),
    ("linspace", (2.7, 1, 1), "int32"),
    ("linspace", (29.740424755430283, -32.699259842094904, 15), "float32"),
    ("linspace", (23, -47, 20), "float64"),
    ("linspace", (24.314666042249783, 14, 17), "float16"),
    ("linspace", (0, 1, 0), "int8"),
    ("arange", (-5, 5, 0.7), "int32"),  # the step truncates to 0: 15 copies of -5, as PyTorch
    ("arange", (2.5,), "int64"),  # int64 counts from the truncated end: [0, 1]
    ("arange", (0.5, 10, 3), "int16"),
    ("arange", (-3.7, 4.2, 1.1), "uint8"),  # -3 wraps to 253
    ("arange", (-14, 11, 3.0782657784080567), "int16"),
    ("arange", (-5, 5, 0.7), "float32"),
    ("arange", (-3.7, 4.2, 1.1), "float32"),
    ("arange", (0, 1, 0.1), "float32"),
    ("arange", (-48, 6, 1.7379105796080279), "float64"),
    ("arange", (5, -5, -0.3), "float64"),
    ("arange", (-19.666775295008897, 46.33307429972494, 1), "float32"),
    ("logspace", (0.5, 3.7, 4), "int64"),
    ("logspace", (-1, 2, 7, 2), "int16"),
    ("logspace", (0, 3, 4, 2.5), "int64"),
    ("logspace", (2, -2.578928448980339, 15), "int32"),
    ("logspace", (2.5, 1, 1), "int16"),  # one step: base ** start, not truncated first (316)
    ("logspace", (0, 3, 31), "float32"),
]
RANGE_REFUSALS = [
    ("linspace", (-1.5, 1, 3), "uint8", RuntimeError),  # a negative float into uint8 overflows
    ("linspace", (300, 1, 3), "uint8", RuntimeError),
    ("linspace", (1e10, 1, 3), "int32", RuntimeError),
    ("linspace", (0, 1, 3), "bool", NotImplementedError),
    ("linspace", (0, 1, -1), "float32", RuntimeError),
    ("arange", (0.5, 3.7, 0.5), "int64", ValueError),  # the step truncates to 0
    ("arange", (0, 3), "bool", NotImplementedError),
    ("arange", (0, float("inf")), "float32", RuntimeError),
    ("logspace", (3, 1, 1), "int8", RuntimeError),  # 1000 does not fit
]


@pytest.mark.reference
@pytest.mark.parametrize("name, args, dtype", RANGE_CASES)
def test_range_factories_match_torch_to_the_bit(device, name, args, dtype):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch, name)(*args, dtype=getattr(torch, dtype))
    ours = getattr(tg, name)(*args, dtype=getattr(tg, dtype), device=device)
    assert ours.dtype == getattr(tg, dtype) and ours.shape == tuple(theirs.shape)
    if name == "logspace" and dtype.startswith("float"):
        # NumPy's vectorised pow and libm's std::pow (PyTorch's) differ by an ulp: then rounded to float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1.2e-7, atol=0)
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.reference
@pytest.mark.parametrize("name, args, dtype, error", RANGE_REFUSALS)
def test_range_factories_refuse_as_torch(name, args, dtype, error):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        getattr(torch, name)(*args, dtype=getattr(torch, dtype))
    with pytest.raises(error):
        getattr(tg, name)(*args, dtype=getattr(tg, dtype))


@pytest.mark.reference
@given(
    name=st.sampled_from(["linspace", "arange"]),
    ends=st.tuples(
        st.one_of(st.integers(-60, 60), st.floats(-60, 60)), st.one_of(st.integers(-60, 60), st.floats(-60, 60))
    ),
    size=st.integers(0, 70),
    dtype=st.sampled_from(["int8", "int16", "int32", "int64", "float32", "float64"]),
)
def test_range_factories_property(name, ends, size, dtype):
    """Any bounds, any count (arange: a step giving about `size` values), any integer or float dtype:
    PyTorch's values bit for bit (or both refuse)."""
    torch = pytest.importorskip("torch")
    start, end = ends
    args = (start, end, size) if name == "linspace" else (start, end, (end - start) / size if size else 1)
    assume(name == "linspace" or args[2] != 0)

    def run(lib):
        try:
            return getattr(lib, name)(*args, dtype=getattr(lib, dtype)).numpy()
        except (RuntimeError, ValueError) as e:
            return type(e)

    ours, theirs = run(tg), run(torch)
    if isinstance(theirs, type):
        assert ours is theirs
    else:
        assert not isinstance(ours, type), ours
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.reference
def test_creation_matches_torch(device):
    torch = pytest.importorskip("torch")
    pairs = [
        (tg.zeros(2, 3, device=device), torch.zeros(2, 3)),
        (tg.ones((2, 3), dtype=tg.float64, device=device), torch.ones((2, 3), dtype=torch.float64)),
        (tg.zeros(4, dtype=tg.int64, device=device), torch.zeros(4, dtype=torch.int64)),
        (tg.full((2, 2), 1.5, device=device), torch.full((2, 2), 1.5)),
        (tg.full((2, 2), 7, device=device), torch.full((2, 2), 7)),
        (tg.full((3,), True, device=device), torch.full((3,), True)),
        (tg.arange(5, device=device), torch.arange(5)),
        (tg.arange(2, 11, 3, device=device), torch.arange(2, 11, 3)),
        (tg.arange(0.0, 2.0, 0.5, device=device), torch.arange(0.0, 2.0, 0.5)),
        (tg.arange(5, dtype=tg.float64, device=device), torch.arange(5, dtype=torch.float64)),
        (
            tg.zeros_like(tg.ones(2, 3, dtype=tg.int32), device=device),
            torch.zeros_like(torch.ones(2, 3, dtype=torch.int32)),
        ),
        (
            tg.ones_like(tg.zeros(3, dtype=tg.float64, device=device)),
            torch.ones_like(torch.zeros(3, dtype=torch.float64)),
        ),
        (tg.full_like(tg.zeros(2, device=device), 3.0), torch.full_like(torch.zeros(2), 3.0)),
    ]
    x = np.arange(1.0, 25.0).reshape(2, 3, 4)
    for k in (-1, 0, 1, 2):
        pairs.append((tg.tril(tg.tensor(x, device=device), k), torch.tril(torch.tensor(x), k)))
        pairs.append((tg.triu(tg.tensor(x, device=device), k), torch.triu(torch.tensor(x), k)))
    ones = np.ones((3, 5), dtype=np.float32)
    pairs.append((tg.tril(tg.tensor(ones, device=device)), torch.tril(torch.tensor(ones))))
    pairs.append((tg.triu(tg.tensor(ones, device=device), 2), torch.triu(torch.tensor(ones), 2)))
    for k, (ours, theirs) in enumerate(pairs):
        assert ours.device == device, k
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), (k, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=str(k))


def test_tril_gradient(device):
    x = tg.tensor(np.ones((3, 3)), device=device, requires_grad=True)
    tg.tril(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.tril(np.ones((3, 3))))


def test_embedding_backward_scatter_add_path_matches_one_hot(device, monkeypatch):
    """Large tables use a scatter-add instead of the one-hot matmul: both accumulate repeats."""
    ids = tg.tensor(np.array([3, 1, 3, 3, 0]), device=device)
    g = np.random.default_rng(0).standard_normal((5, 2))
    xp = backend.namespace(device)
    gd = tg.tensor(g, device=device)._data
    one_hot = backend.to_numpy(embedding.embedding_backward(xp, ids._data, gd, 4))
    monkeypatch.setattr(embedding, "_ONE_HOT_LIMIT", 0)
    scatter = backend.to_numpy(embedding.embedding_backward(xp, ids._data, gd, 4))
    want = np.zeros((4, 2))
    np.add.at(want, [3, 1, 3, 3, 0], g)
    np.testing.assert_allclose(one_hot, want, rtol=1e-12, atol=1e-12)  # float64 sums of 3 terms
    np.testing.assert_allclose(scatter, want, rtol=1e-12, atol=1e-12)  # float64 sums of 3 terms


@pytest.mark.parametrize("xp", [np, backend_strict.xp], ids=["numpy", "strict"])
def test_the_product_in_rounds_is_multiply_at_bit_for_bit(xp):
    """CuPy has no unbuffered product, so scatter_reduce's "prod" runs in rounds there
    (ops/indexing.py): the same bits as np.multiply.at, which multiplies in index order."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=2))
        target, values = rng.standard_normal(shape), rng.standard_normal(9)
        index = (rng.integers(0, shape[0], size=9), rng.integers(0, shape[1], size=9))  # repeats
        want = target.copy()
        np.multiply.at(want, index, values)
        put = (lambda a: a) if xp is np else backend_strict.from_numpy
        got = indexing.multiply_at_in_rounds(xp, put(target.copy()), tuple(map(put, index)), put(values))
        np.testing.assert_array_equal(backend.to_numpy(got), want)


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5])
def test_keep_mask_keeps_one_minus_p_and_advances(p):
    """The host dropout mask: 1 - p of the elements kept (100,009 seeded draws; the tolerance is
    4 standard deviations of the mean, sqrt(p (1 - p) / n) <= 0.0016), a fresh mask per call."""
    from tensorgrad.ops.dropout import keep_mask

    backend.manual_seed(3)
    first = keep_mask("cpu", (7, 14287), p)  # 100,009 elements: not a whole number of 64-bit words
    assert first.shape == (7, 14287) and first.dtype == bool
    assert abs(first.mean() - (1 - p)) < 4 * np.sqrt(p * (1 - p) / first.size)
    assert (keep_mask("cpu", (7, 14287), p) != first).any()


@st.composite
def _views_of_dense_bases(draw):
    """A dense base (C order, or its dims permuted in memory) and a view of it made by a random
    chain of NumPy's view operations: transposes, slices with steps, diagonals, reshapes of
    contiguous views, new axes, integer indices."""
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    order = draw(st.permutations(range(len(shape))))
    held = np.arange(np.prod(shape), dtype=np.float64).reshape([shape[d] for d in order])
    base = held.transpose(np.argsort(order))  # dense, its dims laid out in `order`
    view = base
    for step in draw(st.lists(st.sampled_from(["T", "slice", "index", "diagonal", "reshape", "newaxis"]), max_size=4)):
        if step == "T":
            view = view.T
        elif step == "slice" and view.ndim:
            n = view.shape[0]
            start, stop, by = draw(st.integers(0, n)), draw(st.integers(0, n)), draw(st.integers(1, 3))
            view = view[start:stop:by]
        elif step == "index" and view.ndim and view.shape[0]:
            view = view[draw(st.integers(0, view.shape[0] - 1)), ...]  # (a 0-d view, not a scalar)
        elif step == "diagonal" and view.ndim >= 2:
            view = np.diagonal(view, draw(st.integers(-2, 2)))
        elif step == "reshape" and view.flags.c_contiguous:
            view = view.reshape(-1)
        elif step == "newaxis":
            view = view[None]
    return base, view


@given(_views_of_dense_bases())
def test_positions_in_places_each_element_of_a_view_in_its_base(base_and_view):
    """backend.positions_in (the places a recorded write through a view takes in its base):
    base[index] reads the view's elements, for any chain of views of a dense base, whatever the
    order its dims are laid out in; device arrays of the view's kind."""
    base, view = base_and_view
    index = backend.positions_in(view, base)
    assert len(index) == base.ndim and all(i.shape == view.shape and i.dtype == np.int64 for i in index)
    np.testing.assert_array_equal(base[index], view)
    strict_index = backend.positions_in(backend_strict.StrictArray(view), backend_strict.StrictArray(base))
    assert all(isinstance(i, backend_strict.StrictArray) for i in strict_index)


def test_positions_in_refuses_what_the_layouts_do_not_tell():
    """None where a base is not dense (a strided slice, an expand), the dtypes differ, a stride is
    negative, or the view lies outside the base."""
    a = np.arange(24.0).reshape(4, 6)
    assert backend.positions_in(a[::2, 1:3], a[::2]) is None  # a base with gaps
    assert backend.positions_in(a[0], np.broadcast_to(a[0], (3, 6))) is None  # a base with stride 0
    assert backend.positions_in(a.view(np.int64)[0], a) is None
    assert backend.positions_in(a[::-1], a) is None
    assert backend.positions_in(a[2:], a[:2]) is None
    assert backend.positions_in(a[:0], a[2:]) is not None  # nothing to place
