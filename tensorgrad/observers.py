"""Observers: code that watches every op the engine runs, which the engine calls through one hook.

Two exist: tg.profiler (profiler.py), which times each op's forward and backward, and anomaly
mode (anomaly.py), which keeps the traceback of the line that made each node and checks each
backward's gradients for NaN.  An observer is an `Observer` with up to three methods, whose
defaults do only what the engine would do without it:

    run(ctx, phase, call, *args, **params)   runs an op's forward or array backward (phase
                                             "forward" or "backward"): `call(*args, **params)`
    recorded(ctx)                            `Function.apply` just recorded the node ctx
    gradients(ctx, in_grads)                 the input gradients (arrays or None) a backward
                                             returned, in both walks

The engine asks one question per op, `if observing:` (the list of the observers on, empty unless
one is: a read of a global, as cheap as the flags it replaces), and only then runs the op through
`forward` / `backward` / `gradients` below, which hand it to every observer on.  The list is the
process's (anomaly mode is process-wide, as PyTorch's; the profiler's observer looks up the
calling thread's profile itself).  This module imports nothing of tensorgrad.
"""

from __future__ import annotations

import functools
import threading

# Process-wide: the observers on.  The engine imports this very list object (`if observing:` is a
# global read there), so it is changed in place, under _lock, and each run reads a snapshot.
observing: list = []
_lock = threading.Lock()


class Observer:
    """An observer of the engine's ops; each method's default only runs the op."""

    def run(self, ctx, phase, call, *args, **params):
        return call(*args, **params)

    def recorded(self, ctx):
        pass

    def gradients(self, ctx, in_grads):
        pass


def add(observer):
    """Have the engine call `observer` on every op from now on (once, however often added)."""
    with _lock:
        if observer not in observing:
            observing.append(observer)


def remove(observer):
    """Stop calling `observer` (nothing happens if it is not on)."""
    with _lock:
        if observer in observing:
            observing.remove(observer)


def _run(ctx, phase, call, now, args, params):
    """call(*args, **params) run through each observer's `run` in `now` (the first one outermost)."""
    for observer in reversed(now):
        call = functools.partial(observer.run, ctx, phase, call)
    return call(*args, **params)


def forward(ctx, recorded, args, params):
    """`ctx.forward(*args, **params)` run through the observers on; then, when apply records the node
    (`recorded`), each observer's `recorded(ctx)` (outside the forward: not timed with it)."""
    now = tuple(observing)
    out = _run(ctx, "forward", ctx.forward, now, args, params)
    if recorded:
        for observer in now:
            observer.recorded(ctx)
    return out


def backward(ctx, grad):
    """`ctx.backward(grad)` run through the observers on."""
    return _run(ctx, "backward", ctx.backward, tuple(observing), (grad,), {})


def gradients(ctx, in_grads):
    """Show every observer on the input gradients (arrays or None) ctx's backward returned."""
    for observer in tuple(observing):
        observer.gradients(ctx, in_grads)
