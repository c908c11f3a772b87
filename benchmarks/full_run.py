"""A whole training run, start to end, against the lecture's own script in PyTorch: same
hyperparameters, same 5000 steps and evaluations, one process each, run one after the other.

    python benchmarks/full_run.py                    # the `small` preset
    python benchmarks/full_run.py --max-iters 500    # a quick look

Four runs, each timed from process start to exit (imports, data, compile caches, evaluations and
the final sample included):
  tensorgrad-train            the README's command: python examples/train_shakespeare.py (the
                              `small` preset; it writes nothing, and prints a 500-character sample,
                              as the lecture's script does)
  tensorgrad-train --out-dir  the same with a run directory (a checkpoint at every evaluation,
                              log.jsonl, summary.json, curves.png) and a 100-character sample, as
                              the rounds before measured it
  lecture on tg               the lecture's gpt.py with its imports pointed at tensorgrad
                              (tests/lecture_gpt.py)
  lecture on torch            the same file with its own `import torch` lines: the reference
Needs data/tinyshakespeare/input.txt (the lecture's script reads it from there).

Each run is a fresh process, so its start counts: where PYTHONDONTWRITEBYTECODE is set (some
machines set it for every process), every run compiles the sources again (about 0.3 s of ours;
PyTorch's installed files come compiled).  Unset it in the bench command, as the OPENBLAS_*
variables: `env -u PYTHONDONTWRITEBYTECODE -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python ...`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LECTURE = ROOT / "tests" / "lecture_gpt.py"
TORCH_IMPORTS = "import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
TG_IMPORTS = "import tensorgrad as torch\nimport tensorgrad.nn as nn\nfrom tensorgrad.nn import functional as F\n"


def lecture_config(preset, max_iters):
    from gpt import get_config

    c = get_config(preset)
    return {
        "batch_size": c.batch_size, "block_size": c.block_size, "max_iters": max_iters or c.max_iters,
        "eval_interval": c.eval_interval, "learning_rate": c.learning_rate, "eval_iters": c.eval_iters,
        "n_embd": c.n_embd, "n_head": c.n_head, "n_layer": c.n_layer, "dropout": c.dropout,
    }  # fmt: skip


def run_lecture_on_torch(threads):
    """The lecture's file with its own imports (this process runs it)."""
    import torch

    torch.set_num_threads(threads)
    source = LECTURE.read_text(encoding="utf-8")
    assert TG_IMPORTS in source, "tests/lecture_gpt.py: its three import lines changed"
    code = compile(source.replace(TG_IMPORTS, TORCH_IMPORTS), str(LECTURE), "exec")
    exec(code, {"__name__": "__main__", "__file__": str(LECTURE)})  # noqa: S102 - our own vendored file


def timed(cmd, env):
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:  # no figures from a failed run
        print(f"failed: {' '.join(map(str, cmd))}\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
        return None, None
    vals = re.findall(r"val loss (\d+\.\d+)", proc.stdout)
    return seconds, (float(vals[-1]) if vals else None)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="small")
    p.add_argument("--max-iters", type=int, default=None)
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="PyTorch intra-op threads")
    p.add_argument("--worker", choices=["torch"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker == "torch":
        run_lecture_on_torch(args.threads)
        return
    if not (ROOT / "data" / "tinyshakespeare" / "input.txt").exists():
        sys.exit("error: data/tinyshakespeare/input.txt is missing (the lecture's script reads it from there)")

    config = lecture_config(args.preset, args.max_iters)
    env = dict(os.environ, LECTURE_CONFIG=json.dumps(config), PYTHONPATH=str(ROOT))
    print(f"preset {args.preset}: {json.dumps(config)}; PyTorch threads {args.threads}")
    with tempfile.TemporaryDirectory() as out:
        ours = [sys.executable, "examples/train_shakespeare.py", "--preset", args.preset,
                "--data", "data/tinyshakespeare/input.txt"]  # fmt: skip
        if args.max_iters:
            ours += ["--max-iters", str(args.max_iters)]
        runs = {
            "tensorgrad-train": ours,
            "tensorgrad-train --out-dir": [*ours, "--out-dir", out, "--overwrite", "--sample-tokens", "100"],
            "lecture on tg": [sys.executable, str(LECTURE)],
            "lecture on torch": [sys.executable, __file__, "--worker", "torch", "--threads", str(args.threads)],
        }
        results = {name: timed(cmd, env) for name, cmd in runs.items()}
    torch_s = results["lecture on torch"][0]
    print("| run | wall s | ratio to the lecture on torch | final val loss |")
    print("|---|---:|---:|---:|")
    for name, (seconds, val) in results.items():
        wall = f"{seconds:.1f}" if seconds is not None else "failed"
        ratio = f"{seconds / torch_s:.2f}" if seconds is not None and torch_s is not None else "-"
        print(f"| {name} | {wall} | {ratio} | {val if val is not None else '-'} |")
    sys.exit(1 if any(seconds is None for seconds, _ in results.values()) else 0)


if __name__ == "__main__":
    main()
