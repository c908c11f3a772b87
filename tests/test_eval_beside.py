"""Evaluations beside the steps (gpt/evaluation.py's EvaluationBeside, train(eval_beside=True)):
the same losses, checkpoints and final weights as evaluations in line, though each is recorded
some steps after its own; the state its checkpoint holds is its step's; an error or Ctrl-C of the
steps still records it first, and a second Ctrl-C while it is waited for stops the wait."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from cli_helpers import TEXT

import tensorgrad as tg
from gpt import ShakespeareData, build_model, evaluation, get_config
from gpt import train as gtrain
from gpt.evaluation import EvaluationBeside
from gpt.threads import evals_beside

# tiny: evaluations at steps 0, 3, 6 and the last, 9 (in line); the model the fused op runs (small's shape)
_STEPPED = gtrain._Run.stepped  # (not a patched one: the tests patch it)
CONFIG = get_config("small", max_iters=10, eval_interval=3, eval_iters=2, batch_size=4)
TIMEOUT = 30  # s: a wait that long is a hang (each wait here is for a step or two of a tiny model)
_RUN = {"name": None}  # the run directory's name of the run going on (for the `written` fixture)


def _on_eval_thread() -> bool:
    return threading.current_thread().name.startswith("tensorgrad-eval")


@pytest.fixture
def late(monkeypatch):
    """Each evaluation beside the steps is held back until the steps have gone 2 further than at
    its start (a step signals through the progress line's update) or the run waits for its result,
    so it is recorded steps after its own: what its checkpoint holds must still be its step's.
    Returns what happened: the steps done, and per evaluation beside, (its step, the steps done when
    it was recorded)."""
    seen = {"steps": [], "waits": 0, "held": None, "recorded": []}
    moved = threading.Condition()
    real_update, real_losses = gtrain.Progress.update, evaluation.eval_losses
    real_start, real_result = EvaluationBeside.start, EvaluationBeside.result

    def update(self, step, *args, **kwargs):
        with moved:
            seen["steps"].append(step)
            moved.notify_all()
        return real_update(self, step, *args, **kwargs)

    def start(self, step, *args):
        with moved:  # taken here, on the training thread, before the evaluation's thread can run
            seen["held"] = (len(seen["steps"]), seen["waits"])
        return real_start(self, step, *args)

    def late_losses(model, chunks, config):
        if _on_eval_thread():
            steps, waits = seen["held"]
            with moved:
                assert moved.wait_for(lambda: len(seen["steps"]) >= steps + 2 or seen["waits"] > waits, TIMEOUT)
        return real_losses(model, chunks, config)

    def release():
        with moved:
            seen["waits"] += 1
            moved.notify_all()

    def result(self):
        release()
        step, losses, kept = real_result(self)
        seen["recorded"].append((step, len(seen["steps"])))
        return step, losses, kept

    monkeypatch.setattr(gtrain.Progress, "update", update)
    monkeypatch.setattr(EvaluationBeside, "start", start)
    monkeypatch.setattr(evaluation, "eval_losses", late_losses)
    monkeypatch.setattr(EvaluationBeside, "result", result)
    seen["release"] = release
    return seen


@pytest.fixture
def written(monkeypatch):
    """Every checkpoint the runs build, as it is built (arrays copied at once), without its clocks:
    {run directory name: [state, ...]}."""
    states = {}
    real = gtrain.checkpoint_state

    def record(*args, **kwargs):
        state = real(*args, **kwargs)
        states.setdefault(_RUN["name"], []).append(_without_clocks(_copied(state)))
        return state

    monkeypatch.setattr(gtrain, "checkpoint_state", record)
    return states


def _copied(tree):
    if isinstance(tree, dict):
        return {k: _copied(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_copied(v) for v in tree]
    return tree.numpy().copy() if isinstance(tree, tg.Tensor) else tree


def _without_clocks(state):
    """A checkpoint without its seconds spent and its evaluation's time."""
    state = dict(state)
    state.pop("elapsed")
    entry = json.loads(state["eval"])
    if entry is not None:
        entry.pop("time")
    state["eval"] = entry
    return state


def _same(a, b, where):
    """Two checkpoint trees equal, arrays to the bit."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where


def _run(tmp_path, name, config=CONFIG, **kwargs):
    out = tmp_path / name
    _RUN["name"] = name
    result = gtrain.train(config, ShakespeareData(TEXT), out_dir=out, log=lambda s: None, **kwargs)
    return result, out


def _stop_at(monkeypatch, at, error=KeyboardInterrupt):
    """The steps stop at step `at`, as after its backward: Ctrl-C, or a NaN loss."""

    def stepped(self, step, loss, started):
        if step == at and error is KeyboardInterrupt:
            raise KeyboardInterrupt
        return _STEPPED(self, step, loss * float("nan") if step == at else loss, started)

    monkeypatch.setattr(gtrain._Run, "stepped", stepped)


def _eval_threads():
    return [t for t in threading.enumerate() if t.name.startswith("tensorgrad-eval")]


def test_evaluations_beside_the_steps_log_and_checkpoint_what_evaluations_in_line_do(tmp_path, late, written):
    inline, inline_dir = _run(tmp_path, "inline")
    assert late["recorded"] == []  # in line: nothing ran beside
    beside, beside_dir = _run(tmp_path, "beside", eval_beside=True)
    # steps 0, 3 and 6 ran beside, each recorded 2 steps after its start at the earliest (the last in line)
    assert [step for step, _ in late["recorded"]] == [0, 3, 6]
    assert all(done >= step + 2 for step, done in late["recorded"]), late["recorded"]
    drop = lambda history: [{k: v for k, v in h.items() if k != "time"} for h in history]  # noqa: E731
    assert drop(beside.history) == drop(inline.history)
    assert [h["step"] for h in beside.history] == [0, 3, 6, 9]
    assert (beside.best_val, beside.best_step) == (inline.best_val, inline.best_step)
    for p, q in zip(beside.model.parameters(), inline.model.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    # every checkpoint, as built: those of steps 0, 3 and 6 were built steps later, from the copies
    assert [s["step"] for s in written["beside"]] == [0, 3, 6, 9, 10]
    for i, (a, b) in enumerate(zip(written["beside"], written["inline"])):
        _same(a, b, f"checkpoint {i}")
    assert len(written["beside"]) == len(written["inline"])
    for name in ("best.npz", "last.npz"):  # and the files
        files = [_without_clocks(_copied(tg.load(out / name))) for out in (beside_dir, inline_dir)]
        _same(*files, name)
    times = [json.loads(line)["time"] for line in (beside_dir / "log.jsonl").read_text().splitlines()]
    assert times == sorted(times) and len(times) == 4
    assert _eval_threads() == []  # the thread ended with the run


def test_a_checkpoint_written_beside_resumes_on_the_same_trajectory(tmp_path, monkeypatch, late):
    """A run stopped at step 8, its last checkpoint step 6's, written beside the steps after steps
    6 and 7 had changed the weights, resumes to the weights of the run that was never stopped."""
    whole, _ = _run(tmp_path, "whole", eval_beside=True)
    with monkeypatch.context() as patch:
        _stop_at(patch, 8)
        with pytest.raises(gtrain.TrainingInterrupted, match=r"last.npz \(step 6\)"):
            _run(tmp_path, "stopped", eval_beside=True)
    resumed = gtrain.train(CONFIG, ShakespeareData(TEXT), out_dir=tmp_path / "stopped", resume=True,
                           log=lambda s: None, eval_beside=True)  # fmt: skip
    assert [h["val"] for h in resumed.history] == [h["val"] for h in whole.history]
    for p, q in zip(resumed.model.parameters(), whole.model.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_nan_step_or_ctrl_c_records_the_evaluation_beside_first(tmp_path, monkeypatch, late):
    """The evaluation of step 3 is still running when step 4 stops the run: it is logged and its
    checkpoint written before the error goes up, which names it as the last checkpoint."""
    _stop_at(monkeypatch, 4)
    with pytest.raises(gtrain.TrainingInterrupted, match=r"interrupted at step 4; .*last.npz \(step 3\)"):
        _run(tmp_path, "ctrl-c", eval_beside=True)
    assert late["recorded"][-1] == (3, 4)  # steps 0-3 done: recorded by the drain, not after a step
    assert len((tmp_path / "ctrl-c" / "log.jsonl").read_text().splitlines()) == 2
    assert tg.load(tmp_path / "ctrl-c" / "last.npz")["step"] == 3

    _stop_at(monkeypatch, 4, error=gtrain.TrainingDiverged)
    with pytest.raises(gtrain.TrainingDiverged, match="step 4: the training loss is nan"):
        _run(tmp_path, "nan", eval_beside=True)
    assert tg.load(tmp_path / "nan" / "last.npz")["step"] == 3
    assert _eval_threads() == []


def test_a_second_ctrl_c_stops_the_wait_and_names_the_checkpoint_before(tmp_path, monkeypatch, late):
    """Ctrl-C at step 4, and again while the evaluation of step 3 is waited for: the program's
    message (not a bare KeyboardInterrupt), naming step 0's checkpoint, the last one written."""
    _stop_at(monkeypatch, 4)
    real_result = EvaluationBeside.result

    def second_ctrl_c(self):
        if self._pending[0] == 3:
            raise KeyboardInterrupt
        return real_result(self)

    monkeypatch.setattr(EvaluationBeside, "result", second_ctrl_c)
    try:
        with pytest.raises(gtrain.TrainingInterrupted, match=r"interrupted at step 4; .*last.npz \(step 0\)"):
            _run(tmp_path, "twice", eval_beside=True)
    except KeyboardInterrupt:  # (which would stop pytest itself)
        pytest.fail("a bare KeyboardInterrupt escaped train()")
    assert tg.load(tmp_path / "twice" / "last.npz")["step"] == 0
    deadline = time.monotonic() + TIMEOUT  # the evaluation left running ends on its own
    while _eval_threads() and time.monotonic() < deadline:
        late["release"]()  # (lets the held evaluation go)
        time.sleep(0.01)
    assert _eval_threads() == []


def test_an_error_of_the_evaluation_beside_reaches_the_caller(tmp_path, monkeypatch):
    real = evaluation.eval_losses

    def broken_beside(model, chunks, config):
        if _on_eval_thread():
            time.sleep(0.05)
            raise MemoryError("the evaluation ran out")
        return real(model, chunks, config)

    monkeypatch.setattr(evaluation, "eval_losses", broken_beside)
    with pytest.raises(MemoryError, match="the evaluation ran out"):
        _run(tmp_path, "broken", eval_beside=True)
    assert not (tmp_path / "broken" / "last.npz").exists()  # no checkpoint of an evaluation that failed
    assert _eval_threads() == []


def test_eval_beside_is_for_the_cpu_without_ranks():
    with pytest.raises(ValueError, match="on the CPU, without ranks: got device='cuda'"):
        gtrain.train(CONFIG, ShakespeareData(TEXT), device="cuda", eval_beside=True)


def test_evaluations_go_beside_where_the_fused_models_steps_leave_a_core_idle():
    assert evals_beside(get_config("small"), fused=True, cores=2)
    assert not evals_beside(get_config("small"), fused=True, cores=1)  # no idle core
    assert not evals_beside(get_config("small"), fused=False, cores=2)  # op by op: Python, one thread at a time
    assert not evals_beside(get_config("large"), fused=False, cores=2)  # its steps take every core


def test_estimate_loss_draws_what_evaluations_beside_draw():
    """eval_chunks drawn in advance leave the generator where the lecture's estimate_loss leaves
    it, and eval_losses on them gives its numbers."""
    data = ShakespeareData(TEXT)
    config = CONFIG.replace(vocab_size=data.tokenizer.vocab_size, eval_iters=3)
    tg.manual_seed(5)
    model = build_model(config, vocab_size=config.vocab_size)
    state = tg.random.get_rng_state()
    inline = gtrain.estimate_loss(model, data, config)
    after_inline = tg.randint(0, 1000, (4,)).tolist()
    tg.random.set_rng_state(state)
    chunks = list(evaluation.eval_chunks(data, config))
    after_drawing = tg.randint(0, 1000, (4,)).tolist()
    assert after_drawing == after_inline
    assert evaluation.eval_losses(model, chunks, config) == inline
    assert model.training
