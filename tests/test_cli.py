"""The command-line programs guard their user: a run is never lost or clobbered, flags and data
are checked before any work, and expected failures end as one `error:` line, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import FAST, TEXT, run

import tensorgrad as tg
from gpt import data as gdata
from gpt import train as gtrain
from gpt.cli import generate, inspect_model, probe
from gpt.cli import train as cli_train
from gpt.rundir import RunDir, holds_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text(TEXT)
    return path


def assert_error(code, err, *fragments):
    """One line starting with `error:` (a resume hint may follow Ctrl-C), no traceback, non-zero exit."""
    assert code != 0
    assert err.startswith("error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def train_cli(capsys, corpus, out_dir, *extra):
    return run(cli_train.main, ["--data", corpus, "--out-dir", out_dir, *FAST, *extra], capsys)


def log_steps(out_dir):
    return [json.loads(line)["step"] for line in (Path(out_dir) / "log.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- run directories
def test_an_existing_run_is_not_overwritten_without_overwrite(tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "3")
    assert_error(code, err, "already holds a run", "--resume", "--overwrite")
    assert out == ""  # refused before the data is read
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before

    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "3", "--overwrite")
    assert code == 0, err
    assert log_steps(run_dir) == [0, 2]


def test_the_library_guards_run_directories_too(tmp_path, corpus):
    from gpt import ShakespeareData, get_config
    from gpt.rundir import RunDirError

    data = ShakespeareData.load(corpus)
    config = get_config("small", max_iters=2, eval_interval=1, eval_iters=1, batch_size=2)
    gtrain.train(config, data, out_dir=tmp_path, log=lambda s: None)
    with pytest.raises(RunDirError, match="already holds a run"):
        gtrain.train(config, data, out_dir=tmp_path, log=lambda s: None)
    with pytest.raises(gtrain.ResumeError, match="is finished"):
        gtrain.train(config, data, out_dir=tmp_path, resume=True, log=lambda s: None)
    with pytest.raises(gtrain.ResumeError, match="needs --out-dir"):
        gtrain.train(config, data, resume=True, log=lambda s: None)
    gtrain.train(config, data, out_dir=tmp_path, overwrite=True, log=lambda s: None)


def test_resume_needs_out_dir(corpus, capsys):
    code, out, err = run(cli_train.main, ["--data", corpus, *FAST, "--resume"], capsys)
    assert_error(code, err, "--resume needs --out-dir")
    assert out == ""


def test_resume_refuses_another_preset_and_says_which_preset_the_run_is(tmp_path, corpus, capsys):
    assert train_cli(capsys, corpus, tmp_path, "--preset", "ffn")[0] == 0
    code, out, err = train_cli(capsys, corpus, tmp_path, "--preset", "small", "--max-iters", "9", "--resume")
    assert_error(code, err, "--preset small", "preset ffn")
    code, out, err = train_cli(capsys, corpus, tmp_path, "--n-embd", "64", "--max-iters", "9", "--resume")
    assert_error(code, err, "--n-embd 64", "n_embd 32")


def test_resume_applies_lr_and_max_iters_and_records_only_what_took_effect(tmp_path, corpus, capsys):
    assert train_cli(capsys, corpus, tmp_path)[0] == 0
    code, out, err = train_cli(capsys, corpus, tmp_path, "--max-iters", "9", "--lr", "3e-3", "--resume")
    assert code == 0, err
    assert "--lr: 0.001 -> 0.003 from step 6" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["learning_rate"] == 3e-3 and summary["config"]["max_iters"] == 9
    assert summary["resumes"] == [{"step": 6, "changed": {"max_iters": [6, 9], "learning_rate": [0.001, 0.003]}}]
    ckpt = tg.load(tmp_path / "last.npz")
    assert ckpt["optimizer"]["param_groups"][0]["lr"] == 3e-3  # the optimizer ran with it
    # the log and the curves span the whole run; its times go on from the first session's
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log] == [0, 3, 5, 6, 8]
    times = [e["time"] for e in log]
    assert times == sorted(times)
    assert summary["final"]["step"] == 8 and summary["seconds"] == log[-1]["time"]


def test_a_finished_run_keeps_its_record(tmp_path, corpus, capsys):
    assert train_cli(capsys, corpus, tmp_path)[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = train_cli(capsys, corpus, tmp_path, "--resume")
    assert_error(code, err, "is finished (step 6 of --max-iters 6)", "larger --max-iters")
    assert out == ""  # refused before the data is read
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_resume_compares_the_stored_vocabulary(tmp_path, corpus, capsys):
    assert train_cli(capsys, corpus, tmp_path / "run")[0] == 0
    other = tmp_path / "other.txt"
    other.write_text(TEXT.replace("v", "q"))  # the same vocabulary size, other characters
    code, out, err = run(cli_train.main, ["--data", other, "--out-dir", tmp_path / "run", *FAST, "--max-iters", "9",
                                          "--resume"], capsys)  # fmt: skip
    assert_error(code, err, "vocabulary", "'v'", "'q'")


def test_a_live_lock_refuses_a_second_run_and_a_stale_one_is_taken_over(tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    with RunDir(run_dir):  # a live run holds the directory
        code, out, err = train_cli(capsys, corpus, run_dir)
    assert_error(code, err, "in use by another run", f"pid {os.getpid()}")
    assert not holds_run(run_dir)

    (run_dir / ".lock").write_text(f"{os.getppid()}\n")  # left by a dead run; its pid now another process's
    code, out, err = train_cli(capsys, corpus, run_dir)
    assert code == 0, err
    assert not (run_dir / ".lock").exists()  # released at the end


def test_stale_temp_files_of_our_naming_are_removed(tmp_path, corpus, capsys):
    tmp_path.joinpath(".last.npz.0123456789ab.tmp").write_bytes(b"PK\x03\x04cut")
    tmp_path.joinpath(".log.jsonl.abcdef012345.tmp").write_bytes(b"")
    tmp_path.joinpath("notes.tmp").write_text("the user's")
    assert train_cli(capsys, corpus, tmp_path)[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == ["notes.tmp"]


# --------------------------------------------------------------------------- validation before work
@pytest.mark.parametrize(
    "flag, value, allowed",
    [
        ("--batch-size", "0", ">= 1"),
        ("--block-size", "0", ">= 1"),
        ("--eval-interval", "0", ">= 1"),
        ("--eval-interval", "-1", ">= 1"),
        ("--eval-iters", "0", ">= 1"),
        ("--n-head", "0", ">= 1"),
        ("--n-layer", "0", ">= 1"),
        ("--max-iters", "0", ">= 1"),
        ("--dropout", "1.0", "[0, 1)"),
        ("--dropout", "nan", "[0, 1)"),
        ("--lr", "0", "> 0"),
        ("--weight-decay", "-1", ">= 0"),
        ("--n-embd", "30", "multiple of --n-head 4"),
        ("--sample-tokens", "-1", ">= 0"),
    ],
)
def test_bad_config_values_are_one_line_naming_flag_value_and_range(flag, value, allowed, tmp_path, corpus, capsys):
    code, out, err = run(cli_train.main, ["--data", corpus, *FAST, flag, value], capsys)
    assert_error(code, err, f"{flag} {value}" if flag != "--dropout" else flag, allowed)
    assert len(err.splitlines()) == 1 and "M parameters" not in out


def test_data_shorter_than_a_block_names_the_split_and_the_block_size(tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("abcdefghijklmnopqrstuvwxyz" * 2)  # the val split has 6 characters
    code, out, err = run(cli_train.main, ["--data", short, *FAST], capsys)
    assert_error(code, err, "val split", "--block-size 8 needs at least 9")


@pytest.mark.parametrize("prompt, message", [("", "--prompt is empty"), ("zé", "not in the model's vocabulary")])
def test_bad_prompts_are_refused_before_training(prompt, message, corpus, capsys):
    code, out, err = run(cli_train.main, ["--data", corpus, *FAST[:-2], "--prompt", prompt], capsys)
    assert_error(code, err, message)
    assert "M parameters" not in out


def test_a_corpus_without_newlines_trains_and_samples(tmp_path, capsys):
    flat = tmp_path / "flat.txt"
    flat.write_text("thou art a villain, you know it. " * 40)
    code, out, err = run(cli_train.main, ["--data", flat, *FAST[:-2], "--sample-tokens", "20"], capsys)
    assert code == 0, err
    assert out.rstrip().splitlines()[-1].startswith("t")  # the sample starts at the text's first character


def test_data_problems_name_the_file(tmp_path, capsys):
    code, out, err = run(cli_train.main, ["--data", tmp_path, *FAST], capsys)
    assert_error(code, err, f"--data {tmp_path} is a directory")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("café au lait\n".encode("latin-1") * 50)
    code, out, err = run(cli_train.main, ["--data", latin1, *FAST], capsys)
    assert_error(code, err, str(latin1), "not UTF-8", "0xe9")


def test_the_data_directory_works_from_anywhere(monkeypatch, tmp_path):
    monkeypatch.setenv("TENSORGRAD_DATA", str(tmp_path / "mine"))
    assert gdata.data_home() == tmp_path / "mine"
    monkeypatch.delenv("TENSORGRAD_DATA")
    assert gdata.data_home() == gdata.CHECKOUT_DATA  # a checkout uses its data/
    monkeypatch.setattr(gdata, "CHECKOUT_DATA", tmp_path / "site-packages" / "data")  # an installed wheel
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert gdata.data_home() == tmp_path / "cache" / "tensorgrad"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert gdata.data_home() == Path.home() / ".cache" / "tensorgrad"


# --------------------------------------------------------------------------- failures as one line
def test_a_corrupt_checkpoint_is_one_line_in_every_program(tmp_path, corpus, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(capsys, corpus, run_dir)[0] == 0
    (run_dir / "last.npz").write_bytes(b"PK\x03\x04 not really a zip")
    code, out, err = train_cli(capsys, corpus, run_dir, "--max-iters", "9", "--resume")
    assert_error(code, err, "last.npz", "not a readable tensorgrad checkpoint")
    programs = ((generate.main, []), (probe.main, ["--data", corpus]), (inspect_model.main, ["--data", corpus]))
    for main, extra in programs:
        code, out, err = run(main, [run_dir / "last.npz", *extra], capsys)
        assert_error(code, err, "last.npz")
        code, out, err = run(main, [tmp_path / "missing.npz", *extra], capsys)
        assert_error(code, err, "missing.npz")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_checkpoint_path_that_is_a_fifo_is_one_line_not_a_hang(tmp_path, corpus, capsys):
    fifo = tmp_path / "best.npz"
    os.mkfifo(fifo)
    stop = threading.Event()

    def unblock():  # a writer for a load that waits on the FIFO (the defect): the test fails, never hangs
        while not stop.is_set():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader waiting (ENXIO)
            time.sleep(0.05)

    helper = threading.Thread(target=unblock, daemon=True)
    helper.start()
    try:
        for main, extra in ((generate.main, []), (probe.main, ["--data", corpus]), (inspect_model.main, [])):
            code, out, err = run(main, [fifo, *extra], capsys)
            assert_error(code, err, f"{fifo}: is a FIFO, not a checkpoint file")
    finally:
        stop.set()
        helper.join()


def test_a_checkpoint_that_is_not_a_training_checkpoint(tmp_path, capsys):
    tg.save({"w": tg.zeros(3)}, tmp_path / "weights.npz")
    code, out, err = run(generate.main, [tmp_path / "weights.npz"], capsys)
    assert_error(code, err, "not a training checkpoint")


def test_a_full_disk_names_the_file(tmp_path, corpus, capsys, monkeypatch):
    from tensorgrad import serialization

    def full(f, arrays):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(serialization, "_write_npz", full)
    code, out, err = train_cli(capsys, corpus, tmp_path / "run")
    assert_error(code, err, f"cannot write {tmp_path / 'run'}", ".npz", "No space left on device")
    assert not [p for p in (tmp_path / "run").iterdir() if p.name.endswith(".tmp")]


def test_an_out_dir_that_cannot_be_created_is_one_line(tmp_path, corpus, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = train_cli(capsys, corpus, blocker / "run")
    assert_error(code, err, "--out-dir", str(blocker / "run"))


def test_ctrl_c_says_where_it_stopped_and_how_to_resume(tmp_path, corpus, capsys, monkeypatch):
    def interrupt_at_step_5(self, step, *args, **kwargs):
        if step == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(gtrain.Progress, "update", interrupt_at_step_5)
    code, out, err = train_cli(capsys, corpus, tmp_path)
    assert code == 130
    assert_error(code, err, "interrupted at step 4", f"{tmp_path / 'last.npz'} (step 3)", "--resume")
    assert f"--out-dir {tmp_path} --resume" in err.splitlines()[1]
    assert not (tmp_path / ".lock").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--temperature", "nan"], "--temperature nan"),
        (["--temperature", "0"], "--temperature 0.0"),
        (["--top-k", "0"], "--top-k 0"),
        (["--top-k", "-1"], "--top-k -1"),
        (["--top-k", "1000"], "--top-k 1000: must be between 1 and the vocabulary size"),
        (["--tokens", "-1"], "--tokens -1"),
        (["--prompt", ""], "--prompt is empty"),
        (["--prompt", "Zé"], "not in the model's vocabulary"),
    ],
)
def test_generate_checks_its_flags(argv, message, trained, capsys):
    code, out, err = run(generate.main, [trained / "best.npz", *argv], capsys)
    assert_error(code, err, message)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("trained")
    (out / "input.txt").write_text(TEXT)
    cli_train.main(["--data", str(out / "input.txt"), "--out-dir", str(out), *FAST])
    return out


def test_generate_probe_and_inspect_run_on_a_checkpoint(trained, capsys):
    code, out, err = run(generate.main, [trained / "best.npz", "--tokens", "20", "--prompt", "thou", "--top-k", "3"],
                         capsys)  # fmt: skip
    assert code == 0 and out.startswith("thou") and len(out.rstrip("\n")) == 24, err
    code, out, err = run(probe.main, [trained / "best.npz", "--data", trained / "input.txt", "--contexts", "thou"],
                         capsys)  # fmt: skip
    assert code == 0 and "'thou' (40 times in the corpus)" in out, err
    code, out, err = run(inspect_model.main, [trained / "best.npz", "--data", trained / "input.txt", "--prompt", "thou",
                                              "--batch-size", "2"], capsys)  # fmt: skip
    assert code == 0 and "|grad|" in out and "layer 2 head 3" in out, err


@pytest.mark.parametrize(
    "main, argv, message",
    [
        (probe.main, ["--contexts", ""], "--contexts is empty"),
        (probe.main, ["--contexts", "Zé"], "not in the model's vocabulary"),
        (probe.main, ["--top", "0"], "--top 0"),
        (inspect_model.main, ["--prompt", ""], "--prompt is empty"),
        (inspect_model.main, ["--prompt", "Zé"], "not in the model's vocabulary"),
    ],
)
def test_probe_and_inspect_check_their_flags(main, argv, message, trained, capsys):
    code, out, err = run(main, [trained / "best.npz", "--data", trained / "input.txt", *argv], capsys)
    assert_error(code, err, message)


def test_the_example_scripts_are_thin_wrappers_that_print_one_error_line(tmp_path):
    """Run as a user runs them (a fresh process, from another directory): no traceback."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for script, argv in (("train_shakespeare.py", ["--batch-size", "0"]), ("generate.py", [str(tmp_path / "no.npz")])):
        r = subprocess.run([sys.executable, str(ROOT / "examples" / script), *argv], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.splitlines()) == 1
    for script in ("train_shakespeare.py", "probe.py", "generate.py", "inspect_model.py", "reproduce.py"):
        assert len((ROOT / "examples" / script).read_text().splitlines()) < 25  # a wrapper, not a copy


