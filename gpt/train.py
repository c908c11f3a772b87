"""The training loop of the lecture, with what a real run needs around it: evaluation,
best/last checkpoints that resume exactly (gpt/checkpoint.py), a JSON-lines log, a progress
line (gpt/progress.py), a NaN stop.

The loop itself is the lecture's:

    for step in range(max_iters):
        if step % eval_interval == 0: evaluate
        xb, yb = get_batch("train")
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

`_Run` holds what surrounds it: the set-up (fresh or resumed), the evaluations (in line, or on a
thread beside the next steps: gpt/evaluation.py) and the checkpoints, the timing, and the messages
of a run that stops early.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import tensorgrad as tg

from .checkpoint import (
    ResumeError,
    checkpoint_state,
    data_fingerprint,
    load_last,
    load_model,
    log_line,
    read_config,
    restore,
    resume_point,
    training_state,
)
from .config import GPTConfig, validate
from .evaluation import EvaluationBeside, estimate_loss, eval_chunks
from .messages import arg, message
from .model import build_model, count_parameters
from .progress import Progress
from .rundir import RunDir, RunDirError, atomic_write, holds_run
from .threads import using_threads

__all__ = ["Progress", "ResumeError", "TrainResult", "TrainingDiverged", "TrainingInterrupted", "estimate_loss",
           "load_model", "read_config", "train"]  # fmt: skip


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite."""


class TrainingInterrupted(RuntimeError):
    """Ctrl-C during training; the message says where it stopped and how to resume."""

    def __init__(self, message, step, checkpoint=None):
        super().__init__(message)
        self.step, self.checkpoint = step, checkpoint


# NumPy's floating-point warnings, by their text (gpt/ does not import NumPy)
_FLOAT_WARNINGS = r"(overflow|invalid value|divide by zero|underflow) encountered"


