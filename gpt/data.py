"""Tiny Shakespeare: finding the text, the character tokenizer, the split, batches."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import tensorgrad as tg

from .messages import arg, message

URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
RELATIVE = Path("tinyshakespeare") / "input.txt"
CHECKOUT_DATA = Path(__file__).resolve().parent.parent / "data"  # data/ of a source checkout


def data_home() -> Path:
    """The directory datasets are read from and downloaded to, from the environment at each call:
    $TENSORGRAD_DATA if set; else the checkout's data/ when running from a checkout;
    else the user cache, $XDG_CACHE_HOME/tensorgrad (default ~/.cache/tensorgrad)."""
    if os.environ.get("TENSORGRAD_DATA"):
        return Path(os.environ["TENSORGRAD_DATA"]).expanduser()
    if (CHECKOUT_DATA / "README.md").is_file():
        return CHECKOUT_DATA
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "tensorgrad"


def default_path() -> Path:
    """Where input.txt is looked for when no path is given: data_home() / tinyshakespeare/input.txt."""
    return data_home() / RELATIVE


class DataError(RuntimeError):
    """The dataset is missing, cannot be fetched, or is not the expected file."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def find_dataset(path=None, download=True) -> Path:
    """The path of Tiny Shakespeare's input.txt, found the one way every program and notebook finds it.

    1. `path`, when given (the programs' --data): it must name a text file;
    2. else tinyshakespeare/input.txt under data_home(), the first of these that applies:
       $TENSORGRAD_DATA; the checkout's data/ (running from a source checkout); the user cache
       $XDG_CACHE_HOME/tensorgrad, default ~/.cache/tensorgrad (an installed wheel).

    The environment is read at each call.  When the file is missing there, it is downloaded there
    (and its sha256 checked) if `download`; otherwise, or when that fails, DataError says where to
    put it.  In a notebook, whatever its folder::

        from gpt import find_dataset
        text = find_dataset().read_text(encoding="utf-8")

    (load_text(path) reads it, with a clear error for a file that is not UTF-8.)"""
    if path is not None:
        if isinstance(path, str) and not path:  # Path("") would be the current directory
            raise DataError(message(f"{arg('path')} is empty: give the path of a text file, or leave it out to use "
                                    f"{default_path()}"))  # fmt: skip
        p = Path(path)
        if p.is_dir():
            hint = next((f" (did you mean {c}?)" for c in (p / "input.txt", p / RELATIVE) if c.is_file()), "")
            raise DataError(message(f"{arg('path')} {p} is a directory; give the path of a text file{hint}"))
        if not p.exists():
            raise DataError(message(f"{arg('path')} {p}: no such file"))
        if not p.is_file():  # a device, a pipe, a socket: read once, it would not be the same text twice
            raise DataError(message(f"{arg('path')} {p} is not a regular file; give the path of a text file"))
        return p
    target = default_path()
    if target.is_file():
        return target
    if not download:
        raise DataError(message(_missing_message(target)))
    import urllib.request  # noqa: PLC0415 - only to download: its import costs a program's start 30 ms

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".part")
        with urllib.request.urlopen(URL, timeout=30) as r, open(tmp, "wb") as f:
            f.write(r.read())
    except OSError as e:
        raise DataError(message(f"could not download Tiny Shakespeare ({e}).\n{_missing_message(target)}")) from None
    if _sha256(tmp) != SHA256:
        tmp.unlink()
        raise DataError(message(f"the downloaded file's sha256 is not {SHA256}; not using it.\n"
                                f"{_missing_message(target)}"))  # fmt: skip
    os.replace(tmp, target)
    return target


def _missing_message(target: Path) -> str:
    """Where to put input.txt, as a marked message (gpt/messages.py)."""
    return (
        f"Tiny Shakespeare was not found at {target}. Put it there:\n"
        f"    mkdir -p {target.parent} && cp /path/to/input.txt {target}\n"
        f"(from {URL}), or pass {arg('path')} /path/to/input.txt, or set TENSORGRAD_DATA to a directory "
        f"holding {RELATIVE}"
    )