# --------------------------------------------------------------------------- version
def test_version_is_single_sourced_and_in_the_changelog():
    assert "version = attr: tensorgrad.__version__" in (ROOT / "setup.cfg").read_text()
    assert f"## {tg.__version__} " in (ROOT / "CHANGELOG.md").read_text()


# --------------------------------------------------------------------------- kills and resumes
KILLER = r"""
import os, signal, sys
from tensorgrad import serialization
from gpt import train as gtrain
from gpt.cli.train import main

mode, k = sys.argv[1], int(sys.argv[2])
calls = [0]
def die():
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "save":  # killed while writing its k-th checkpoint file, half written
    real = serialization._write_npz
    def write(f, arrays):
        calls[0] += 1
        if calls[0] == k:
            f.write(b"PK\x03\x04 half a checkpoint"); f.flush(); die()
        real(f, arrays)
    serialization._write_npz = write
else:  # killed after its k-th training step
    real_update = gtrain.Progress.update
    def update(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == k:
            die()
    gtrain.Progress.update = update
main(sys.argv[3:])
"""


@pytest.mark.slow
def test_killed_at_random_points_then_resumed_gives_the_uninterrupted_run(tmp_path, corpus):
    """SIGKILL (no clean-up at all) during checkpoint writes and between steps, at seeded random
    points; each time the run is resumed.  The end is bit for bit the uninterrupted run's, the
    log has every evaluation once, and no temp file or lock is left."""
    argv = ["--data", str(corpus), "--max-iters", "40", "--eval-interval", "4", "--eval-iters", "1",
            "--batch-size", "4", "--sample-tokens", "0", "--seed", "3"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def start(out, mode="none", k=0):
        # as a user would: continue from last.npz, or start over a run killed before its first one
        extra = ["--out-dir", str(out)]
        if (out / "last.npz").exists():
            extra.append("--resume")
        elif out.exists() and any(out.iterdir()):
            extra.append("--overwrite")
        cmd = [sys.executable, "-c", KILLER, mode, str(k), *argv, *extra]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)

    full = start(tmp_path / "full")
    assert full.returncode == 0, full.stderr

    rng = np.random.default_rng(11)
    out = tmp_path / "cut"
    kills = 0
    for i in range(6):
        mode = "save" if i % 2 == 0 else "step"
        k = int(rng.integers(1, 8 if mode == "save" else 20))
        r = start(out, mode, k)
        assert r.returncode in (0, -9), r.stderr
        assert "Traceback" not in r.stderr, r.stderr
        kills += r.returncode == -9
        if r.returncode == 0:
            break
    assert kills >= 3
    if not (out / "summary.json").exists():
        r = start(out)
        assert r.returncode == 0, r.stderr

    a, b = tg.load(tmp_path / "full" / "last.npz"), tg.load(out / "last.npz")
    assert a["step"] == b["step"] == 40
    for key in a["model"]:
        np.testing.assert_array_equal(a["model"][key].numpy(), b["model"][key].numpy(), err_msg=key)  # bit for bit
    logs = [[json.loads(line) for line in (d / "log.jsonl").read_text().splitlines()] for d in (tmp_path / "full", out)]
    strip = [[(e["step"], e["train"], e["val"]) for e in log] for log in logs]
    assert strip[0] == strip[1]  # every evaluation once, in order, the same losses
    times = [e["time"] for e in logs[1]]
    assert times == sorted(times)
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp") or p.name == ".lock"]
    assert tg.load(out / "best.npz")["best_step"] == tg.load(tmp_path / "full" / "best.npz")["best_step"]


