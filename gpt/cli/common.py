"""What every command shares: turning expected failures (a bad flag's value included) into one
`error:` line, the library's argument names into flags, the device flag, and checks of prompts,
sampling flags and data made before any work."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import gc
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
from ..memory import MemoryEstimateError
from ..messages import renamed
from ..rundir import RunDirError
from ..train import TrainingDiverged, TrainingInterrupted

# Failures a user can cause and fix; anything else is a bug and keeps its traceback.
EXPECTED = (ConfigError, DataError, CheckpointError, ResumeError, RunDirError, TrainingDiverged, tg.DeviceError,
            dist.DistributedError, MemoryEstimateError)  # fmt: skip
EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130

# The flag of each library argument and config field the library's messages name, where it is
# not "--" + the name with dashes (gpt/messages.py); "setting" is the noun for any of them.
FLAGS = {"learning_rate": "--lr", "fast_attention": "--slow-attention", "ranks": "--distributed", "path": "--data",
         "setting": "flag"}  # fmt: skip

# --data's help in every program: where gpt.find_dataset looks when the flag is left out.
DATA_HELP = (
    "path of input.txt (default, as gpt.find_dataset looks: tinyshakespeare/input.txt under $TENSORGRAD_DATA, "
    "else the checkout's data/, else ~/.cache/tensorgrad)"
)


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


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors (an unknown flag, a value of the wrong type or not among the
    choices) are one `error:` line naming the flag, as every other error of a command; --help
    shows the usage."""

    def error(self, message: str):
        fail(message, EXIT_USAGE)


@contextlib.contextmanager
def lines_as_printed():
    """While a program runs: its stdout written out at each newline, into a file or a pipe too
    (`tensorgrad-train > log & tail -f log`), where Python holds it in a block buffer by default.
    The stream's buffering is restored afterwards (main() called from a notebook or a test)."""
    stream = sys.stdout
    buffered = getattr(stream, "line_buffering", None) is False and hasattr(stream, "reconfigure") and not stream.closed
    if buffered:
        stream.reconfigure(line_buffering=True)
    try:
        yield
    finally:
        if buffered:
            stream.reconfigure(line_buffering=False)


_frozen_at_exit = False


def freeze_at_exit():
    """At the interpreter's exit, no last garbage collections over what the program made (once
    per process).  Python's exit collects its garbage several times, each a walk over every object
    still alive: with Numba loaded (its typing registries, about 120,000 objects) they cost a
    program 0.2 s after its last line.  `gc.freeze()` in an atexit handler moves every object
    there is then out of the collector's sight; nothing is left to free that the exit would not
    drop anyway (files are closed by the code that opens them, the standard streams flushed by
    Python itself).  Process-wide, so the programs choose it (`command_line`), not the library."""
    global _frozen_at_exit
    if not _frozen_at_exit:
        atexit.register(gc.freeze)
        _frozen_at_exit = True


def command_line(fn=None, *, out_of_memory: str = ""):
    """Wrap a command's main(argv): expected failures become `error: ...` and an exit status.
    `out_of_memory`: what the program's user can shrink, said after "out of memory" when an
    allocation fails (a MemoryError the checks made before any work did not foresee).

        @command_line                          # or
        @command_line(out_of_memory="use a smaller --batch-size")
    """
    if fn is None:
        return functools.partial(command_line, out_of_memory=out_of_memory)

    @functools.wraps(fn)
    def main(argv=None):
        freeze_at_exit()
        try:
            with lines_as_printed():
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
            fail("out of memory" + (f": {out_of_memory}" if out_of_memory else ""))

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
    """The command that continues the run; with its --data, which a resume must be given again
    (the program sets e.data)."""
    if e.checkpoint is None:
        return ""
    data = getattr(e, "data", None)
    hint = f"\nresume with: {this_command()} --out-dir {e.checkpoint.parent} --resume"
    return hint + (f" --data {data}" if data else "")


