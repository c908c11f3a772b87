"""tg.save / tg.load: exact round trips, no pickle, atomic writes, clear errors on bad files."""

from __future__ import annotations

import io
import json
import os
import pathlib
import pickle
import re
import struct
import threading
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn
from tensorgrad import backend, serialization
from tensorgrad.serialization import CheckpointError


class Mixed(nn.Module):
    """Parameters (float32 by default) and buffers of several dtypes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.register_buffer("counts", tg.arange(5))  # int64
        self.register_buffer("mask", tg.tensor([True, False, True]))  # bool
        self.register_buffer("stats", tg.randn(2, 2, dtype=tg.float64))  # float64


def _assert_same(a: dict, b: dict):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=k)


def test_state_dict_round_trip_is_exact_for_every_dtype(tmp_path):
    src = Mixed()
    tg.save(src.state_dict(), tmp_path / "m.npz")
    dst = Mixed()
    nn.init.zeros_(dst.fc.weight)
    dst.counts.data[...] = 0
    dst.load_state_dict(tg.load(tmp_path / "m.npz"))
    _assert_same(src.state_dict(), dst.state_dict())
    assert {str(v.dtype) for v in dst.state_dict().values()} == {"float32", "float64", "int64", "bool"}


def test_readable_without_pickle(tmp_path):
    tg.save({"w": tg.ones(2, 3), "step": 7}, tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as f:
        meta = json.loads(f["__tensorgrad__"].tobytes())
        assert meta["format"] == "tensorgrad-checkpoint"
        key = meta["root"]["__dict__"][0][1]["__tensor__"]
        np.testing.assert_array_equal(f[key], np.ones((2, 3), np.float32))


def test_nested_values_round_trip(tmp_path):
    obj = {
        "config": {"n_embd": 32, "lr": 3e-4, "name": "small", "bias": False, "dropout": None},
        "state": {0: {"step": 3, "betas": (0.9, 0.95)}, 1: [1, 2.5, "x", True, None, [tg.zeros(1)]]},
        "rng": backend.rng("cpu").get_state(),  # 128-bit integers
        "empty": {},
        "scalar": tg.tensor(2.5, dtype=tg.float64),
    }
    tg.save(obj, tmp_path / "n.npz")
    back = tg.load(tmp_path / "n.npz")
    assert back["config"] == obj["config"] and back["rng"] == obj["rng"] and back["empty"] == {}
    assert back["state"][0] == {"step": 3, "betas": (0.9, 0.95)}  # int keys and tuples come back as such
    assert back["state"][1][:5] == [1, 2.5, "x", True, None] and back["state"][1][5][0].shape == (1,)
    assert back["scalar"].shape == () and back["scalar"].item() == 2.5


def test_training_checkpoint_restores_rng_stream(tmp_path):
    model = Mixed()
    opt = tg.optim.AdamW(model.parameters())
    model.fc(tg.randn(2, 3)).sum().backward()
    opt.step()
    ckpt = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "step": 1,
        "config": {"block_size": 8},
        "rng": backend.rng("cpu").get_state(),
    }
    tg.save(ckpt, tmp_path / "ckpt.npz")
    expected = tg.randn(5).numpy()
    back = tg.load(tmp_path / "ckpt.npz")
    backend.rng("cpu").set_state(back["rng"])
    np.testing.assert_array_equal(tg.randn(5).numpy(), expected)
    assert back["step"] == 1 and back["config"] == {"block_size": 8}


def test_shared_tensors_stay_shared(tmp_path):
    w = tg.randn(3, 2)
    tg.save({"a": w, "b": w}, tmp_path / "t.npz")
    back = tg.load(tmp_path / "t.npz")
    assert back["a"] is back["b"]
    with np.load(tmp_path / "t.npz", allow_pickle=False) as f:
        assert len(f.files) == 2  # one array plus the metadata


def test_requires_grad_is_kept(tmp_path):
    tg.save([tg.ones(2, requires_grad=True), tg.ones(2)], tmp_path / "r.npz")
    a, b = tg.load(tmp_path / "r.npz")
    assert a.requires_grad and not b.requires_grad


def test_saved_on_strict_device_loads_on_cpu_and_back(tmp_path):
    model = Mixed().to("strict")
    tg.save(model.state_dict(), tmp_path / "s.npz")
    on_cpu = tg.load(tmp_path / "s.npz")
    assert {t.device for t in on_cpu.values()} == {"cpu"}
    cpu_model = Mixed()
    cpu_model.load_state_dict(on_cpu)
    _assert_same(model.state_dict(), cpu_model.state_dict())
    on_strict = tg.load(tmp_path / "s.npz", device="strict")
    assert {t.device for t in on_strict.values()} == {"strict"}
    _assert_same(on_cpu, on_strict)


def _leftovers(directory: pathlib.Path):
    return sorted(p.name for p in directory.iterdir())


def test_killed_mid_write_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    tg.save({"w": tg.zeros(100)}, path)

    def dies_midway(f, arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt  # Ctrl-C during the write

    monkeypatch.setattr(serialization, "_write_npz", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        tg.save({"w": tg.ones(100)}, path)
    assert _leftovers(tmp_path) == ["ckpt.npz"]  # no stray temporary file
    assert tg.load(path)["w"].numpy().sum() == 0  # the old checkpoint, whole


def test_failed_rename_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    tg.save({"w": tg.zeros(3)}, path)

    def no_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError, match="disk gone"):
        tg.save({"w": tg.ones(3)}, path)
    monkeypatch.undo()
    assert _leftovers(tmp_path) == ["ckpt.npz"]
    assert tg.load(path)["w"].numpy().tolist() == [0, 0, 0]


def test_save_overwrites_and_keeps_the_exact_name(tmp_path):
    path = tmp_path / "model.ckpt"  # no ".npz" appended, as torch.save
    tg.save({"v": 1}, path)
    tg.save({"v": 2}, path)
    assert _leftovers(tmp_path) == ["model.ckpt"] and tg.load(path) == {"v": 2}


def _bad(path, message):
    with pytest.raises(CheckpointError, match=message) as info:
        tg.load(path)
    assert str(path) in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no deep numpy traceback


def test_truncated_file(tmp_path):
    path = tmp_path / "t.npz"
    tg.save(Mixed().state_dict(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _bad(path, "not a readable tensorgrad checkpoint")


def test_corrupted_array_bytes_are_detected(tmp_path):
    path = tmp_path / "c.npz"
    tg.save({"w": tg.zeros(1000)}, path)
    data = bytearray(path.read_bytes())
    i = data.index(b"\x00" * 64)  # inside the zeros: the zip's CRC no longer matches
    data[i + 10] = 0xFF
    path.write_bytes(bytes(data))
    _bad(path, "CRC|checkpoint")


def test_garbage_and_empty_files(tmp_path):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(os.urandom(1000))
    _bad(garbage, "not an .npz")
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    _bad(empty, "not an .npz")


def test_plain_pickle_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"w": [1.0, 2.0]}))
    _bad(path, "not an .npz")


class _Touch:
    """Unpickling this object would create a file: proof of code execution."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def test_npz_with_pickled_objects_is_refused_and_never_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    meta = json.dumps({"format": "tensorgrad-checkpoint", "version": 1, "root": {"__tensor__": "t0"}})
    path = tmp_path / "evil.npz"
    evil = np.empty(1, dtype=object)
    evil[0] = _Touch(str(marker))
    np.savez(path, t0=evil, __tensorgrad__=np.frombuffer(meta.encode(), np.uint8))
    _bad(path, "pickled objects")
    assert not marker.exists()


