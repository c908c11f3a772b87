"""Every flag of every program, given a bad value, ends as one `error:` line that names it: no
traceback, no usage block, a non-zero exit status, and before any real work.

The flags are read from each program's own argparse parser, so a new flag without a case here
fails `test_every_flag_has_a_bad_input_case`: give it a case in CASES, or list it in NO_CASE
with the reason it has none."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from unittest import mock

import pytest
from cli_helpers import TEXT, run

from gpt import train as gtrain
from gpt.cli import generate, inspect_model, probe, reproduce
from gpt.cli import train as cli_train

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from examples import compare_torch  # noqa: E402

VOCAB = len(set(TEXT))  # 27 characters
OTHER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz\n" * 40  # another vocabulary
FAST = ["--max-iters", "2", "--eval-interval", "1", "--eval-iters", "1", "--batch-size", "2", "--sample-tokens", "0"]

PROGRAMS = {  # name: (main, takes a checkpoint as its first argument, the rest of a valid command line)
    "train": (cli_train.main, False, ["--data", "{corpus}", *FAST]),
    "generate": (generate.main, True, ["--tokens", "5"]),
    "probe": (probe.main, True, ["--data", "{corpus}"]),
    "inspect": (inspect_model.main, True, ["--data", "{corpus}", "--batch-size", "2"]),
    "reproduce": (reproduce.main, False, ["--data", "{corpus}", "--stages", "bigram", "--max-iters", "1"]),
    "compare_torch": (compare_torch.main, False, ["--data", "{corpus}", "--preset", "bigram", "--max-iters", "1",
                                                  "--eval-iters", "1", "--batch-size", "2", "--out", ""]),
}  # fmt: skip

LONGER = "--contexts 'thou art a villain' is 18 characters, longer than the model's context (its block size, 8)"
SHORT = "stage large (block size 256) needs at least 257: use a longer text, or leave large out of --stages"
SEED_RANGE = "--seed {}: must be an integer from -2**63 to 2**64 - 1"  # PyTorch's range of seeds


def case(flag, *argv, named=None, marks=()):
    """A bad input for `flag`: the extra command line, and what the error line must name (the flag)."""
    return pytest.param(flag, list(argv), named or flag, marks=marks, id=" ".join(a or "''" for a in argv))


def wrong_type(flag, value="x", marks=()):
    return case(flag, flag, value, marks=marks)


# program: [case(...)]; the positional `checkpoint` is replaced by the case's first argument
CASES = {
    "train": [
        wrong_type("--backend", "tpu"),
        wrong_type("--preset", "huge"),
        wrong_type("--fused", "maybe"),
        case("--batch-size", "--batch-size", "0"),
        wrong_type("--batch-size", "2.5"),
        case("--block-size", "--block-size", "-1"),
        case("--block-size", "--block-size", "100000", named="--block-size 100000"),  # longer than the corpus
        case("--n-embd", "--n-embd", "0"),
        case("--n-embd", "--n-embd", "30", named="--n-embd 30"),  # not a multiple of --n-head
        case("--n-head", "--n-head", "0"),
        case("--n-head", "--preset", "bigram", "--n-head", "3", named="--n-head: the bigram model has none"),
        case("--slow-attention", "--preset", "bigram", "--slow-attention", "--dropout", "0.1",
             named="--dropout, --slow-attention: the bigram model has none"),  # fmt: skip
        case("--n-layer", "--n-layer", "-2"),
        case("--n-layer", "--n-layer", "10000000", named="(--n-layer 10000000, --n-embd 32)"),  # cannot fit
        case("--dropout", "--dropout", "nan"),
        case("--dropout", "--dropout", "1.5"),
        case("--max-iters", "--max-iters", "0"),
        case("--lr", "--lr", "inf"),
        case("--lr", "--lr=-1e-3", named="--lr -0.001"),
        case("--eval-interval", "--eval-interval", "0"),
        case("--eval-iters", "--eval-iters", "-1"),
        case("--weight-decay", "--weight-decay", "nan"),
        wrong_type("--attn-scale", "none"),
        case("--tf32", "--tf32"),  # a GPU setting, given with --backend numpy
        wrong_type("--seed", "1.5"),
        case("--seed", "--seed", "99999999999999999999999", named=SEED_RANGE.format("99999999999999999999999")),
        case("--seed", "--seed", str(-(2**63) - 1), named=SEED_RANGE.format(-(2**63) - 1)),
        case("--data", "--data", "{tmp}/missing.txt"),
        case("--data", "--data", "{tmp}", named="--data"),  # a directory
        case("--data", "--data", "", named="--data is empty"),
        case("--data", "--data", "/dev/null", named="--data /dev/null is not a regular file"),  # a device
        case("--out-dir", "--out-dir", "{corpus}"),  # a file
        case("--out-dir", "--out-dir", ""),
        case("--resume", "--resume"),  # without --out-dir
        case("--overwrite", "--overwrite", "--resume", "--out-dir", "{tmp}/run"),
        case("--sample-tokens", "--sample-tokens", "-1"),
        case("--threads", "--threads", "0"),
        wrong_type("--threads", "two"),
        case("--threads", "--threads", "100000", named="--threads 100000: more than the"),
        case("--threads", "--threads", "10" * 20, named=f"--threads {'10' * 20}: more than the"),
        case("--batch-size", "--preset", "large", "--batch-size", "100000", named="--batch-size"),  # cannot fit
        case("--prompt", "--prompt", ""),
        case("--prompt", "--prompt", "Zé", "--sample-tokens", "5", named="--prompt"),
    ],
    "generate": [
        case("checkpoint", "{tmp}/missing.npz", named="missing.npz"),
        case("checkpoint", "", named="the checkpoint's path is empty"),
        case("checkpoint", "{corpus}", named="input.txt"),  # not a checkpoint
        case("--prompt", "--prompt", ""),
        case("--prompt", "--prompt", "Zé"),
        case("--tokens", "--tokens", "-1"),
        wrong_type("--tokens", "many"),
        wrong_type("--seed", "1e3"),
        case("--seed", "--seed", "99999999999999999999999", named=SEED_RANGE.format("99999999999999999999999")),
        case("--seed", "--seed", str(-(2**63) - 1), named=SEED_RANGE.format(-(2**63) - 1)),
        case("--temperature", "--temperature", "0"),
        case("--temperature", "--temperature", "nan"),
        case("--temperature", "--temperature", "inf"),
        case("--top-k", "--top-k", "0", named=f"--top-k 0: must be between 1 and the vocabulary size {VOCAB}"),
        case("--top-k", "--top-k", "1000", named=f"--top-k 1000: must be between 1 and the vocabulary size {VOCAB}"),
        wrong_type("--backend", "tpu"),
    ],
    "probe": [
        case("checkpoint", "{tmp}/missing.npz", named="missing.npz"),
        case("checkpoint", "", named="the checkpoint's path is empty"),
        case("--contexts", "--contexts", "thou", ""),
        case("--contexts", "--contexts", "Zé"),
        case("--contexts", "--contexts", "thou", "thou art a villain", named=LONGER),  # it would see its last 8
        case("--top", "--top", "0"),
        case("--top", "--top", "100000", named=f"--top 100000: must be between 1 and the vocabulary size {VOCAB}"),
        wrong_type("--top", "all"),
        case("--data", "--data", "{tmp}/missing.txt"),
        case("--data", "--data", "", named="--data is empty"),
        case("--data", "--data", "{other}", named="--data"),  # another vocabulary
        wrong_type("--backend", "tpu"),
    ],
    "inspect": [
        case("checkpoint", "{tmp}/missing.npz", named="missing.npz"),
        case("checkpoint", "", named="the checkpoint's path is empty"),
        wrong_type("--preset", "huge"),
        case("--preset", "--preset", "large", named="--preset large: the model is the checkpoint's"),
        case("--prompt", "--prompt", ""),
        case("--prompt", "--prompt", "Zé"),
        case("--prompt", "--prompt", "thou art a villain", named="--prompt"),  # its map would be of its last 8
        case("--batch-size", "--batch-size", "0"),
        wrong_type("--batch-size", "2.5"),
        case("--batch-size", "--batch-size", "1000000000000", named="GB available; use a smaller --batch-size"),
        case("--data", "--data", "{tmp}/missing.txt"),
        case("--data", "--data", "", named="--data is empty"),
        case("--data", "--data", "{other}", named="--data"),  # another vocabulary
    ],
    "reproduce": [
        wrong_type("--stages", "gpt4"),
        wrong_type("--seed", "x"),
        case("--seed", "--seed", "99999999999999999999999", named=SEED_RANGE.format("99999999999999999999999")),
        case("--seed", "--seed", str(-(2**63) - 1), named=SEED_RANGE.format(-(2**63) - 1)),
        wrong_type("--backend", "tpu"),
        case("--data", "--data", "{tmp}/missing.txt"),
        case("--data", "--data", "", named="--data is empty"),
        case("--max-iters", "--max-iters", "0"),
        case("--max-iters", "--max-iters", "-5"),
        case("--stages", "--data", "{tmp}/short.txt", "--stages", "bigram", "large", named=SHORT),  # large's 256
    ],
    "compare_torch": [
        wrong_type("--preset", "huge"),
        case("--max-iters", "--max-iters", "0"),
        wrong_type("--max-iters", "1e3"),
        case("--eval-interval", "--eval-interval", "-1"),
        case("--eval-iters", "--eval-iters", "0"),
        case("--batch-size", "--batch-size", "0"),
        wrong_type("--dtype", "float16"),
        wrong_type("--seed", "x"),
        case("--out", "--out", "{tmp}/no/such/dir/curves.png"),
        case("--torch-threads", "--torch-threads", "0"),
        case("--data", "--data", "{tmp}/missing.txt"),
    ],
}

NO_CASE = {  # flags without a bad value, and why
    ("train", "--distributed"): "takes no value; outside mpiexec it is one rank (tests/test_distributed_train.py)",
}


def parser_of(main) -> argparse.ArgumentParser:
    """The parser a program's main builds, caught at its parse_args (nothing else runs)."""
    caught = []

    class Caught(Exception):
        pass

    def catch(self, *args, **kwargs):
        caught.append(self)
        raise Caught

    with mock.patch.object(argparse.ArgumentParser, "parse_args", catch), pytest.raises(Caught):
        main([])
    return caught[0]


