"""The notebooks in examples/notebooks/ run from top to bottom (nbclient; skipped without it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpt.data import default_path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "examples" / "notebooks"
NOTEBOOK = NOTEBOOKS / "backward_passes.ipynb"

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def run(path, cwd=None, env=None, pythonpath=()) -> str:
    """Execute a notebook (committed without outputs) in `cwd` (default: its folder) and return the
    text it printed.  The kernel imports this checkout's tensorgrad and gpt (ROOT first on its
    PYTHONPATH, after `pythonpath`), not whichever copy is installed; `env` adds variables."""
    nb = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    resources = {"metadata": {"path": str(cwd or path.parent)}}
    paths = [*map(str, pythonpath), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    kernel_env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(paths)}
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources)
    client.execute(env=kernel_env)  # raises CellExecutionError, with the cell and its traceback, if a cell fails
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.slow
def test_backward_passes_notebook_runs():
    text = run(NOTEBOOK)
    assert "caught: gradcheck: input 0" in text  # the broken backward was caught
    assert "20 random tensors: all properties hold" in text


@pytest.mark.slow
@pytest.mark.skipif(not default_path().is_file(), reason="needs the dataset (where gpt.find_dataset looks)")
def test_manual_backward_notebook_matches_autograd_everywhere():
    """Every hand-written gradient of the MLP (28 tensors, and the fused forms) against autograd."""
    text = run(NOTEBOOKS / "manual_backward.ipynb")
    lines = [line for line in text.splitlines() if "| exact:" in line]
    assert len(lines) == 28 and all("approximate: True" in line for line in lines), text
    assert "all 28 hand-written gradients match autograd's" in text


@pytest.mark.slow
def test_manual_backward_notebook_finds_the_dataset_as_the_programs_do(tmp_path):
    """Run from another folder with TENSORGRAD_DATA naming a copy: the notebook finds the copy through
    gpt.find_dataset, as tensorgrad-train would, not through a path relative to its folder."""
    text = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 200)[:9000]
    copy = tmp_path / "datasets" / "tinyshakespeare" / "input.txt"
    copy.parent.mkdir(parents=True)
    copy.write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run(NOTEBOOKS / "manual_backward.ipynb", cwd=elsewhere, env={"TENSORGRAD_DATA": str(tmp_path / "datasets")})
    assert f"{len(set(text))} characters; {len(text) - 3} examples" in out  # the copy, not the checkout's data/
    assert "all 28 hand-written gradients match autograd's" in out


@pytest.mark.slow
@pytest.mark.parametrize("with_torch", [True, False], ids=["with-torch", "without-torch"])
def test_second_order_notebook_agrees_three_ways(with_torch, tmp_path):
    """The Hessian three ways, the Newton steps and the gradient penalty; without PyTorch too."""
    hidden = []
    if with_torch:
        pytest.importorskip("torch")
    else:  # a torch that cannot be imported, first on the kernel's path: as if it were not installed
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('torch is hidden by the test')\n")
        hidden = [tmp_path]
    text = run(NOTEBOOKS / "second_order.ipynb", pythonpath=hidden)
    verdicts = [line for line in text.splitlines() if "max |difference|" in line]
    expected = [
        "hessian vs tg.func.hessian", "hessian vs HVP columns", "hessian vs finite differences",
        "hessian vs its transpose", "penalty's gradient vs finite diff.",
    ] + (["penalty's gradient vs PyTorch"] if with_torch else [])  # fmt: skip
    assert [line.split("  ")[0].strip() for line in verdicts] == expected, text
    assert all(line.split()[-3] == "agree" for line in verdicts), text  # each within its stated tolerance
    assert "one Newton step: max |x1 - A^-1 b|" in text and "lands on the minimum" in text
    assert "pure Newton step:" in text and "(up)" in text.split("pure Newton step:")[1].splitlines()[0]
    assert "(down)" in text.split("damped (mu")[1].splitlines()[0]
    converged = float(text.split("converged: |gradient| ")[1].split()[0])
    assert converged < 1e-12, text
    assert "2.bias    .grad: None" in text  # the output bias does not change the input gradient
    if with_torch:
        assert "PyTorch's .grad is None for the same parameters: True" in text
    else:
        assert "PyTorch is not installed: skipped the comparison with it" in text
