"""What the command-line tests share: a tiny corpus, the flags of a fast run, calling a
program's main(argv) in this process, and running one in another PID namespace."""

from __future__ import annotations

import shutil
import subprocess

import pytest

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


def in_new_pid_namespace() -> list:
    """The command prefix that runs a program in a PID namespace of its own, where this
    process's pid means nothing (as in another container); the test is skipped, saying why,
    where none can be made."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed: no PID namespace to test across")
    prefix = ["unshare", "--pid", "--fork"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"unshare --pid cannot make a PID namespace here (it needs root or user namespaces): "
                    f"{probe.stderr.strip()}")  # fmt: skip
    return prefix