def test_foreign_npz_is_refused(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, weights=np.ones(3))
    _bad(path, "not a tensorgrad checkpoint")


def test_missing_file_and_unsupported_types(tmp_path):
    with pytest.raises(FileNotFoundError):
        tg.load(tmp_path / "nope.npz")
    with pytest.raises(TypeError, match=r"cannot save a set at obj\['cfg'\]\['tags'\]"):
        tg.save({"cfg": {"tags": {"a"}}}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="dict keys must be str or int"):
        tg.save({(1, 2): 3}, tmp_path / "x.npz")
    assert _leftovers(tmp_path) == []  # nothing is written when encoding fails


# ------------------------------------------------------------------ never anything but CheckpointError
def _with_meta(path, root, **arrays):
    meta = json.dumps({"format": "tensorgrad-checkpoint", "version": 1, "root": root})
    with open(path, "wb") as f:
        np.savez(f, __tensorgrad__=np.frombuffer(meta.encode(), np.uint8), **arrays)


def test_a_directory_is_a_checkpoint_error(tmp_path):
    _bad(tmp_path, "is a directory, not a checkpoint file")


def test_every_truncation_and_random_byte_flips_give_checkpoint_errors(tmp_path):
    path, bad = tmp_path / "c.npz", tmp_path / "bad.npz"
    tg.save({"w": tg.randn(3, 4), "step": 7, "cfg": ("a", [1, 2.5, None]), "state": {0: tg.ones(2)}}, path)
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    variants = [data[:n] for n in range(0, len(data), 3)]  # every third truncation point
    for _ in range(300):
        flipped = bytearray(data)
        flipped[rng.integers(len(data))] = int(rng.integers(256))
        variants.append(bytes(flipped))
    for v in variants:
        bad.write_bytes(v)
        try:
            tg.load(bad)
        except CheckpointError:
            pass  # anything else (RecursionError, KeyError, struct.error, ...) fails the test


