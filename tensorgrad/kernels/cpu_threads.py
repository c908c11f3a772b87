"""Independent rows of one op in parts: small enough for the cache, spread over the CPU's cores.

The attention's (batch, head) rows are independent.  Two things make a large attention slow when
every pass runs over all of them at once, and parts of rows fix both:
- the cache: the softmax's passes over the (T, S) scores, and the products on either side of them,
  each read and write the whole score array from memory; a part of a few rows keeps its scores in
  the cache from the product that makes them to the one that uses them;
- the cores: NumPy runs a stacked matmul as one small GEMM per matrix, each split by the BLAS
  library over all its threads, and products of (256, 64) by (64, 256) are too small for that (two
  cores run them about as fast as one).  Here each thread takes its own parts and runs them on one
  BLAS thread, start to end, at the GEMM rate of one core.
benchmarks/NOTES-timing.md has the timings (a causal (64, 6, 256, 64) float32 attention on 2
threads: forward 96 ms as two halves, 54 ms in parts of 32 rows; 119 ms unsplit).

While parts run on several threads:
- the BLAS library is held at one thread (threadpoolctl), and given back its count after;
- the Numba kernels run their serial compilation (cpu.py's `serial_kernels`), so each thread
  computes its rows alone; each row's result is the same whatever the thread that computed it
  (cpu.py's rows are computed start to end by one thread), so the parts change no value.
The threads are the count tg.set_num_threads chose, or before any choice the BLAS library's own
(`_thread_count`); with one, the parts run one after the other on the calling thread.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

from . import cpu, thread_count

# Below this many (T, S) scores in all, an attention runs as one part on the calling thread: the
# small models' attention (B * heads * T * T of a few thousand) costs less than starting threads.
MIN_SPLIT_WORK = 1 << 20
# The scores of one part, about: 16 rows of (256, 256), or a few hundred KB per query block of 64
# rows, which stays in a core's cache (parts of 8 to 32 such rows measured alike; 1 or 2 rows pay
# more for the calls than they save, all rows at once run from memory).
PART_WORK = 1 << 20

# Process-wide: one BLAS controller and one worker pool for the process, made under _lock.
_lock = threading.Lock()
_blas = None  # threadpoolctl's controller of the BLAS libraries NumPy loaded (made on first use)
_pool = None  # (workers, ThreadPoolExecutor, the process it belongs to)


def _blas_controller():
    global _blas
    if _blas is None:
        import threadpoolctl  # noqa: PLC0415  (only for a split: importing it inspects every loaded library)

        _blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
    return _blas


def _executor(workers: int) -> ThreadPoolExecutor:
    """The pool of `workers` threads, made anew for another count, and in a child process after
    fork (the parent's threads do not exist there: a task given to its pool would never run)."""
    global _pool
    if _pool is None or _pool[0] != workers or _pool[2] != os.getpid():
        if _pool is not None and _pool[2] == os.getpid():
            _pool[1].shutdown(wait=False)
        _pool = (workers, ThreadPoolExecutor(workers, thread_name_prefix="tensorgrad-rows"), os.getpid())
    return _pool[1]


def row_parts(rows: int, work: int) -> list:
    """The row ranges (slices) to compute `rows` independent rows in, `work` elements in all: parts
    of about PART_WORK elements; [slice(0, rows)] (one part) below MIN_SPLIT_WORK or for one row."""
    if work < MIN_SPLIT_WORK or rows < 2:
        return [slice(0, rows)]
    size = max(1, PART_WORK * rows // work)  # rows per part
    return [slice(lo, min(lo + size, rows)) for lo in range(0, rows, size)]


def thread_parts(rows: int) -> list:
    """`rows` split into one run of consecutive rows per thread (as even as they go), for a
    product large enough to run at the GEMM rate in each: [slice(0, rows)] with one thread."""
    workers = min(rows, _thread_count())
    if workers < 2:
        return [slice(0, rows)]
    return even_split(rows, workers)


def even_split(n: int, count: int) -> list:
    """range(n) in `count` runs of consecutive indices, as even as they go (slices; some empty when n < count)."""
    return [slice(n * i // count, n * (i + 1) // count) for i in range(count)]


def _thread_count() -> int:
    """The threads to split an op's work over: 1 inside a part (parts never split again); the count
    tg.set_num_threads chose (thread_count.chosen_threads); before any choice, the BLAS library's own."""
    if cpu._serial_only:
        return 1
    chosen = thread_count.chosen_threads()
    if chosen is not None:
        return chosen
    try:
        return max((lib.num_threads for lib in _blas_controller().lib_controllers), default=1)
    except ImportError:  # no threadpoolctl: one thread runs the parts, the BLAS library's threads the products
        return 1


def run_parts(fn, parts: list) -> list:
    """[fn(part) for part in parts].  With several parts and several threads, each thread runs
    its own run of consecutive parts, with the BLAS library at one thread and the Numba kernels
    serial meanwhile.  The first exception raised by a part is raised here, after every thread
    has finished."""
    workers = min(len(parts), _thread_count()) if len(parts) > 1 else 1
    if workers == 1:
        return [fn(part) for part in parts]
    n = len(parts)
    runs = [parts[n * i // workers : n * (i + 1) // workers] for i in range(workers)]
    with _lock:  # one split at a time: the BLAS limit is process-wide while it lasts
        with _blas_controller().limit(limits=1), cpu.serial_kernels():
            futures = [_executor(workers).submit(lambda run: [fn(part) for part in run], run) for run in runs]
            wait(futures)
            return [result for f in futures for result in f.result()]
