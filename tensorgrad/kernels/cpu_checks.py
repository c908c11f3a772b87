"""The fused GPT's checks of its inputs at each call, as one compiled pass each.

`FusedGPT.accepts_input` and `FusedGPTLoss.accepts` (kernels/fused_gpt.py) ask, at every training
step, whether the token ids are in range and whether every row of the attention mask lets its
position attend somewhere.  In NumPy that is a reduction per question (`ids.min()`, `ids.max()`,
`mask.any(axis=1).all()`), each a few microseconds of calls around a few hundred elements; here
each question is one loop, one call.  The answers are NumPy's.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core.errors import NumbaError

from . import compile_error

_OPTIONS = dict(cache=True, nogil=True)


@njit(**_OPTIONS)
def _in_range(ids, high):
    for v in ids:
        if v < 0 or v >= high:
            return False
    return True


def ids_in_range(ids, high: int) -> bool:
    """`ids.min() >= 0 and ids.max() < high` for an integer array with at least one element."""
    if ids.dtype != np.int64 or not ids.flags.c_contiguous:
        return bool(ids.min() >= 0 and ids.max() < high)  # (another dtype or layout: NumPy's reductions)
    try:
        return _in_range(ids.reshape(-1), high)
    except NumbaError as e:
        raise compile_error("ids_in_range", e) from e


@njit(**_OPTIONS)
def _every_row_attends(mask):
    for row in mask:
        found = False
        for m in row:
            if m:
                found = True
                break
        if not found:
            return False
    return True


def every_row_attends(mask) -> bool:
    """`mask.any(axis=1).all()` for a 2-d bool array: every query position may attend to one key at least."""
    try:
        return _every_row_attends(mask)
    except NumbaError as e:
        raise compile_error("every_row_attends", e) from e
