"""Shared hypothesis strategies (after minitorch's tests/strategies.py).

Shapes are small (sides 1..4, up to 4 dims): the properties do not depend on size, and
the CI profile runs each property a fixed number of times, so small keeps the suite fast.
Values are bounded float64, so every op stays finite and exact comparisons are meaningful.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_SIDE = 4
MAX_DIMS = 4


def shapes(min_dims: int = 1, max_dims: int = MAX_DIMS, min_side: int = 1, max_side: int = MAX_SIDE):
    """A tensor shape, e.g. (3, 1, 4)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_pairs(min_dims: int = 0, max_dims: int = MAX_DIMS):
    """(shape_a, shape_b, shape_of_a_op_b): two shapes that broadcast together under NumPy's rule."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=MAX_SIDE
    ).map(lambda bs: (bs.input_shapes[0], bs.input_shapes[1], bs.result_shape))


def dims(ndim: int):
    """One valid dim of an ndim-d tensor, negative ones included."""
    return st.integers(-ndim, ndim - 1)


def dim_tuples(ndim: int):
    """A non-empty tuple of distinct dims (each possibly negative)."""
    return st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).flatmap(
        lambda ds: st.tuples(*[st.sampled_from([d, d - ndim]) for d in ds])
    )


def reduce_dims(ndim: int):
    """What a reduction takes as dim: None, an int, or a tuple of ints."""
    return st.one_of(st.none(), dims(ndim), dim_tuples(ndim))


def float_arrays(shape, low: float = -3.0, high: float = 3.0):
    """float64 arrays of `shape` with values in [low, high] (no nan, no inf)."""
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    )


def distinct_float_arrays(shape, low: float = -3.0, high: float = 3.0):
    """float64 arrays whose values are pairwise distinct (no ties for max, no relu kinks at 0)."""
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False).filter(
            lambda v: abs(v) > 1e-3
        ),
        unique=True,
    )


def masks(shape):
    """A bool array of `shape`."""
    return hnp.arrays(np.bool_, shape)


@st.composite
def array_and_dim(draw, min_dims: int = 1, low: float = -3.0, high: float = 3.0):
    """(array, dim) with dim valid for the array."""
    shape = draw(shapes(min_dims=min_dims))
    return draw(float_arrays(shape, low, high)), draw(dims(len(shape)))


@st.composite
def array_and_reduce_dims(draw):
    """(array, dim) with dim None, an int or a tuple, valid for the array."""
    shape = draw(shapes())
    return draw(float_arrays(shape)), draw(reduce_dims(len(shape)))


@st.composite
def broadcast_arrays(draw, low: float = -3.0, high: float = 3.0):
    """(a, b) float64 arrays whose shapes broadcast together."""
    sa, sb, _ = draw(broadcastable_pairs())
    return draw(float_arrays(sa, low, high)), draw(float_arrays(sb, low, high))


devices = st.sampled_from(["cpu", "strict"])
