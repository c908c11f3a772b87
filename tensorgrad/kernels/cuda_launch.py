"""How the CUDA kernels meet arrays and streams.

On a GPU the arrays are CuPy's: outputs are allocated with CuPy, inputs reach Numba through
`__cuda_array_interface__` (without the interface's host synchronisation: the kernel is queued
on the same stream, after the work that made its inputs), and every kernel is launched on CuPy's
current stream, so it is ordered with the CuPy work around it and a training step never waits.

Under Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`, set before `numba.cuda` is imported; the
tests' GPU-free check) the same kernels run as Python threads on NumPy arrays: `xp` is NumPy,
there is no stream, and blocks are small so that a row spans several strides of a block.
"""

from __future__ import annotations

import numpy as np
from numba import cuda
from numba.core.errors import NumbaError
from numba.cuda import config as _numba_cuda_config

from . import compile_error

SIMULATOR = bool(_numba_cuda_config.ENABLE_CUDASIM)

# Threads per block: a row kernel's block owns one row (a power of two: the reductions halve it);
# an elementwise kernel's threads stride over the flat array.
ROW_BLOCK = 4 if SIMULATOR else 128
ELEMENT_BLOCK = 8 if SIMULATOR else 256
MAX_ELEMENT_BLOCKS = 4 if SIMULATOR else 8192  # beyond this, threads loop (grid-stride)

# Errors of compilation (typing, lowering, NVVM, linking), reported as KernelError; errors of
# running (CudaAPIError: a bad launch, memory) pass through as they are.
_COMPILE_ERRORS: tuple = (NumbaError,)
if not SIMULATOR:  # the simulator has no NVVM and no linker
    from numba.cuda.cudadrv.driver import LinkerError
    from numba.cuda.cudadrv.error import NvvmError

    _COMPILE_ERRORS += (NvvmError, LinkerError)

_streams: dict = {}  # CuPy stream pointer -> Numba's handle on that stream (one GPU: CuPy's current device)


def array_namespace():
    """The arrays' module: CuPy on a GPU, NumPy under the simulator.  (Imported here, not at the
    top, so that the kernels can be compiled to PTX where CuPy is not installed.)"""
    if SIMULATOR:
        return np
    import cupy  # noqa: PLC0415

    return cupy


def current_stream():
    """Numba's view of CuPy's current stream (0, i.e. none, under the simulator)."""
    if SIMULATOR:
        return 0
    import cupy  # noqa: PLC0415  (already imported by cuda.py: a dictionary look-up)

    ptr = cupy.cuda.get_current_stream().ptr
    stream = _streams.get(ptr)
    if stream is None:
        stream = _streams[ptr] = cuda.external_stream(ptr)
    return stream


def _device_array(a):
    """A CuPy array as a Numba device array on the same memory (no copy, no synchronisation)."""
    if SIMULATOR or not hasattr(a, "__cuda_array_interface__"):
        return a
    return cuda.from_cuda_array_interface(a.__cuda_array_interface__, owner=a, sync=False)


def scalar(dtype, value):
    """A Python number as a scalar of the arrays' dtype, so that a float32 kernel stays float32."""
    return np.dtype(dtype).type(value)


def launch(name: str, kernel, grid, block: int, *args) -> None:
    """kernel[grid, block, stream](*args) on CuPy's current stream.  Nothing runs for an empty
    grid; a kernel that fails to compile raises KernelError naming `name`."""
    if (grid if isinstance(grid, int) else min(grid)) <= 0:
        return
    args = tuple(_device_array(a) for a in args)
    try:
        kernel[grid, block, current_stream()](*args)
    except _COMPILE_ERRORS as e:
        raise compile_error(name, e) from e


def element_grid(size: int) -> int:
    """Blocks for an elementwise kernel over `size` elements (the kernels loop past the last)."""
    return min(-(-size // ELEMENT_BLOCK), MAX_ELEMENT_BLOCKS)
