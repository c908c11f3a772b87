"""The run-directory lock under contention: processes entering `RunDir` in a loop never hold it
two at a time, and a lock file is never judged stale before its pid is in it."""

import multiprocessing
import os

from gpt.rundir import LOCK, RunDir, RunDirError

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


def test_a_lock_file_always_holds_its_pid(tmp_path):
    """The lock appears whole (written to a temporary name, then renamed), so no reader can see
    an empty lock file and judge it stale."""
    with RunDir(tmp_path):
        assert (tmp_path / LOCK).read_text() == f"{os.getpid()}\n"
        assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
