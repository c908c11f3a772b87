"""Draw the graph that backward walks.

    import tensorgrad.viz as viz
    loss.backward(retain_graph=True)            # keep the graph to draw it after backward
    dot = viz.draw_graph(loss, "graph.svg", params=dict(model.named_parameters()))

`draw_graph` returns the graph as DOT text (Graphviz's language) and, given a path, draws it:
`.svg` or `.png`.  With Graphviz's `dot` program installed it does the layout; without it, a
small layered layout of our own (inputs on top, the output at the bottom) is written as SVG
directly, or drawn as PNG with matplotlib.

Each box is one tensor:
- an op's output: the op (its Function class), shape and dtype, and the bytes its node keeps
  for backward (the saved arrays: what a long graph costs in memory);
- a leaf: its parameter name (from `params`), shape and dtype, whether it requires grad, and,
  after backward, the norm of its gradient -- vanishing or exploding gradients show up here.
Arrows go from inputs to outputs, the direction of the forward pass; backward walks them back.

Backward releases the graph (each node's inputs and saved arrays) unless called with
`retain_graph=True`; a released graph cannot be drawn.
"""

from __future__ import annotations

import html
import math
import shutil
import subprocess
from pathlib import Path

from . import backend
from .autograd import Function
from .tensor import Tensor

np = backend.namespace("cpu")  # gradient norms on host copies

CHAR_W, LINE_H, PAD = 7.0, 15.0, 8.0  # px: monospace 11px text, box padding
GAP_X, GAP_Y = 24.0, 46.0
MAX_ROW_WIDTH = 1400.0  # px: a wider row of leaves (e.g. every head's weights) wraps
COLORS = {"param": "#cfe3ff", "leaf": "#e8f5e0", "const": "#f4f4f4", "op": "#fff3d6", "root": "#ffd0b0"}


# ---------------------------------------------------------------- the graph
def _nbytes(obj) -> int:
    if isinstance(obj, Tensor):
        return obj._data.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, Function):  # an op kept inside another (the packed attention keeps its inner op)
        return _nbytes(obj.saved)
    return int(getattr(obj, "nbytes", 0)) if backend.is_array(obj) else 0


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""  # pragma: no cover


def _describe(t: Tensor) -> str:
    return f"{tuple(t.shape)} {t.dtype}"


def collect(root: Tensor, params=None) -> tuple[list[dict], list[tuple[int, int]]]:
    """(nodes, edges): one node per tensor reachable from `root`, edges (input id, output id)."""
    if not isinstance(root, Tensor):
        raise TypeError(f"draw_graph: expected a Tensor, got {type(root).__name__}")
    names = {id(p): n for n, p in (params.items() if isinstance(params, dict) else params or ())}
    nodes, edges, seen, stack = {}, [], set(), [root]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        ctx = t._ctx
        if ctx is not None:
            if ctx.parents is None:
                raise RuntimeError(
                    "draw_graph: this graph was released by backward(); call backward(retain_graph=True) "
                    "to draw it after backward, or draw it before"
                )
            op = getattr(type(ctx), "replaces", None) or type(ctx)  # a kernel op goes by the op it replaces
            lines = [op.__name__, _describe(t), f"requires_grad, saved {_size(_nbytes(ctx.saved))}"]
            kind = "op"
            for p in ctx.parents:
                if isinstance(p, Tensor):
                    edges.append((id(p), id(t)))
                    stack.append(p)
        else:
            name = names.get(id(t))
            kind = "param" if name is not None else ("leaf" if t.requires_grad else "const")
            lines = [name or ("input" if t.requires_grad else "constant"), _describe(t)]
            lines.append("requires_grad" if t.requires_grad else "no grad")
            if t.grad is not None:
                g = backend.to_numpy(t.grad._data).astype(np.float64)
                lines.append(f"|grad| = {math.sqrt(float(np.sum(g * g))):.3g}")
        if t is root:
            kind, lines = "root", ["output: " + lines[0]] + lines[1:]
        nodes[id(t)] = {"id": id(t), "kind": kind, "lines": lines}
    return list(nodes.values()), list(dict.fromkeys(edges))