@pytest.mark.parametrize(
    "argv0, command",
    [
        ("examples/train_shakespeare.py", "python examples/train_shakespeare.py"),
        (str(ROOT / "gpt" / "cli" / "train.py"), "python -m gpt.cli.train"),
        (str(ROOT / "gpt" / "train.py"), "python -m gpt.train"),
        ("/usr/local/bin/tensorgrad-train", "tensorgrad-train"),
    ],
)
def test_the_resume_hint_names_the_command_as_it_was_started(argv0, command, monkeypatch):
    from gpt.cli.common import this_command

    monkeypatch.setattr(sys, "argv", [argv0])
    assert this_command() == command


# --------------------------------------------------------------------------- the programs' exit
def test_a_programs_exit_skips_the_last_garbage_collections_once_registered(monkeypatch):
    """Every program registers gc.freeze at exit once per process (gpt/cli/common.py's
    freeze_at_exit), however often its main() runs; at the exit, a handler registered before it
    runs after it and finds every object frozen."""
    from gpt.cli import common

    registered = []
    monkeypatch.setattr(common, "_frozen_at_exit", False)
    monkeypatch.setattr(common.atexit, "register", registered.append)
    common.freeze_at_exit()
    common.freeze_at_exit()
    assert registered == [common.gc.freeze]

    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            "from gpt.cli.common import freeze_at_exit\n"
            "freeze_at_exit()\n")  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout == "frozen at exit: True\n", (out.stdout, out.stderr)
