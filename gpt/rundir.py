"""A run directory: the files one training run keeps, guarded so that no run is lost.

    best.npz      lowest val loss so far             last.npz   the newest checkpoint (resumable)
    log.jsonl     one line per evaluation            summary.json, curves.png   written at the end
    .lock         the pid of the run using the directory

- A directory that holds a run is never started over without an explicit overwrite.
- Only one process trains in a directory at a time: `.lock` holds its pid; a lock whose
  process is gone (killed, the machine rebooted) is stale and taken over.  Reading, judging and
  replacing the lock happen under an flock of the directory, so two processes never both take
  it, and the pid is in the file from the moment it exists (written whole, then renamed).
- Every file is written atomically (a temporary name in the same directory, then a rename), so
  a kill leaves either the old file or the new one.  Temporary files of our own naming,
  `.NAME.<12 hex>.tmp` as tg.save writes them, are left only by a kill and are removed when
  the next run takes the lock.
- A run file that is a symlink is written through (its target replaced, the link kept), and
  counts as a run even when its target is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
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
    """Whether `out` holds a run's files; a symlink among them counts, even one whose target is
    gone, since the run's writes would go through it (as tg.save writes through a link)."""
    return any(os.path.lexists(out / name) for name in RUN_FILES)


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


@contextlib.contextmanager
def _exclusive(directory: Path):
    """Hold an exclusive flock on the directory itself while the lock file is read and replaced.

    Without it two processes could both find the lock absent or stale and both take it. The
    directory is never deleted, so every process locks the same inode, and the kernel drops the
    flock when its holder dies: it cannot go stale."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as e:
        raise _os_error(e, str(directory)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


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
        with _exclusive(self.path):  # one process at a time reads, judges and replaces the lock
            try:
                pid = int(lock.read_text().strip())
            except FileNotFoundError:
                pid = None
            except (OSError, ValueError):
                pid = None  # unreadable or not a pid: never written by a run (ours are written whole)
            if pid is not None and pid != os.getpid() and _pid_alive(pid):
                raise RunDirError(message(
                    f"{arg('out_dir')} {self.path} is in use by another run (pid {pid}, lock file {lock}); "
                    f"wait for it, or choose another {arg('out_dir')}"
                ))  # fmt: skip
            atomic_write(lock, f"{os.getpid()}\n")  # absent, or stale (its process is gone): ours now
            self._locked = True
        self.clean_stale_temp_files()

    def release(self):
        if self._locked:
            self._locked = False
            try:
                with _exclusive(self.path):
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
    """Write `path` whole or not at all: a temporary name beside it, then a rename.  Onto a
    symlink, its target is written (as tg.save writes through a link), the link kept."""
    path = Path(os.path.realpath(path))
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
