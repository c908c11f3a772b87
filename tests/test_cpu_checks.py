"""kernels/cpu_checks.py, the fused GPT's per-call checks, against the NumPy reductions they replace."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("numba")

from tensorgrad.kernels import cpu_checks  # noqa: E402

# int64 (C order) runs the compiled loop; the rest NumPy's reductions (big-endian int64 included)
_INTS = st.sampled_from([np.int64, np.int32, np.uint8, np.int16, np.int8, np.uint64, np.dtype(">i8")])


@given(
    ids=_INTS.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=6))),
    high=st.integers(-2, 300),
    layout=st.sampled_from(["C", "transposed", "every other", "read-only"]),
)
def test_ids_in_range_is_numpys_min_and_max(ids, high, layout):
    """Every dtype, layout and bound, the values at and just past both ends included (ids of at
    least one element, as the callers check first): the answer of `ids.min() >= 0 and ids.max() < high`."""
    if layout == "transposed":
        ids = ids.T
    elif layout == "every other":
        ids = ids.reshape(-1)[::2]
    elif layout == "read-only":
        ids.flags.writeable = False
    assert cpu_checks.ids_in_range(ids, high) is bool(ids.min() >= 0 and ids.max() < high)


@pytest.mark.parametrize("bad", [-1, 65, np.iinfo(np.int64).max, np.iinfo(np.int64).min])
def test_ids_in_range_finds_one_bad_id_anywhere(bad):
    for place in [(0, 0), (3, 7), (1, 4)]:
        ids = np.arange(32, dtype=np.int64).reshape(4, 8) % 65
        ids[place] = bad
        assert cpu_checks.ids_in_range(ids, 65) is False
    assert cpu_checks.ids_in_range(np.full((4, 8), 64, np.int64), 65) is True


@given(mask=hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=9)))
def test_every_row_attends_is_numpys_any_then_all(mask):
    """Random masks, rows of no True and zero-size dims included: `mask.any(axis=1).all()`."""
    assert cpu_checks.every_row_attends(mask) is bool(mask.any(axis=1).all())


def test_every_row_attends_on_the_causal_mask_and_one_empty_row():
    causal = np.tril(np.ones((8, 8), np.bool_))
    assert cpu_checks.every_row_attends(causal) is True
    causal[5] = False
    assert cpu_checks.every_row_attends(causal) is False
