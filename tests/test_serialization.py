"""tg.save / tg.load: exact round trips, no pickle, atomic writes, clear errors on bad files."""

from __future__ import annotations

import json
import os
import pathlib
import pickle

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