@contextlib.contextmanager
def quiet_float_warnings():
    """Training without NumPy's floating-point RuntimeWarnings: numbers that blow up (a huge
    learning rate) end in a NaN loss, which stepped() reports in one line; the warnings would
    only come before it, from deep inside an op.  Only these warnings, and only inside the block:
    warnings.catch_warnings restores the filters on the way out."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _FLOAT_WARNINGS, RuntimeWarning)
        yield


@dataclass
class TrainResult:
    config: GPTConfig
    params: int
    history: list = field(default_factory=list)  # [{"step", "train", "val", "time"}]
    seconds: float = 0.0
    train_seconds: float = 0.0  # excluding evaluation
    steps: int = 0
    best_val: float = math.inf
    best_step: int = -1
    model: object = None
    seed: int = 1337
    resumed_from: int | None = None  # the step a resume started at
    changes: dict = field(default_factory=dict)  # {field: [old, new]} a resume applied
    resumes: list = field(default_factory=list)  # every resume of the run: [{"step", "changed"}]

    @property
    def final(self) -> dict:
        return self.history[-1] if self.history else {}

    @property
    def ms_per_step(self) -> float:
        return 1000 * self.train_seconds / max(self.steps, 1)


def train(config: GPTConfig, data, device="cpu", seed=1337, out_dir=None, resume=False, overwrite=False,
          log=print, progress=None, ranks=None, fused=True, eval_threads=None,
          eval_beside=False) -> TrainResult:  # fmt: skip
    """Train `config` on `data` (a ShakespeareData on `device`).

    With out_dir: writes best.npz (lowest val loss), last.npz (after every evaluation and at the
    end) and log.jsonl, under a lock (gpt/rundir.py).  A directory that holds a run raises
    RunDirError unless resume=True (continue it) or overwrite=True (start over).
    With resume=True: continues from out_dir/last.npz on the same trajectory; `config` may change
    only the RESUMABLE fields (applied and logged), anything else raises ResumeError.
    With ranks (a gpt.distributed.Ranks): data-parallel over them, each on its own batches of
    config.batch_size; only rank 0 logs and writes out_dir (it holds the lock; the others only
    read last.npz on resume, so out_dir must be the same directory on every rank).
    Errors and log lines name these arguments and the config's fields (gpt/messages.py).
    fused=False: the model runs the lecture's code op by op (model.fused, gpt/fused.py), else it runs
    as one fused op where it can (the same math and dropout masks).
    eval_threads: the CPU threads of the evaluations (tg.set_num_threads around each, the count
    before it after: gpt/threads.py's eval_threads_for); None leaves the count as it is.
    eval_beside=True: each evaluation but the last runs on a thread of its own while the next steps
    go on (gpt/evaluation.py's EvaluationBeside; on the CPU, without ranks): its batches are drawn
    at its step and its weights copied there, so its losses are the same numbers; it is logged, and
    its checkpoint (the state of its step) written, when it is done.  It pays where the steps leave
    a core idle (gpt/threads.py's evals_beside).  The last, which no steps follow, runs in line on
    eval_threads.  (A tg.profiler.profile of the calling thread sees only the evaluations in line.)
    """
    if eval_beside and (device != "cpu" or ranks is not None):
        raise ValueError("eval_beside=True runs the evaluations beside the steps on the CPU, without ranks: "
                         f"got device={device!r}" + (", ranks" if ranks is not None else ""))  # fmt: skip
    config = validate(config.replace(vocab_size=data.tokenizer.vocab_size))
    data.check_block_size(config.block_size)
    out = Path(out_dir) if out_dir else None
    run_args = (log, progress, ranks, fused, eval_threads, eval_beside)
    if out is None:
        if resume:  # the one library message that names flags: tests/test_cli.py pins its text
            raise ResumeError("--resume needs --out-dir (the run directory to continue)")
        return _Run(config, data, device, seed, None, None, *run_args).loop()
    if ranks is not None and not ranks.is_main:  # rank 0 guards and clears the directory
        ckpt = load_last(out, device) if resume else None
        return _Run(config, data, device, seed, out, ckpt, *run_args).loop()
    if resume and overwrite:
        raise ResumeError(message(
            f"{arg('resume')} and {arg('overwrite')} exclude each other: continue the run, or start it over"
        ))  # fmt: skip
    with RunDir(out) as run:
        if not resume and holds_run(out):
            if not overwrite:
                raise RunDirError(message(
                    f"{arg('out_dir')} {out} already holds a run; pass {arg('resume')} to continue it, "
                    f"{arg('overwrite')} to start over (its checkpoints and log are deleted), or choose another "
                    f"{arg('out_dir')}"
                ))  # fmt: skip
            run.clear()
        ckpt = load_last(out, device) if resume else None
        return _Run(config, data, device, seed, out, ckpt, *run_args).loop()


class _Run:
    """One training run: set up fresh or from a checkpoint, then `loop()`."""

    def __init__(self, config, data, device, seed, out, ckpt, log, progress, ranks, fused=True, eval_threads=None,
                 eval_beside=False):  # fmt: skip
        self.data, self.device, self.out, self.ranks = data, device, out, ranks
        self.eval_threads = eval_threads
        self.beside = EvaluationBeside() if eval_beside else None  # its thread starts with its first evaluation
        self.main = ranks is None or ranks.is_main
        self.log = log if self.main else (lambda *args, **kwargs: None)  # only rank 0 prints
        point = resume_point(ckpt, config, data, out, seed) if ckpt is not None else None
        if point is not None:
            config, seed = point.config, point.seed
        self.config, self.seed = config, seed
        self.start = point.step if point else 0
        self.skip_eval = point.evaluated if point else False  # the checkpoint's step was evaluated
        elapsed0 = point.elapsed if point else 0.0
        self.fingerprint = data_fingerprint(data) if out is not None or ranks is not None else None
        if ranks is not None:  # before any work: the same flags, data and checkpoint on every rank
            ranks.check_same(config=config.to_dict(), data=self.fingerprint, seed=seed, start=self.start)
        elif ckpt is not None and int(ckpt.get("world_size", 1)) > 1:
            n = int(ckpt["world_size"])
            raise ResumeError(message(
                f"the run in {out} was trained on {n} ranks: resume it with mpiexec -n {n} ... {arg('ranks')}"
            ))  # fmt: skip

        tg.manual_seed(seed)
        model = self.model = build_model(config, vocab_size=config.vocab_size).to(device)
        if hasattr(model, "fused"):  # the GPT (the bigram is a table: nothing to fuse)
            model.fused = fused
        self.optimizer = tg.optim.AdamW(model.parameters(), lr=config.learning_rate,
                                        weight_decay=config.weight_decay)  # fmt: skip
        self.result = TrainResult(config=config, params=count_parameters(model), model=model,
                                  history=point.history if point else [], seed=seed)  # fmt: skip
        self.log(f"{self.result.params / 1e6:.4f} M parameters ({self.result.params:,})")
        self.step_model = model  # what a training step calls: the model, or its DistributedDataParallel wrapper
        if ranks is not None:
            self.step_model = ranks.wrap(model)
            ranks.seed_batches(seed)
            self.log(f"{ranks.world_size} rank(s) x batch {config.batch_size} = effective batch "
                     f"{ranks.world_size * config.batch_size}")  # fmt: skip
        if point is not None:
            self._resume(ckpt, point)

        tokens_per_step = config.batch_size * config.block_size
        if progress is None:  # the status line on a terminal; plain lines in the log when stdout is not one
            plain = self.main and sys.stdout is not None and not sys.stdout.isatty()
            progress = Progress(config.max_iters, tokens_per_step, enabled=self.main and None,
                                log=self.log if plain else None)  # fmt: skip
        self.bar = progress
        self.last_loss = None  # the last training loss read back (for the progress line)
        self.check_every = 1 if device == "cpu" else 50  # reading the loss back syncs a GPU
        self.t0 = time.perf_counter() - elapsed0
        self.elapsed0 = elapsed0
        self.train_time, self.train_steps = 0.0, 0
        self.last_saved = self.start if ckpt is not None else None

    def _resume(self, ckpt, point):
        """Continue from the checkpoint: its weights, optimizer and random state, its log."""
        out = self.out
        restore(ckpt, point, self.model, self.optimizer, self.result, self.device, self.ranks, f"the run in {out}",
                out / "last.npz")  # fmt: skip
        if not point.data_checked:
            self.log(f"note: {out / 'last.npz'} is an older checkpoint, which records no fingerprint of its data: "
                     "the data cannot be checked against the run's")  # fmt: skip
        if self.main:  # drop evaluations logged past the checkpoint
            atomic_write(out / "log.jsonl", "".join(log_line(e) for e in point.history))
        self.log(f"resumed from {out / 'last.npz'} at step {self.start}")
        for f, (old, new) in point.changes.items():
            self.log(message(f"  {arg(f)}: {old!r} -> {new!r} from step {self.start}"))

    def loop(self) -> TrainResult:
        """The lecture's training loop."""
        config, data, model, optimizer = self.config, self.data, self.step_model, self.optimizer
        model.train()
        step = self.start
        beside = self.beside
        with quiet_float_warnings():  # the NaN check says it in one line
            try:
                for step in range(self.start, config.max_iters):
                    if self.evaluates(step):
                        self.evaluate(step)
                    ts = time.perf_counter()
                    xb, yb = data.get_batch("train", config.block_size, config.batch_size)
                    logits, loss = model(xb, yb)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    if self.ranks is not None:
                        model.sync_gradients()
                    optimizer.step()
                    self.stepped(step, loss, ts)
                    if beside is not None and beside.ready():
                        self.evaluated_beside()
                step = config.max_iters
                self.evaluated_beside()
                self.save(step, evaluated=False)  # the finished state: a resume with a larger max_iters continues here
            except KeyboardInterrupt:
                self.bar.clear()
                self.evaluated_beside(after_error=True)
                raise self.interrupted(step) from None
            except BaseException:
                self.evaluated_beside(after_error=True)
                raise
            finally:
                self.bar.clear()
                if beside is not None:
                    beside.close()
        self.result.seconds = time.perf_counter() - self.t0 - self.elapsed0
        self.result.train_seconds, self.result.steps = self.train_time, self.train_steps
        return self.result

    def evaluates(self, step) -> bool:
        """Every eval_interval steps and at the last, but not twice at a resumed checkpoint's step."""
        due = step % self.config.eval_interval == 0 or step == self.config.max_iters - 1
        return due and not (self.skip_eval and step == self.start)

    def evaluate(self, step):
        """estimate_loss, logged and written to log.jsonl, then the last (and maybe best) checkpoint;
        with eval_beside (but at the last step), started on its thread, and all that when it is done
        (evaluated_beside)."""
        self.evaluated_beside()  # (the one before is long done: it took a fraction of eval_interval steps)
        if self.beside is not None and step < self.config.max_iters - 1:
            chunks = list(eval_chunks(self.data, self.config))  # drawn now, where the lecture draws them
            # the state its checkpoint holds, the generator's after those draws (no copy without a checkpoint)
            trained = training_state(self.model, self.optimizer, self.device, copy=True) if self.out else None
            self.beside.start(step, self.model, chunks, self.config, (trained, time.perf_counter() - self.t0))
            return
        self.bar.clear()
        with using_threads(self.eval_threads):
            losses = estimate_loss(self.model, self.data, self.config)
        if self.ranks is not None:
            losses = self.ranks.average(losses)
        self.record(step, losses)

    def evaluated_beside(self, after_error=False):
        """The evaluation running beside the steps, if any: waited for, then recorded and its
        checkpoint written with the state of its step.  after_error: while another error goes up
        (a Ctrl-C, a NaN loss of the steps: the evaluation before it is still recorded, and its
        checkpoint is the last good one), which nothing here replaces: a failure of this one is
        logged, and a second Ctrl-C stops the wait (the message then names the checkpoint before)."""
        if self.beside is None or not self.beside.pending:
            return
        if after_error:
            try:
                self.evaluated_beside()
            except KeyboardInterrupt:
                pass
            except Exception as e:  # noqa: BLE001 - the error going up is the one to report
                self.log(f"note: the evaluation running beside the steps was not recorded: {e}")
            return
        step, losses, (trained, elapsed) = self.beside.result()
        self.bar.clear()
        self.record(step, losses, trained, elapsed)

    def record(self, step, losses, trained=None, elapsed=None):
        """An evaluation's losses: logged and written to log.jsonl, then the last (and maybe best)
        checkpoint, of the state now or of `trained` (training_state's) at `elapsed` seconds."""
        if not all(math.isfinite(v) for v in losses.values()):
            raise TrainingDiverged(f"step {step}: the eval loss is {losses}; the last good checkpoint is kept")
        result = self.result
        seconds = time.perf_counter() - self.t0 if elapsed is None else elapsed  # beside the steps: its own step's
        entry = {"step": step, "train": losses["train"], "val": losses["val"], "time": seconds}
        result.history.append(entry)
        self.log(f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        improved = losses["val"] < result.best_val
        if improved:
            result.best_val, result.best_step = losses["val"], step
        if self.out is not None and self.main:
            try:
                with open(self.out / "log.jsonl", "a") as f:
                    f.write(log_line(entry))
            except OSError as e:
                raise RunDirError(f"cannot write {self.out / 'log.jsonl'}: {e.strerror or e}") from None
        self.save(step, evaluated=True, improved=improved, trained=trained, elapsed=elapsed)

    def stepped(self, step, loss, started):
        """After a step: stop on a NaN loss, count the step's time, move the progress line."""
        if step % self.check_every == 0:
            value = self.last_loss = loss.item()
            if not math.isfinite(value):
                self.bar.clear()
                raise TrainingDiverged(
                    f"step {step}: the training loss is {value}; stopping. "
                    + (f"The last good checkpoint is {self.out / 'last.npz'}." if self.out else "")
                )
        self.train_time += time.perf_counter() - started
        self.train_steps += 1
        self.bar.update(step + 1, self.train_time, self.train_steps, self.last_loss)

    def save(self, step, evaluated, improved=False, trained=None, elapsed=None):
        """last.npz (and best.npz when improved) in out_dir; nothing without one.  The state now,
        or `trained` (training_state's fields) of `elapsed` seconds into the run."""
        if self.out is None:
            return
        elapsed = time.perf_counter() - self.t0 if elapsed is None else elapsed
        state = checkpoint_state(self.model, self.optimizer, self.config, step, self.result, self.data.tokenizer,
                                 self.device, self.seed, elapsed, evaluated, self.fingerprint, trained)  # fmt: skip
        if self.ranks is not None:  # every rank's generator (a collective), written by rank 0 alone
            state.update(rng=None, rng_ranks=self.ranks.rng_states(self.device), world_size=self.ranks.world_size)
            if not self.main:
                self.last_saved = step
                return
        for name in ("best.npz", "last.npz") if improved else ("last.npz",):
            try:
                tg.save(state, self.out / name)
            except OSError as e:
                raise RunDirError(f"cannot write {self.out / name}: {e.strerror or e}") from None
        self.last_saved = step

    def interrupted(self, step) -> TrainingInterrupted:
        """The error of a run stopped by Ctrl-C at `step`: where its last checkpoint is."""
        out = self.out
        if out is None:
            where = f"nothing was saved (no {arg('out_dir')})"
        elif self.last_saved is None:
            where = "no checkpoint was written yet"
        else:
            where = f"the last checkpoint is {out / 'last.npz'} (step {self.last_saved})"
        checkpoint = out / "last.npz" if self.last_saved is not None else None
        return TrainingInterrupted(message(f"interrupted at step {step}; {where}"), step, checkpoint)
