"""The NCCL backend: GPU arrays reduced GPU to GPU through `cupyx.distributed` (CuPy's NCCL
communicator, `NCCLBackend`), one GPU per rank (the rank's local index on its machine).

Rank and size come from mpiexec (then MPI also carries the rendezvous, the barrier, objects and
the abort) or from torchrun-style RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT (then CuPy's
TCP store on rank 0 carries the rendezvous and the barrier).

NCCL calls only queue work on the current stream.  Each collective then records an event and
polls it until the group's deadline; past it, the NCCL communicator is aborted and the job ends
with a message naming the rank and the collective.  (That is one host wait per collective: DDP
makes one per step.)
"""

from __future__ import annotations

import os
import time

from .. import backend
from .job import DistributedError, abort, launched_by_mpi, launched_by_torchrun, local_rank
from .mpi import MPIBackend

_FLOATS = ("float16", "float32", "float64")


def nccl_communicator(world_size, rank, gpu_index, host=None, port=None, use_mpi=False):
    """CuPy's NCCL communicator (`cupyx.distributed.NCCLBackend`) for this rank, on GPU
    `gpu_index % device count`, which becomes this process's 'cuda' device before CuPy is checked."""
    cupy, cupyx_distributed, nccl = backend.import_nccl()
    count = cupy.cuda.runtime.getDeviceCount() if cupy.cuda.is_available() else 0
    if count:
        cupy.cuda.Device(gpu_index % count).use()
    backend.namespace("cuda")  # loads and checks CuPy: one clear line if there is no usable GPU
    if not nccl.available:
        raise backend.DeviceError(
            "the 'nccl' backend needs NCCL: pip install nvidia-nccl-cu12 (or -cu13, matching CuPy)"
        )
    return cupyx_distributed.init_process_group(world_size, rank, host=host, port=port, use_mpi=use_mpi)


class NCCLBackend:
    name = "nccl"

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.mpi = None
        host = port = None
        if launched_by_mpi():
            self.mpi = MPIBackend(timeout)
            self.rank, self.world_size = self.mpi.rank, self.mpi.world_size
        elif launched_by_torchrun():
            self.rank, self.world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
            host = os.environ.get("MASTER_ADDR")
            port = int(os.environ["MASTER_PORT"]) if "MASTER_PORT" in os.environ else None
        else:
            raise DistributedError(
                "init_process_group('nccl') needs a launcher: `mpiexec -n N python ...`, or torchrun-style "
                "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in the environment"
            )
        self.comm = nccl_communicator(
            self.world_size, self.rank, local_rank(), host=host, port=port, use_mpi=self.mpi is not None
        )
        self.xp = backend.namespace("cuda")

    def _check(self, array, what):
        if backend.device_of(array) != "cuda":
            raise DistributedError(
                f"{what}: the 'nccl' backend moves GPU tensors, got one on {backend.device_of(array)!r}: "
                "move it with .to('cuda'), or use init_process_group('mpi')"
            )
        if array.flags.c_contiguous:
            return array, False
        return self.xp.ascontiguousarray(array), True

    def _wait_gpu(self, what):
        """Poll an event recorded after the queued collective until the deadline."""
        event = self.xp.cuda.Event(disable_timing=True)
        event.record()
        deadline = time.monotonic() + self.timeout
        pause = 0.0
        while not event.done:
            if time.monotonic() > deadline:
                self.comm._comm.abort()  # NCCL's ncclCommAbort: frees the stream's stuck kernels
                abort(
                    f"rank {self.rank}: {what} was not joined by every rank within {self.timeout:g} s "
                    "(a rank died, is stuck, or skipped it); ending all ranks"
                )
            time.sleep(pause)
            pause = min(max(2 * pause, 1e-5), 1e-3)

    def all_reduce(self, array, op: str):
        buf, copied = self._check(array, "all_reduce")
        self.comm.all_reduce(buf, buf, "max" if op == "max" else "sum")
        if op == "avg":
            buf /= self.world_size
        if copied:
            array[...] = buf
        self._wait_gpu(f"all_reduce({op}, {buf.size} elements)")

    def broadcast(self, array, src: int):
        buf, copied = self._check(array, "broadcast")
        self.comm.broadcast(buf, src)
        if copied:
            array[...] = buf
        self._wait_gpu(f"broadcast(src={src}, {buf.size} elements)")

    def barrier(self):
        if self.mpi is not None:
            self.mpi.barrier()
        else:
            self.comm.barrier()  # CuPy's TCP-store barrier (no deadline there)

    def all_gather_object(self, obj) -> list:
        if self.mpi is not None:
            return self.mpi.all_gather_object(obj)
        if self.world_size == 1:
            return [obj]
        raise DistributedError("all_gather_object with the 'nccl' backend needs the ranks started by mpiexec")

    def abort(self, exit_code: int):
        try:
            self.comm._comm.abort()
        finally:
            if self.mpi is not None:
                self.mpi.abort(exit_code)

    def close(self):
        self.comm._comm.destroy()
