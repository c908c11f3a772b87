"""tensorgrad-train keeps a run whole and says what happens to it: a resume on other text is
refused, `kill` stops it as Ctrl-C does, a finished run gets the files a kill left unwritten,
every resume is recorded, a step that cannot fit in memory is refused before any work, progress
shows in a log file too, and a run that blows up ends in one line."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from cli_helpers import FAST, TEXT, in_new_pid_namespace, run

import tensorgrad as tg
from gpt import progress as gprogress
from gpt import train as gtrain
from gpt.cli import train as cli_train
from gpt.rundir import RunDir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text(TEXT)
    return path


def train_cli(capsys, corpus, out_dir, *extra):
    return run(cli_train.main, ["--data", corpus, "--out-dir", out_dir, *FAST, *extra], capsys)


def assert_one_error_line(code, err, *fragments):
    assert code == 1, err
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# --------------------------------------------------------------------------- item 4: the run's data
def test_a_resume_on_other_text_of_the_same_vocabulary_is_refused_naming_the_data(tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    other = tmp_path / "other.txt"
    other.write_text(TEXT[::-1])  # the same characters, another text
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    code, out, err = run(cli_train.main, ["--data", other, "--out-dir", run_dir, *FAST, "--max-iters", "9",
                                          "--resume"], capsys)  # fmt: skip
    assert_one_error_line(code, err, f"--data {other}", "not the text the run", "--out-dir")
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before
    # its own text resumes
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert code == 0, err
    assert "note:" not in out


def test_an_older_checkpoint_without_a_fingerprint_resumes_with_a_note(tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    ckpt = tg.load(run_dir / "last.npz")
    del ckpt["data"], ckpt["resumes"]  # as checkpoints were written before they recorded them
    tg.save(ckpt, run_dir / "last.npz")
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert code == 0, err
    assert "records no fingerprint of its data" in out
    assert tg.load(run_dir / "last.npz")["data"]  # recorded from now on


def test_a_seed_at_the_top_of_the_range_resumes_a_checkpoint_without_a_random_state(tmp_path, corpus, capsys):
    """A checkpoint without this process's generator state (a one-rank --distributed run's, resumed
    without it) reseeds with seed + step: modulo 2**64, as a seed is."""
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir, "--seed", str(2**64 - 1))[0] == 0
    ckpt = tg.load(run_dir / "last.npz")
    ckpt.update(rng=None, rng_ranks=json.dumps([json.loads(ckpt["rng"])]), world_size=1)  # as such a run writes it
    tg.save(ckpt, run_dir / "last.npz")
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert code == 0, err


def test_each_rank_s_seed_stays_in_the_range_at_its_top():
    from gpt.distributed import Ranks

    ranks = Ranks.__new__(Ranks)  # no process group: only the seeding is exercised
    for rank in (0, 3):
        ranks.rank = rank
        ranks.seed_batches(2**64 - 1)
        assert tg.default_generator.initial_seed() == (2**64 - 1 + 1_000_003 * (rank + 1)) % 2**64


# --------------------------------------------------------------------------- item 6: kill, finished runs, resumes
SIGTERM_AT = r"""
import os, signal, sys
from gpt import train as gtrain
from gpt.cli.train import main

