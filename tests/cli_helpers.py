"""What the command-line tests share: a tiny corpus, the flags of a fast run, and calling a
program's main(argv) in this process."""

from __future__ import annotations

TEXT = "First Citizen:\nthou art a villain, you know it.\nROMEO: your hour.\n" * 40  # 27 characters
# tiny and fast: 4 windows of 8 characters a step, evaluations at 0, 3 and 5
FAST = ["--max-iters", "6", "--eval-interval", "3", "--eval-iters", "1", "--batch-size", "4", "--sample-tokens", "0"]


def run(main, argv, capsys):
    """(exit status, stdout, stderr) of a program's main(argv), called in this process."""
    try:
        code = main([str(a) for a in argv]) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
