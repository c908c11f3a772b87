"""The lecture's estimate_loss, and the same evaluation run beside the training steps.

`estimate_loss(model, data, config)` is the lecture's: the mean loss over eval_iters random
batches of each split, in eval mode, under no_grad.  It is two halves, which `EvaluationBeside`
runs apart:
- `eval_chunks`: the batches, drawn from the global generator exactly as the lecture's loop
  draws them (the draws decide every later training batch, so they are always made where the
  lecture makes them, between two steps);
- `eval_losses`: the model's mean loss on them, which uses no random numbers.

`EvaluationBeside` runs the second half, on the batches its caller drew, on a thread of its own
and a copy of the weights taken at the evaluation's step, while the training steps go on: where
the steps use one core of several (the `small` model), the evaluation no longer stops them.  The
losses are the same numbers (the same batches, the same weights, the same sums; the fused op's
parts depend on the batch's shape alone, not on the thread); they are logged and checkpointed
when they are ready, some steps later, with the state of their own step (gpt/train.py).
"""

from __future__ import annotations

import concurrent.futures
import copy

import tensorgrad as tg

from .config import GPTConfig

# At most this many tokens go through the model at once when evaluating.
EVAL_CHUNK_TOKENS = 16384


def eval_chunks(data, config: GPTConfig):
    """The lecture's eval_iters batches of each split, as (split, k, xb, yb): up to
    EVAL_CHUNK_TOKENS tokens of them, k batches drawn at once (get_batch of k * batch_size rows
    draws the same numbers as k draws of batch_size).  A generator: each chunk is drawn when it is
    asked for."""
    per_chunk = max(1, EVAL_CHUNK_TOKENS // (config.batch_size * config.block_size))
    for split in ("train", "val"):
        done = 0
        while done < config.eval_iters:
            k = min(per_chunk, config.eval_iters - done)
            xb, yb = data.get_batch(split, config.block_size, config.batch_size * k)
            yield split, k, xb, yb
            done += k


@tg.no_grad()
def eval_losses(model, chunks, config: GPTConfig) -> dict:
    """The mean loss of each split over `chunks` (eval_chunks'), in eval mode (dropout off), the
    model's mode restored after.  The mean of equal-sized batches' mean losses is the mean over
    their union, so each chunk's loss counts k times.  Losses are summed on the device and read
    back once per split."""
    totals = {}
    was_training = model.training
    model.eval()
    try:
        for split, k, xb, yb in chunks:
            _, loss = model(xb, yb)
            loss = loss * k  # weight by the number of batches it stands for
            totals[split] = loss if split not in totals else totals[split] + loss
    finally:
        model.train(was_training)
    return {split: total.item() / config.eval_iters for split, total in totals.items()}


def estimate_loss(model, data, config: GPTConfig) -> dict:
    """The lecture's estimate_loss: the mean loss over eval_iters random batches of each split,
    in eval mode (dropout off).

    Batches are drawn exactly as get_batch draws them, but up to EVAL_CHUNK_TOKENS tokens of them
    go through the model as one larger batch: one forward of 32 batches costs far less than 32
    forwards for a small model."""
    return eval_losses(model, eval_chunks(data, config), config)


class EvaluationBeside:
    """One evaluation at a time on a thread of its own, beside the training steps.

    `start(step, model, chunks, config, kept)` takes the batches the caller drew at the step
    (`list(eval_chunks(...))`: the generator moves exactly as the lecture's estimate_loss moves it),
    copies the model's weights and buffers into a copy of the model made at the first call, and
    hands the losses to the thread.  `ready()` says whether they are computed; `result()` waits for
    them and returns (step, losses, kept), re-raising what the evaluation raised (`kept`: what the
    caller needs with them, such as its step's state).  The copy is in eval mode for good, so an
    evaluation draws no dropout mask."""

    def __init__(self):
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tensorgrad-eval")
        self._copy = None
        self._pending = None  # (step, future, kept)

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def start(self, step, model, chunks, config: GPTConfig, kept=None):
        if self._pending is not None:
            raise RuntimeError("EvaluationBeside.start: the last evaluation's result was not taken")
        if self._copy is None:
            self._copy = copy.deepcopy(model).eval()
        self._copy.load_state_dict(model.state_dict())
        self._pending = (step, self._pool.submit(eval_losses, self._copy, chunks, config), kept)

    def ready(self) -> bool:
        return self._pending is not None and self._pending[1].done()

    def result(self):
        """(step, losses, kept) of the evaluation started last, waited for; a wait cut short
        (Ctrl-C) leaves it pending, to be waited for again."""
        step, future, kept = self._pending
        try:
            return step, future.result(), kept
        finally:
            if future.done():
                self._pending = None

    def close(self):
        """End the thread: at once when nothing runs (every result taken), else when the evaluation
        running ends (its result dropped), without waiting for it here."""
        running = self._pending is not None and not self._pending[1].done()
        self._pending = None
        self._pool.shutdown(wait=not running)
