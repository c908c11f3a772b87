"""The "thou" probe: corpus frequencies as in the write-up, and the probe on a checkpoint."""

from __future__ import annotations

import pytest

from gpt import ShakespeareData, get_config
from gpt import data as gdata
from gpt.cli import probe as probe_script
from gpt.probe import corpus_next_chars, model_next_chars
from gpt.train import load_model, train

needs_text = pytest.mark.skipif(not gdata.default_path().is_file(), reason="data/tinyshakespeare/input.txt missing")


@needs_text
@pytest.mark.parametrize(
    "context, count, top",
    [
        ("thou", 1616, {" ": 0.668, "g": 0.167, "s": 0.051, ",": 0.043, "t": 0.041}),
        ("you", 4649, {" ": 0.440, "r": 0.351, ",": 0.076, ".": 0.032, "n": 0.025}),
        ("hou", 2594, {" ": 0.495, "l": 0.153, "g": 0.126, "s": 0.095, "r": 0.045}),
        ("ou", 12730, {" ": 0.287, "r": 0.271, "l": 0.105, "s": 0.072}),
    ],
)
def test_corpus_frequencies_match_the_write_up(context, count, top):
    n, freqs = corpus_next_chars(gdata.load_text(download=False), context)
    assert n == count
    for ch, f in top.items():
        assert freqs[ch] == pytest.approx(f, abs=5e-4)  # the write-up rounds to 3 decimals
    if context == "thou":
        assert "r" not in freqs  # "thour" never occurs


def test_probe_on_a_checkpoint(tmp_path, capsys, monkeypatch):
    text = "thou art; thou goest; you are; your hour. " * 30
    data = ShakespeareData(text)
    train(get_config("small", max_iters=20, eval_interval=10, eval_iters=1), data, out_dir=tmp_path, log=print)
    model, tok, _ = load_model(tmp_path / "best.npz")
    probs = model_next_chars(model, tok, "thou")
    assert set(probs) == set(tok.chars) and abs(sum(probs.values()) - 1) < 1e-5  # float32 softmax
    monkeypatch.setattr(probe_script, "load_text", lambda path=None: text)  # the corpus, without a file
    probe_script.main([str(tmp_path / "best.npz"), "--contexts", "thou", "you"])
    out = capsys.readouterr().out
    assert "'thou' (" in out and "'you' (" in out and "corpus" in out


def test_inspect_model_prints_gradients_and_attention_maps(capsys):
    import tensorgrad as tg
    from gpt import build_model
    from gpt.cli.inspect_model import attention_maps, gradient_report

    data = ShakespeareData("thou art a villain; you know it. " * 40)
    tg.manual_seed(0)
    model = build_model("small", vocab_size=data.tokenizer.vocab_size)
    gradient_report(model, data, batch_size=4)
    attention_maps(model, data.tokenizer, "thou")
    out = capsys.readouterr().out
    assert "blocks.0.sa.heads.0.key.weight" in out and "|grad|" in out
    assert out.count("layer ") == 12  # 3 layers x 4 heads


def test_the_probe_table_has_no_rows_past_the_vocabulary():
    """--top larger than the vocabulary lists every character once, not `top` lines of blanks."""
    import tensorgrad as tg
    from gpt import build_model
    from gpt.probe import probe_table

    data = ShakespeareData("thou art a villain; you know it. " * 4)
    tg.manual_seed(0)
    model = build_model("bigram", vocab_size=data.tokenizer.vocab_size)
    lines = probe_table(model, data.tokenizer, "thou art a villain", ["thou"], top=1000).splitlines()
    assert len(lines) == 3 + data.tokenizer.vocab_size  # the context, the header, a row a character, the 'r' line
