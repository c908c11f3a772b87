"""The MPI backend (mpi4py): CPU processes on one machine or many.

Every collective is non-blocking (`Iallreduce`, `Ibcast`, `Ibarrier`, ...), then polled until a
deadline, so a dead or stuck rank ends the job with a message instead of hanging it.  NumPy
arrays are reduced in place in their own memory; arrays on a GPU (or the strict test device) are
copied to the host, reduced there and copied back (this MPI is not CUDA-aware).
"""

from __future__ import annotations

import pickle
import time

from .. import backend
from .job import DistributedError, abort

# The dtypes every MPI has a datatype for (mpi4py reads it from the buffer's format).
SUPPORTED_DTYPES = ("float32", "float64", "int32", "int64")


def load_mpi():
    try:
        from mpi4py import MPI  # noqa: PLC0415  (optional dependency)
    except ImportError:
        raise DistributedError(
            "the 'mpi' backend needs mpi4py and an MPI: pip install 'tensorgrad-gpt[distributed]'"
        ) from None
    return MPI


def wait(request, timeout: float, what: str, rank: int):
    """Poll `request` until it completes; past `timeout` seconds end every rank, naming `what`."""
    deadline = time.monotonic() + timeout
    pause = 0.0
    while not request.Test():
        if time.monotonic() > deadline:
            abort(
                f"rank {rank}: {what} was not joined by every rank within {timeout:g} s "
                "(a rank died, is stuck, or skipped it); ending all ranks"
            )
        time.sleep(pause)  # 0 first (yield the core), then 10 us doubling up to 1 ms
        pause = min(max(2 * pause, 1e-5), 1e-3)


class MPIBackend:
    name = "mpi"

    def __init__(self, timeout: float):
        self.MPI = load_mpi()
        self.comm = self.MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        self.timeout = timeout

    def _wait(self, request, what):
        wait(request, self.timeout, what, self.rank)

    def _host_buffer(self, array):
        """(buffer MPI works on, whether it is a copy to write back)."""
        if backend.device_of(array) == "cpu" and array.flags.c_contiguous:
            return array, False
        host = backend.to_numpy(array)
        if not host.flags.c_contiguous:
            host = host.copy()
        return host, True

    def _write_back(self, array, host):
        device = backend.device_of(array)
        array[...] = host if device == "cpu" else backend.from_host(host, host.dtype, device)

    def all_reduce(self, array, op: str):
        """In place: op is 'sum', 'avg' or 'max'."""
        buf, copied = self._host_buffer(array)
        mpi_op = self.MPI.MAX if op == "max" else self.MPI.SUM
        self._wait(self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=mpi_op), f"all_reduce({op}, {buf.size} elements)")
        if op == "avg":
            buf /= self.world_size
        if copied:
            self._write_back(array, buf)

    def all_reduce_start(self, array):
        """Start a sum all-reduce of `array` in place (a non-blocking Iallreduce) and return the
        function that completes it (polled with the deadline, as every collective here); the
        process goes on meanwhile.  DistributedDataParallel starts one per bucket during backward."""
        buf, copied = self._host_buffer(array)
        request = self.comm.Iallreduce(self.MPI.IN_PLACE, buf, op=self.MPI.SUM)

        def finish():
            self._wait(request, f"all_reduce(sum, {buf.size} elements)")
            if copied:
                self._write_back(array, buf)

        return finish

    def broadcast(self, array, src: int):
        buf, copied = self._host_buffer(array)
        self._wait(self.comm.Ibcast(buf, root=src), f"broadcast(src={src}, {buf.size} elements)")
        if copied and self.rank != src:
            self._write_back(array, buf)

    def barrier(self):
        self._wait(self.comm.Ibarrier(), "barrier")

    def all_gather_object(self, obj) -> list:
        """Every rank's `obj` (picklable), in rank order."""
        data = pickle.dumps(obj)
        sizes = bytearray(8 * self.world_size)
        self._wait(self.comm.Iallgather(len(data).to_bytes(8, "little"), sizes), "all_gather_object (sizes)")
        counts = [int.from_bytes(sizes[8 * i : 8 * i + 8], "little") for i in range(self.world_size)]
        offsets = [sum(counts[:i]) for i in range(self.world_size)]
        out = bytearray(sum(counts))
        B = self.MPI.BYTE
        self._wait(self.comm.Iallgatherv([data, B], [out, (counts, offsets), B]), "all_gather_object")
        return [pickle.loads(bytes(out[o : o + c])) for o, c in zip(offsets, counts)]

    def abort(self, exit_code: int):
        self.comm.Abort(exit_code)

    def close(self):
        pass
