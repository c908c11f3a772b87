"""Hypothesis strategies that draw tensorgrad tensors, and the host arrays, shapes and dims to
check an op against a NumPy reference (needs `pip install hypothesis`, or the `test` / `study`
extra).

Every strategy works with no arguments, and every argument left as None is drawn:

    from hypothesis import given
    from tensorgrad.testing import strategies as tst

    @given(tst.tensors())                               # any shape, float32 or float64, any device
    @given(tst.tensors(shape=(3, 4), dtype=tg.float64, low=-1, high=1))
    @given(tst.broadcastable_tensors())                 # (a, b) whose shapes broadcast together
    @given(tst.logits_and_targets())                    # (N, C) logits and valid class ids
    @given(tst.float_arrays(), tst.devices())           # a float64 NumPy array, and a device to put it on
    @given(tst.array_and_reduce_dims())                 # (array, dim): what a reduction takes as dim

Three groups: shapes and dims (`shapes`, `dims`, `dim_tuples`, `reduce_dims`,
`broadcastable_shapes`); host arrays, float64 NumPy arrays to feed an op and its NumPy reference
alike (`float_arrays`, `distinct_float_arrays`, `bool_arrays`, `array_and_dim`,
`array_and_reduce_dims`, `broadcastable_arrays`); and tensors (`dtypes`, `devices`, `tensors`,
`broadcastable_tensors`, `masks`, `class_targets`, `logits_and_targets`).

Shapes are small (sides 1..4, up to 4 dims) and values bounded and finite: properties do not
depend on size, and small examples keep property tests fast and their failures readable.
"""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
from hypothesis import strategies as st

from .. import backend
from ..tensor import Tensor

MAX_SIDE = 4
MAX_DIMS = 4
FLOAT_DTYPES = (backend.float32, backend.float64)


