"""tensorgrad.distributed and DistributedDataParallel, on two ranks: each case runs
`mpiexec -n 2 python tests/distributed_worker.py CASE` in a subprocess with a timeout (skipped
when mpi4py or mpiexec is missing: pip install '.[distributed]')."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tensorgrad as tg
import tensorgrad.distributed as dist
from tensorgrad.nn.parallel import DistributedDataParallel

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "distributed_worker.py"
MPIEXEC = shutil.which("mpiexec")
needs_mpi = pytest.mark.skipif(
    MPIEXEC is None or importlib.util.find_spec("mpi4py") is None,
    reason="needs mpi4py and mpiexec: pip install '.[distributed]'",
)
_LAUNCHER_VARS = ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "RANK", "WORLD_SIZE")


def mpirun(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in _LAUNCHER_VARS}
    env.update(PYTHONPATH=str(ROOT), TENSORGRAD_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    start = time.monotonic()
    out = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, *map(str, args)],
        check=False, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
    )  # fmt: skip
    return out.returncode, out.stdout + out.stderr, time.monotonic() - start


@needs_mpi
def test_collectives_and_ddp_match_one_process():
    """all_reduce (SUM, AVG, MAX) and broadcast for 4 dtypes on the CPU and through the host-copy
    path; two ranks on half batches end where one process on the whole batch does, identical on
    both ranks, with and without no_sync accumulation; the explicit sync_gradients() after a synced
    backward changes nothing, after a no_sync one it averages."""
    rc, out, _ = mpirun(WORKER, "collectives,ddp")
    assert rc == 0, out
    assert "ok collectives" in out and "ok ddp" in out, out


@needs_mpi
def test_ddp_in_pytorch_form_matches_one_process():
    """PyTorch's DDP loop (forward, loss.backward(), optimizer.step(), no sync call) on two ranks
    ends where one process on the whole batch does (1e-12), every bucket's all-reduce started
    during backward; the same with no_sync accumulation."""
    rc, out, _ = mpirun(WORKER, "ddp_pytorch_form")
    assert rc == 0, out
    assert "ok ddp_pytorch_form" in out, out


@needs_mpi
def test_a_rank_that_raises_ends_the_job_with_its_message():
    # the deadline is 60 s: ending in far less shows the exception, not the timeout, ended it
    rc, out, elapsed = mpirun(WORKER, "raise", 60)
    assert rc != 0
    assert "rank 1 raised" in out and "rank one failed on purpose" in out, out
    assert elapsed < 30, elapsed  # startup is ~2 s here; 30 s leaves room for a loaded machine


@needs_mpi
def test_a_stuck_rank_ends_the_job_at_the_deadline():
    rc, out, elapsed = mpirun(WORKER, "stuck", 3)  # rank 1 sleeps 60 s; the deadline is 3 s
    assert rc != 0
    assert "rank 0: all_reduce(sum, 1 elements) was not joined by every rank within 3 s" in out, out
    assert elapsed < 40, elapsed  # well before rank 1 wakes up at 60 s


@needs_mpi
def test_ranks_with_different_models_are_refused_naming_the_difference():
    rc, out, _ = mpirun(WORKER, "mismatch")
    assert rc != 0
    assert "rank 1's model differs from rank 0's: ('0.weight', (8, 3), 'float64') where rank 0 has" in out, out


@pytest.mark.gpu
@pytest.mark.skipif(not tg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
def test_nccl_on_one_gpu():
    """The NCCL backend with world size 1 (torchrun-style variables; CuPy's TCP store on rank 0)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in _LAUNCHER_VARS}
    env.update(PYTHONPATH=str(ROOT), RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    out = subprocess.run([sys.executable, str(WORKER), "nccl"], check=False, capture_output=True, text=True,
                         timeout=300, env=env, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0 and "ok nccl" in out.stdout, out.stdout + out.stderr


def test_without_a_launcher_one_clear_error(monkeypatch):
    for var in _LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(dist.DistributedError, match="mpiexec -n N python"):
        dist.init_process_group("mpi")
    with pytest.raises(dist.DistributedError, match="needs a launcher"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="unknown backend 'gloo'"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()
    with pytest.raises(dist.DistributedError, match="call tensorgrad.distributed.init_process_group"):
        dist.get_rank()
    with pytest.raises(dist.DistributedError, match="init_process_group"):
        DistributedDataParallel(tg.nn.Linear(2, 2))
