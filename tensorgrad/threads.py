"""`tg.set_num_threads(n)` / `tg.get_num_threads()`: the CPU threads tensorgrad computes with, as
`torch.set_num_threads` sets PyTorch's.

Two thread pools do tensorgrad's CPU work: the BLAS library NumPy loaded (OpenBLAS, MKL), which
runs the matrix products, and Numba's, which runs the fused kernels' parallel loops. Both start
with one thread per core. Their threads wait for work by spinning, so on a busy machine, or
with products too small to split, extra threads cost more than they give. This is a process-wide
setting: tensorgrad never calls it by itself; a program that wants it calls it where its reader
sees it (gpt/cli/train.py does, and prints what it chose).
"""

from __future__ import annotations

import os

from .kernels import thread_count


def _blas_limits():
    try:
        import threadpoolctl  # noqa: PLC0415  (only when asked: importing it inspects every loaded library)
    except ImportError:
        return None
    return threadpoolctl


def set_num_threads(n: int) -> None:
    """Use `n` threads for the BLAS library's products and the fused kernels' parallel loops."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: the number of threads must be an integer >= 1, got {n!r}")
    limits = _blas_limits()
    if limits is None:
        raise RuntimeError("set_num_threads needs threadpoolctl to reach the BLAS library: pip install threadpoolctl")
    # The kernels first: importing Numba loads SciPy, and with it SciPy's own BLAS library, which
    # starts with one thread per core; the limit below then reaches every BLAS library loaded.
    thread_count.set_num_threads(n)
    limits.threadpool_limits(limits=n, user_api="blas")


def get_num_threads() -> int:
    """The count set_num_threads set (as PyTorch's); before any, the BLAS library's thread count."""
    chosen = thread_count.chosen_threads()  # kept as given (thread_count.chosen_threads says why)
    if chosen is not None:
        return chosen
    limits = _blas_limits()
    if limits is None:
        return os.cpu_count() or 1
    counts = [info["num_threads"] for info in limits.threadpool_info() if info.get("user_api") == "blas"]
    return max(counts, default=os.cpu_count() or 1)