k, calls = int(sys.argv[1]), [0]
def update(self, *args, **kwargs):
    calls[0] += 1
    if calls[0] == k:
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` does
gtrain.Progress.update = update
main(sys.argv[2:])
"""


def test_kill_term_stops_a_run_as_ctrl_c_does(tmp_path, corpus):
    argv = ["--data", str(corpus), "--out-dir", str(tmp_path / "run"), *FAST]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", SIGTERM_AT, "5", *argv], env=env, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode == 130, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert lines[0].startswith("error: interrupted at step 4;") and "(step 3)" in lines[0], r.stderr
    # the hint repeats --data: a resume must be given the run's text again
    hint = f"--out-dir {tmp_path / 'run'} --resume --data {corpus}"
    assert lines[1].startswith("resume with: ") and lines[1].endswith(hint)
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "run" / ".lock").exists()  # released
    r = subprocess.run([sys.executable, "-m", "gpt.cli.train", *argv, "--resume"], env=env, capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr


def test_the_sigterm_handler_is_the_programs_and_only_while_training(tmp_path, corpus, capsys, monkeypatch):
    before = signal.getsignal(signal.SIGTERM)
    during = []

    def update(self, *args, **kwargs):
        during.append(signal.getsignal(signal.SIGTERM))

    monkeypatch.setattr(gtrain.Progress, "update", update)
    assert train_cli(capsys, corpus, tmp_path / "run")[0] == 0
    assert during and all(h is not before and callable(h) for h in during)
    assert signal.getsignal(signal.SIGTERM) is before  # restored
    # the library alone leaves it as it is
    from gpt import ShakespeareData, get_config

    during.clear()
    data = ShakespeareData(TEXT)
    gtrain.train(get_config("small", max_iters=2, eval_interval=1, eval_iters=1, batch_size=2), data,
                 log=lambda s: None)  # fmt: skip
    assert during and all(h is before for h in during)


@pytest.mark.parametrize("missing", [["curves.png"], ["summary.json"], ["summary.json", "curves.png"]])
def test_a_finished_run_gets_the_files_a_kill_left_unwritten(missing, tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    for name in missing:
        (run_dir / name).unlink()
    code, out, err = train_cli(capsys, corpus, run_dir, "--resume")
    assert_one_error_line(code, err, "is finished (step 6 of --max-iters 6)")
    assert all((run_dir / name).exists() for name in missing), out
    assert "lacks" in out
    rebuilt = json.loads((run_dir / "summary.json").read_text())
    for key in ("preset", "config", "seed", "params", "final", "best_val", "best_step", "seconds", "resumes"):
        assert rebuilt[key] == summary[key], key
    assert not (run_dir / ".lock").exists()


def test_summary_lists_every_resume(tmp_path, corpus, capsys, monkeypatch):
    """A session interrupted after its first checkpoint still counts: its resume is in the
    checkpoints that follow, and the summary lists it beside the last one."""
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    real = gtrain.Progress.update

    def interrupt_at_step_8(self, step, *args, **kwargs):
        if step == 8:
            raise KeyboardInterrupt
        return real(self, step, *args, **kwargs)

    monkeypatch.setattr(gtrain.Progress, "update", interrupt_at_step_8)
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert code == 130, err
    monkeypatch.setattr(gtrain.Progress, "update", real)
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--lr", "2e-3", "--resume")
    assert code == 0, err
    resumes = json.loads((run_dir / "summary.json").read_text())["resumes"]
    assert resumes == [{"step": 6, "changed": {"max_iters": [6, 9]}},
                       {"step": 6, "changed": {"learning_rate": [0.001, 0.002]}}]  # fmt: skip


# --------------------------------------------------------------------------- symlinked run files
def test_symlinked_run_files_count_as_a_run_and_are_written_through(tmp_path, corpus, capsys):
    """A symlink among the run's files, even one whose target is gone, counts as a run: it is
    never written through without --resume, and --overwrite removes the link, not its target.
    A resume writes through the links (tg.save as torch.save, and the run's other files too)."""
    elsewhere, run_dir = tmp_path / "elsewhere", tmp_path / "run"
    elsewhere.mkdir()
    run_dir.mkdir()
    (run_dir / "last.npz").symlink_to(elsewhere / "last.npz")  # dangling
    code, out, err = train_cli(capsys, corpus, run_dir)
    assert_one_error_line(code, err, "already holds a run", "--overwrite")
    assert not (elsewhere / "last.npz").exists()
    code, out, err = train_cli(capsys, corpus, run_dir, "--overwrite")
    assert code == 0, err
    assert not (run_dir / "last.npz").is_symlink() and list(elsewhere.iterdir()) == []

    names = ("last.npz", "best.npz", "log.jsonl", "summary.json")
    for name in names:  # the run's files moved elsewhere, linked in
        (run_dir / name).rename(elsewhere / name)
        (run_dir / name).symlink_to(elsewhere / name)
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert code == 0, err
    assert all((run_dir / name).is_symlink() for name in names)
    assert tg.load(elsewhere / "last.npz")["step"] == 9
    resumes = json.loads((elsewhere / "summary.json").read_text())["resumes"]
    assert resumes == [{"step": 6, "changed": {"max_iters": [6, 9]}}]


# --------------------------------------------------------------------------- the lock across PID namespaces
def test_a_run_in_another_pid_namespace_cannot_overwrite_a_live_run(tmp_path, corpus, capsys):
    """Two containers (or hosts) on one disk: the live run's pid means nothing to the second run,
    which took the directory with --overwrite, deleted the run's files and interleaved its log."""
    prefix = in_new_pid_namespace()
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    argv = ["--data", str(corpus), "--out-dir", str(run_dir), *FAST, "--overwrite"]
    with RunDir(run_dir):  # a live run holds the directory
        r = subprocess.run([*prefix, sys.executable, "-m", "gpt.cli.train", *argv], env=dict(os.environ,
                           PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300)  # fmt: skip
        assert_one_error_line(r.returncode, r.stderr, f"--out-dir {run_dir} is in use by another run",
                              f"pid {os.getpid()}")  # fmt: skip
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


# --------------------------------------------------------------------------- item 11: memory
def test_a_step_that_cannot_fit_in_memory_is_refused_before_any_work(tmp_path, corpus, capsys, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("train() was called")

    monkeypatch.setattr(cli_train, "train", never)
    code, out, err = run(cli_train.main, ["--data", corpus, "--out-dir", tmp_path / "run", "--preset", "large",
                                          "--batch-size", "100000", "--sample-tokens", "0"], capsys)  # fmt: skip
    assert_one_error_line(code, err, "--batch-size 100000", "--block-size 256", "GB of memory (an estimate)",
                          "GB available", "smaller --batch-size or --block-size")  # fmt: skip
    assert not (tmp_path / "run").exists()


def test_the_parameter_count_of_the_estimate_is_the_models():
    from gpt import PRESETS, build_model, count_parameters
    from gpt.memory import count_params

    for name, config in PRESETS.items():
        assert count_params(config) == count_parameters(build_model(config, vocab_size=config.vocab_size)), name


# --------------------------------------------------------------------------- item 13: progress off a terminal
PLAIN = re.compile(r"^  step \d+/6: loss \d+\.\d{4}, [\d.]+k tok/s, ETA \d+s$")


def test_progress_lines_when_stdout_is_not_a_terminal(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.setattr(gprogress, "PLAIN_INTERVAL", 0.0)  # a line at every step
    code, out, err = train_cli(capsys, corpus, tmp_path / "run")
    assert code == 0, err
    lines = [line for line in out.splitlines() if PLAIN.match(line)]
    assert [int(line.split()[1].split("/")[0]) for line in lines] == [1, 2, 3, 4, 5, 6], out
    assert "\r" not in out + err  # no status line off a terminal


def test_plain_progress_lines_come_at_the_interval():
    """By the real clock: a long interval prints nothing in a quick loop, a zero one at every update."""
    lines = []
    bar = gprogress.Progress(100, 256, enabled=False, log=lines.append, interval=30.0)
    for step in range(1, 6):
        bar.update(step, 0.1 * step, step, loss=2.5)
    assert lines == []
    bar.interval = 0.0
    bar.update(50, 5.0, 50, loss=2.25)
    assert lines == ["  step 50/100: loss 2.2500, 2.6k tok/s, ETA 5s"]


def test_the_default_interval_keeps_quick_runs_as_they_were(tmp_path, corpus, capsys):
    code, out, err = train_cli(capsys, corpus, tmp_path / "run")
    assert code == 0, err
    assert not [line for line in out.splitlines() if PLAIN.match(line)]


PIPED = r"""
import sys
from gpt import progress
from gpt.cli.train import main

progress.PLAIN_INTERVAL = 0.0  # a progress line at every step
real_init = progress.Progress.__init__
def init(self, *args, **kwargs):
    real_init(self, *args, **kwargs)
    log = self.log
    def log_then_wait(line):  # after the first progress line, wait for the reader to have read it
        log(line)
        if not progress.waited:
            progress.waited = sys.stdin.readline() or "closed"
    self.log = log_then_wait if log is not None else None
progress.waited = ""
progress.Progress.__init__ = init
main(sys.argv[1:])
"""


def test_each_line_reaches_a_pipe_as_it_is_printed(tmp_path, corpus):
    """`tensorgrad-train > log & tail -f log`: with stdout a pipe (block-buffered by default), the
    first progress line is readable while the run goes on.  The run waits after printing it until
    the line is read, so a line held back in a buffer is a time-out here, not a race."""
    import queue
    import threading

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a user's default: buffered
    env["PYTHONPATH"] = str(ROOT)
    argv = ["--data", str(corpus), *FAST]
    proc = subprocess.Popen([sys.executable, "-c", PIPED, *argv], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)], daemon=True).start()
    try:
        seen = []
        while not (seen and PLAIN.match(seen[-1].rstrip("\n"))):
            try:
                seen.append(lines.get(timeout=120))  # the run's start (imports, a first step) takes seconds
            except queue.Empty:
                pytest.fail(f"no progress line came through the pipe in 120 s (held in a buffer?); read: {seen}")
            assert seen[-1] is not None, ("stdout closed before a progress line", seen, proc.stderr.read())
        assert proc.poll() is None  # still running: waiting for this read
        # and every line before it (step 0's evaluation may come after: it runs beside the steps)
        assert [line for line in seen if line.endswith("M parameters (39,899)\n")], seen
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_stdout_is_line_buffered_only_while_the_program_runs(tmp_path, corpus, capsys, monkeypatch):
    """The program's choice, undone when its main() returns (a notebook's or a test's stdout)."""
    assert sys.stdout.line_buffering is False  # pytest's capture, as a file's default
    during = []
    monkeypatch.setattr(gtrain.Progress, "update", lambda self, *a, **k: during.append(sys.stdout.line_buffering))
    assert train_cli(capsys, corpus, tmp_path / "run")[0] == 0
    assert during and all(during)
    assert sys.stdout.line_buffering is False


# --------------------------------------------------------------------------- item 10: --lr 1e30
def test_a_run_that_blows_up_ends_in_the_nan_line_alone(tmp_path, corpus, capsys):
    filters = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = train_cli(capsys, corpus, tmp_path / "run", "--lr", "1e30")
    assert_one_error_line(code, err, "the training loss is nan; stopping")
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
    assert warnings.filters == filters  # nothing left changed


def test_floating_point_warnings_outside_training_are_untouched():
    """tensorgrad's ops overflow silently, as PyTorch's (backend.quiet around the one expression);
    NumPy's own warnings outside them are left as they were."""
    import numpy as np

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert (tg.tensor([1e38]) * tg.tensor([1e38])).numpy()[0] == float("inf")
        assert not caught
        np.array([1e38], np.float32) * np.array([1e38], np.float32)
    assert any("overflow" in str(w.message) for w in caught)
