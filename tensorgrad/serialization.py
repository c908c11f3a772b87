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

Writes are atomic: the file is written under a temporary name in the same directory,
flushed to disk, then renamed over the target, so a crash or Ctrl-C mid-save leaves the
previous checkpoint whole.
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile

from . import backend
from .tensor import Tensor

np = backend.namespace("cpu")  # NumPy, reached through the backend (the only module that imports it)

META = "__tensorgrad__"
FORMAT = "tensorgrad-checkpoint"
VERSION = 1


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
            if host.dtype.kind not in "biuf":  # np.savez would pickle an object array
                raise TypeError(f"tg.save: the tensor at {where} is of dtype {host.dtype}, which is saved only by "
                                "pickling; tensors hold bools, integers and floats")  # fmt: skip
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
    """Save nested dicts / lists / tuples of tensors, numbers, strings, bools and None."""
    path = os.fspath(path)
    arrays: dict = {}
    root = _encode(obj, arrays, {}, "obj")
    meta = json.dumps({"format": FORMAT, "version": VERSION, "root": root})
    arrays[META] = np.frombuffer(meta.encode("utf-8"), dtype=np.uint8)
    directory, name = os.path.split(os.path.abspath(path))
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

    Raises CheckpointError (naming the file and the problem) for a directory, a truncated,
    corrupt or foreign file, or metadata nested deeper than MAX_DEPTH; FileNotFoundError if
    there is none.
    """
    path = os.fspath(path)
    device = backend.normalize_device(device)
    if os.path.isdir(path):
        raise CheckpointError(
            f"{path}: is a directory, not a checkpoint file (e.g. {os.path.join(path, 'last.npz')})"
        ) from None
    with open(path, "rb") as f:  # FileNotFoundError / PermissionError propagate as they are
        try:
            arrays, root = _read(f)
            return _decode(root, arrays, {}, device, 0)
        except CheckpointError as e:
            raise CheckpointError(f"{path}: {e}") from None
        except (ValueError, TypeError, OSError, EOFError, KeyError, IndexError, RecursionError, MemoryError,
                zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as e:  # fmt: skip
            # json.JSONDecodeError and UnicodeDecodeError are ValueErrors; json.loads raises
            # RecursionError on absurdly nested text; a mangled zip header can raise any of these
            raise CheckpointError(f"{path}: not a readable tensorgrad checkpoint ({type(e).__name__}: {e})") from None


def _read(f):
    """The arrays and the JSON root of an open checkpoint file (checked, nothing unpickled)."""
    if f.read(4) != b"PK\x03\x04":
        raise CheckpointError("not a tensorgrad checkpoint (not an .npz / zip file)")
    f.seek(0)
    with np.load(f, allow_pickle=False) as npz:
        names = set(npz.files)
        if META not in names:
            raise CheckpointError(f"not a tensorgrad checkpoint (no {META!r} entry; arrays: {sorted(names)[:5]})")
        meta = json.loads(npz[META].tobytes().decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise CheckpointError(f"not a tensorgrad checkpoint (the {META!r} entry has no format {FORMAT!r})")
        if meta.get("version") != VERSION:
            raise CheckpointError(f"checkpoint format version {meta.get('version')!r}, this tensorgrad reads {VERSION}")
        arrays = {}
        for name in sorted(names - {META}):
            try:
                arrays[name] = npz[name]  # reads and CRC-checks the entry
            except ValueError as e:
                if "allow_pickle" in str(e) or "Object arrays" in str(e):
                    raise CheckpointError(f"entry {name!r} holds pickled objects, which tg.load never loads") from None
                raise
    return arrays, meta["root"]


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
