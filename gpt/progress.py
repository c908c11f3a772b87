"""The progress of a training run between its evaluations.

On a terminal (stderr), one self-rewriting status line.  When the output goes to a file or a
pipe (stdout is not a terminal), where a rewriting line would be noise, a plain line every
`interval` seconds, through the run's log:

      step 1200/5000: loss 1.8123, 41.3k tok/s, ETA 4m10s
"""

from __future__ import annotations

import sys
import time

PLAIN_INTERVAL = 30.0  # seconds between plain progress lines (a parameter of Progress too)


class Progress:
    """The status line on a terminal, and plain lines at a steady interval when stdout is not one.

    enabled: the status line (default: whether `stream` is a terminal).
    log: where plain lines go (the run's log), or None for none; interval: seconds between them
    (default PLAIN_INTERVAL)."""

    def __init__(self, total, tokens_per_step, stream=sys.stderr, enabled=None, log=None, interval=None):
        self.total, self.tokens_per_step, self.stream = total, tokens_per_step, stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.last = 0.0
        self.log, self.interval = log, PLAIN_INTERVAL if interval is None else interval
        self.last_plain = time.perf_counter()

    def update(self, step, seconds, steps_done, loss=None):
        if steps_done == 0:
            return
        now = time.perf_counter()
        if self.log is not None and now - self.last_plain >= self.interval:
            self.last_plain = now
            self.log(self.plain_line(step, seconds, steps_done, loss))
        if not self.enabled or now - self.last < 0.25:
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

    def plain_line(self, step, seconds, steps_done, loss=None) -> str:
        """`  step 1200/5000: loss 1.8123, 41.3k tok/s, ETA 4m10s` (no loss where none was read)."""
        per_step = seconds / steps_done
        tok_s = self.tokens_per_step / per_step if per_step > 0 else float("inf")
        text = f"  step {step}/{self.total}: "
        if loss is not None:
            text += f"loss {loss:.4f}, "
        return text + f"{tok_s / 1000:.1f}k tok/s, ETA {_fmt(per_step * (self.total - step))}"

    def clear(self):
        if self.enabled:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def _fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"
