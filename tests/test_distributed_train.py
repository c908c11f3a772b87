"""`--distributed` training under `mpiexec -n 2` (skipped without mpi4py / mpiexec): a stopped and
resumed 2-rank run ends on the same weights and random states as an uninterrupted one; a resume
on another rank count, ranks started with different flags, and --distributed without a launcher
or without mpi4py are each refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from test_distributed import MPIEXEC, ROOT, needs_mpi

import tensorgrad as tg

pytestmark = pytest.mark.skipif(
    not (ROOT / "data" / "tinyshakespeare" / "input.txt").exists(), reason="needs data/tinyshakespeare/input.txt"
)
SCRIPT = [sys.executable, str(ROOT / "examples" / "train_shakespeare.py")]
FLAGS = ["--distributed", "--eval-interval", "3", "--eval-iters", "2", "--sample-tokens", "0"]
_LAUNCHER_VARS = ("PMI_SIZE", "PMI_RANK", "PMI_FD", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "RANK", "WORLD_SIZE")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in _LAUNCHER_VARS}
    env.update(PYTHONPATH=str(ROOT), TENSORGRAD_THREADS="1", OPENBLAS_NUM_THREADS="1", **extra)
    return env


def run(*args, ranks=2, timeout=180):
    launch = [MPIEXEC, "-n", str(ranks)] if ranks else []
    out = subprocess.run([*launch, *args], check=False, capture_output=True, text=True, timeout=timeout, env=_env(),
                         cwd=ROOT)  # fmt: skip
    return out.returncode, out.stdout + out.stderr


def error_lines(text):
    return [line for line in text.splitlines() if line.startswith("error:")]


@needs_mpi
@pytest.mark.slow
def test_two_ranks_stopped_and_resumed_end_exactly_as_one_run(tmp_path):
    # evaluations at 0, 3, 6 in both (an extra evaluation would draw batches of its own)
    rc, out = run(*SCRIPT, *FLAGS, "--max-iters", "7", "--out-dir", tmp_path / "whole")
    assert rc == 0, out
    assert "2 rank(s) x batch 32 = effective batch 64" in out, out
    assert out.count("step 3: train loss") == 1, out  # only rank 0 prints
    rc, out = run(*SCRIPT, *FLAGS, "--max-iters", "4", "--out-dir", tmp_path / "parts")
    assert rc == 0, out
    rc, out = run(*SCRIPT, *FLAGS, "--max-iters", "7", "--out-dir", tmp_path / "parts", "--resume")
    assert rc == 0, out
    a, b = tg.load(tmp_path / "whole" / "last.npz"), tg.load(tmp_path / "parts" / "last.npz")
    assert a["world_size"] == b["world_size"] == 2
    assert a["rng_ranks"] == b["rng_ranks"]  # every rank's generator, bit for bit
    for key, value in a["model"].items():
        assert np.array_equal(value.numpy(), b["model"][key].numpy()), key  # exact: the same float ops
    logs = [(tmp_path / d / "log.jsonl").read_text().splitlines() for d in ("whole", "parts")]
    strip = lambda lines: [{k: v for k, v in eval(x).items() if k != "time"} for x in lines]
    assert strip(logs[0]) == strip(logs[1])

    # another rank count is refused, in one line, on both sides
    rc, out = run(*SCRIPT, *FLAGS, "--max-iters", "9", "--out-dir", tmp_path / "parts", "--resume", ranks=1)
    assert rc != 0 and error_lines(out) == [
        (
            f"error: the run in {tmp_path / 'parts'} was trained on 2 rank(s) and this run has 1: a resume needs "
            "the same number (mpiexec -n 2), so that every rank's batches continue exactly"
        )
    ], out
    rc, out = run(*SCRIPT, "--max-iters", "9", "--out-dir", tmp_path / "parts", "--resume", ranks=0)
    assert rc != 0 and len(error_lines(out)) == 1 and "trained on 2 ranks" in out, out


@needs_mpi
def test_ranks_started_with_different_flags_are_refused_naming_the_difference():
    one = [*SCRIPT, *FLAGS, "--max-iters", "2"]
    out = subprocess.run([MPIEXEC, "-n", "1", *one, "--lr", "1e-3", ":", "-n", "1", *one, "--lr", "2e-3"],
                         check=False, capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT)  # fmt: skip
    assert out.returncode != 0
    assert "error: the ranks disagree on config learning_rate: 0.002 on rank 1, 0.001 on rank 0" in out.stderr, out


def test_distributed_without_a_launcher_or_without_mpi_is_one_line(tmp_path):
    rc, out = run(*SCRIPT, "--distributed", ranks=0)
    assert rc != 0 and error_lines(out) == [
        (
            "error: init_process_group('mpi') needs the ranks an MPI launcher starts: run it as "
            "`mpiexec -n N python ...` (pip install 'tensorgrad-gpt[distributed]' gives mpiexec)"
        )
    ], out
    assert "Traceback" not in out
    (tmp_path / "mpi4py").mkdir()  # an mpi4py that cannot be imported, under a launcher's variables
    (tmp_path / "mpi4py" / "__init__.py").write_text("raise ImportError('no MPI here')\n")
    env = _env(PMI_SIZE="1", PMI_RANK="0")
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{ROOT}"
    out = subprocess.run(
        [*SCRIPT, "--distributed"], check=False, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    assert out.returncode != 0 and error_lines(out.stdout + out.stderr) == [
        "error: the 'mpi' backend needs mpi4py and an MPI: pip install 'tensorgrad-gpt[distributed]'"
    ], out