@pytest.mark.parametrize(
    "root,arrays,message",
    [
        ("[" * 100 + "]" * 100, {}, "nested deeper than 64 levels"),
        ("[" * 50000 + "]" * 50000, {}, "RecursionError"),  # json.loads itself gives up
        ({"__dict__": [[["unhashable"], 1]]}, {}, "not a readable"),
        ({"__dict__": [[1]]}, {}, "not a readable"),
        ({"__tuple__": 5}, {}, "not a readable"),
        ({"__tensor__": ["t0"]}, {}, "not a readable"),
        (
            {"__tensor__": "t0", "dtype": "int64", "shape": [2], "requires_grad": True},
            {"t0": np.ones(2, np.int64)},
            "not a readable",
        ),  # fmt: skip
        ({"__tensor__": "t9"}, {}, "which the file lacks"),
        ({"__what__": 1}, {}, "unknown entry"),
    ],
)
def test_malicious_metadata_gives_checkpoint_errors(tmp_path, root, arrays, message):
    path = tmp_path / "m.npz"
    if isinstance(root, str):  # raw JSON text, too deep for json.dumps to write
        meta = '{"format": "tensorgrad-checkpoint", "version": 1, "root": ' + root + "}"
        with open(path, "wb") as f:
            np.savez(f, __tensorgrad__=np.frombuffer(meta.encode(), np.uint8))
    else:
        _with_meta(path, root, **arrays)
    _bad(path, message)


