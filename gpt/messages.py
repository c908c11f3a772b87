"""Messages that name the library's arguments, so that a front end can name them its own way.

The library speaks of its arguments and config fields (`max_iters`, `out_dir`, `resume`);
the command line (gpt/cli/) speaks of flags (`--max-iters`, `--out-dir`, `--resume`).  An
error or log line marks each name with `arg(...)` and is built by `message(...)`: a str in
the library's terms (what str(error) and the log show) that keeps its marked text, from
which `renamed(...)` writes it in the caller's terms:

    e = ConfigError(message(f"{arg('max_iters')} 0: must be an integer >= 1"))
    str(e)                           # 'max_iters 0: must be an integer >= 1'
    renamed(e.args[0], cli_flag)     # '--max-iters 0: must be an integer >= 1'  (gpt/cli/common.py)
"""

from __future__ import annotations

import re

_MARK = re.compile("\x1e([A-Za-z_]+)\x1f")  # record/unit separators: never in a repr'd value or a path


def arg(name: str) -> str:
    """`name` marked as one of the library's argument names."""
    return f"\x1e{name}\x1f"


class Message(str):
    """A message in the library's terms that remembers which words are argument names."""

    marked: str

    def __new__(cls, marked: str):
        self = super().__new__(cls, _MARK.sub(r"\1", marked))
        self.marked = marked
        return self


def message(marked: str) -> Message:
    return Message(marked)


def renamed(text, rename) -> str:
    """`text` with each argument name it marks replaced by rename(name); other text as it is."""
    if isinstance(text, Message):
        return _MARK.sub(lambda m: rename(m.group(1)), text.marked)
    return str(text)
