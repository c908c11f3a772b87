"""Tiny Shakespeare, the tokenizer, the split and the batches."""

from __future__ import annotations

import hashlib
import urllib.request

import pytest

import tensorgrad as tg
from gpt import data as gdata
from gpt.data import CharTokenizer, DataError, ShakespeareData

needs_text = pytest.mark.skipif(not gdata.default_path().is_file(), reason="data/tinyshakespeare/input.txt missing")


@pytest.fixture(scope="module")
def text():
    return gdata.load_text(download=False)


@needs_text
def test_the_dataset_is_the_expected_file(text):
    assert len(text) == 1_115_394
    assert hashlib.sha256(gdata.default_path().read_bytes()).hexdigest() == gdata.SHA256


@needs_text
def test_vocabulary_and_split_match_the_lecture(text):
    d = ShakespeareData(text)
    assert d.tokenizer.vocab_size == 65
    assert d.tokenizer.chars[:3] == ["\n", " ", "!"]
    assert (len(d.train), len(d.val)) == (1_003_854, 111_540)


def test_tokenizer_round_trip_and_unknown_characters():
    tok = CharTokenizer.from_text("hello world")
    assert tok.decode(tok.encode("low world")) == "low world"
    assert tok.encode("he") == [tok.stoi["h"], tok.stoi["e"]]
    with pytest.raises(ValueError, match="'z' is not in the vocabulary"):
        tok.encode("zebra")


def test_batches_are_windows_shifted_by_one():
    d = ShakespeareData("abcdefghijklmnopqrstuvwxyz" * 20)
    tg.manual_seed(0)
    x, y = d.get_batch("train", block_size=8, batch_size=5)
    assert x.shape == y.shape == (5, 8)
    assert x.dtype == tg.long
    xs, ys = x.numpy(), y.numpy()
    assert (xs[:, 1:] == ys[:, :-1]).all()
    assert ((ys - xs) % 26 == 1).all()  # each target is the next letter


def test_a_batch_is_the_lectures_stack_of_windows_at_the_drawn_starts():
    """get_batch's rows are the lecture's torch.stack([data[i:i+T] for i in ix]) (and y one
    further), ix the seeded generator's one randint draw."""
    d = ShakespeareData("to be or not to be, that is the question " * 20)
    tg.manual_seed(5)
    x, y = d.get_batch("train", 8, 6)
    tg.manual_seed(5)
    ix, data = tg.randint(len(d.train) - 8, (6,)).tolist(), d.train.tolist()
    assert x.tolist() == [data[i : i + 8] for i in ix] and y.tolist() == [data[i + 1 : i + 9] for i in ix]
    d.train = tg.tensor([4, 5, 6, 7, 8, 9, 10, 11, 12, 13])  # the windows follow a replaced split
    x, y = d.get_batch("train", 8, 3)
    assert {tuple(r) for r in x.tolist()} <= {tuple(range(4, 12)), tuple(range(5, 13))}, x.tolist()
    assert [[v - 1 for v in r] for r in y.tolist()] == x.tolist()  # y: the windows one further, of the new split
    d.train = tg.tensor(list(range(9)))  # one start only (0): y is the last window of the split
    x, y = d.get_batch("train", 8, 2)
    assert x.tolist() == [list(range(8))] * 2 and y.tolist() == [list(range(1, 9))] * 2


def test_batches_are_created_on_the_data_device_and_are_seeded():
    d = ShakespeareData("to be or not to be " * 30, device="strict")
    tg.manual_seed(3)
    x, y = d.get_batch("val", 4, 2)
    assert x.device == y.device == "strict"
    tg.manual_seed(3)
    x2, _ = d.get_batch("val", 4, 2)
    assert x.tolist() == x2.tolist()


def test_find_dataset_is_the_one_lookup_and_reads_the_environment_when_called(monkeypatch, tmp_path):
    """--data's path first; else $TENSORGRAD_DATA, read at the call (a notebook may set it after
    importing gpt), then the checkout's data/ (tests/test_cli.py: data_home's order)."""
    import gpt

    assert gpt.find_dataset is gdata.find_dataset  # public, and the one the programs use (load_text)
    mine = tmp_path / "mine" / "tinyshakespeare" / "input.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("to be or not to be\n")
    monkeypatch.setenv("TENSORGRAD_DATA", str(tmp_path / "mine"))
    assert gdata.find_dataset(download=False) == mine
    assert gdata.load_text(download=False) == "to be or not to be\n"
    given = tmp_path / "given.txt"
    given.write_text("thou\n")
    assert gdata.find_dataset(given) == given  # an explicit path wins over the environment
    monkeypatch.delenv("TENSORGRAD_DATA")
    assert gdata.default_path() == gdata.CHECKOUT_DATA / gdata.RELATIVE  # a checkout (data/README.md is committed)


def test_missing_file_says_where_to_put_it(monkeypatch, tmp_path):
    monkeypatch.setenv("TENSORGRAD_DATA", str(tmp_path / "empty"))
    target = tmp_path / "empty" / "tinyshakespeare" / "input.txt"
    with pytest.raises(DataError, match="Put it there") as e:
        gdata.find_dataset(download=False)
    assert str(target) in str(e.value) and "TENSORGRAD_DATA" in str(e.value)  # where, and the other way
    with pytest.raises(DataError, match="no such file"):
        gdata.find_dataset(tmp_path / "nope.txt")


def test_download_failure_without_network_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TENSORGRAD_DATA", str(tmp_path))

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DataError, match="(?s)could not download.*Put it there"):
        gdata.find_dataset()


def test_a_download_with_the_wrong_checksum_is_refused(monkeypatch, tmp_path):
    import io

    target = tmp_path / "tinyshakespeare" / "input.txt"
    monkeypatch.setenv("TENSORGRAD_DATA", str(tmp_path))
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: io.BytesIO(b"not shakespeare"))
    with pytest.raises(DataError, match="sha256"):
        gdata.find_dataset()
    assert not target.exists()