# ------------------------------------------------------------------ sizes checked before anything is read
def _npy_header(dtype, shape) -> bytes:
    """The header np.save writes for an array of `dtype` and `shape` (version 1.0)."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def _meta_entry(root) -> bytes:
    meta = json.dumps({"format": "tensorgrad-checkpoint", "version": 1, "root": root}).encode()
    return _npy_header(np.uint8, (len(meta),)) + meta


def test_a_compressed_entry_is_refused_before_it_is_inflated(tmp_path):
    """A deflated entry of zeros is a zip bomb: 64 MB from 65 KB here, 6 GB from 6 MB as easily.
    tg.save writes entries uncompressed, so tg.load refuses compressed ones from the central
    directory alone, before a byte is inflated."""
    n = 16 * 2**20  # float32 elements: 64 MB inflated
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        meta = _meta_entry({"__tensor__": "t0", "dtype": "float32", "shape": [n], "requires_grad": False})
        z.writestr("__tensorgrad__.npy", meta, compress_type=zipfile.ZIP_STORED)
        with z.open("t0.npy", "w", force_zip64=True) as f:
            f.write(_npy_header(np.float32, (n,)))
            zeros = bytes(2**20)
            for _ in range(64):
                f.write(zeros)
    assert path.stat().st_size < 2**20
    tracemalloc.start()
    try:
        _bad(path, r"entry 't0.npy' is compressed \(deflate\)")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, peak  # 4 MB: far below the 64 MB the entry inflates to (the old load's peak)


def test_a_savez_compressed_checkpoint_is_refused_naming_the_fix(tmp_path):
    path = tmp_path / "c.npz"
    tg.save({"w": tg.ones(3)}, path)
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    np.savez_compressed(path, **arrays)
    _bad(path, "is compressed.*np.savez, not np.savez_compressed")


def _central_record(data: bytes, name: bytes) -> int:
    """The offset of `name`'s record in a zip's central directory."""
    i = data.index(b"PK\x01\x02")
    while data[i + 46 : i + 46 + len(name)] != name:
        i = data.index(b"PK\x01\x02", i + 4)
    return i


def test_an_entry_larger_than_its_header_says_is_refused_before_it_is_read(tmp_path):
    """The header claims 16M floats (64 MB) over 8 bytes of data: refused from the sizes, with
    nothing allocated for the claim."""
    path = tmp_path / "claim.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__tensorgrad__.npy", _meta_entry({"__tensor__": "t0", "dtype": "float32", "shape": [2**24],
                                                      "requires_grad": False}))  # fmt: skip
        z.writestr("t0.npy", _npy_header(np.float32, (2**24,)) + bytes(8))
    tracemalloc.start()
    try:
        _bad(path, r"entry 't0.npy': its header says float32 of shape \(16777216,\), 67108864 bytes; it holds 8")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, peak  # 4 MB: nothing near the 64 MB claimed


def test_entries_claiming_more_than_the_file_holds_are_refused(tmp_path):
    """Sizes in the central directory that add up to more than the file (overlapping entries
    read the same bytes twice): refused before any entry is opened."""
    path = tmp_path / "overlap.npz"
    tg.save({"w": tg.zeros(1000)}, path)
    data = bytearray(path.read_bytes())
    i = _central_record(bytes(data), b"t0.npy")
    size = len(data) - 100  # each entry alone fits in the file; together they do not
    data[i + 20 : i + 28] = struct.pack("<II", size, size)  # compressed and uncompressed sizes
    path.write_bytes(bytes(data))
    _bad(path, r"its entries hold \d+ bytes, more than the file's \d+")


def test_an_entry_that_is_not_an_npy_array_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "raw.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__tensorgrad__.npy", _meta_entry({"__tensor__": "t0", "dtype": "float32", "shape": [2]}))
        z.writestr("t0", b"not an array")
    _bad(path, "entry 't0' is not an .npy array")
    with zipfile.ZipFile(path, "w") as z:  # named .npy, holding something else
        z.writestr("__tensorgrad__.npy", _meta_entry({"__tensor__": "t0", "dtype": "float32", "shape": [2]}))
        z.writestr("t0.npy", b"not an array")
    _bad(path, "entry 't0.npy' is not an .npy array")


@pytest.mark.parametrize("dtype", ["complex64", "datetime64[s]", ">f4", ">i8", "longdouble", "U3"])
def test_dtypes_tg_save_never_writes_are_refused(tmp_path, dtype):
    path = tmp_path / "d.npz"
    arr = np.zeros(2, dtype)
    _with_meta(path, {"__tensor__": "t0", "dtype": str(arr.dtype), "shape": [2], "requires_grad": False}, t0=arr)
    _bad(path, re.escape(f"entry 't0.npy' holds {arr.dtype}, which tg.save never writes"))


@pytest.mark.parametrize("dtype", [">f4", "longdouble"])
def test_save_refuses_what_load_would(tmp_path, dtype):
    with pytest.raises(TypeError, match=rf"the tensor at obj\['w'\] is of dtype {np.dtype(dtype)}"):
        tg.save({"w": tg.tensor(np.zeros(2, dtype))}, tmp_path / "x.npz")
    assert _leftovers(tmp_path) == []


def test_every_dtype_tg_save_writes_round_trips(tmp_path):
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64"]  # fmt: skip
    src = {name: tg.tensor(np.arange(6).reshape(2, 3).astype(name)) for name in names}
    src["fortran"] = tg.tensor(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    src["empty"] = tg.zeros(0, 3)
    tg.save(src, tmp_path / "all.npz")
    _assert_same(src, tg.load(tmp_path / "all.npz"))


def _unblock(fifo: pathlib.Path, stop: threading.Event):
    """Open the FIFO's writing end whenever a reader waits on it, so a load that opened it for
    reading (the defect) fails the test instead of hanging it."""
    while not stop.is_set():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader (ENXIO)
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_being_opened_for_reading(tmp_path):
    fifo = tmp_path / "ckpt.npz"
    os.mkfifo(fifo)
    stop = threading.Event()
    helper = threading.Thread(target=_unblock, args=(fifo, stop), daemon=True)
    helper.start()
    try:
        _bad(fifo, "is a FIFO, not a checkpoint file")
    finally:
        stop.set()
        helper.join()
    _bad("/dev/null", "is a character device, not a checkpoint file")


# ------------------------------------------------------------------ symlinks
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this platform")
def test_save_writes_through_a_symlink(tmp_path):
    """As torch.save (which opens the path for writing): the link stays, its target is replaced
    whole (atomically, beside the target), a dangling link's target is created."""
    target, link = tmp_path / "real" / "target.npz", tmp_path / "link.npz"
    target.parent.mkdir()
    tg.save({"v": 1}, target)
    link.symlink_to(os.path.join("real", "target.npz"))  # relative, as `ln -s` makes them
    tg.save({"v": 2}, link)
    assert link.is_symlink() and tg.load(target) == {"v": 2}
    assert _leftovers(tmp_path) == ["link.npz", "real"] and _leftovers(target.parent) == ["target.npz"]
    dangling = tmp_path / "dangling.npz"
    dangling.symlink_to(tmp_path / "real" / "new.npz")
    tg.save({"v": 3}, dangling)
    assert dangling.is_symlink() and tg.load(tmp_path / "real" / "new.npz") == {"v": 3}
    loop = tmp_path / "loop.npz"
    loop.symlink_to(loop)
    with pytest.raises(OSError):
        tg.save({"v": 4}, loop)
    assert loop.is_symlink()


@pytest.mark.reference
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this platform")
def test_torch_save_writes_through_a_symlink_too(tmp_path):
    torch = pytest.importorskip("torch")
    target, link = tmp_path / "target.pt", tmp_path / "link.pt"
    torch.save({"v": 1}, target)
    link.symlink_to("target.pt")
    torch.save({"v": 2}, link)
    assert link.is_symlink() and torch.load(target) == {"v": 2}
