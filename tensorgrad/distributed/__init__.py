"""tensorgrad.distributed: data-parallel training across processes, with torch.distributed's
names.  Backends: "mpi" (mpi4py; CPU processes on one machine or many; GPU arrays go through the
host) and "nccl" (GPU to GPU through cupyx.distributed).  Start the ranks with a launcher:

    mpiexec -n 4 python train.py

    import tensorgrad.distributed as dist
    dist.init_process_group("mpi")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)

Every collective has a deadline (init_process_group's `timeout`): a dead or stuck rank ends the
job with a message instead of hanging it, and an uncaught exception on any rank ends every rank.
"""

from .collectives import ReduceOp, all_gather_object, all_reduce, broadcast
from .job import DistributedError, abort, launched_by_mpi
from .process_group import (
    DEFAULT_TIMEOUT,
    barrier,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
)

__all__ = [
    "DEFAULT_TIMEOUT", "DistributedError", "ReduceOp", "abort", "all_gather_object", "all_reduce", "barrier",
    "broadcast", "destroy_process_group", "get_backend", "get_rank", "get_world_size", "init_process_group",
    "is_available", "is_initialized", "launched_by_mpi",
]  # fmt: skip
