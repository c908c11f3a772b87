"""Hypothesis strategies that draw tensorgrad tensors (needs `pip install hypothesis`,
or the `test` / `study` extra).

Every strategy works with no arguments, and every argument left as None is drawn:

    from hypothesis import given
    from tensorgrad.testing import strategies as tst

    @given(tst.tensors())                               # any shape, float32 or float64, any device
    @given(tst.tensors(shape=(3, 4), dtype=tg.float64, low=-1, high=1))
    @given(tst.broadcastable_tensors())                 # (a, b) whose shapes broadcast together
    @given(tst.logits_and_targets())                    # (N, C) logits and valid class ids

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


def shapes(min_dims=1, max_dims=MAX_DIMS, min_side=1, max_side=MAX_SIDE):
    """A shape such as (3, 1, 4)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def dtypes(floating=True):
    """float32 or float64 (with floating=False: int64 and bool too)."""
    choices = FLOAT_DTYPES if floating else (*FLOAT_DTYPES, backend.int64, backend.bool_)
    return st.sampled_from(choices)


def devices():
    """The devices of this machine: "cpu", "strict" (NumPy that behaves like CuPy), "cuda" if present."""
    return st.sampled_from(["cpu", "strict"] + (["cuda"] if backend.cuda_is_available() else []))


def _elements(dtype, low, high):
    if dtype == backend.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(int(low), int(high))
    width = {2: 16, 4: 32}.get(dtype.itemsize, 64)
    return st.floats(low, high, width=width, allow_nan=False, allow_infinity=False, allow_subnormal=False)


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
def broadcastable_shapes(draw, min_dims=0, max_dims=MAX_DIMS):
    """(shape_a, shape_b): two shapes that broadcast together under NumPy's (and PyTorch's) rule."""
    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=min_dims, max_dims=max_dims, max_side=MAX_SIDE))
    return bs.input_shapes[0], bs.input_shapes[1]


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
