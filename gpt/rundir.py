"""A run directory: the files one training run keeps, guarded so that no run is lost.

    best.npz      lowest val loss so far             last.npz   the newest checkpoint (resumable)
    log.jsonl     one line per evaluation            summary.json, curves.png   written at the end
    .lock         the pid of the run using the directory

- A directory that holds a run is never started over without an explicit overwrite.
- Only one process trains in a directory at a time: `.lock` holds its pid; a lock whose
  process is gone (killed, the machine rebooted) is stale and taken over.
- Every file is written atomically (a temporary name in the same directory, then a rename), so
  a kill leaves either the old file or the new one.  Temporary files of our own naming,
  `.NAME.<12 hex>.tmp` as tg.save writes them, are left only by a kill and are removed when
  the next run takes the lock.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from .messages import arg, message

RUN_FILES = ("last.npz", "best.npz", "log.jsonl", "summary.json", "curves.png")
LOCK = ".lock"
_TMP = re.compile(r"^\.[\w.-]+\.[0-9a-f]{12}\.tmp$")


class RunDirError(RuntimeError):
    """The run directory cannot be used as asked (it holds a run, is locked, or is not writable)."""


def holds_run(out: Path) -> bool:
    return any((out / name).exists() for name in RUN_FILES)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _os_error(e: OSError, what: str) -> RunDirError:
    name = e.filename if e.filename is not None else what
    return RunDirError(f"cannot write {name}: {e.strerror or e}")


class RunDir:
    """`with RunDir(path) as run:` creates the directory, takes its lock, cleans stale temp files."""

    def __init__(self, path):
        self.path = Path(path)
        self._locked = False

    def __enter__(self) -> RunDir:
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

    def acquire(self):
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise RunDirError(message(f"{arg('out_dir')} {self.path} exists and is not a directory")) from None
        except OSError as e:
            raise RunDirError(message(
                f"{arg('out_dir')} {self.path}: cannot create the directory ({e.strerror or e})"
            )) from None  # fmt: skip
        lock = self.path / LOCK
        for _ in range(3):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    pid = int(lock.read_text().strip() or 0)
                except (OSError, ValueError):
                    pid = 0
                if pid != os.getpid() and _pid_alive(pid):
                    raise RunDirError(message(
                        f"{arg('out_dir')} {self.path} is in use by another run (pid {pid}, lock file {lock}); "
                        f"wait for it, or choose another {arg('out_dir')}"
                    )) from None  # fmt: skip
                try:  # stale: its process is gone
                    lock.unlink()
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise _os_error(e, str(lock)) from None
                continue
            except OSError as e:
                raise _os_error(e, str(lock)) from None
            with os.fdopen(fd, "w") as f:
                f.write(f"{os.getpid()}\n")
            self._locked = True
            self.clean_stale_temp_files()
            return
        raise RunDirError(f"could not take the lock {lock}")

    def release(self):
        if self._locked:
            self._locked = False
            try:
                (self.path / LOCK).unlink()
            except OSError:
                pass

    def clean_stale_temp_files(self) -> list[Path]:
        """Remove `.NAME.<hex>.tmp` files (ours, left by a killed run); only while holding the lock."""
        removed = []
        for p in self.path.iterdir():
            if _TMP.match(p.name) and p.is_file():
                p.unlink()
                removed.append(p)
        return removed

    def clear(self):
        """Remove the run's files (an explicit overwrite)."""
        for name in RUN_FILES:
            try:
                (self.path / name).unlink()
            except FileNotFoundError:
                pass


def atomic_write(path, data: bytes | str):
    """Write `path` whole or not at all: a temporary name beside it, then a rename."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with open(tmp, "xb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp.exists():
            tmp.unlink()
        if isinstance(e, OSError):
            raise RunDirError(f"cannot write {path}: {e.strerror or e}") from None
        raise
