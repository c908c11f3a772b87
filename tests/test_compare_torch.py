"""examples/compare_torch.py: tensorgrad and the lecture's PyTorch model from the same weights, on the same batches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.reference
torch = pytest.importorskip("torch")
if not (ROOT / "data" / "tinyshakespeare" / "input.txt").exists():
    pytest.skip("needs data/tinyshakespeare/input.txt", allow_module_level=True)
sys.path.insert(0, str(ROOT))
from examples import compare_torch  # noqa: E402


def test_a_few_steps_agree_and_the_curves_are_drawn(tmp_path, capsys):
    out = tmp_path / "curves.png"
    args = ["--preset", "multihead", "--max-iters", "6", "--eval-interval", "3", "--eval-iters", "2",
            "--batch-size", "8", "--out", str(out)]  # fmt: skip
    assert compare_torch.main(args) == 0
    text = capsys.readouterr().out
    for step in (0, 3, 6):
        assert f"{step:>6} train" in text and f"{step:>6}   val" in text
    assert "max |difference|" in text and out.read_bytes()[:4] == b"\x89PNG"


def test_float64_runs_agree_to_rounding():
    args = compare_torch.parse_args(["--preset", "small", "--max-iters", "4", "--eval-iters", "1", "--batch-size", "4",
                                     "--dtype", "float64", "--out", ""])  # fmt: skip
    result = compare_torch.run(args, torch, log=lambda *a: None)
    # float64, the same operations on the same weights and batches: differences are rounding (~1e-15)
    assert result["max_step_diff"] < 1e-12 and result["max_eval_diff"] < 1e-12
    assert result["max_weight_diff"] < 1e-12
    assert len(result["ours"]) == 4


def test_bad_arguments_give_one_line():
    with pytest.raises(SystemExit):
        compare_torch.parse_args(["--max-iters", "0"])


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--torch-threads", "0"], "--torch-threads 0"),
        (["--batch-size", "0"], "--batch-size 0"),
        (["--eval-interval", "0"], "--eval-interval 0"),
        (["--eval-iters", "-1"], "--eval-iters -1"),
        (["--out", "/nonexistent-dir/curves.png"], "--out /nonexistent-dir/curves.png"),
    ],
)
def test_each_bad_flag_is_one_line_before_any_work(flags, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        compare_torch.parse_args(flags)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert named in err[-1] and "Traceback" not in "\n".join(err)


def test_out_without_a_suffix_names_the_png_it_writes():
    assert compare_torch.parse_args(["--out", "x"]).out == "x.png"
    assert compare_torch.parse_args(["--out", "x.svg"]).out == "x.svg"


def test_a_corpus_shorter_than_a_block_is_one_line(tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("abcdefghij" * 3)  # val split: 3 characters, less than a block of 8 + 1
    code = compare_torch.main(["--preset", "bigram", "--data", str(short), "--out", ""])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--block-size" in err[0]
