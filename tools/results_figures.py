"""Draw the Results page's charts from the files the programs wrote under benchmarks/ (matplotlib).

    python tools/results_figures.py OUT_DIR      # (tools/build_docs.py calls write(OUT_DIR))
    python tools/results_figures.py --readme     # rewrite docs/_static/loss_curves.png, the README's picture

Nothing here is typed in by hand: every number is read from a program's saved output.
- benchmarks/reproduce_cpu.txt (examples/reproduce.py): each stage's `step N: train loss X, val loss Y`
  lines -> loss_curves.png;
- benchmarks/bench_cpu_kernels.txt (benchmarks/bench.py): its step table and its ops table ->
  speed_step.png, speed_ops.png;
- benchmarks/compare_torch_cpu.txt (examples/compare_torch.py): the first run's losses of both
  frameworks -> compare_torch.png;
- benchmarks/full_run_cpu.txt (benchmarks/full_run.py): wall time of the 5000-step runs -> full_run.png.
The PNGs carry no date or version metadata, so the same inputs give the same bytes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
README_PICTURE = ROOT / "docs" / "_static" / "loss_curves.png"


# ---------------------------------------------------------------- reading the programs' outputs
def reproduce_curves(path: Path = BENCH / "reproduce_cpu.txt") -> dict[str, dict[str, list]]:
    """stage -> {"step": [...], "train": [...], "val": [...]} from examples/reproduce.py's output."""
    curves: dict[str, dict[str, list]] = {}
    stage = None
    for line in path.read_text().splitlines():
        if m := re.match(r"== (\w+)", line):
            stage = m[1]
            curves[stage] = {"step": [], "train": [], "val": []}
        elif stage and (m := re.match(r"\s*step (\d+): train loss ([\d.]+), val loss ([\d.]+)", line)):
            for key, value in zip(("step", "train", "val"), (int(m[1]), float(m[2]), float(m[3]))):
                curves[stage][key].append(value)
    return curves


def markdown_tables(path: Path) -> list[list[dict[str, str]]]:
    """Every Markdown table in a program's output, each a list of {header: cell} rows."""
    tables, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|[-:| ]+\|$", lines[i + 1]):
            head = [c.strip() for c in lines[i].strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(head, (c.strip() for c in lines[i].strip("|").split("|")))))
                i += 1
            tables.append(rows)
        else:
            i += 1
    return tables


def compare_torch_losses(path: Path = BENCH / "compare_torch_cpu.txt") -> dict[str, list]:
    """The first run of examples/compare_torch.py: step, split, tensorgrad, pytorch columns."""
    out = {"step": [], "split": [], "tensorgrad": [], "pytorch": []}
    runs = 0
    for line in path.read_text().splitlines():
        if line.startswith("$ "):
            runs += 1
            if runs > 1:
                break
        elif m := re.match(r"\s*(\d+)\s+(train|val)\s+([\d.]+)\s+([\d.]+)", line):
            for key, value in zip(out, (int(m[1]), m[2], float(m[3]), float(m[4]))):
                out[key].append(value)
    return out


