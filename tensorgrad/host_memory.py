"""keep_freed_memory(): one explicit, process-wide setting for training on the CPU.

By default glibc's malloc serves every block over its mmap threshold (128 KiB, rising to at most
32 MiB as blocks are freed) with fresh pages from the kernel and hands them back when the block is
freed.  A training step allocates and frees hundreds of activations of 25-100 MB, so each of them
is page-faulted in again on every step, and the faults cost more than the arithmetic on them
(docs/results.md, "Memory that stays mapped", has the step times with and without).  The NumPy
arrays, their values and the results do not change, only where their memory comes from.

It is process-wide, so tensorgrad never does it on import: the training programs call it
(gpt/cli/train.py and the benchmarks), and your own script can too.  The memory freed during a
step stays with the process (its resident size stays at the step's peak instead of falling between
steps).  Linux with glibc only; elsewhere it does nothing and returns False.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's malloc.h
_M_MMAP_MAX = -4
_applied = False  # process-wide, as malloc's settings it records


def keep_freed_memory() -> bool:
    """Make glibc's malloc keep freed blocks for reuse instead of returning them to the kernel:
    no blocks from mmap (M_MMAP_MAX = 0, so large blocks come from the heap too) and no trimming
    of the heap's free top (M_TRIM_THRESHOLD = -1).  Returns True when applied (again: a no-op)."""
    global _applied
    if _applied:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = mallopt(_M_MMAP_MAX, 0) == 1
    ok = ok and mallopt(_M_TRIM_THRESHOLD, -1) == 1  # -1: never trim (mallopt(3))
    _applied = ok
    return ok
