"""The notebooks in examples/notebooks/ run from top to bottom (nbclient; skipped without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "examples" / "notebooks"
NOTEBOOK = NOTEBOOKS / "backward_passes.ipynb"

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def run(path) -> str:
    """Execute a notebook (committed without outputs) and return the text it printed."""
    nb = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    resources = {"metadata": {"path": str(path.parent)}}
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources)
    client.execute()  # raises CellExecutionError, with the cell and its traceback, if a cell fails
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.slow
def test_backward_passes_notebook_runs():
    text = run(NOTEBOOK)
    assert "caught: gradcheck: input 0" in text  # the broken backward was caught
    assert "20 random tensors: all properties hold" in text


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "data" / "tinyshakespeare" / "input.txt").exists(), reason="needs the dataset")
def test_manual_backward_notebook_matches_autograd_everywhere():
    """Every hand-written gradient of the MLP (28 tensors, and the fused forms) against autograd."""
    text = run(NOTEBOOKS / "manual_backward.ipynb")
    lines = [line for line in text.splitlines() if "| exact:" in line]
    assert len(lines) == 28 and all("approximate: True" in line for line in lines), text
    assert "all 28 hand-written gradients match autograd's" in text