def to_dot(nodes, edges) -> str:
    """The graph in Graphviz's DOT language."""
    out = [
        "digraph autograd {",
        "  graph [rankdir=TB, nodesep=0.25, ranksep=0.4];",
        '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10];',
    ]
    index = {n["id"]: k for k, n in enumerate(nodes)}  # stable names n0, n1, ... (the output is n0)
    for k, n in enumerate(nodes):
        label = "\\n".join(line.replace('"', '\\"') for line in n["lines"])
        out.append(f'  n{k} [label="{label}", fillcolor="{COLORS[n["kind"]]}"];')
    out += [f"  n{index[a]} -> n{index[b]};" for a, b in edges]
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- our own layout
def layout(nodes, edges) -> dict:
    """Layered layout (Sugiyama's, small): each op one row below its lowest input, each leaf one
    row above its first user; an edge that skips rows passes through invisible points, one per
    row, so it bends around the boxes; rows are ordered by the mean position of their neighbours
    (sweeps down and up); a row of leaves wider than MAX_ROW_WIDTH wraps.

    Returns boxes {id: (x, y, w, h)}, routes {(a, b): [(x, y), ...]} and the drawing's size."""
    parents = {n["id"]: [] for n in nodes}
    children = {n["id"]: [] for n in nodes}
    for a, b in edges:
        parents[b].append(a)
        children[a].append(b)
    layer = {}
    for n in nodes:  # longest path from a leaf, iteratively
        stack = [n["id"]]
        while stack:
            j = stack[-1]
            todo = [p for p in parents[j] if p not in layer]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            layer[j] = 1 + max((layer[p] for p in parents[j]), default=-1)
    for n in nodes:  # leaves sit just above their first user
        i = n["id"]
        if not parents[i] and children[i]:
            layer[i] = min(layer[c] for c in children[i]) - 1
    size = {n["id"]: (max(len(s) for s in n["lines"]) * CHAR_W + 2 * PAD, len(n["lines"]) * LINE_H + PAD)
            for n in nodes}  # fmt: skip
    # invisible points on edges that skip rows
    up, down, chains = {i: list(v) for i, v in parents.items()}, {i: list(v) for i, v in children.items()}, {}
    for a, b in edges:
        prev, chain = a, []
        for k in range(layer[a] + 1, layer[b]):
            d = ("dummy", a, b, k)
            layer[d], size[d], up[d], down[d] = k, (2.0, LINE_H), [prev], []
            down[prev].append(d)
            chain.append(d)
            prev = d
        if chain:
            down[a].remove(b)
            up[b].remove(a)
            down[prev].append(b)
            up[b].append(prev)
        chains[(a, b)] = chain
    rows: dict[int, list] = {}
    for i in layer:
        rows.setdefault(layer[i], []).append(i)
    order = [rows[k] for k in sorted(rows)]
    pos = {i: k for row in order for k, i in enumerate(row)}
    for sweep in range(12):
        for row in order if sweep % 2 == 0 else reversed(order):
            nb = up if sweep % 2 == 0 else down
            key = {i: (sum(pos[j] for j in nb[i]) / len(nb[i]) if nb[i] else pos[i]) for i in row}
            row.sort(key=lambda i: key[i])
            for k, i in enumerate(row):
                pos[i] = k
    lines = []  # rows as drawn: a wide row of leaves wraps
    for row in order:
        line, w = [], 0.0
        for i in row:
            if line and w + size[i][0] > MAX_ROW_WIDTH and not parents.get(i, [None]) and not up[i]:
                lines.append(line)
                line, w = [], 0.0
            line.append(i)
            w += size[i][0] + GAP_X
        lines.append(line)
    widths = [sum(size[i][0] for i in row) + GAP_X * (len(row) - 1) for row in lines]
    width = max(widths) + 2 * GAP_X
    boxes, y = {}, GAP_Y / 2
    for row, w in zip(lines, widths):
        x = (width - w) / 2
        h = max(size[i][1] for i in row)
        for i in row:
            boxes[i] = (x, y, size[i][0], size[i][1])
            x += size[i][0] + GAP_X
        y += h + GAP_Y
    routes = {}
    for (a, b), chain in chains.items():
        xa, ya, wa, ha = boxes[a]
        xb, yb, wb, _ = boxes[b]
        mid = [(boxes[d][0] + 1, boxes[d][1] + boxes[d][3] / 2) for d in chain]
        routes[(a, b)] = [(xa + wa / 2, ya + ha)] + mid + [(xb + wb / 2, yb)]
    real = {n["id"] for n in nodes}
    return {"boxes": {i: b for i, b in boxes.items() if i in real}, "routes": routes, "width": width,
            "height": y - GAP_Y / 2}  # fmt: skip


