"""tg.save / tg.load: checkpoints as an .npz of arrays plus one JSON entry, never pickle.

A pickle can run code when it is loaded, so a checkpoint from a stranger would be a
program.  This format holds only data:

    t0.npy, t1.npy, ...     one array per tensor (np.savez, uncompressed)
    __tensorgrad__.npy      uint8 bytes of UTF-8 JSON: the structure of the saved object,
                            {"format": "tensorgrad-checkpoint", "version": 1, "root": ...}

In "root", JSON's own values stand for themselves (null, true/false, ints, floats,
strings, lists), and three tagged objects stand for the rest:

    {"__tensor__": "t0", "dtype": "float32", "shape": [4, 3], "requires_grad": false}
    {"__tuple__": [...]}
    {"__dict__": [[key, value], ...]}          keys: str or int (optimizer state uses ints)

so it reads back with `np.load(path, allow_pickle=False)` and `json.loads`.  A tensor that
appears twice (tied weights) is stored once and loads as one tensor.

Arrays are little-endian bool, int8-int64, uint8-uint64 and float16/32/64 (DTYPES); tg.save
refuses any other dtype and tg.load refuses a file holding one.

Writes are atomic: the file is written under a temporary name in the same directory,
flushed to disk, then renamed over the target, so a crash or Ctrl-C mid-save leaves the
previous checkpoint whole.  A path that is a symlink is written through, as torch.save
does: the link stays, its target is replaced (the temporary file beside the target).

Reads check sizes before reading anything, so a hostile file cannot make tg.load allocate
more than the file holds: every entry is stored uncompressed (as tg.save writes them; a
deflated entry of zeros inflates a thousandfold, so compressed entries are refused rather
than bounded by a ratio that legitimate zero-filled tensors would also reach), the entries
together are no larger than the file, and each .npy header's shape times its itemsize is
exactly the entry's data.  A path that is not a regular file (a FIFO, a device) is refused
without being opened for reading.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import uuid
import zipfile

from . import backend
from .tensor import Tensor

np = backend.namespace("cpu")  # NumPy, reached through the backend (the only module that imports it)

META = "__tensorgrad__"
FORMAT = "tensorgrad-checkpoint"
VERSION = 1

# The dtypes of a checkpoint's arrays as .npy headers spell them: little-endian, or one byte.
DTYPES = ("|b1", "|i1", "|u1", "<i2", "<i4", "<i8", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8")
DTYPE_NAMES = "bool, int8-int64, uint8-uint64 and float16/32/64, little-endian"


class CheckpointError(ValueError):
    """A file that is not a readable tensorgrad checkpoint (truncated, corrupt, or foreign)."""


# --------------------------------------------------------------------------- save
def _encode(obj, arrays: dict, memo: dict, where: str):
    """obj -> its JSON description; tensors' host copies go into `arrays`."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        key = memo.get(id(obj))
        if key is None:
            host = obj.numpy()
            if host.dtype.str not in DTYPES:  # tg.load refuses any other
                why = "which np.savez saves only by pickling" if host.dtype.hasobject else "which checkpoints lack"
                raise TypeError(f"tg.save: the tensor at {where} is of dtype {host.dtype}, {why}; they hold "
                                f"{DTYPE_NAMES}: convert it first (e.g. t.to(tg.float32))")  # fmt: skip
            key = memo[id(obj)] = f"t{len(arrays)}"
            arrays[key] = host
        return {
            "__tensor__": key,
            "dtype": str(obj.dtype),
            "shape": list(obj.shape),
            "requires_grad": bool(obj.requires_grad),
        }
    if isinstance(obj, list):
        return [_encode(v, arrays, memo, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, memo, f"{where}[{i}]") for i, v in enumerate(obj)]}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"tg.save: dict keys must be str or int, got {type(k).__name__} {k!r} in {where}")
            items.append([k, _encode(v, arrays, memo, f"{where}[{k!r}]")])
        return {"__dict__": items}
    raise TypeError(
        f"tg.save: cannot save a {type(obj).__name__} at {where}: only tensors, numbers, strings, "
        "None, and lists / tuples / dicts of them are saved (never pickled objects)"
    )


def _write_npz(f, arrays: dict):
    """np.savez into an open binary file (a seam the tests use to simulate a crash mid-write)."""
    np.savez(f, **arrays)