def load_text(path=None, download=True) -> str:
    """The text of find_dataset(path, download), as UTF-8."""
    p = find_dataset(path, download)
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(
            f"{p} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); "
            "convert it, e.g. with iconv -t UTF-8"
        ) from None
    except OSError as e:
        raise DataError(f"cannot read {p}: {e.strerror}") from None


class CharTokenizer:
    """Characters <-> ids; the vocabulary is the sorted set of characters of the text."""

    def __init__(self, chars):
        self.chars = list(chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = dict(enumerate(self.chars))

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text)))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, s: str) -> list[int]:
        try:
            return [self.stoi[c] for c in s]
        except KeyError as e:
            raise ValueError(
                f"character {e.args[0]!r} is not in the vocabulary of {self.vocab_size} characters"
            ) from None

    def decode(self, ids) -> str:
        ids = ids.tolist() if hasattr(ids, "tolist") else ids
        return "".join(self.itos[int(i)] for i in ids)


class ShakespeareData:
    """The encoded text on a device, split 90/10, and random batches from it."""

    def __init__(self, text: str, device="cpu", train_fraction=0.9):
        if not text:
            raise DataError("the text is empty")
        self.tokenizer = CharTokenizer.from_text(text)
        data = tg.tensor(self.tokenizer.encode(text), dtype=tg.long, device=device)
        n = int(train_fraction * len(data))
        self.train, self.val = data[:n].detach(), data[n:].detach()  # (N_train,), (N_val,)
        self.device = device
        self.path = None  # the file it came from, when loaded from one
        self._windows = {}  # (split, size, start) -> (the split, its windows from start on): `windows`

    @classmethod
    def load(cls, path=None, device="cpu", download=True) -> ShakespeareData:
        text = load_text(path, download)
        if not text:
            raise DataError(f"{find_dataset(path, download)} is empty")
        data = cls(text, device)
        data.path = find_dataset(path, download=False)
        return data

    def check_block_size(self, block_size: int):
        """DataError unless both splits hold a window of block_size + 1 characters (x and y)."""
        for name, split in (("train", self.train), ("val", self.val)):
            if len(split) < block_size + 1:
                where = f" of {self.path}" if self.path else ""
                raise DataError(message(
                    f"the {name} split{where} has {len(split):,} characters; {arg('block_size')} {block_size} needs "
                    f"at least {block_size + 1}: use a longer text or a smaller {arg('block_size')}"
                ))  # fmt: skip

    def split(self, name: str):
        if name not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {name!r}")
        return self.train if name == "train" else self.val

    def windows(self, split: str, size: int, start: int = 0):
        """Every window of `size` characters of the split from the one at `start` on,
        `(N - size + 1 - start, size)`: `unfold`, a view of the split (no copy), and its rows from
        `start`, made once per split, size and start (again if the split is replaced)."""
        data = self.split(split)
        made = self._windows.get((split, size, start))
        if made is None or made[0] is not data:
            made = self._windows[split, size, start] = (data, data.unfold(0, size, 1)[start:])
        return made[1]

    def get_batch(self, split: str, block_size: int, batch_size: int):
        """x, y of shape (B, T): random windows of the split, y shifted by one (the next ids).

        The lecture's stack([data[i:i+T] for i in ix]) as a gather of rows of the split's windows
        (x the windows at the drawn starts, y the windows one character later at the same rows),
        drawn with the seeded generator of the data's device; the batch is created on that
        device, each contiguous, as the lecture's stack makes them (its loss views them:
        targets.view(B * T))."""
        data = self.split(split)
        ix = tg.randint(len(data) - block_size, (batch_size,), device=self.device)  # (B,) window starts
        windows = self.windows(split, block_size)  # (N - T + 1, T): row i is data[i:i+T]
        after = self.windows(split, block_size, start=1)  # (N - T, T): row i is data[i+1:i+T+1]
        return windows[ix], after[ix]  # (B, T), (B, T)