def flags_of(parser) -> set:
    return {
        max(a.option_strings, key=len) if a.option_strings else a.dest
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction)
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A tiny corpus, one of another vocabulary, and a checkpoint trained on the first (once)."""
    tmp = tmp_path_factory.mktemp("flags")
    (tmp / "input.txt").write_text(TEXT)
    (tmp / "other.txt").write_text(OTHER)
    (tmp / "short.txt").write_text(TEXT[:200])  # splits of 180 and 20 characters
    cli_train.main(["--data", str(tmp / "input.txt"), "--out-dir", str(tmp / "trained"), *FAST])
    return tmp


def command(program, argv, files):
    """main and its command line: the program's valid one with `argv` added (or its checkpoint replaced)."""
    main, takes_checkpoint, base = PROGRAMS[program]
    if argv and not argv[0].startswith("-"):  # a case for the positional checkpoint
        line = argv[:1] + base + argv[1:]
    else:
        line = (["{tmp}/trained/best.npz"] if takes_checkpoint else []) + base + argv
    where = {"tmp": str(files), "corpus": str(files / "input.txt"), "other": str(files / "other.txt")}
    return main, [a.format(**where) for a in line]


def test_every_flag_has_a_bad_input_case():
    for program, (main, _, _) in PROGRAMS.items():
        flags = flags_of(parser_of(main))
        covered = {p.values[0] for p in CASES[program]} | {f for p, f in NO_CASE if p == program}
        assert flags - covered == set(), f"{program}: flags without a bad-input case (add one to CASES)"
        assert covered - flags == set(), f"{program}: cases for flags it does not have"


