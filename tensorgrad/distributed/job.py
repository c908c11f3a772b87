"""The job this process belongs to: how the launcher started it, and how the whole job ends.

Rank and world size come from the launcher, never from arguments: `mpiexec -n N` (MPICH's
PMI_RANK / PMI_SIZE, Open MPI's OMPI_COMM_WORLD_*, PMIx) for both backends, or torchrun-style
RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT for NCCL.

`abort` ends every rank at once through the backend of the default group, which
process_group.py records here while the group is up.  The backends (mpi.py, nccl.py) call it
when a collective misses its deadline; they and process_group.py sit above this module.
"""

from __future__ import annotations

import os
import sys
import time

# Environment variables that say "started by an MPI launcher" (MPICH/Hydra, Open MPI, PMIx).
_MPI_LAUNCHER_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")

_group = None  # the backend object of the default group while it is initialized (process-wide, as torch's)


class DistributedError(RuntimeError):
    """A process group that cannot be started or used here (one line naming the fix)."""


def launched_by_mpi() -> bool:
    return any(v in os.environ for v in _MPI_LAUNCHER_VARS)


def launched_by_torchrun() -> bool:
    return "RANK" in os.environ and "WORLD_SIZE" in os.environ


def local_rank() -> int:
    """This process's index among the ranks on its machine (which GPU it takes)."""
    for var in ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    return 0


def current_group():
    """The backend object of the default group, or None when no group is up."""
    return _group


def set_current_group(group):
    """Record (or, with None, forget) the default group's backend: process_group.py's job."""
    global _group
    _group = group


def abort(message: str, exit_code: int = 1):
    """Print `message` on this rank's stderr and end every rank of the job (MPI_Abort)."""
    print(message, file=sys.stderr, flush=True)
    if _group is not None:
        # mpiexec forwards each rank's output asynchronously and MPI_Abort tears the job down at
        # once: a moment's pause lets the message (this rank's, or another's) reach the terminal.
        time.sleep(0.5)
        _group.abort(exit_code)
    os._exit(exit_code)
