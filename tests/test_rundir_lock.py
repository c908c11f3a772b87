"""The run-directory lock: an flock held for the run's lifetime.  Under contention, processes
entering `RunDir` in a loop never hold it two at a time; a run in another PID namespace (another
container, another host) never takes it from a live one; a lock file left by a dead run is taken
over whatever pid it names."""

import multiprocessing
import os
import socket
import subprocess
import sys
from pathlib import Path

from cli_helpers import in_new_pid_namespace

from gpt.rundir import LOCK, RunDir, RunDirError

ROOT = Path(__file__).resolve().parents[1]

ROUNDS = 300  # per process; on the unguarded lock 4 x 300 entries overlapped several times


def _contend(path, rounds, queue):
    entered = overlaps = 0
    marker = os.path.join(path, "holder")
    for _ in range(rounds):
        try:
            with RunDir(path):
                entered += 1
                try:  # a second holder would find the first one's marker
                    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    overlaps += 1
                    continue
                os.close(fd)
                os.sched_yield()
                os.unlink(marker)
        except RunDirError:
            pass  # in use by another process: the expected refusal
    queue.put((entered, overlaps))


def test_the_lock_is_held_by_one_process_at_a_time(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_contend, args=(str(tmp_path), ROUNDS, queue)) for _ in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    entered = sum(r[0] for r in results)
    overlaps = sum(r[1] for r in results)
    assert overlaps == 0, f"the lock was held by two processes at once {overlaps} times"
    assert entered > 0
    assert not (tmp_path / LOCK).exists()


def test_the_lock_file_names_its_holder(tmp_path):
    with RunDir(tmp_path):
        assert (tmp_path / LOCK).read_text() == f"{os.getpid()} {socket.gethostname()}\n"
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


CONTEND = """
import sys
from gpt.rundir import RunDir, RunDirError
try:
    RunDir(sys.argv[1]).acquire()
    print("took it")
except RunDirError as e:
    print(e)
"""


def test_a_run_in_another_pid_namespace_never_takes_a_live_runs_lock(tmp_path):
    """This process's pid does not exist in the other namespace: a pid check there judged the
    live run's lock stale and took it."""
    prefix = in_new_pid_namespace()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with RunDir(tmp_path):
        r = subprocess.run([*prefix, sys.executable, "-c", CONTEND, str(tmp_path)], env=env, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "is in use by another run" in r.stdout and f"pid {os.getpid()}" in r.stdout, r.stdout
        assert (tmp_path / LOCK).read_text().split()[0] == str(os.getpid())  # still ours
    r = subprocess.run([*prefix, sys.executable, "-c", CONTEND, str(tmp_path)], env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.stdout == "took it\n", r.stdout + r.stderr  # once released, it is taken at once


def test_a_lock_file_left_by_a_dead_run_is_taken_over_whatever_pid_it_names(tmp_path):
    """Its pid may be alive again as another process (reused, or this very test's parent): a
    lock is held only while its holder lives, whatever the file says."""
    (tmp_path / LOCK).write_text(f"{os.getppid()}\n")  # a live process, not a run
    with RunDir(tmp_path):
        assert (tmp_path / LOCK).read_text().split()[0] == str(os.getpid())
    assert not (tmp_path / LOCK).exists()


def test_a_second_entry_into_a_locked_directory_is_refused_in_the_same_process(tmp_path):
    with RunDir(tmp_path):
        try:
            RunDir(tmp_path).acquire()
        except RunDirError as e:
            assert "is in use by another run" in str(e)
        else:
            raise AssertionError("a second RunDir took a held lock")
        assert (tmp_path / LOCK).exists()