def _svg_path(points) -> str:
    """A smooth path through `points`: vertical tangents at each one (cubic Beziers)."""
    (x, y), out = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for x1, y1 in points[1:]:
        my = (y + y1) / 2
        out.append(f"C{x:.1f},{my:.1f} {x1:.1f},{my:.1f} {x1:.1f},{y1:.1f}")
        x, y = x1, y1
    return " ".join(out)


def to_svg(nodes, edges) -> str:
    """An SVG drawing of the graph, from `layout` (no Graphviz needed)."""
    lay = layout(nodes, edges)
    boxes = lay["boxes"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay["width"]:.0f}" height="{lay["height"]:.0f}" '
        f'font-family="DejaVu Sans Mono, monospace" font-size="11">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for edge in edges:
        out.append(
            f'<path d="{_svg_path(lay["routes"][edge])}" fill="none" stroke="#555" stroke-width="1" '
            'marker-end="url(#arrow)"/>'
        )
    for n in nodes:
        x, y, w, h = boxes[n["id"]]
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="5" '
            f'fill="{COLORS[n["kind"]]}" stroke="#333"/>'
        )
        for k, line in enumerate(n["lines"]):
            weight = ' font-weight="bold"' if k == 0 else ""
            out.append(
                f'<text x="{x + PAD:.1f}" y="{y + PAD / 2 + (k + 0.8) * LINE_H:.1f}"{weight}>{html.escape(line)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _png(nodes, edges, path):
    """The same layout drawn with matplotlib."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt  # noqa: PLC0415
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, PathPatch  # noqa: PLC0415
        from matplotlib.path import Path as MplPath  # noqa: PLC0415
    except ImportError:
        raise ImportError(
            "draw_graph: a PNG needs matplotlib (pip install matplotlib) or Graphviz; or write .svg"
        ) from None
    lay = layout(nodes, edges)
    boxes, dpi = lay["boxes"], 100
    fig = plt.figure(figsize=(lay["width"] / dpi, lay["height"] / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, lay["width"])
    ax.set_ylim(lay["height"], 0)
    ax.axis("off")
    for edge in edges:
        pts = lay["routes"][edge]
        verts, codes = [pts[0]], [MplPath.MOVETO]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            my = (y0 + y1) / 2
            verts += [(x0, my), (x1, my), (x1, y1)]
            codes += [MplPath.CURVE4] * 3
        ax.add_patch(PathPatch(MplPath(verts, codes), fc="none", ec="#555", lw=0.8))
        xb, yb = pts[-1]
        ax.add_patch(FancyArrowPatch((xb, yb - 6), (xb, yb), arrowstyle="-|>", mutation_scale=9, color="#555",
                                     lw=0.8, shrinkA=0, shrinkB=0))  # fmt: skip
    for n in nodes:
        x, y, w, h = boxes[n["id"]]
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=5",
                                    fc=COLORS[n["kind"]], ec="#333", lw=0.8))  # fmt: skip
        for k, line in enumerate(n["lines"]):
            ax.text(x + PAD, y + PAD / 2 + (k + 0.8) * LINE_H, line, family="monospace", size=8,
                    weight="bold" if k == 0 else "normal")  # fmt: skip
    fig.savefig(path, dpi=dpi, facecolor="white")
    plt.close(fig)


def draw_graph(tensor: Tensor, path=None, params=None) -> str:
    """The autograd graph of `tensor` as DOT text; with `path` (.svg or .png), also drawn there.

    params: a `dict(model.named_parameters())` (or the pairs themselves) to label parameters by name.
    """
    nodes, edges = collect(tensor, params)
    dot = to_dot(nodes, edges)
    if path is not None:
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in ("svg", "png"):
            raise ValueError(f"draw_graph: path must end in .svg or .png, got {path.name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        if shutil.which("dot"):
            subprocess.run(["dot", f"-T{fmt}", "-o", str(path)], input=dot.encode(), check=True)
        elif fmt == "svg":
            path.write_text(to_svg(nodes, edges))
        else:
            _png(nodes, edges, path)
    return dot
