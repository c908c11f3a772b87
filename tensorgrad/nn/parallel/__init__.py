"""tensorgrad.nn.parallel: data parallelism over the ranks of tensorgrad.distributed."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
