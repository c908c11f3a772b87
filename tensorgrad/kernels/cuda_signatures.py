"""The argument types of every CUDA kernel, for each way cuda.py launches it.

Numba compiles a kernel on its first launch, for the types it is given.  This table lists those
types ahead of time, so that every kernel can be compiled to PTX without a GPU
(numba.cuda.compile_ptx; tests/test_cuda_kernels.py does it for sm_80 and sm_90).  A None
argument (no weight, no mask, no dropout) is a different compiled kernel: the `is None` branches
are removed at compile time, so each variant is listed.
"""

from __future__ import annotations

from numba import types

from . import cuda_elementwise as ew
from . import cuda_flash as fl
from . import cuda_rows as rows

DTYPES = {"float32": types.float32, "float64": types.float64}


def signatures(dtype: str) -> dict:
    """{kernel (a Numba CUDA dispatcher): [argument type tuples]} for float32 or float64."""
    f = DTYPES[dtype]
    vec, mat, cube = f[::1], f[:, ::1], f[:, :, ::1]
    bools2, bools3, bools1 = types.boolean[:, ::1], types.boolean[:, :, ::1], types.boolean[::1]
    ints = types.int64[::1]
    i64, none = types.int64, types.none
    flash_masks = ((bools2, bools1), (none, none))  # (mask, causal flag)
    return {
        rows.layernorm_forward_rows: [
            (mat, w, b, f, mat, vec, vec) for w, b in ((vec, vec), (vec, none), (none, none))
        ],
        rows.layernorm_backward_rows: [(mat, mat, vec, vec, w, mat) for w in (vec, none)],
        rows.layernorm_param_partials: [(mat, mat, vec, vec, i64, mat, mat)],
        rows.sum_partials: [(mat, vec)],
        rows.attention_softmax_forward_rows: [
            (cube, f, mask, keep, f, cube, cube if keep is not none else none)
            for mask in (bools2, none)
            for keep in (bools3, none)
        ],
        rows.attention_softmax_backward_rows: [(cube, cube, keep, f, cube) for keep in (bools3, none)],
        rows.cross_entropy_forward_rows: [(mat, ints, i64, vec, vec)],
        rows.cross_entropy_backward_rows: [(mat, vec, ints, i64, vec, mat)],
        ew.adamw_elements: [(vec, vec, vec, vec) + (f,) * 7],
        ew.relu_forward_elements: [(vec, vec)],
        ew.relu_backward_elements: [(vec, vec, vec)],
        ew.gelu_forward_elements: [(vec, vec)],
        ew.gelu_backward_elements: [(vec, vec, vec)],
        ew.dropout_elements: [(vec, bools1, f, vec)],
        ew.embedding_backward_rows: [(ints, ints, mat, mat)],
        # The flash attention kernels: with a (T, S) mask and its causal flag or with neither, and
        # with a dropout keep mask or without.
        fl.flash_forward_rows: [
            (cube, cube, cube, m, c, keep, f, f, cube, mat) for m, c in flash_masks for keep in (bools3, none)
        ],
        fl.flash_backward_dq_rows: [
            (cube, cube, cube, cube, cube, mat, m, c, keep, f, f, cube, mat)
            for m, c in flash_masks
            for keep in (bools3, none)
        ],
        fl.flash_backward_dkdv_rows: [
            (cube, cube, cube, cube, mat, mat, m, c, keep, f, f, cube, cube)
            for m, c in flash_masks
            for keep in (bools3, none)
        ],
    }
