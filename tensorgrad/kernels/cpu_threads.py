"""Independent products of one op split over the CPU's cores: a part of the rows per thread.

NumPy runs a stacked matmul (the attention's q k^T over (batch, head)) as one small GEMM per
matrix, each split by the BLAS library over all its threads: products of (256, 64) by (64, 256)
are too small for that, and two cores run them about as fast as one.  Here each thread takes its
own rows of the batch instead and runs them on one BLAS thread, start to end: the products stay
at the GEMM rate of one core, and every core has work (a (384, 256, 64) by (384, 64, 256) product:
29 ms on 2 BLAS threads, 17 ms as two halves on 2 threads of 1; benchmarks/NOTES-timing.md).

While a split runs:
- the BLAS library is held at one thread (threadpoolctl), and given back its count after;
- the Numba kernels run their serial compilation (cpu.py's `serial_kernels`), so each thread
  computes its rows alone; each row's result is the same whatever the thread that computed it
  (cpu.py's rows are computed start to end by one thread), so the split changes no value.
The threads are the BLAS library's count when the op runs (tg.set_num_threads sets it): with one,
nothing is split.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait

from . import cpu

# Below this many (T, S) scores in all, an attention runs on the calling thread as one part: the
# small models' attention (B * heads * T * T of a few thousand) costs less than starting threads.
MIN_SPLIT_WORK = 1 << 20

_lock = threading.Lock()
_blas = None  # threadpoolctl's controller of the BLAS libraries NumPy loaded (made on first use)
_pool = None  # (workers, ThreadPoolExecutor)


def _blas_controller():
    global _blas
    if _blas is None:
        import threadpoolctl  # noqa: PLC0415  (only for a split: importing it inspects every loaded library)

        _blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
    return _blas


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    if _pool is None or _pool[0] != workers:
        if _pool is not None:
            _pool[1].shutdown(wait=False)
        _pool = (workers, ThreadPoolExecutor(workers, thread_name_prefix="tensorgrad-rows"))
    return _pool[1]


def row_parts(rows: int, work: int) -> list:
    """The row ranges (slices) to split `rows` independent rows over: one per BLAS thread, as equal
    as they can be; [slice(0, rows)] (no split) for less than MIN_SPLIT_WORK elements of `work`, one
    BLAS thread, or fewer rows than threads would make useful."""
    if work < MIN_SPLIT_WORK or rows < 2:
        return [slice(0, rows)]
    try:
        counts = [lib.num_threads for lib in _blas_controller().lib_controllers]
    except ImportError:  # no threadpoolctl: the BLAS library's own threads do the products
        return [slice(0, rows)]
    workers = min(max(counts, default=1), rows)
    if workers < 2:
        return [slice(0, rows)]
    bounds = [rows * i // workers for i in range(workers + 1)]
    return [slice(lo, hi) for lo, hi in zip(bounds, bounds[1:])]


def run_parts(fn, parts: list) -> list:
    """[fn(part) for part in parts], each on its own thread when there are several, with the BLAS
    library at one thread and the Numba kernels serial meanwhile.  The first exception raised by a
    part is raised here, after every part has finished."""
    if len(parts) == 1:
        return [fn(parts[0])]
    with _lock:  # one split at a time: the BLAS limit is process-wide while it lasts
        blas = _blas_controller()
        with blas.limit(limits=1), cpu.serial_kernels():
            futures = [_executor(len(parts)).submit(fn, part) for part in parts]
            wait(futures)
            return [f.result() for f in futures]
