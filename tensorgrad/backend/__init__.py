"""The backend: the only package of the engine that imports numpy or cupy (the kernels aside).

Every array the engine holds lives on a device ("cpu": NumPy, "cuda": CuPy, "strict": NumPy
behind a CuPy-like guard), and ``namespace(device)`` gives that device's array module, "xp".
The rest of the engine reaches NumPy and CuPy only through the names below.  One job per module,
in reading order:

    errors.py       DeviceError, ShapeError
    dtypes.py       dtypes (NumPy's dtype objects) and PyTorch's promotion
    cuda_setup.py   loading CuPy with its smoke test, TF32, importing NCCL
    devices.py      device names, namespace(device), device_of(array), synchronize
    strict.py       the strict device: a CuPy-like guard on NumPy, for tests without a GPU
    host.py         host transfer, storage identity, device checks deferred to the next host read
    positions.py    where a view's elements lie in its base (the places a write through a view takes)
    random.py       one seeded generator per device, and its state
    primitives.py   the few array primitives NumPy and CuPy spell differently (scatter, erf, svd,
                    linalg, scipy.special's functions, quiet: NaN and inf without NumPy's warnings)
    accumulation.py sums, means and scans accumulated as PyTorch's are (float16 in float32; NumPy's
                    sums over a non-contiguous axis in blocks; host scans of float32 in float64),
                    `widen`, the array a reduction of float16 computes in, and `narrow`, back

The math built on the primitives lives in the ops that use it (ops/indexing.py's scatter-reduce,
ops/embedding.py's backward); NCCL's communicator in tensorgrad/distributed/nccl.py.
"""

from __future__ import annotations

from . import strict
from .accumulation import accumulation_dtype, cumprod, cumsum, mean, narrow, sum, widen
from .cuda_setup import cuda_is_available, import_nccl, set_allow_tf32
from .devices import DEVICES, device_of, is_array, namespace, normalize_device, synchronize
from .dtypes import (
    as_dtype,
    bool_,
    default_dtype_for,
    float16,
    float32,
    float64,
    int32,
    int64,
    is_floating,
    result_type,
    uint8,
)
from .errors import DeviceError, LinAlgError, ShapeError
from .host import _pending_checks as _pending_checks  # tests/conftest.py clears it between tests
from .host import (
    defer_check,
    from_host,
    is_contiguous,
    is_dense_in_order,
    overlaps_itself,
    run_deferred_checks,
    storage_of,
    to_device,
    to_numpy,
    writable,
)
from .positions import positions_in
from .primitives import (
    SCALAR_TYPES,
    add_at,
    diagonal,
    ensure_array,
    erf,
    getitem,
    has_reduce_at,
    linalg,
    lu_info,
    quiet,
    reduce_at,
    special,
    svd,
    windows,
)
from .random import Generator, generator_for, manual_seed, rng

__all__ = [
    "DEVICES", "SCALAR_TYPES", "DeviceError", "Generator", "LinAlgError", "ShapeError", "accumulation_dtype", "add_at",
    "as_dtype", "bool_", "cuda_is_available", "cumprod", "cumsum",
    "default_dtype_for", "defer_check", "device_of", "ensure_array", "erf", "float16", "float32", "float64",
    "from_host", "generator_for", "getitem", "has_reduce_at",
    "import_nccl", "int32", "int64", "is_array", "is_contiguous", "is_dense_in_order", "is_floating", "linalg",
    "lu_info", "manual_seed", "mean", "namespace", "positions_in",
    "narrow", "normalize_device", "overlaps_itself", "quiet", "reduce_at", "result_type", "rng", "run_deferred_checks",
    "set_allow_tf32", "special", "storage_of", "strict", "sum", "svd", "synchronize", "to_device", "to_numpy", "uint8",
    "diagonal", "widen", "windows", "writable",
]  # fmt: skip
