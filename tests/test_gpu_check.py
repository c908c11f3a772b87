"""benchmarks/gpu_check.sh fits the GPU machine it is written for: one command of at most 600 s
(15 minutes in all, start-up included), only the working tree and the carried dataset, no
network.  Its timeouts must add up to well under 600 s, and it must stop at once, loudly, when
the dataset did not travel with it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpt import data as gdata

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPT = BENCHMARKS / "gpu_check.sh"
FULL_RUN = BENCHMARKS / "gpu_full_run.sh"  # the second command: the 5000-step large run
DATA_CHECK = BENCHMARKS / "gpu_data.sh"  # sourced by both
BUDGET_S = 520  # of the 600 s a command may take: room for start-up, the data check and the summary


def _steps():
    """(name, seconds, command) of every `step NAME SECONDS ...` call in the script."""
    text = SCRIPT.read_text()
    return [(m[1], int(m[2]), m[3]) for m in re.finditer(r"^step (\w+) (\d+) (.*)$", text, re.M)]


def test_the_timeouts_fit_the_budget_and_every_command_has_one():
    steps = _steps()
    assert [name for name, _, _ in steps] == ["env", "gpu_tests", "large_200", "bench_fp32", "bench_tf32"]
    assert sum(seconds for _, seconds, _ in steps) <= BUDGET_S
    body = SCRIPT.read_text().split("# 0. the dataset first")[1]
    for line in body.splitlines():  # every python3 run is inside a step (with a timeout)
        if line.startswith("python3"):
            pytest.fail(f"a command without a timeout: {line}")


def test_it_runs_the_gpu_tests_in_parallel_the_large_run_and_both_benches():
    commands = {name: cmd for name, _, cmd in _steps()}
    assert "pytest -m gpu -n " in commands["gpu_tests"] and "$gpu_files" in commands["gpu_tests"]
    marked = subprocess.run(["grep", "-l", "mark.gpu", *map(str, SCRIPT.parent.parent.glob("tests/test_*.py"))],
                            capture_output=True, text=True).stdout  # fmt: skip
    assert "test_gpu.py" in marked  # the files the script's grep finds
    assert "--backend cupy --preset large" in commands["large_200"]
    assert "--backend cupy" in commands["bench_fp32"] and "--tf32" in commands["bench_tf32"]
    assert "${OUT:-gpu_check}" in SCRIPT.read_text()  # full logs under $OUT, or a local folder


def test_the_dataset_is_checked_before_anything_runs():
    text = SCRIPT.read_text()
    assert text.index(". benchmarks/gpu_data.sh") < text.index("\nstep ")
    full = FULL_RUN.read_text()
    assert full.index(". benchmarks/gpu_data.sh") < full.index("python3")
    assert gdata.SHA256 in DATA_CHECK.read_text()  # the same file the training script would accept


def test_the_full_run_fits_one_command():
    assert [int(t) for t in re.findall(r"timeout (\d+)", FULL_RUN.read_text())] == [560]  # of 600 s
    assert "--preset large" in FULL_RUN.read_text() and "log.jsonl" in FULL_RUN.read_text()


@pytest.fixture
def tree(tmp_path):
    """A copy of the scripts in an otherwise empty tree, and the $OUT they write to."""
    (tmp_path / "benchmarks").mkdir()
    for script in (SCRIPT, FULL_RUN, DATA_CHECK):
        shutil.copy(script, tmp_path / "benchmarks" / script.name)
    return tmp_path


def _run(tree, script="gpu_check.sh"):
    out = tree / "out"
    proc = subprocess.run(["bash", str(tree / "benchmarks" / script)], capture_output=True, text=True,
                          env={"OUT": str(out), "PATH": "/usr/bin:/bin"}, timeout=60)  # fmt: skip
    return proc, out


@pytest.mark.parametrize("script", ["gpu_check.sh", "gpu_full_run.sh"])
def test_without_the_dataset_it_stops_at_once_and_says_how_to_carry_it(tree, script):
    proc, out = _run(tree, script)
    assert proc.returncode == 100
    assert "input.txt is missing" in proc.stdout and "carry" in proc.stdout
    assert "carry" in (out / "FAILED.txt").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["FAILED.txt"]  # nothing else ran


def test_a_wrong_dataset_is_refused(tree):
    (tree / "data" / "tinyshakespeare").mkdir(parents=True)
    (tree / "data" / "tinyshakespeare" / "input.txt").write_text("not Shakespeare")
    proc, _ = _run(tree)
    assert proc.returncode == 100 and "sha256" in proc.stdout
