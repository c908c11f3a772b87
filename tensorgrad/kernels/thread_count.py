"""The CPU kernels' thread count, as tg.set_num_threads chose it (tensorgrad/threads.py): Numba's
threads for the kernels' parallel loops, and the count the ops that split their own work split it
over (kernels/cpu_threads.py).  Numba is imported here only when a count is set."""

from __future__ import annotations

_chosen_threads = None  # the count set_num_threads was given (None: never called); process-wide, as torch's


def set_num_threads(n: int):
    """The CPU kernels' threads (tg.set_num_threads calls this): Numba's for their parallel loops, at
    most the NUMBA_NUM_THREADS Numba started with, and the count the ops that split their own work
    split it over (cpu_threads.py reads `chosen_threads`)."""
    global _chosen_threads
    import numba  # noqa: PLC0415

    try:  # Numba's np.dot (kernels/cpu_gpt.py) calls SciPy's BLAS, loaded on its first use: load it
        import scipy.linalg.cython_blas  # noqa: F401, PLC0415  now, so that the caller's limit reaches it
    except ImportError:  # no SciPy: Numba has no np.dot, and cpu_gpt.py does not compile
        pass
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _chosen_threads = n


def kernel_threads_here() -> int:
    """The threads a kernel's parallel loop may use on the calling thread: the chosen count (at most
    NUMBA_NUM_THREADS), made this thread's own first where it is not.  Numba keeps its count per
    thread: `numba.set_num_threads` sets the caller's, and a thread started later (a training
    program's evaluation beside its steps, gpt/evaluation.py) begins at NUMBA_NUM_THREADS, every
    core, whatever tg.set_num_threads chose.  Numba's own count where none was chosen."""
    import numba  # noqa: PLC0415 - loaded already: a parallel loop is about to run

    if _chosen_threads is None:
        return numba.get_num_threads()
    wanted = min(_chosen_threads, numba.config.NUMBA_NUM_THREADS)
    if numba.get_num_threads() != wanted:
        numba.set_num_threads(wanted)
    return wanted


def chosen_threads():
    """The count tg.set_num_threads set, kept as given: a BLAS library loaded after it (Numba's
    import loads SciPy's OpenBLAS) starts with one thread per core, so reading the libraries back
    would not give it.  None before any call."""
    return _chosen_threads
