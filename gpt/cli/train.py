"""Train a GPT of "Let's build GPT" on Tiny Shakespeare with tensorgrad.

    tensorgrad-train                                         # preset small, NumPy, a minute on a CPU
    tensorgrad-train --backend cupy --preset large --out-dir runs/large
    tensorgrad-train --preset ffn --max-iters 2000 --lr 3e-3
    tensorgrad-train --out-dir runs/small --resume           # continue exactly where it stopped
    mpiexec -n 4 tensorgrad-train --distributed ...          # data-parallel: 4 ranks, each its own batches

(the same as python examples/train_shakespeare.py and python -m gpt.cli.train)

Prints the parameter count, `step N: train loss X, val loss Y` at each evaluation, a progress
line with ETA and tokens/s (on a terminal; into a file or a pipe, a plain line every 30 s), and
at the end the val loss beside the reference run's, and a sample.  Each line is written out as
it is printed, into a file or a pipe too (`tensorgrad-train > log &` then `tail -f log`).
An --out-dir that holds a run is continued only with --resume and started over only with
--overwrite.  A resume may change --max-iters, --eval-interval, --eval-iters, --lr and
--weight-decay (said in the output and recorded in summary.json); other flags and the data must
match the run.  Ctrl-C and `kill` (SIGTERM) stop a run the same way: where it stopped, how to
resume it.  A batch or block size whose step does not fit in memory is refused before any work.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import signal
import threading
from pathlib import Path

import tensorgrad as tg

from ..checkpoint import ResumeError, check_unfinished, load_last, read_config, read_log
from ..config import PRESETS, ConfigError, get_config, preset_of, validate
from ..data import ShakespeareData
from ..fused import takes as runs_fused
from ..memory import check_fits, count_params
from ..rundir import RunDir, RunDirError, atomic_write, holds_run
from ..threads import cpu_cores, eval_threads_for, evals_beside, threads_for
from ..train import TrainingInterrupted, TrainResult, train
from .common import DATA_HELP, ArgumentParser, check_seed, check_text, check_tf32, command_line, device_of, say

OVERRIDES = {  # flag -> config field
    "batch_size": int, "block_size": int, "n_embd": int, "n_head": int, "n_layer": int, "dropout": float,
    "max_iters": int, "lr": float, "eval_interval": int, "eval_iters": int, "weight_decay": float,
}  # fmt: skip


def parse_args(argv=None):
    p = ArgumentParser(
        prog="tensorgrad-train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy", help="numpy (CPU) or cupy (NVIDIA GPU)")
    p.add_argument("--preset", choices=list(PRESETS), default=None, help="the lecture's stage (default: small)")
    for name, typ in OVERRIDES.items():
        p.add_argument("--" + name.replace("_", "-"), type=typ, default=None, help=f"override {name}")
    p.add_argument(
        "--attn-scale",
        choices=["head_size", "n_embd"],
        default=None,
        help="scale attention by head_size ** -0.5 (default) or the video's n_embd ** -0.5",
    )
    p.add_argument("--slow-attention", action="store_true", help="the lecture's loop over heads (for study)")
    p.add_argument(
        "--fused", choices=["on", "off"], default="on", help="on (default): on the CPU, the model as one fused op "
        "where it can (gpt/fused.py: the same math, compiled); off: the lecture's code op by op"
    )  # fmt: skip
    p.add_argument("--tf32", action="store_true", help="GPU only: TF32 tensor cores for float32 matmuls (faster)")
    p.add_argument(
        "--seed", type=int, default=None, help="random seed, from -2**63 to 2**64 - 1 (default 1337; a resume "
        "keeps the run's)"
    )  # fmt: skip
    p.add_argument("--data", default=None, help=DATA_HELP)
    p.add_argument("--out-dir", default=None, help="where to write checkpoints, log.jsonl and curves.png")
    p.add_argument("--resume", action="store_true", help="continue the run in OUT_DIR from its last.npz")
    p.add_argument("--overwrite", action="store_true", help="start over in an OUT_DIR that holds a run")
    p.add_argument("--sample-tokens", type=int, default=500, help="characters to generate at the end")
    p.add_argument("--prompt", default=None, help="the start of the sample (default: a newline)")
    p.add_argument(
        "--threads", type=int, default=None, help="CPU threads for products and kernels, at most the cores "
        "(default: 1 for models whose products are too small to split, such as every stage but large; else one "
        "per core)"
    )  # fmt: skip
    p.add_argument(
        "--distributed", action="store_true", help="data-parallel over the ranks of `mpiexec -n N` (MPI on the "
        "CPU, NCCL with --backend cupy); each rank draws --batch-size examples; rank 0 prints and writes"
    )  # fmt: skip
    return p.parse_args(argv)


def _changes(args) -> dict:
    changes = {}
    for name in OVERRIDES:
        value = getattr(args, name)
        if value is not None:
            changes["learning_rate" if name == "lr" else name] = value
    if args.attn_scale:
        changes["attn_scale"] = args.attn_scale
    if args.slow_attention:
        changes["fast_attention"] = False
    return changes


def config_from_args(args, stored=None):
    """The preset (or, on resume, the run's stored config) with the flags given applied."""
    if stored is not None and (args.preset is None or preset_of(stored) == args.preset):
        base = stored
    else:
        base = get_config(args.preset or "small")
    changes = _changes(args)
    if base.kind == "bigram":  # a logit table: no embedding width, heads, layers, dropout or attention
        unused = [name for name in ("n_embd", "n_head", "n_layer", "dropout", "attn_scale", "fast_attention")
                  if name in changes]  # fmt: skip
        if unused:
            flags = ", ".join(BIGRAM_UNUSED_FLAGS[name] for name in unused)
            raise ConfigError(f"{flags}: the bigram model has none (it is a table of next-character logits); "
                              "leave the flag out, or choose a --preset with attention, such as small")  # fmt: skip
    return validate(base.replace(**changes) if changes else base)


BIGRAM_UNUSED_FLAGS = {"n_embd": "--n-embd", "n_head": "--n-head", "n_layer": "--n-layer", "dropout": "--dropout",
                       "attn_scale": "--attn-scale", "fast_attention": "--slow-attention"}  # fmt: skip


def check_args(args):
    """Flag checks that need no data, made before anything is loaded or written."""
    if args.resume and not args.out_dir:
        raise ResumeError("--resume needs --out-dir (the run directory to continue)")
    if args.resume and args.overwrite:
        raise ResumeError("--resume and --overwrite exclude each other: continue the run, or start it over")
    if args.sample_tokens < 0:
        raise ConfigError(f"--sample-tokens {args.sample_tokens}: must be >= 0")
    if args.prompt is not None and not args.prompt:
        raise ConfigError("--prompt is empty: give at least one character (the default is a newline)")
    if args.out_dir is not None and not args.out_dir:
        raise RunDirError("--out-dir is empty: give a directory, or leave the flag out to write nothing")
    check_seed(args.seed)
    if args.threads is not None and args.threads < 1:
        raise ConfigError(f"--threads {args.threads}: must be an integer >= 1")
    if args.threads is not None and args.threads > cpu_cores():  # more would only take turns on the cores
        raise ConfigError(f"--threads {args.threads}: more than the {cpu_cores()} CPU cores this program may run on; "
                          f"give at most {cpu_cores()}")  # fmt: skip
    check_tf32(args.tf32, device_of(args.backend))
    out = Path(args.out_dir) if args.out_dir else None
    if out is not None and out.exists() and not out.is_dir():
        raise RunDirError(f"--out-dir {out} exists and is not a directory")
    if out is not None and not args.resume and not args.overwrite and out.is_dir() and holds_run(out):
        raise RunDirError(
            f"--out-dir {out} already holds a run; pass --resume to continue it, --overwrite to start over "
            "(its checkpoints and log are deleted), or choose another --out-dir"
        )


def stored_config(out: Path):
    """The config and the checkpoint of the run in `out`, read (and every field checked) before
    anything else is loaded."""
    ckpt = load_last(out, device="cpu")
    return read_config(ckpt, out / "last.npz"), ckpt


def complete_finished_run(out: Path, ckpt, config):
    """Write the summary.json and curves.png a finished run lacks (a kill after its last
    checkpoint, before them); nothing when it has both."""
    missing = [name for name in ("summary.json", "curves.png") if not (out / name).exists()]
    if not missing:
        return
    with RunDir(out):
        step = ckpt["step"]
        history = read_log(out / "log.jsonl", step)
        result = TrainResult(config=config, params=count_params(config), history=history, seconds=ckpt["elapsed"],
                             best_val=ckpt["best_val"], best_step=ckpt["best_step"], seed=ckpt["seed"],
                             resumes=json.loads(ckpt["resumes"]) if "resumes" in ckpt else [])  # fmt: skip
        ref = get_config(preset_of(config)).reference if preset_of(config) else {}
        print(f"the run in {out} is finished but lacks {' and '.join(missing)} (stopped before writing them): "
              "writing them now")  # fmt: skip
        if "summary.json" in missing:
            write_summary(out, result, ref)
            print(f"summary: {out / 'summary.json'}")
        if "curves.png" in missing:
            plot_curves(history, ref, out / "curves.png")


@contextlib.contextmanager
def sigterm_as_ctrl_c():
    """While training: `kill` (SIGTERM) stops the run as Ctrl-C does (the message, the resume
    command, the lock released, exit status 130).  The previous handler is restored afterwards;
    outside the main thread (where Python cannot set one) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def sample_prompt(args, data) -> str:
    """--prompt, checked against the vocabulary; by default a newline, or the text's first
    character when the text has no newline."""
    if args.prompt is not None:
        check_text("--prompt", args.prompt, data.tokenizer)
        return args.prompt
    return "\n" if "\n" in data.tokenizer.stoi else data.tokenizer.decode(data.train[:1])


def plot_curves(history, reference, path):
    """train/val curves beside the reference run's logged points; skipped without matplotlib."""
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend or figure list
    except ImportError:
        print("(matplotlib is not installed: no curves.png; pip install matplotlib)")
        return
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    steps = [h["step"] for h in history]
    ax.plot(steps, [h["train"] for h in history], label="train (tensorgrad)")
    ax.plot(steps, [h["val"] for h in history], label="val (tensorgrad)")
    curve = reference.get("curve") or {}
    if curve:
        ref_steps = sorted(curve)
        # the write-up logs only a few steps: markers, not a line implying a curve between them
        ax.plot(ref_steps, [curve[s][0] for s in ref_steps], "o", label="train (reference run)")
        ax.plot(ref_steps, [curve[s][1] for s in ref_steps], "s", label="val (reference run)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    atomic_write(path, buf.getvalue())
    print(f"curves: {path}")


def write_summary(out: Path, result, reference):
    """summary.json: the run's config, its final and best losses, its speed and every resume
    (result.resumes, which checkpoints carry from session to session)."""
    path = out / "summary.json"
    earlier = []
    if path.exists():  # resumes recorded before checkpoints carried them (an older run's)
        try:
            earlier = json.loads(path.read_text()).get("resumes", [])
        except (ValueError, OSError, AttributeError):
            earlier = []
    first = result.resumes[0]["step"] if result.resumes else float("inf")
    resumes = [r for r in earlier if isinstance(r, dict) and r not in result.resumes and r.get("step", first) < first]
    resumes += result.resumes
    config = {k: v for k, v in dataclasses.asdict(result.config).items() if k != "reference"}
    atomic_write(path, json.dumps({
        "preset": preset_of(result.config), "config": config, "seed": result.seed, "params": result.params,
        "final": result.final, "best_val": result.best_val, "best_step": result.best_step,
        "seconds": result.final.get("time", result.seconds),
        "ms_per_step": result.ms_per_step if result.steps else None, "reference_val": reference.get("val"),
        "resumes": resumes,
    }, indent=2))  # fmt: skip


@command_line(out_of_memory="use a smaller --batch-size or --block-size, or a smaller model (--n-layer, --n-embd)")
def main(argv=None):
    args = parse_args(argv)
    check_args(args)
    if not args.distributed:
        return _main(args, None)
    from ..distributed import Ranks  # noqa: PLC0415

    ranks = Ranks("nccl" if args.backend == "cupy" else "mpi")
    if ranks.is_main:
        return _main(args, ranks)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # only rank 0 prints
        return _main(args, ranks)


def _main(args, ranks):
    device = device_of(args.backend)
    if device == "cpu":
        tg.host_memory.keep_freed_memory()  # process-wide, so made here and not by the library: see its docstring
    out = Path(args.out_dir) if args.out_dir else None
    stored, ckpt = stored_config(out) if args.resume else (None, None)
    config = config_from_args(args, stored)
    if stored is not None:  # said before the data is loaded
        try:
            check_unfinished(ckpt["step"], config, out)
        except ResumeError:
            complete_finished_run(out, ckpt, stored)
            raise
    del ckpt  # train() reads it again, onto its device: no second copy of the weights meanwhile
    if args.tf32:
        tg.cuda.allow_tf32()
    data = ShakespeareData.load(args.data, device=device)
    data.check_block_size(config.block_size)
    fitted = config.replace(vocab_size=data.tokenizer.vocab_size)
    eval_threads, beside = None, False  # the evaluations on the steps' threads, unless chosen below
    if device == "cpu":  # on a GPU, CuPy's pool and the device's own memory: not estimated here
        check_fits(fitted, count_params(fitted))
        threads = args.threads or threads_for(fitted)
        tg.set_num_threads(threads)  # process-wide: the program's choice, printed below
        if not args.threads and ranks is None:  # (ranks share the machine's cores: they keep theirs)
            fused = args.fused == "on" and runs_fused(fitted)
            eval_threads, beside = eval_threads_for(fitted, fused=fused), evals_beside(fitted, fused=fused)
    prompt = sample_prompt(args, data) if args.sample_tokens > 0 else None
    name = args.preset or (_preset_name(stored) if stored is not None else "small")
    print(
        f"preset {name} on {args.backend} ({device}); "
        f"{len(data.train):,} train / {len(data.val):,} val characters, vocab {data.tokenizer.vocab_size}"
    )
    if device == "cpu":
        why = "--threads" if args.threads else "its products are too small to split" if threads == 1 else "one per core"
        split = eval_threads not in (None, threads)
        evals = f"; {eval_threads} for the evaluations, the fused model's parts" if split else ""
        if beside:
            evals = f"; the evaluations on a second one beside the steps, the last on {eval_threads}"
        print(f"{threads} CPU thread{'s' if threads > 1 else ''} ({why}{evals}; --threads N to choose)")
    seed = args.seed if args.seed is not None else 1337
    if args.resume and args.seed is not None and stored is not None:
        print("(--seed is ignored on resume: the run's random state is restored from its checkpoint)")
    with sigterm_as_ctrl_c():
        try:
            result = train(config, data, device=device, seed=seed, out_dir=out, resume=args.resume,
                           overwrite=args.overwrite, log=say, ranks=ranks, fused=args.fused == "on",
                           eval_threads=eval_threads, eval_beside=beside)  # fmt: skip
        except TrainingInterrupted as e:
            e.data = args.data  # the resume hint repeats it: a resume must train on the same text
            raise
    if ranks is not None and not ranks.is_main:
        return

    ref = get_config(name).reference if name in PRESETS else {}
    final = result.final
    print(f"done in {result.seconds:.1f} s ({result.ms_per_step:.2f} ms/step of training)")
    if final:
        line = f"final val loss {final['val']:.4f}"
        if ref.get("val") is not None:
            line += f"   reference {ref['val']:.4f}   difference {final['val'] - ref['val']:+.4f}"
        print(line)
        print(f"best val loss {result.best_val:.4f} at step {result.best_step}")
    if out is not None:
        write_summary(out, result, ref)
        plot_curves(result.history, ref, out / "curves.png")
    if prompt is not None:
        tok = data.tokenizer
        context = tg.tensor([tok.encode(prompt)], dtype=tg.long, device=device)
        sample = result.model.generate(context, max_new_tokens=args.sample_tokens)[0]
        print("-" * 60)
        print(tok.decode(sample))


def _preset_name(config) -> str:
    return preset_of(config) or "custom"


if __name__ == "__main__":
    main()