@pytest.mark.parametrize(
    "program, flag, argv, named",
    [pytest.param(program, *p.values, marks=p.marks, id=f"{program}:{p.id}") for program in CASES
     for p in CASES[program]],
)  # fmt: skip
def test_a_bad_value_is_one_error_line_naming_the_flag(program, flag, argv, named, files, capsys):
    if program == "compare_torch" and flag == "--data":
        pytest.importorskip("torch")
    main, line = command(program, argv, files)
    code, out, err = run(main, line, capsys)
    assert code != 0, (line, out[-500:])
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert named.format(tmp=files) in err, err
    assert "M parameters" not in out and "step 0:" not in out  # refused before any training


@pytest.mark.parametrize("seed", [-1, -(2**63), 2**64 - 1])
@pytest.mark.parametrize("program", ["train", "generate", "reproduce"])
def test_a_negative_seed_is_accepted_as_pytorch_accepts_it(program, seed, files, capsys):
    """Every seed of PyTorch's range, [-2**63, 2**64) (negatives modulo 2**64), its ends included."""
    main, line = command(program, ["--seed", str(seed)], files)
    code, out, err = run(main, line, capsys)
    assert code == 0, err


@pytest.mark.parametrize("temperature", ["1e-45", "5e-324"])
def test_a_temperature_towards_0_samples_the_most_likely_characters(temperature, files, capsys):
    """--temperature's limit at 0 is greedy sampling (as --help says): the --top-k 1 text."""
    main, line = command("generate", ["--tokens", "20", "--temperature", temperature], files)
    code, out, err = run(main, line, capsys)
    assert code == 0, err
    main, line = command("generate", ["--tokens", "20", "--top-k", "1"], files)
    assert run(main, line, capsys) == (0, out, "")


