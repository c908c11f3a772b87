"""tg.profiler: where the time of a step goes, op by op.

    with tg.profiler.profile() as prof:
        loss = model(x, y)
        loss.backward()
        with tg.profiler.record("AdamW.step"):   # time code that is not an op
            opt.step()
    print(prof.table())

Every op (a `Function`) is timed twice: its forward (in `Function.apply`) and its backward (in the
backward pass), through the engine's observer hook (observers.py): while some thread profiles,
`_OBSERVER` is on it, and times the ops of the threads that have a profile running.  A row is one
op and one phase; an op that ran a fused kernel (tensorgrad/kernels/) is named with "[kernel]", one
that ran the reference op is not.  The times are self times: an op or `record` region that runs
other ops inside it is charged only for what it does itself, so the rows add up.  "(outside ops)"
is the rest of the wall time: the Python of the model's `forward`, building the graph, the backward
loop's gradient sums.

On a GPU the device is synchronised before and after every timed piece, so each row is the
device's time for that op plus its launch cost; the step runs slower than without the profiler
(no overlap of the host with the device), but its shares are honest.

Only one profile runs at a time in a thread, and only while its `with` block runs; nothing stays
installed.  A profile is its thread's (as PyTorch's profiler, thread-local by default): it times
the ops that thread runs, forward and backward, and another thread may run a profile of its own.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from . import backend, observers
from .grad_mode import _state

# Process-wide: how many threads have a profile open; while one does, _OBSERVER is on the hook.
_profiles = 0
_profiles_lock = threading.Lock()


def set_thread_profiler(profile):
    """Make `profile` (a profile, or None) the calling thread's running profile (its `with` block
    calls this on entering and leaving), and keep the observer on the hook while any thread has one."""
    global _profiles
    with _profiles_lock:
        _profiles += (profile is not None) - (_state.profiler is not None)
        _state.profiler = profile
        (observers.add if _profiles else observers.remove)(_OBSERVER)


class _ProfilerObserver(observers.Observer):
    """Times each op's forward and backward for the calling thread's profile, if it has one."""

    def run(self, ctx, phase, call, *args, **params):
        profile = _state.profiler
        if profile is None:
            return call(*args, **params)
        return profile._op(ctx, phase, call, *args, **params)


_OBSERVER = _ProfilerObserver()


class profile:  # noqa: N801 - a context manager, named as torch.profiler.profile
    """Collect per-op timings inside a `with` block; `table()` prints them.

    device: the device whose work is timed ("cpu" or "cuda"); on "cuda" every timed piece is
    synchronised.  `rows()` gives the figures as (name, phase, calls, self seconds)."""

    def __init__(self, device: str = "cpu"):
        self.device = backend.normalize_device(device)
        self._totals: dict = {}  # (name, phase) -> [calls, self seconds]
        self._stack: list = []  # [start, seconds of the timed pieces inside it] per open piece
        self.wall = 0.0

    def __enter__(self):
        if _state.profiler is not None:
            raise RuntimeError(
                "tg.profiler.profile: another profile is already running in this thread (profiles do not nest)"
            )
        backend.synchronize(self.device)
        self._started = time.perf_counter()
        set_thread_profiler(self)
        return self

    def __exit__(self, *exc):
        backend.synchronize(self.device)
        self.wall += time.perf_counter() - self._started
        set_thread_profiler(None)
        return False

    # ------------------------------------------------------------ timing (called by _OBSERVER)
    def _op(self, ctx, phase, method, *args, **params):
        """method(*args, **params), an op's forward or backward, timed as `ctx`'s `phase`."""
        self._begin()
        try:
            return method(*args, **params)
        finally:
            self._end(op_name(ctx), phase)

    def _begin(self):
        backend.synchronize(self.device)
        self._stack.append([time.perf_counter(), 0.0])

    def _end(self, name: str, phase: str):
        backend.synchronize(self.device)
        start, inner = self._stack.pop()
        elapsed = time.perf_counter() - start
        if self._stack:
            self._stack[-1][1] += elapsed  # the enclosing piece is not charged for this one
        entry = self._totals.setdefault((name, phase), [0, 0.0])
        entry[0] += 1
        entry[1] += elapsed - inner

    # ------------------------------------------------------------ results
    def rows(self):
        """[(name, phase, calls, self seconds)], the costliest first."""
        rows = [(name, phase, calls, secs) for (name, phase), (calls, secs) in self._totals.items()]
        return sorted(rows, key=lambda r: -r[3])

    def table(self, limit: int | None = None, per: int = 1) -> str:
        """A Markdown table: each op and phase, its calls, total and per-call milliseconds and its
        share of the wall time, then the time outside ops and the wall time itself.  per=N divides
        calls and times by N (N profiled steps: figures per step)."""
        rows = [(name, phase, calls // per, secs / per) for name, phase, calls, secs in self.rows()]
        timed = sum(r[3] for r in rows)
        wall = max(self.wall / per, timed)
        lines = ["| op | phase | calls | total ms | ms per call | % of wall |", "|---|---|---:|---:|---:|---:|"]
        for name, phase, calls, secs in rows[:limit]:
            per_call = 1e3 * secs / calls
            lines.append(f"| {name} | {phase} | {calls} | {1e3 * secs:.1f} | {per_call:.3f} | {_share(secs, wall)} |")
        if limit is not None and len(rows) > limit:
            rest = rows[limit:]
            secs, calls = sum(r[3] for r in rest), sum(r[2] for r in rest)
            lines.append(f"| ({len(rest)} more rows) | | {calls} | {1e3 * secs:.1f} | | {_share(secs, wall)} |")
        lines.append(f"| (outside ops) | | | {1e3 * (wall - timed):.1f} | | {_share(wall - timed, wall)} |")
        lines.append(f"| **wall** | | | **{1e3 * wall:.1f}** | | 100.0 |")
        return "\n".join(lines)


def _share(secs, wall) -> str:
    return f"{100 * secs / wall:.1f}" if wall > 0 else "-"


@contextmanager
def record(name: str):
    """Time a region of code that is not an op (an optimizer step, data loading) as one row of the
    running profile, named `name`; without a running profile it only runs the code."""
    prof = _state.profiler
    if prof is None:
        yield
        return
    prof._begin()
    try:
        yield
    finally:
        prof._end(name, "region")


def op_name(ctx) -> str:
    """The row name of an op: its class name (a kernel op's, of the op it replaces), and "[kernel]"
    where it ran a fused kernel (a kernel op of tensorgrad/kernels/, which the engine runs only for
    inputs it accepts)."""
    name = (getattr(type(ctx), "replaces", None) or type(ctx)).__name__
    if getattr(ctx, "kernels", None) is not None:
        name += " [kernel]"
    return name