def device_of(backend_name: str) -> str:
    return "cuda" if backend_name == "cupy" else "cpu"


def check_text(flag: str, text: str, tokenizer, block_size: int | None = None):
    """A prompt / context must be non-empty and use only the model's characters; with
    `block_size`, it must also fit in the model's context (it would be cut to its last
    block_size characters otherwise, and the answer be about another text than the one given)."""
    if not text:
        raise ConfigError(f"{flag} is empty: give at least one character")
    unknown = sorted({c for c in text if c not in tokenizer.stoi})
    if unknown:
        shown = "".join(unknown[:10])
        raise ConfigError(
            f"{flag} {text[:40]!r}: the character(s) {shown!r} are not in the model's vocabulary of "
            f"{tokenizer.vocab_size} characters"
        )
    if block_size is not None and len(text) > block_size:
        raise ConfigError(
            f"{flag} {text[:40]!r} is {len(text)} characters, longer than the model's context (its block size, "
            f"{block_size}): it would see only {text[-block_size:]!r}; give at most {block_size} characters"
        )


def check_checkpoint(path: str | None):
    """The checkpoint argument, when given, must name a file ("" reads as no path at all)."""
    if path is not None and not path:
        raise ConfigError("the checkpoint's path is empty: give a best.npz / last.npz written by tensorgrad-train")


def check_sampling(temperature: float, tokens: int, tokens_flag="--tokens"):
    """The sampling flags that need no checkpoint: made before one is read."""
    if not (temperature > 0 and math.isfinite(temperature)):
        raise ConfigError(f"--temperature {temperature!r}: must be a finite number > 0")
    if tokens < 0:
        raise ConfigError(f"{tokens_flag} {tokens}: must be >= 0")


def check_seed(seed: int | None):
    """--seed must be in PyTorch's range of seeds, [-2**63, 2**64) (tg.manual_seed's: a negative
    seed counts modulo 2**64), checked before any work rather than when the run seeds itself."""
    if seed is not None and not -(2**63) <= seed < 2**64:
        raise ConfigError(
            f"--seed {seed}: must be an integer from -2**63 to 2**64 - 1 (the range of seeds PyTorch and tensorgrad "
            "take; a negative seed counts modulo 2**64)"
        )


def check_at_most_vocabulary(flag: str, value, vocab_size: int):
    """A count of characters (--top-k, --top) must be between 1 and the model's vocabulary size."""
    if value is not None and not 1 <= value <= vocab_size:
        raise ConfigError(f"{flag} {value}: must be between 1 and the vocabulary size {vocab_size}")


def check_positive(flag: str, value: int):
    if value < 1:
        raise ConfigError(f"{flag} {value}: must be an integer >= 1")


def check_same_vocabulary(checkpoint, tokenizer, text_tokenizer, data_flag: str = "--data"):
    """CheckpointError unless the text of `data_flag` has the characters the checkpoint's model was
    trained on (its ids would mean other characters otherwise)."""
    if text_tokenizer.chars == tokenizer.chars:
        return
    missing = "".join(sorted(set(tokenizer.chars) - set(text_tokenizer.chars))[:10])
    extra = "".join(sorted(set(text_tokenizer.chars) - set(tokenizer.chars))[:10])
    which = " and ".join(([f"lacks {missing!r}"] if missing else []) + ([f"has {extra!r} besides"] if extra else []))
    raise CheckpointError(
        f"{checkpoint} was trained on another vocabulary ({tokenizer.vocab_size} characters) than {data_flag}'s "
        f"({text_tokenizer.vocab_size} characters, which {which}); pass the run's {data_flag}"
    )


def check_tf32(tf32: bool, device: str):
    """--tf32 is a setting of the GPU's matrix units: refused on the CPU rather than ignored."""
    if tf32 and device != "cuda":
        raise ConfigError(
            "--tf32: TF32 is a GPU setting (tensor cores for float32 matmuls) and does nothing on the CPU; "
            "use it with --backend cupy"
        )
