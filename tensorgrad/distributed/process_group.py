"""The process group: which rank this process is, how many there are, and the backend that
moves arrays between them.  Names and meanings follow `torch.distributed`.

Rank and world size come from the launcher (see job.py).

No hang: every collective waits with a deadline (`timeout`, 10 minutes unless given).  A rank
whose collective is not matched in time (another rank died, or is stuck) ends the whole job with
a message naming itself and the collective.  While the group is up, an uncaught exception on any
rank prints that rank's traceback and ends the whole job at once (through MPI_Abort), instead of
leaving the other ranks waiting: `init_process_group` installs that `sys.excepthook`, and
`destroy_process_group` puts the previous one back.
"""

from __future__ import annotations

import datetime
import sys
import traceback

from . import job
from .job import DistributedError, abort, launched_by_mpi
from .mpi import MPIBackend
from .nccl import NCCLBackend

DEFAULT_TIMEOUT = datetime.timedelta(minutes=10)

_previous_excepthook = None  # process-wide, as the sys.excepthook it wraps


def _seconds(timeout) -> float:
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if not timeout > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return float(timeout)


def init_process_group(backend: str = "mpi", timeout=None):
    """Join the group of ranks started by the launcher.

    backend: "mpi" (any arrays; arrays on a GPU are copied through the host) or "nccl" (GPU
    arrays, through cupyx.distributed).  timeout: a `datetime.timedelta` or seconds, the longest
    any collective waits for the other ranks.
    """
    global _previous_excepthook
    if job.current_group() is not None:
        raise DistributedError("the default process group is already initialized (call destroy_process_group first)")
    seconds = _seconds(timeout)
    if backend == "mpi":
        if not launched_by_mpi():
            raise DistributedError(
                "init_process_group('mpi') needs the ranks an MPI launcher starts: run it as "
                "`mpiexec -n N python ...` (pip install 'tensorgrad-gpt[distributed]' gives mpiexec)"
            )
        job.set_current_group(MPIBackend(seconds))
    elif backend == "nccl":
        job.set_current_group(NCCLBackend(seconds))
    else:
        raise ValueError(f"unknown backend {backend!r}: expected 'mpi' or 'nccl'")
    _previous_excepthook = sys.excepthook
    sys.excepthook = _abort_on_uncaught


def _abort_on_uncaught(kind, value, tb):
    """An uncaught exception on one rank ends every rank, with this rank's traceback."""
    text = "".join(traceback.format_exception(kind, value, tb))
    abort(f"rank {get_rank()} raised an uncaught exception; ending all ranks:\n{text.rstrip()}")


def _require():
    group = job.current_group()
    if group is None:
        raise DistributedError(
            "the default process group is not initialized: call tensorgrad.distributed.init_process_group() first"
        )
    return group


def is_available() -> bool:
    """True: this build has tensorgrad.distributed (its backends load on first use)."""
    return True


def is_initialized() -> bool:
    return job.current_group() is not None


def get_backend() -> str:
    return _require().name


def get_rank() -> int:
    return _require().rank


def get_world_size() -> int:
    return _require().world_size


def barrier():
    """Wait until every rank reaches this point (with the group's timeout)."""
    _require().barrier()


def destroy_process_group():
    """Leave the group; the excepthook goes back to what it was.  MPI itself stays up (it cannot
    be started twice in one process) and is finalized when the process exits."""
    global _previous_excepthook
    group = _require()
    group.close()
    job.set_current_group(None)
    if sys.excepthook is _abort_on_uncaught:
        sys.excepthook = _previous_excepthook
    _previous_excepthook = None


def group():
    """The backend object (for tensorgrad.distributed's collectives)."""
    return _require()
