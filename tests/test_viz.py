"""tensorgrad.viz.draw_graph: DOT text, an SVG or PNG drawn without Graphviz, and the example."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import tensorgrad as tg
import tensorgrad.nn as nn
from tensorgrad import viz

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_graphviz(monkeypatch):
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)


def small_graph():
    model = nn.Linear(4, 3)
    x = tg.randn(2, 4)
    loss = (model(x).tanh() * 2).sum()
    return model, loss


def test_dot_text_shows_ops_shapes_saved_bytes_and_names():
    model, loss = small_graph()
    dot = viz.draw_graph(loss, params=dict(model.named_parameters()))
    assert dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    assert 'n0 [label="output: Sum\\n() float32' in dot
    assert "Tanh\\n(2, 3) float32\\nrequires_grad, saved 24 B" in dot  # tanh keeps its (2, 3) float32 output
    assert "weight\\n(3, 4) float32\\nrequires_grad" in dot and "bias\\n(3,) float32" in dot
    assert "constant\\n(2, 4) float32\\nno grad" in dot  # the input x
    assert "|grad|" not in dot  # before backward
    assert dot.count(" -> ") == 6  # x, w, b -> Linear -> Tanh -> Mul (x 2) -> Sum


def test_gradient_norms_after_backward():
    model, loss = small_graph()
    loss.backward(retain_graph=True)
    dot = viz.draw_graph(loss, params=model.named_parameters())
    norm = float(np.linalg.norm(model.weight.grad.numpy()))
    assert f"weight\\n(3, 4) float32\\nrequires_grad\\n|grad| = {norm:.3g}" in dot


def test_a_released_graph_cannot_be_drawn():
    _, loss = small_graph()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        viz.draw_graph(loss)


def test_svg_without_graphviz(tmp_path, no_graphviz):
    model, loss = small_graph()
    loss.backward(retain_graph=True)
    path = tmp_path / "g.svg"
    viz.draw_graph(loss, path, params=dict(model.named_parameters()))
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}rect")) == 1 + 7  # background + 7 tensors
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "weight" in texts and "Tanh" in texts and any(t.startswith("|grad| = ") for t in texts)


def test_png_without_graphviz(tmp_path, no_graphviz):
    pytest.importorskip("matplotlib")
    _, loss = small_graph()
    path = tmp_path / "g.png"
    viz.draw_graph(loss, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_layout_bends_long_edges_around_rows():
    x = tg.randn(3, requires_grad=True)
    y = ((x.exp() * 2).tanh() + x).sum()  # x feeds the Add four rows down (exp, mul, tanh between)
    nodes, edges = viz.collect(y)
    lay = viz.layout(nodes, edges)
    longest = max(lay["routes"].values(), key=len)
    assert len(longest) == 2 + 3  # three invisible points, one per row skipped
    ys = [p[1] for p in longest]
    assert ys == sorted(ys)  # it only goes down


def test_bad_path_suffix():
    _, loss = small_graph()
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        viz.draw_graph(loss, "graph.pdf")


def test_draw_block_example(tmp_path, no_graphviz, capsys):
    pytest.importorskip("matplotlib")
    sys.path.insert(0, str(ROOT))
    from examples import draw_block

    assert draw_block.main(["--out", str(tmp_path / "block.png")]) == 0
    dot = capsys.readouterr().out
    for name in ("PackedSelfAttention", "ln1.weight", "ffwd.net.0.weight", "LayerNorm", "ReLU", "|grad| = "):
        assert name in dot, name
    assert (tmp_path / "block.png").stat().st_size > 10_000


def test_leaves_sit_just_above_their_first_user():
    x = tg.randn(3, requires_grad=True)
    w = tg.randn(3, requires_grad=True)
    y = (x.exp().tanh() * w).sum()  # w is used three rows below x
    nodes, edges = viz.collect(y, params={"w": w})
    boxes = viz.layout(nodes, edges)["boxes"]
    by_name = {n["lines"][0]: boxes[n["id"]] for n in nodes}
    assert by_name["w"][1] > by_name["Exp"][1]  # on the row of Tanh, not on x's
    assert by_name["w"][1] < by_name["Mul"][1]


def test_saved_bytes_count_an_op_kept_inside_another():
    """The packed attention op keeps its inner attention op, whose arrays are what it saved."""
    import tensorgrad.nn.functional as F

    qkv = tg.randn(2, 4, 12, requires_grad=True)
    out = F.packed_self_attention(qkv, 2, is_causal=True)
    saved = viz._nbytes(out.grad_fn.saved)
    assert saved >= 2 * 2 * 4 * 4 * 4  # at least the (B, H, T, T) float32 attention weights
    assert f"saved {viz._size(saved)}" in viz.draw_graph(out)