# ---------------------------------------------------------------- shapes and dims
def shapes(min_dims=1, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE):
    """A shape such as (3, 1, 4)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def _ndims(strategy, ndim):
    """`strategy(ndim)`, with ndim drawn (1..MAX_DIMS) when None."""
    return st.integers(1, MAX_DIMS).flatmap(strategy) if ndim is None else strategy(ndim)


def dims(ndim=None):
    """One valid dim of an ndim-d tensor, negative ones included."""
    return _ndims(lambda n: st.integers(-n, n - 1), ndim)


def dim_tuples(ndim=None):
    """A non-empty tuple of distinct dims of an ndim-d tensor (each possibly negative)."""

    def tuples(n):
        return st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True).flatmap(
            lambda ds: st.tuples(*[st.sampled_from([d, d - n]) for d in ds])
        )

    return _ndims(tuples, ndim)


def reduce_dims(ndim=None):
    """What a reduction of an ndim-d tensor takes as dim: None, an int, or a tuple of ints."""
    return _ndims(lambda n: st.one_of(st.none(), dims(n), dim_tuples(n)), ndim)


@st.composite
def broadcastable_shapes(draw, min_dims=0, max_dims=MAX_DIMS):
    """(shape_a, shape_b): two shapes that broadcast together under NumPy's (and PyTorch's) rule."""
    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=min_dims, max_dims=max_dims, max_side=MAX_SIDE))
    return bs.input_shapes[0], bs.input_shapes[1]


# ---------------------------------------------------------------- host arrays (NumPy, float64)
def _elements(dtype, low, high):
    if dtype == backend.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(int(low), int(high))
    width = {2: 16, 4: 32}.get(dtype.itemsize, 64)
    return st.floats(low, high, width=width, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def float_arrays(shape=None, low=-3.0, high=3.0):
    """A float64 NumPy array with values in [low, high] (no nan, no inf); `shape` is a tuple or a
    strategy of shapes, drawn when None."""
    shape = shapes() if shape is None else shape
    return hnp.arrays(backend.float64, shape, elements=_elements(backend.float64, low, high))


def distinct_float_arrays(shape=None, low=-3.0, high=3.0):
    """A float64 NumPy array whose values are pairwise distinct and away from 0 (|v| > 1e-3):
    no ties for max or sort, no relu kink at 0."""
    shape = shapes() if shape is None else shape
    elements = _elements(backend.float64, low, high).filter(lambda v: abs(v) > 1e-3)
    return hnp.arrays(backend.float64, shape, elements=elements, unique=True)


def bool_arrays(shape=None):
    """A boolean NumPy array (a mask for masked_fill or where, before it becomes a Tensor)."""
    return hnp.arrays(backend.bool_, shapes() if shape is None else shape)


@st.composite
def array_and_dim(draw, min_dims=1, low=-3.0, high=3.0):
    """(array, dim): a float64 NumPy array and one valid dim of it."""
    shape = draw(shapes(min_dims=min_dims))
    return draw(float_arrays(shape, low, high)), draw(dims(len(shape)))


@st.composite
def array_and_reduce_dims(draw):
    """(array, dim): a float64 NumPy array and a dim for a reduction of it (None, an int or a tuple)."""
    shape = draw(shapes())
    return draw(float_arrays(shape)), draw(reduce_dims(len(shape)))


@st.composite
def broadcastable_arrays(draw, low=-3.0, high=3.0):
    """(a, b): float64 NumPy arrays whose shapes broadcast together."""
    sa, sb = draw(broadcastable_shapes())
    return draw(float_arrays(sa, low, high)), draw(float_arrays(sb, low, high))


# ---------------------------------------------------------------- tensors
def dtypes(floating=True):
    """float32 or float64 (with floating=False: int64 and bool too)."""
    choices = FLOAT_DTYPES if floating else (*FLOAT_DTYPES, backend.int64, backend.bool_)
    return st.sampled_from(choices)


def devices(cuda=True):
    """The devices of this machine: "cpu", "strict" (NumPy that behaves like CuPy), "cuda" if
    present (with cuda=False, the two host devices only)."""
    return st.sampled_from(["cpu", "strict"] + (["cuda"] if cuda and backend.cuda_is_available() else []))


@st.composite
def tensors(draw, shape=None, dtype=None, device=None, low=-3.0, high=3.0, requires_grad=False, unique=False):
    """A Tensor with values in [low, high] (finite); shape, dtype and device drawn when None.

    unique=True: pairwise distinct values (no ties for max, no two equal logits)."""
    shape = draw(shapes()) if shape is None else tuple(shape)
    dtype = draw(dtypes()) if dtype is None else backend.as_dtype(dtype)
    device = draw(devices()) if device is None else device
    array = draw(hnp.arrays(dtype, shape, elements=_elements(dtype, low, high), unique=unique))
    return Tensor(array, dtype=dtype, device=device, requires_grad=requires_grad)


@st.composite
def broadcastable_tensors(draw, dtype=None, device=None, low=-3.0, high=3.0):
    """(a, b): two tensors of one dtype and device whose shapes broadcast together."""
    sa, sb = draw(broadcastable_shapes())
    dtype = draw(dtypes()) if dtype is None else dtype
    device = draw(devices()) if device is None else device
    return draw(tensors(sa, dtype, device, low, high)), draw(tensors(sb, dtype, device, low, high))


@st.composite
def masks(draw, shape=None, device=None):
    """A boolean Tensor (e.g. for masked_fill or where)."""
    return draw(tensors(shape=shape, dtype=backend.bool_, device=device))


@st.composite
def class_targets(draw, num_classes=4, shape=None, device=None, ignore_index=None):
    """An int64 Tensor of class ids in [0, num_classes), as cross_entropy takes (shape (N,) drawn
    when None); with ignore_index, some entries may be that value instead."""
    shape = (draw(st.integers(1, MAX_SIDE * 2)),) if shape is None else tuple(shape)
    ids = st.integers(0, num_classes - 1)
    if ignore_index is not None:
        ids = st.one_of(ids, st.just(ignore_index))
    device = draw(devices()) if device is None else device
    array = draw(hnp.arrays(backend.int64, shape, elements=ids))
    return Tensor(array, dtype=backend.int64, device=device)


@st.composite
def logits_and_targets(draw, dtype=None, device=None):
    """((N, C) float logits, (N,) valid class ids) on one device."""
    n, c = draw(st.integers(1, MAX_SIDE * 2)), draw(st.integers(2, MAX_SIDE * 2))
    device = draw(devices()) if device is None else device
    logits = draw(tensors((n, c), dtype, device))
    return logits, draw(class_targets(c, (n,), device))
