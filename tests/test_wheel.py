"""The built wheel works outside the checkout: it installs into a fresh virtual environment,
imports tensorgrad and gpt from there, and trains through its console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tensorgrad as tg

ROOT = Path(__file__).resolve().parents[1]
# where the running Python finds its packages (a venv's and, if it sees them, the system's), not the checkout
SITE_PACKAGES = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
SOURCES = ["tensorgrad", "gpt", "setup.cfg", "pyproject.toml", "README.md", "CHANGELOG.md", "MANIFEST.in",
           "data/README.md"]  # fmt: skip

pytestmark = pytest.mark.slow


def sh(*cmd, cwd, env, timeout=300):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_the_wheel_installs_and_trains_outside_the_checkout(tmp_path):
    pytest.importorskip("build")
    src = tmp_path / "src"  # a copy, so the build leaves nothing in the checkout
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TENSORGRAD_DATA")}
    # sdist, then the wheel from the sdist; no isolation: nothing is downloaded
    sh(sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp_path / "dist", src, cwd=tmp_path, env=env)
    wheels = list((tmp_path / "dist").glob(f"tensorgrad_gpt-{tg.__version__}-py3-none-any.whl"))
    sdists = list((tmp_path / "dist").glob(f"tensorgrad_gpt-{tg.__version__}.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list((tmp_path / "dist").iterdir())

    # a fresh venv outside the repo; the dependencies (NumPy, Numba, ...) and pip (no ensurepip, which
    # takes seconds) come from the site-packages of the Python running this test, whether that is a
    # venv or the system's, through a .pth file (--system-site-packages would see the base Python's,
    # not a venv's); --no-deps --no-index: nothing is downloaded
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=env)
    py, bin_ = venv / "bin" / "python", venv / "bin"
    purelib = sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path, env=env)
    purelib = Path(purelib.strip())
    (purelib / "test_dependencies.pth").write_text("\n".join(SITE_PACKAGES) + "\n")
    sh(py, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheels[0], cwd=tmp_path, env=env)

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = sh(py, "-c", "import tensorgrad, gpt; print(tensorgrad.__file__); print(gpt.__file__); "
               "print(tensorgrad.__version__)", cwd=work, env=env).split()  # fmt: skip
    assert all(Path(p).is_relative_to(venv) for p in where[:2]), where  # the wheel's copy, not the checkout
    assert where[2] == tg.__version__

    (work / "input.txt").write_text("thou art a villain, you know it.\nyour hour.\n" * 40)
    out = sh(bin_ / "tensorgrad-train", "--data", "input.txt", "--out-dir", "run", "--max-iters", "4",
             "--eval-interval", "2", "--eval-iters", "1", "--batch-size", "4", "--sample-tokens", "10",
             cwd=work, env=env)  # fmt: skip
    assert "step 3: train loss" in out
    assert (work / "run" / "best.npz").exists()
    out = sh(bin_ / "tensorgrad-generate", "run/best.npz", "--prompt", "thou", "--tokens", "5", cwd=work, env=env)
    assert out.startswith("thou")
    assert "usage: tensorgrad-probe" in sh(py, "-m", "gpt.cli.probe", "--help", cwd=work, env=env)