def save(obj, path) -> None:
    """Save nested dicts / lists / tuples of tensors, numbers, strings, bools and None.

    Onto a symlink, the link's target is replaced (as torch.save writes through the link)."""
    path = os.fspath(path)
    arrays: dict = {}
    root = _encode(obj, arrays, {}, "obj")
    meta = json.dumps({"format": FORMAT, "version": VERSION, "root": root})
    arrays[META] = np.frombuffer(meta.encode("utf-8"), dtype=np.uint8)
    path = _write_target(path)
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "xb") as f:
            _write_npz(f, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # atomic on POSIX and Windows: readers see the old file or the new one
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_directory(directory)


def _write_target(path: str) -> str:
    """The file a write to `path` replaces: `path` itself, or the file its symlinks lead to
    (which need not exist yet, as open(path, "wb") creates a dangling link's target)."""
    target = os.path.realpath(path)
    if os.path.islink(target):  # a loop of links, which realpath leaves unresolved
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
    return target


def _fsync_directory(directory: str):
    """Make the rename itself durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- load
def load(path, device="cpu"):
    """Load what tg.save wrote; every tensor is placed on `device`, whatever it was saved from.

    Raises CheckpointError (naming the file and the problem) for a directory or another file
    that is not a regular one (a FIFO, a device), a truncated, corrupt or foreign file, one
    whose sizes do not add up (checked before anything is read), or metadata nested deeper
    than MAX_DEPTH; FileNotFoundError if there is none.
    """
    path = os.fspath(path)
    device = backend.normalize_device(device)
    if os.path.isdir(path):
        raise CheckpointError(
            f"{path}: is a directory, not a checkpoint file (e.g. {os.path.join(path, 'last.npz')})"
        ) from None
    _check_regular(path, os.stat(path).st_mode)  # FileNotFoundError / PermissionError propagate as they are
    # O_NONBLOCK: a FIFO put there since the stat would otherwise wait for a writer; it changes
    # nothing for a regular file, and fstat checks the file actually opened
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as f:
        info = os.fstat(fd)
        _check_regular(path, info.st_mode)
        try:
            arrays, root = _read(f, info.st_size)
            return _decode(root, arrays, {}, device, 0)
        except CheckpointError as e:
            raise CheckpointError(f"{path}: {e}") from None
        except (ValueError, TypeError, OSError, EOFError, KeyError, IndexError, RecursionError, MemoryError,
                zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as e:  # fmt: skip
            # json.JSONDecodeError and UnicodeDecodeError are ValueErrors; json.loads raises
            # RecursionError on absurdly nested text; a mangled zip header can raise any of these
            raise CheckpointError(f"{path}: not a readable tensorgrad checkpoint ({type(e).__name__}: {e})") from None


_KINDS = ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))  # fmt: skip


def _check_regular(path: str, mode: int):
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "special file")
        raise CheckpointError(f"{path}: is a {kind}, not a checkpoint file (tg.save writes regular files)") from None


def _read(f, size: int):
    """The arrays and the JSON root of an open checkpoint file of `size` bytes (checked,
    nothing unpickled, nothing read before the sizes are known to fit in the file)."""
    if f.read(4) != b"PK\x03\x04":
        raise CheckpointError("not a tensorgrad checkpoint (not an .npz / zip file)")
    f.seek(0)
    with zipfile.ZipFile(f) as z:
        entries = _check_entries(z.infolist(), size)
        if META not in entries:
            raise CheckpointError(f"not a tensorgrad checkpoint (no {META!r} entry; arrays: {sorted(entries)[:5]})")
        text = _read_entry(z, entries[META])
        if text.dtype != np.uint8 or text.ndim != 1:
            raise CheckpointError(f"not a tensorgrad checkpoint (the {META!r} entry is {text.dtype} {text.shape})")
        meta = json.loads(text.tobytes().decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise CheckpointError(f"not a tensorgrad checkpoint (the {META!r} entry has no format {FORMAT!r})")
        if meta.get("version") != VERSION:
            raise CheckpointError(f"checkpoint format version {meta.get('version')!r}, this tensorgrad reads {VERSION}")
        arrays = {key: _read_entry(z, info) for key, info in sorted(entries.items()) if key != META}
    return arrays, meta["root"]


def _check_entries(infos, size: int) -> dict:
    """{name without .npy: ZipInfo} once the central directory is known to describe only
    uncompressed .npy entries that together fit in the file's `size` bytes."""
    entries = {}
    for info in infos:
        name = info.filename
        if not name.endswith(".npy"):
            raise CheckpointError(f"entry {name!r} is not an .npy array (tg.save writes only .npy entries)")
        if name[:-4] in entries:
            raise CheckpointError(f"entry {name!r} appears twice")
        if info.flag_bits & 0x1:
            raise CheckpointError(f"entry {name!r} is encrypted (tg.save never encrypts)")
        if info.compress_type != zipfile.ZIP_STORED:
            method = zipfile.compressor_names.get(info.compress_type, f"method {info.compress_type}")
            raise CheckpointError(
                f"entry {name!r} is compressed ({method}); tg.save writes entries uncompressed and tg.load reads "
                "only those (a compressed entry can inflate far beyond the file's size): write the arrays with "
                "np.savez, not np.savez_compressed"
            )
        if info.compress_size != info.file_size:
            raise CheckpointError(f"entry {name!r} is stored uncompressed, yet its sizes differ "
                                  f"({info.compress_size} bytes stored, {info.file_size} read)")  # fmt: skip
        entries[name[:-4]] = info
    total = sum(info.file_size for info in infos)
    if total > size:
        raise CheckpointError(f"corrupt checkpoint: its entries hold {total} bytes, more than the file's {size}")
    return entries


_CHUNK = 2**20  # bytes read at a time into the array: the one other copy in memory is a chunk


def _read_entry(z, info):
    """The array in one checked entry: its .npy header parsed and checked (a dtype of DTYPES,
    a shape whose bytes are exactly the entry's data) before the array is allocated."""
    name = info.filename
    with z.open(info) as fp:
        try:
            version = np.lib.format.read_magic(fp)
        except ValueError:
            raise CheckpointError(f"entry {name!r} is not an .npy array") from None
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise CheckpointError(f"entry {name!r} is .npy format version {version}, which tg.save never writes")
        if dtype.hasobject:
            raise CheckpointError(f"entry {name!r} holds pickled objects, which tg.load never loads")
        if dtype.str not in DTYPES:
            raise CheckpointError(f"entry {name!r} holds {dtype}, which tg.save never writes (it writes {DTYPE_NAMES})")
        if any(d < 0 for d in shape):
            raise CheckpointError(f"entry {name!r}: its header gives the negative shape {shape}")
        need = math.prod(shape) * dtype.itemsize
        have = info.file_size - fp.tell()
        if need != have:
            raise CheckpointError(
                f"entry {name!r}: its header says {dtype} of shape {shape}, {need} bytes; it holds {have}"
            )
        flat = np.empty(math.prod(shape), dtype=dtype)
        view = memoryview(flat).cast("B")
        done = 0
        while done < need:
            chunk = fp.read(min(need - done, _CHUNK))  # the last read checks the entry's CRC
            if not chunk:
                raise CheckpointError(f"entry {name!r} is cut short ({done} of {need} bytes)")
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
        fp.read()  # at its end: the CRC is checked, also for an empty array
    return flat.reshape(shape, order="F" if fortran_order else "C")


MAX_DEPTH = 64  # tg.save's own checkpoints nest 4-6 levels; deeper metadata is refused


def _decode(node, arrays: dict, memo: dict, device: str, depth: int):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if depth > MAX_DEPTH:
        raise CheckpointError(f"corrupt metadata: nested deeper than {MAX_DEPTH} levels")
    depth += 1
    if isinstance(node, list):
        return [_decode(v, arrays, memo, device, depth) for v in node]
    if not isinstance(node, dict):
        raise CheckpointError(f"corrupt metadata: unexpected {type(node).__name__}")
    if "__tensor__" in node:
        key = node["__tensor__"]
        if key in memo:
            return memo[key]
        arr = arrays.get(key)
        if arr is None:
            raise CheckpointError(f"corrupt checkpoint: the metadata names array {key!r}, which the file lacks")
        if str(arr.dtype) != node.get("dtype") or list(arr.shape) != node.get("shape"):
            raise CheckpointError(
                f"corrupt checkpoint: array {key!r} is {arr.dtype} {tuple(arr.shape)}, "
                f"the metadata says {node.get('dtype')} {tuple(node.get('shape') or ())}"
            )
        t = Tensor(arr, device=device, requires_grad=bool(node.get("requires_grad", False)))
        memo[key] = t
        return t
    if "__tuple__" in node:
        return tuple(_decode(v, arrays, memo, device, depth) for v in node["__tuple__"])
    if "__dict__" in node:
        return {k: _decode(v, arrays, memo, device, depth) for k, v in node["__dict__"]}
    raise CheckpointError(f"corrupt metadata: unknown entry {sorted(node)}")