def test_threads_are_at_most_the_cores(files, capsys, monkeypatch):
    monkeypatch.setattr("os.process_cpu_count", lambda: 3, raising=False)  # the cores this process may use
    main, line = command("train", ["--threads", "4"], files)
    code, out, err = run(main, line, capsys)
    expected = "error: --threads 4: more than the 3 CPU cores this program may run on; give at most 3\n"
    assert code == 1 and err == expected, err
    main, line = command("train", ["--threads", "3"], files)
    code, out, err = run(main, line, capsys)
    assert code == 0 and "3 CPU threads (--threads" in out, err


def test_the_fused_models_evaluations_run_beside_its_steps_and_the_program_says_so(files, capsys, monkeypatch):
    """small's steps on one thread, its evaluations on a second beside them (gpt/threads.py's
    evals_beside) and the last on every core (eval_threads_for), said in the threads line;
    --fused off and --threads keep one count, in line."""
    monkeypatch.setattr("os.process_cpu_count", lambda: 2, raising=False)
    chosen = []
    real = gtrain.train
    monkeypatch.setattr(cli_train, "train", lambda *a, **kw: (chosen.append(kw["eval_beside"]), real(*a, **kw))[1])
    main, line = command("train", [], files)
    code, out, err = run(main, line, capsys)
    assert code == 0 and "1 CPU thread (its products are too small to split; the evaluations on a second one " \
        "beside the steps, the last on 2; --threads N to choose)" in out, (out, err)  # fmt: skip
    for flags in (["--fused", "off"], ["--threads", "1"]):
        main, line = command("train", flags, files)
        code, out, err = run(main, line, capsys)
        assert code == 0 and "CPU thread (" in out and "evaluations" not in out, (flags, out, err)
    assert chosen == [True, False, False]


def test_reproduce_checks_every_stage_s_block_against_the_data_before_training_any(files, capsys):
    """reproduce has no --block-size: the error names the stage whose preset's block does not fit."""
    main, line = command("reproduce", ["--data", "{tmp}/short.txt", "--stages", "bigram", "large"], files)
    code, out, err = run(main, line, capsys)
    assert code == 1 and out == "" and "--block-size" not in err, (out, err)
    assert err == f"error: the train split of {files / 'short.txt'} has 180 characters; {SHORT}\n"


