"""A run directory: the files one training run keeps, guarded so that no run is lost.

    best.npz      lowest val loss so far             last.npz   the newest checkpoint (resumable)
    log.jsonl     one line per evaluation            summary.json, curves.png   written at the end
    .lock         locked by the run using the directory; names its pid and host

- A directory that holds a run is never started over without an explicit overwrite.
- Only one process trains in a directory at a time: it holds an flock on `.lock` for the
  run's lifetime, and the kernel drops it when the process ends, however it ends.  Whether a
  run is live is the lock's alone to say, never a pid's: a pid means nothing in another PID
  namespace (another container, another host on a shared disk, where NFS carries the lock)
  and may belong to another process once its run is dead.  The pid and host in the file only
  name the holder in the refusal.  A lock file left by a dead run is simply locked again.
- Every file is written atomically (a temporary name in the same directory, then a rename), so
  a kill leaves either the old file or the new one.  Temporary files of our own naming,
  `.NAME.<12 hex>.tmp` as tg.save writes them, are left only by a kill and are removed when
  the next run takes the lock.
- A run file that is a symlink is written through (its target replaced, the link kept), and
  counts as a run even when its target is gone.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
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


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open `fd` is the file at `path` now (not one removed, or replaced, since)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


def _holder(fd: int) -> str:
    """The holder of a lock, as it wrote itself into the file: "pid 123 on host h"."""
    try:
        words = os.pread(fd, 256, 0).decode("utf-8", "replace").split()
    except OSError:
        words = []
    if len(words) != 2:  # taken a moment ago, not written yet
        return "its pid not yet written"
    return f"pid {words[0]} on host {words[1]}"


def _os_error(e: OSError, what: str) -> RunDirError:
    name = e.filename if e.filename is not None else what
    return RunDirError(f"cannot write {name}: {e.strerror or e}")


class RunDir:
    """`with RunDir(path) as run:` creates the directory, takes its lock, cleans stale temp files."""

    def __init__(self, path):
        self.path = Path(path)
        self._fd = None  # the open .lock, flocked, while the run holds the directory

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
        while True:
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except OSError as e:
                raise _os_error(e, str(lock)) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise RunDirError(message(
                    f"{arg('out_dir')} {self.path} is in use by another run ({holder}, lock file {lock}); "
                    f"wait for it, or choose another {arg('out_dir')}"
                )) from None  # fmt: skip
            except OSError as e:
                os.close(fd)
                raise RunDirError(message(
                    f"{arg('out_dir')} {self.path}: cannot lock {lock} ({e.strerror or e}); the run directory must "
                    "be on a filesystem with file locks"
                )) from None  # fmt: skip
            if _same_file(fd, lock):
                break
            os.close(fd)  # released and removed between our open and our flock: lock the file there now
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        except OSError as e:
            self.release()
            raise _os_error(e, str(lock)) from None
        self.clean_stale_temp_files()

    def release(self):
        fd, self._fd = self._fd, None
        if fd is None:
            return
        lock = self.path / LOCK
        try:
            if _same_file(fd, lock):
                # removed while still held: a process that opened it meanwhile finds it gone once it
                # gets the flock, and locks the file at the path instead (acquire's loop)
                lock.unlink()
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the descriptor releases the flock

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
