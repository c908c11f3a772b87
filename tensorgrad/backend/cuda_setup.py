"""CUDA set-up: loading CuPy once, with a smoke test that names what is missing, and TF32.

CuPy is an optional dependency, imported on the first use of device='cuda' (never at import
time).  `load_cupy()` checks that a GPU is there and that CuPy can run a kernel, a matrix product
and a random draw on it; any failure becomes one DeviceError sentence naming the fix.
"""

from __future__ import annotations

import numpy as np

from .errors import DeviceError

_cupy = None  # the cupy module once imported and checked (process-wide, as the import)


def load_cupy():
    """Import CuPy, check a GPU is there and that CuPy can use it; one clear sentence if not."""
    global _cupy
    if _cupy is not None:
        return _cupy
    try:
        import cupy  # noqa: PLC0415  (optional dependency)
    except ImportError:
        raise DeviceError(
            "device='cuda' needs CuPy, which is not installed: "
            "pip install 'tensorgrad-gpt[cuda12]' (CUDA 12) or 'tensorgrad-gpt[cuda13]' (CUDA 13)"
        ) from None
    try:
        ok = cupy.cuda.is_available()
    except Exception:  # a broken driver install raises instead of returning False
        ok = False
    if not ok:
        raise DeviceError(
            "device='cuda' was asked for, but CuPy finds no usable NVIDIA GPU "
            "(cupy.cuda.is_available() is False): check the driver with nvidia-smi, or use device='cpu'"
        )
    _smoke_test(cupy)
    _cupy = cupy
    if _tf32 is not None:
        _apply_tf32(cupy, _tf32)
    return cupy


def cuda_is_available() -> bool:
    try:
        load_cupy()
    except DeviceError:
        return False
    return True


# The CUDA libraries CuPy 14 loads lazily (through cuda-pathfinder), as its errors name them:
# without them `import cupy` works and the first kernel, GEMM or draw fails with a raw traceback.
_CUDA_LIBRARIES = (
    ("nvrtc", "NVRTC (CUDA's runtime compiler, which builds every CuPy kernel)"),
    ("cublas", "cuBLAS (matrix products)"),
    ("curand", "cuRAND (random numbers)"),
    ("cudart", "the CUDA runtime (cudart)"),
)


def _smoke_test(cupy):
    """A small kernel, a 2-d and a batched GEMM and a random draw, each checked, once per process.

    CuPy imports with only the driver installed; the libraries it needs (NVRTC, cuBLAS) come from a
    CUDA toolkit or from its `[ctk]` extra.  A failure here becomes a DeviceError naming the library.
    """
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    def kernel():
        return float((cupy.arange(4, dtype=cupy.float32) * 2 + 1).sum()) == 16.0

    def gemms():
        d = cupy.asarray(a)
        return bool((cupy.asnumpy(d @ d.T) == a @ a.T).all() and (cupy.asnumpy(d[None] @ d.T[None]) == a @ a.T).all())

    def draw():
        u = cupy.random.Generator(cupy.random.Philox4x3210(0, size=256)).random(8, dtype=cupy.float32)
        return bool(((u >= 0) & (u < 1)).all())

    for what, check in (("an elementwise kernel", kernel), ("a matrix product", gemms), ("a random draw", draw)):
        try:
            ok = check()
        except Exception as e:
            raise DeviceError(_smoke_test_message(what, e)) from None
        if not ok:
            raise DeviceError(f"device='cuda': CuPy computed {what} wrongly on this GPU; use device='cpu'")


def _smoke_test_message(what, error) -> str:
    """One line: what failed, the missing library when the error names one, and the fix."""
    texts, e = [], error
    while e is not None and len(texts) < 8:  # the error and its causes
        texts.append(f"{type(e).__name__}: {e}")
        e = e.__cause__ or e.__context__
    said = " ".join(" ".join(texts).split())
    found = [desc for key, desc in _CUDA_LIBRARIES if key in said.lower()]
    fix = (
        "pip install 'tensorgrad-gpt[cuda12]' (or [cuda13]), which brings the CUDA libraries with CuPy "
        "(cupy-cuda12x[ctk]), or install the CUDA toolkit"
    )
    if found:
        return f"device='cuda': {what} failed on the GPU because {found[0]} could not be loaded: {fix} " \
               f"(CuPy said: {said[:300]})"  # fmt: skip
    return f"device='cuda': {what} failed on the GPU ({said[:300]}); " \
           f"check that CuPy matches the driver's CUDA version: {fix}"  # fmt: skip


# --------------------------------------------------------------------------- TF32
# process-wide, as torch's; None: CuPy's own default is left alone; True / False: set by tg.cuda.allow_tf32
_tf32 = None
_CUBLAS_DEFAULT_MATH = 0  # cublasMath_t values (cublas_api.h); CuPy's cublas module names only 0 and 1
_CUBLAS_TF32_TENSOR_OP_MATH = 3


def set_allow_tf32(enabled: bool):
    """Let float32 GEMMs on the GPU use TF32 tensor cores, now or when CuPy is loaded."""
    global _tf32
    _tf32 = bool(enabled)
    if _cupy is not None:
        _apply_tf32(_cupy, _tf32)


def _apply_tf32(cupy, enabled):
    """CuPy 14 runs float32 products through two cuBLAS calls (cupy/_core/_routines_linalg.pyx):

    - 2-d products: cublasGemmEx with the compute type CuPy keeps per dtype (its CUPY_TF32 variable
      is read once, at the first float32 product), settable with set_compute_type at any time;
    - batched products (ndim > 2): cublasGemmStridedBatchedEx with the legacy compute type
      CUDA_R_32F, for which cuBLAS allows TF32 when the handle's math mode is
      CUBLAS_TF32_TENSOR_OP_MATH (PyTorch's switch works the same way); so the mode is set on the
      handle (CuPy keeps one per thread and device: this covers the thread that runs the engine).
    tests/test_gpu.py measures both on a GPU.  Below compute capability 8.0 there are no TF32
    tensor cores and nothing is changed (as in PyTorch).
    """
    from cupy._core import _routines_linalg as linalg  # noqa: PLC0415
    from cupy_backends.cuda.libs import cublas  # noqa: PLC0415

    if enabled and int(cupy.cuda.Device().compute_capability) < 80:
        return
    linalg.set_compute_type(cupy.float32, linalg.COMPUTE_TYPE_TF32 if enabled else linalg.COMPUTE_TYPE_DEFAULT)
    mode = _CUBLAS_TF32_TENSOR_OP_MATH if enabled else _CUBLAS_DEFAULT_MATH
    cublas.setMathMode(cupy.cuda.device.get_cublas_handle(), mode)


# --------------------------------------------------------------------------- NCCL
def import_nccl():
    """(cupy, cupyx.distributed, cupy.cuda.nccl), unchecked, for tensorgrad.distributed's 'nccl'
    backend, which picks this rank's GPU before CuPy is checked (see distributed/nccl.py)."""
    try:
        import cupy  # noqa: PLC0415  (optional dependency)
        import cupyx.distributed  # noqa: PLC0415
        from cupy.cuda import nccl  # noqa: PLC0415
    except ImportError:
        raise DeviceError("the 'nccl' backend needs CuPy: pip install 'tensorgrad-gpt[cuda12]' (or cuda13)") from None
    return cupy, cupyx.distributed, nccl