# ---------------------------------------------------------------- drawing
def _pyplot():
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    plt.rcParams.update({"figure.dpi": 100, "font.size": 10, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _save(fig, path: Path) -> Path:
    fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight")
    __import__("matplotlib.pyplot").pyplot.close(fig)
    return path


def draw_loss_curves(path: Path) -> Path:
    plt = _pyplot()
    curves = reproduce_curves()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for stage, c in curves.items():
        for ax, split in zip(axes, ("train", "val")):
            ax.plot(c["step"], c[split], marker=".", label=stage)
    for ax, split in zip(axes, ("train", "val")):
        ax.set_title(f"{split} loss")
        ax.set_xlabel("step")
        ax.set_ylim(1.9, 3.0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cross-entropy")
    axes[1].legend(fontsize=8, ncol=2)
    fig.suptitle(
        "Every stage of the lecture, trained by examples/reproduce.py on the CPU "
        "(benchmarks/reproduce_cpu.txt; step 0, at 4.2-4.6, is above the plot)",
        fontsize=9,
    )
    fig.tight_layout()
    return _save(fig, path)


def _number(cell: str) -> float:
    return float(cell.replace(",", ""))


def draw_speed(out_dir: Path) -> list[Path]:
    plt = _pyplot()
    tables = markdown_tables(BENCH / "bench_cpu_kernels.txt")
    step = next(t for t in tables if t and "tensorgrad ms/step" in t[0])
    ops = next(t for t in tables if t and "tensorgrad fwd" in t[0])
    fig, axes = plt.subplots(1, len(step), figsize=(4.6 * len(step), 3.4))
    for ax, row in zip(axes, step):
        paths = [("tensorgrad\n(default)", "tensorgrad ms/step", "#3b7dd8"),
                 ("tensorgrad\n(op by op)", "op by op ms/step", "#6c9be0"),
                 ("tensorgrad\n(reference ops)", "reference ops ms/step", "#9dbbe8"),
                 ("PyTorch", "PyTorch ms/step", "#e8833a")]  # fmt: skip
        shown = [(name, _number(row[column]), color) for name, column, color in paths
                 if row.get(column, "-") != "-"]  # fmt: skip  (a table written before a column existed)
        bars = ax.bar([n for n, _, _ in shown], [v for _, v, _ in shown], color=[c for _, _, c in shown])
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
        ax.set_title(f"{row['preset']} preset, {row['threads']} thread(s): ms per training step", fontsize=9)
    axes[0].set_ylabel("ms/step (lower is better)")
    fig.suptitle(
        "A training step beside PyTorch: benchmarks/bench_cpu_kernels.txt (benchmarks/bench.py, CPU, float32)",
        fontsize=9,
    )
    fig.tight_layout()
    paths = [_save(fig, out_dir / "speed_step.png")]

    fig, ax = plt.subplots(figsize=(10, 3.8))
    width = 0.27
    labels = [r["op"].replace(" (", "\n(") for r in ops]  # "AdamW step\n(10.8M params)": labels do not collide
    for k, (who, color) in enumerate((("tensorgrad", "#3b7dd8"), ("reference", "#9dbbe8"), ("PyTorch", "#e8833a"))):
        xs = [i + (k - 1) * width for i in range(len(ops))]
        total = [_number(r[f"{who} fwd"]) + _number(r[f"{who} bwd"]) for r in ops]
        name = {"tensorgrad": "tensorgrad (kernels)", "reference": "tensorgrad (reference ops)"}.get(who, who)
        ax.bar(xs, total, width, label=name, color=color)
    ax.set_xticks(range(len(ops)), labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("forward + backward, ms (log)")
    ax.set_title("ops at the large model's sizes (B=64, T=256, C=384): benchmarks/bench_cpu_kernels.txt", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    paths.append(_save(fig, out_dir / "speed_ops.png"))
    return paths


def draw_compare_torch(path: Path) -> Path:
    plt = _pyplot()
    c = compare_torch_losses()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for split, style in (("train", "-"), ("val", "--")):
        idx = [i for i, s in enumerate(c["split"]) if s == split]
        steps = [c["step"][i] for i in idx]
        ax.plot(steps, [c["tensorgrad"][i] for i in idx], style, color="#3b7dd8", label=f"tensorgrad {split}")
        ax.plot(steps, [c["pytorch"][i] for i in idx], style, color="#e8833a", label=f"PyTorch {split}", alpha=0.7)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("the same model, weights and batches in both (benchmarks/compare_torch_cpu.txt)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def draw_full_run(path: Path) -> Path:
    plt = _pyplot()
    rows = markdown_tables(BENCH / "full_run_cpu.txt")[0]
    fig, ax = plt.subplots(figsize=(7, 2.6))
    names = [r["run"] for r in rows]
    values = [_number(r["wall s"]) for r in rows]
    colors = ["#3b7dd8" if "torch" not in n else "#e8833a" for n in names]
    bars = ax.barh(names, values, color=colors)
    ax.bar_label(bars, labels=[f"{v:.1f} s (val {r['final val loss']})" for v, r in zip(values, rows)], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("wall seconds, 5000 steps of the small preset (lower is better)")
    ax.set_xlim(0, max(values) * 1.45)
    ax.set_title("benchmarks/full_run_cpu.txt (benchmarks/full_run.py)", fontsize=9)
    return _save(fig, path)


def write(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [draw_loss_curves(out_dir / "loss_curves.png")]
    paths += draw_speed(out_dir)
    paths.append(draw_compare_torch(out_dir / "compare_torch.png"))
    paths.append(draw_full_run(out_dir / "full_run.png"))
    return paths


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--readme"]:
        print(draw_loss_curves(README_PICTURE).relative_to(ROOT))
        return 0
    for p in write(Path(argv[0]) if argv else ROOT / "docs" / "_generated" / "figures"):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
