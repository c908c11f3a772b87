"""Data-parallel training's side of the ranks (`--distributed`): start the group, check that
every rank runs the same thing, seed each rank's batches, average evaluations, gather the
random states for checkpoints.  The training loop (gpt/train.py) calls these where it needs
them and, with `ranks=None`, none of this runs.

Only rank 0 prints, logs and writes checkpoints.  A checkpoint holds every rank's generator
state (`rng_ranks`) and the rank count (`world_size`): a resume on the same number of ranks
continues every rank's stream of batches exactly; on another number it is refused.
"""

from __future__ import annotations

import json

import tensorgrad as tg
import tensorgrad.distributed as dist
from tensorgrad.nn.parallel import DistributedDataParallel
from tensorgrad.random import get_rng_state, set_rng_state
from tensorgrad.serialization import CheckpointError

from .checkpoint import data_fingerprint

__all__ = ["Ranks", "data_fingerprint"]


class Ranks:
    """This process's place among the ranks of a data-parallel run."""

    def __init__(self, backend_name: str = "mpi"):
        if not dist.is_initialized():
            dist.init_process_group(backend_name)
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.is_main = self.rank == 0
        self.device = "cuda" if dist.get_backend() == "nccl" else "cpu"  # where small collectives' tensors live

    def check_same(self, **facts):
        """Every rank must hold the same facts (config, data): else refuse, naming the first difference."""
        every = [None] * self.world_size
        dist.all_gather_object(every, facts)
        for rank, theirs in enumerate(every):
            for key, value in every[0].items():
                if theirs[key] != value:
                    if isinstance(value, dict):
                        field = next(f for f in value if value[f] != theirs[key].get(f))
                        shown = f"{key} {field}: {theirs[key].get(field)!r} on rank {rank}, {value[field]!r} on rank 0"
                    else:
                        shown = f"{key}: {theirs[key]!r} on rank {rank}, {value!r} on rank 0"
                    raise dist.DistributedError(
                        f"the ranks disagree on {shown}; every rank must be started with the same flags and data"
                    )

    def seed_batches(self, seed: int):
        """Each rank its own stream of batches (the model's initial weights are rank 0's, broadcast)."""
        tg.manual_seed((seed + 1_000_003 * (self.rank + 1)) % 2**64)  # within a seed's range at its top too

    def wrap(self, model):
        return DistributedDataParallel(model)

    def average(self, losses: dict) -> dict:
        """The mean over ranks of each split's loss (each rank evaluated its own batches)."""
        keys = sorted(losses)
        t = tg.tensor([float(losses[k]) for k in keys], dtype=tg.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        return dict(zip(keys, t.tolist()))

    def rng_states(self, device) -> str:
        """Every rank's generator state, in rank order, as one JSON string (a collective)."""
        every = [None] * self.world_size
        dist.all_gather_object(every, get_rng_state(device))
        return json.dumps(every)

    def restore_rng(self, ckpt, device, where):
        """This rank's generator state from a checkpoint written by the same number of ranks."""
        stored = int(ckpt.get("world_size", 1))
        if stored != self.world_size:
            raise dist.DistributedError(
                f"{where} was trained on {stored} rank(s) and this run has {self.world_size}: a resume needs the "
                f"same number (mpiexec -n {stored}), so that every rank's batches continue exactly"
            )
        try:
            set_rng_state(json.loads(ckpt["rng_ranks"])[self.rank], device)
        except (ValueError, TypeError, KeyError, OverflowError) as e:
            raise CheckpointError(f"{where}: checkpoint field 'rng_ranks': not a state of the {device} generator "
                                  f"({e})") from None  # fmt: skip
