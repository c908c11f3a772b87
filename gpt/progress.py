"""The progress line of a training run: one self-rewriting status line on a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    """One self-rewriting status line on a terminal (nothing when output is not a terminal)."""

    def __init__(self, total, tokens_per_step, stream=sys.stderr, enabled=None):
        self.total, self.tokens_per_step, self.stream = total, tokens_per_step, stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.last = 0.0

    def update(self, step, seconds, steps_done, loss=None):
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.25 or steps_done == 0:
            return
        self.last = now
        per_step = seconds / steps_done
        eta = per_step * (self.total - step)
        width = 24
        filled = int(width * step / self.total)
        bar = "#" * filled + "." * (width - filled)
        tok_s = self.tokens_per_step / per_step
        text = f"\r  [{bar}] {step}/{self.total}  {1000 * per_step:.1f} ms/step  {tok_s / 1000:.1f}k tok/s"
        text += f"  ETA {_fmt(eta)}"
        if loss is not None:
            text += f"  loss {loss:.4f}"
        self.stream.write(text + "   ")
        self.stream.flush()

    def clear(self):
        if self.enabled:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def _fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"
