"""Evaluations beside the steps (gpt/evaluation.py's EvaluationBeside, train(eval_beside=True)):
the same losses, checkpoints and final weights as evaluations in line, though each is recorded
some steps after its own; the state its checkpoint holds is its step's; an error or Ctrl-C of the
steps still records it first."""

from __future__ import annotations

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

# tiny: evaluations at steps 0, 3, 6 and the last, 9; the model the fused op runs (small's shape)
_STEPPED = gtrain._Run.stepped  # (not a patched one: the tests patch it)
CONFIG = get_config("small", max_iters=10, eval_interval=3, eval_iters=2, batch_size=4)


@pytest.fixture
def slow_evaluations(monkeypatch):
    """Each evaluation on the thread beside the steps waits until the steps have gone 2 further
    (a step signals through the progress line's update) or the run waits for it, so its result
    comes in steps after its own: what its checkpoint holds must still be its step's."""
    steps_done, waited = [], []
    moved = threading.Condition()
    real_update, real_losses, real_result = gtrain.Progress.update, evaluation.eval_losses, EvaluationBeside.result

    def update(self, step, *args, **kwargs):
        with moved:
            steps_done.append(step)
            moved.notify_all()
        return real_update(self, step, *args, **kwargs)

    def late_losses(model, chunks, config):
        if threading.current_thread().name.startswith("tensorgrad-eval"):
            start, asked = len(steps_done), len(waited)
            with moved:
                moved.wait_for(lambda: len(steps_done) >= start + 2 or len(waited) > asked, timeout=10)
        return real_losses(model, chunks, config)

    def result(self):
        with moved:
            waited.append(True)
            moved.notify_all()
        return real_result(self)

    monkeypatch.setattr(gtrain.Progress, "update", update)
    monkeypatch.setattr(evaluation, "eval_losses", late_losses)
    monkeypatch.setattr(EvaluationBeside, "result", result)
    return steps_done


def _run(tmp_path, name, config=CONFIG, **kwargs):
    out = tmp_path / name
    result = gtrain.train(config, ShakespeareData(TEXT), out_dir=out, log=lambda s: None, **kwargs)
    return result, out


def _stop_at(monkeypatch, at, error=KeyboardInterrupt):
    """The steps stop at step `at`, as after its backward: Ctrl-C, or a NaN loss."""
    real = _STEPPED

    def stepped(self, step, loss, started):
        if step == at and error is KeyboardInterrupt:
            raise KeyboardInterrupt
        return real(self, step, loss * float("nan") if step == at else loss, started)

    monkeypatch.setattr(gtrain._Run, "stepped", stepped)


def _same(a, b, where):
    """Two loaded checkpoints' trees equal, tensors to the bit."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, tg.Tensor):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=where)
    else:
        assert a == b, where


def _without_times(ckpt):
    """A checkpoint without its clocks: the seconds spent, and each evaluation's time."""
    import json

    ckpt = dict(ckpt)
    ckpt.pop("elapsed")
    entry = json.loads(ckpt["eval"])
    if entry is not None:
        entry.pop("time")
    ckpt["eval"] = entry
    return ckpt


def test_evaluations_beside_the_steps_log_and_checkpoint_what_evaluations_in_line_do(tmp_path, slow_evaluations):
    inline, inline_dir = _run(tmp_path, "inline")
    beside, beside_dir = _run(tmp_path, "beside", eval_beside=True)
    drop = lambda history: [{k: v for k, v in h.items() if k != "time"} for h in history]  # noqa: E731
    assert drop(beside.history) == drop(inline.history)
    assert [h["step"] for h in beside.history] == [0, 3, 6, 9]
    assert (beside.best_val, beside.best_step) == (inline.best_val, inline.best_step)
    for p, q in zip(beside.model.parameters(), inline.model.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    for name in ("best.npz", "last.npz"):  # the state of the evaluation's step, though written steps later
        _same(_without_times(tg.load(beside_dir / name)), _without_times(tg.load(inline_dir / name)), name)
    logged = [line for line in (beside_dir / "log.jsonl").read_text().splitlines()]
    assert len(logged) == 4
    assert not any(t.name.startswith("tensorgrad-eval") for t in threading.enumerate())  # the thread ended


def test_a_checkpoint_written_beside_resumes_on_the_same_trajectory(tmp_path, monkeypatch, slow_evaluations):
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


def test_a_nan_step_or_ctrl_c_records_the_evaluation_beside_first(tmp_path, monkeypatch, slow_evaluations):
    """The evaluation of step 3 is still running when step 4 stops the run: it is logged and its
    checkpoint written before the error goes up, which names it as the last checkpoint."""
    _stop_at(monkeypatch, 4)
    with pytest.raises(gtrain.TrainingInterrupted, match=r"interrupted at step 4; .*last.npz \(step 3\)"):
        _run(tmp_path, "ctrl-c", eval_beside=True)
    assert len((tmp_path / "ctrl-c" / "log.jsonl").read_text().splitlines()) == 2
    assert tg.load(tmp_path / "ctrl-c" / "last.npz")["step"] == 3

    _stop_at(monkeypatch, 4, error=gtrain.TrainingDiverged)
    with pytest.raises(gtrain.TrainingDiverged, match="step 4: the training loss is nan"):
        _run(tmp_path, "nan", eval_beside=True)
    assert tg.load(tmp_path / "nan" / "last.npz")["step"] == 3


def test_an_error_of_the_evaluation_beside_reaches_the_caller(tmp_path, monkeypatch):
    def broken(model, chunks, config):
        time.sleep(0.05)
        raise MemoryError("the evaluation ran out")

    monkeypatch.setattr(evaluation, "eval_losses", broken)
    with pytest.raises(MemoryError, match="the evaluation ran out"):
        _run(tmp_path, "broken", eval_beside=True)


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
