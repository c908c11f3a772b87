"""What every command shares: turning expected failures into one `error:` line, the
library's argument names into flags, the device flag, and checks of prompts and sampling
flags made before any work."""

from __future__ import annotations

import functools
import math
import os
import sys
from pathlib import Path

import tensorgrad as tg
import tensorgrad.distributed as dist
from tensorgrad.serialization import CheckpointError

from ..checkpoint import ResumeError
from ..config import ConfigError
from ..data import DataError
from ..messages import renamed
from ..rundir import RunDirError
from ..train import TrainingDiverged, TrainingInterrupted

# Failures a user can cause and fix; anything else is a bug and keeps its traceback.
EXPECTED = (ConfigError, DataError, CheckpointError, ResumeError, RunDirError, TrainingDiverged, tg.DeviceError,
            dist.DistributedError)  # fmt: skip
EXIT_ERROR, EXIT_INTERRUPTED = 1, 130

# The flag of each library argument and config field the library's messages name, where it is
# not "--" + the name with dashes (gpt/messages.py); "setting" is the noun for any of them.
FLAGS = {"learning_rate": "--lr", "fast_attention": "--slow-attention", "ranks": "--distributed", "path": "--data",
         "setting": "flag"}  # fmt: skip


def flag(name: str) -> str:
    """The command-line flag of a library argument or config field: max_iters -> --max-iters."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def in_flags(text) -> str:
    """A library message (an error's or a log line) with the arguments it names written as flags."""
    if isinstance(text, BaseException):
        text = text.args[0] if len(text.args) == 1 else str(text)
    return renamed(text, flag)


def say(text):
    """Print a library log line in terms of flags (the `log` the commands give train())."""
    print(in_flags(text))


def fail(message: str, code: int = EXIT_ERROR):
    if dist.is_initialized() and dist.get_world_size() > 1:  # --distributed: this rank's error ends every rank
        dist.abort(f"error: {message}" + (f" (rank {dist.get_rank()})" if dist.get_rank() else ""), code)
    print(f"error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def command_line(fn):
    """Wrap a command's main(argv): expected failures become `error: ...` and an exit status."""

    @functools.wraps(fn)
    def main(argv=None):
        try:
            return fn(argv)
        except TrainingInterrupted as e:
            fail(f"{in_flags(e)}{resume_hint(e)}", EXIT_INTERRUPTED)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except EXPECTED as e:
            fail(in_flags(e))
        except FileNotFoundError as e:
            fail(f"no such file: {e.filename}")
        except IsADirectoryError as e:
            fail(f"{e.filename} is a directory, not a file")
        except OSError as e:  # full disk, read-only directory, permissions
            fail(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        except MemoryError:
            fail("out of memory: try a smaller --batch-size or --block-size")

    return main


def this_command() -> str:
    """How the user started this program, for hints ("python examples/train_shakespeare.py")."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "tensorgrad-train"
    if argv0.endswith(".py"):
        package_root = Path(__file__).resolve().parents[2]
        module = Path(argv0).resolve()
        if module.is_relative_to(package_root / "gpt"):  # python -m gpt.cli.train
            return "python -m " + ".".join(module.relative_to(package_root).with_suffix("").parts)
        return f"python {argv0}"
    return os.path.basename(argv0)


def resume_hint(e: TrainingInterrupted) -> str:
    if e.checkpoint is None:
        return ""
    return f"\nresume with: {this_command()} --out-dir {e.checkpoint.parent} --resume"


def device_of(backend_name: str) -> str:
    return "cuda" if backend_name == "cupy" else "cpu"


def check_text(flag: str, text: str, tokenizer):
    """A prompt / context must be non-empty and use only the model's characters."""
    if not text:
        raise ConfigError(f"{flag} is empty: give at least one character")
    unknown = sorted({c for c in text if c not in tokenizer.stoi})
    if unknown:
        shown = "".join(unknown[:10])
        raise ConfigError(
            f"{flag} {text[:40]!r}: the character(s) {shown!r} are not in the model's vocabulary of "
            f"{tokenizer.vocab_size} characters"
        )


def check_sampling(temperature: float, top_k, tokens: int, vocab_size: int, tokens_flag="--tokens"):
    if not (temperature > 0 and math.isfinite(temperature)):
        raise ConfigError(f"--temperature {temperature!r}: must be a finite number > 0")
    if top_k is not None and not 1 <= top_k <= vocab_size:
        raise ConfigError(f"--top-k {top_k}: must be between 1 and the vocabulary size {vocab_size}")
    if tokens < 0:
        raise ConfigError(f"{tokens_flag} {tokens}: must be >= 0")


def check_positive(flag: str, value: int):
    if value < 1:
        raise ConfigError(f"{flag} {value}: must be an integer >= 1")
