"""Hypothesis property tests of the indexing and shape ops over random shapes and arguments.

Forward values are checked against NumPy (np.take_along_axis, np.pad, np.einsum, ...) or an
element-by-element loop.  These ops are linear in their input x, z = L(x), so the backward,
dx = L^T(g), is checked by the adjoint identity <L^T(g), w> = <g, L(w)> for a random w, with L
evaluated by the NumPy reference: a backward that drops, misplaces or fails to accumulate a
gradient breaks the identity.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S

# float64 against NumPy float64 doing the same sums in another order: rounding only.
TOL = {"rtol": 1e-10, "atol": 1e-10}


def check_linear(fn, ref, x, device, seed=0):
    """fn (tensorgrad) against ref (NumPy) forward, and the backward by the adjoint identity."""
    t = tg.tensor(x, device=device, requires_grad=True)
    out = fn(t)
    np.testing.assert_allclose(out.numpy(), ref(x), **TOL)
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(out.shape)
    out.backward(tg.tensor(g, device=device))
    w = rng.standard_normal(x.shape)
    np.testing.assert_allclose(np.sum(t.grad.numpy() * w), np.sum(g * ref(w)), **TOL)


@st.composite
def along_case(draw):
    """(x, dim, index): index has x's dims, is no larger off dim, values in [0, x.shape[dim])."""
    shape = draw(S.shapes())
    dim = draw(S.dims(len(shape)))
    d = dim % len(shape)
    ishape = tuple(draw(st.integers(1, 4)) if a == d else draw(st.integers(1, n)) for a, n in enumerate(shape))
    index = np.array(draw(st.lists(st.integers(0, shape[d] - 1), min_size=int(np.prod(ishape)),
                                   max_size=int(np.prod(ishape))))).reshape(ishape)  # fmt: skip
    return draw(S.float_arrays(shape)), dim, index


def target(p, dim, index):
    """The position of x that index position p addresses along dim."""
    q = list(p)
    q[dim] = index[p]
    return tuple(q)


@given(case=along_case(), device=S.devices(cuda=False))
def test_gather_property(case, device):
    x, dim, index = case
    d = dim % x.ndim

    def ref(a):
        out = np.zeros(index.shape)
        for p in np.ndindex(*index.shape):
            out[p] = a[target(p, d, index)]
        return out

    check_linear(lambda t: t.gather(dim, tg.tensor(index, device=device)), ref, x, device)


@given(case=along_case(), reduce=st.sampled_from(["sum", "mean", "amax", "amin", "prod"]),
       include_self=st.booleans(), device=S.devices(cuda=False))  # fmt: skip
def test_scatter_reduce_property(case, reduce, include_self, device):
    """Forward against a loop over the groups; backward against torch's formulas done by hand:
    sum and mean are linear in (x, src) (adjoint identity); for the rest, each member's gradient
    is checked against central differences through tg.gradcheck."""
    x, dim, index = case
    d = dim % x.ndim
    src = np.random.default_rng(1).uniform(-2, 2, index.shape)
    groups = {}
    for p in np.ndindex(*index.shape):
        groups.setdefault(target(p, d, index), []).append(src[p])
    want = x.copy()
    for q, members in groups.items():
        members = ([x[q]] if include_self else []) + members
        want[q] = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min, "prod": np.prod}[reduce](members)
    idx = tg.tensor(index, device=device)
    xs = [tg.tensor(a, device=device, requires_grad=True) for a in (x, src)]
    out = xs[0].scatter_reduce(dim, idx, xs[1], reduce, include_self=include_self)
    np.testing.assert_allclose(out.numpy(), want, **TOL)
    assert tg.gradcheck(lambda a, s: a.scatter_reduce(dim, idx, s, reduce, include_self=include_self), xs)


@given(case=along_case(), device=S.devices(cuda=False))
def test_scatter_add_property(case, device):
    x, dim, index = case
    d = dim % x.ndim
    src = np.random.default_rng(1).standard_normal(index.shape)

    def ref(a):  # linear in src, with x fixed to zeros
        out = np.zeros(x.shape)
        for p in np.ndindex(*index.shape):
            out[target(p, d, index)] += a[p]
        return out

    zeros = tg.zeros(x.shape, dtype=tg.float64, device=device)
    check_linear(lambda s: zeros.scatter_add(dim, tg.tensor(index, device=device), s), ref, src, device)