@pytest.mark.parametrize(
    "program, work",
    [("train", "train"), ("generate", "load_model"), ("probe", "probe_table"), ("inspect", "gradient_report"),
     ("reproduce", "train")],
)  # fmt: skip
def test_running_out_of_memory_names_only_the_program_s_own_flags(program, work, files, capsys, monkeypatch):
    """A MemoryError the estimate did not foresee is one line whose advice is the program's flags."""
    main, line = command(program, [], files)

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(sys.modules[main.__module__], work, out_of_memory)
    code, out, err = run(main, line, capsys)
    assert code == 1 and err.startswith("error: out of memory") and err.count("\n") == 1, err
    named = set(re.findall(r"--[a-z][a-z-]*", err))
    assert named <= flags_of(parser_of(main)), (named, err)


def test_tf32_is_refused_on_the_cpu_in_one_line():
    """The shared check that tensorgrad-train's --tf32 goes through (a GPU setting, not ignored on the CPU)."""
    from gpt.cli.common import check_tf32
    from gpt.config import ConfigError

    check_tf32(False, "cpu")
    check_tf32(True, "cuda")
    with pytest.raises(ConfigError, match="--tf32: .*GPU.*--backend cupy"):
        check_tf32(True, "cpu")


def test_a_usage_error_is_one_line_with_argparse_s_exit_status(capsys):
    from gpt.cli.common import ArgumentParser

    p = ArgumentParser(prog="prog")
    p.add_argument("--n", type=int)
    with pytest.raises(SystemExit) as exit_info:
        p.parse_args(["--n", "x", "--bogus"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err in ("error: argument --n: invalid int value: 'x'\n",
                                       "error: unrecognized arguments: --bogus\n")  # fmt: skip


@pytest.mark.parametrize("flag", ["--n-layer", "--n-embd"])
def test_a_model_that_would_not_fit_names_its_size_and_what_to_shrink(flag, files, capsys):
    """Not the batch: the parameters alone of a 10**7-layer model (or a 10**5-wide one) do not fit."""
    main, line = command("train", [flag, "10000000" if flag == "--n-layer" else "100000"], files)
    code, out, err = run(main, line, capsys)
    assert code == 1 and err.startswith("error: a training step with --batch-size 2") and err.count("\n") == 1, err
    assert err.endswith(": use a smaller --n-layer or --n-embd: the parameters alone need more than that\n"), err


def test_a_step_that_would_not_fit_says_the_estimate(capsys):
    """gpt/memory.py's refusal (the training program's memory check) keeps its numbers in the error line."""
    from gpt.cli.common import command_line
    from gpt.memory import MemoryEstimateError

    @command_line
    def main(argv):
        raise MemoryEstimateError("a training step needs about 90.0 GB of memory (an estimate), and ...")

    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == "error: a training step needs about 90.0 GB of memory (an estimate), and ...\n"


def test_inspect_takes_any_prompt_for_a_model_without_attention(files, capsys):
    """A bigram model has no attention maps: the prompt's length does not matter (its characters do)."""
    code, out, err = run(inspect_model.main, ["--preset", "bigram", "--data", files / "input.txt", "--batch-size", "2",
                                              "--prompt", "thou art a villain"], capsys)  # fmt: skip
    assert code == 0 and "|grad|" in out and "layer" not in out, err


def test_probe_takes_any_context_for_a_bigram_model(files, tmp_path, capsys):
    """A bigram model reads the last character alone (its block size is 1): what it predicts after
    'thou' beside what follows 'thou' in the corpus is the probe's question, not a cut context."""
    corpus = files / "input.txt"
    assert run(cli_train.main, ["--data", corpus, "--preset", "bigram", "--out-dir", tmp_path, *FAST], capsys)[0] == 0
    code, out, err = run(probe.main, [tmp_path / "best.npz", "--data", corpus, "--contexts", "thou art"], capsys)
    assert code == 0 and "'thou art' (" in out, err