@given(x=S.float_arrays(S.shapes(max_dims=3)), reps=st.lists(st.integers(0, 3), min_size=3, max_size=4),
       device=S.devices(cuda=False))  # fmt: skip
def test_repeat_property(x, reps, device):
    check_linear(lambda t: t.repeat(*reps), lambda a: np.tile(a, reps), x, device)


@given(case=S.array_and_dim(), shift=st.integers(-6, 6), device=S.devices(cuda=False))
def test_roll_and_flip_property(case, shift, device):
    x, dim = case
    check_linear(lambda t: t.roll(shift, dim), lambda a: np.roll(a, shift, dim), x, device)
    check_linear(lambda t: t.flip(dim), lambda a: np.flip(a, dim), x, device)


@given(case=S.array_and_dim(), data=st.data(), device=S.devices(cuda=False))
def test_unfold_property(case, data, device):
    x, dim = case
    d = dim % x.ndim  # the windows' axis is appended last: a negative dim would shift
    n = x.shape[d]
    size, step = data.draw(st.integers(1, n)), data.draw(st.integers(1, 3))

    def ref(a):
        windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)  # every start, window last
        return np.take(windows, np.arange(0, n - size + 1, step), axis=d)

    check_linear(lambda t: t.unfold(dim, size, step), ref, x, device)


@given(x=S.float_arrays(S.shapes(min_dims=2, max_dims=4)), offset=st.integers(-3, 3), data=st.data(),
       device=S.devices(cuda=False))  # fmt: skip
def test_diagonal_and_triangles_property(x, offset, data, device):
    d1, d2 = data.draw(st.lists(st.integers(0, x.ndim - 1), min_size=2, max_size=2, unique=True))
    check_linear(lambda t: t.diagonal(offset, d1, d2), lambda a: np.diagonal(a, offset, d1, d2), x, device)
    check_linear(lambda t: t.tril(offset), lambda a: np.tril(a, offset), x, device)
    check_linear(lambda t: t.triu(offset), lambda a: np.triu(a, offset), x, device)


NP_PAD = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@given(shape=S.shapes(min_dims=2, max_dims=4, min_side=2), mode=st.sampled_from(list(NP_PAD)), data=st.data(),
       device=S.devices(cuda=False))  # fmt: skip
def test_pad_property(shape, mode, data, device):
    k = data.draw(st.sampled_from([k for k in (len(shape) - 2, len(shape) - 1) if 1 <= k <= 3]))  # PyTorch's rule
    spatial = shape[len(shape) - k :]
    limit = {"constant": lambda n: 3, "reflect": lambda n: n - 1, "replicate": lambda n: 3, "circular": lambda n: n}
    amounts = [(data.draw(st.integers(0, limit[mode](n))), data.draw(st.integers(0, limit[mode](n)))) for n in spatial]
    pad = tuple(v for before, after in reversed(amounts) for v in (before, after))
    widths = [(0, 0)] * (len(shape) - k) + amounts
    x = data.draw(S.float_arrays(shape))
    check_linear(lambda t: F.pad(t, pad, mode), lambda a: np.pad(a, widths, mode=NP_PAD[mode]), x, device)


@st.composite
def einsum_case(draw):
    """A random equation over labels a-e with 1-3 operands, labels possibly repeated in an
    operand or missing from the output, and the operands' shapes."""
    sizes = dict(zip("abcde", draw(st.lists(st.integers(1, 3), min_size=5, max_size=5))))
    terms = [draw(st.text("abcde", min_size=0, max_size=3)) for _ in range(draw(st.integers(1, 3)))]
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
    return ",".join(terms) + "->" + output, [tuple(sizes[c] for c in t) for t in terms]


@given(case=einsum_case(), device=S.devices(cuda=False))
def test_einsum_property(case, device):
    """Forward against np.einsum; einsum is linear in each operand, so each operand's gradient
    passes the adjoint identity with the others held fixed."""
    equation, shapes = case
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-2, 2, s) for s in shapes]
    for i in range(len(arrays)):

        def ref(a, i=i):
            return np.einsum(equation, *arrays[:i], a, *arrays[i + 1 :])

        others = [tg.tensor(a, device=device) for a in arrays]

        def fn(t, i=i, others=others):
            return tg.einsum(equation, *others[:i], t, *others[i + 1 :])

        check_linear(fn, ref, arrays[i], device, seed=i)
