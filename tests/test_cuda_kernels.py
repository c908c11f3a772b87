"""The CUDA kernels without a GPU: Numba's CUDA simulator and compilation to PTX.

1. tests/cuda_kernel_checks.py (every kernel against its reference op) runs in Numba's CUDA
   simulator, in a subprocess: NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported,
   and this process may already have imported it for real.
2. Every kernel, in each of its compiled variants (tensorgrad/kernels/cuda_signatures.py),
   compiles to PTX for sm_80 (A100) and sm_90 (H100/H200), in float32 and float64, and the
   float32 kernels contain no float64 arithmetic.

Neither needs a GPU, only numba-cuda (the `test` extra).  On a GPU, tests/test_cuda_kernels_gpu.py
runs the same checks as (1) on CuPy arrays.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import types as pytypes
from pathlib import Path

import pytest

numba_cuda = pytest.importorskip("numba.cuda", reason="needs numba-cuda (pip install -e '.[test]')")

from tensorgrad.kernels import cuda_elementwise, cuda_flash, cuda_rows  # noqa: E402
from tensorgrad.kernels.cuda_signatures import signatures  # noqa: E402

TESTS = Path(__file__).parent
KERNELS = TESTS.parent / "tensorgrad" / "kernels"
ARCHS = [(8, 0), (9, 0)]


def _public_functions(path: Path) -> dict:
    """{name: parameter names} of a module's public functions, read without importing it (cuda.py
    imports CuPy)."""
    tree = ast.parse(path.read_text())
    functions = [f for f in tree.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")]
    return {f.name: [a.arg for a in f.args.args] for f in functions}


# The CPU's alone: kernels/cpu_threads.py runs an op's row parts with the CPU kernels serial, and a
# large dropout's parts each write their rows in place (the GPU has no parts); the fused AdamW step
# writes each parameter through its address (on the GPU the reference copies them to and from a
# flat array around adamw_step)
CPU_ONLY = {"serial_kernels", "dropout_forward_into", "param_table", "adamw_step_params"}


def test_same_functions_and_parameters_as_the_cpu_kernels():
    """The contract of kernels/__init__.py: both device modules have the same functions."""
    if not (KERNELS / "cpu.py").exists():
        pytest.skip("no CPU kernel module in this checkout")
    cpu = {name: args for name, args in _public_functions(KERNELS / "cpu.py").items() if name not in CPU_ONLY}
    assert _public_functions(KERNELS / "cuda.py") == cpu


def test_kernels_match_the_reference_in_the_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(TESTS.parent))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-x",
         str(TESTS / "cuda_kernel_checks.py")],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]


def _kernels_in(module):
    """The module's kernels (Numba CUDA dispatchers that are not device functions)."""
    kernels = [v for v in vars(module).values() if type(v).__name__ == "CUDADispatcher"]
    return {k for k in kernels if not k.targetoptions.get("device")}


def test_every_kernel_has_its_signatures():
    listed = set(signatures("float32"))
    defined = _kernels_in(cuda_rows) | _kernels_in(cuda_elementwise) | _kernels_in(cuda_flash)
    assert {k.__name__ for k in defined} == {k.__name__ for k in listed}


@pytest.fixture
def no_device(monkeypatch):
    """numba-cuda compiles the device functions a kernel calls (block_sum, block_max) for the
    current device's compute capability, even inside compile_ptx; with no GPU there is no current
    device, so name one (for this test only).  The kernel's own PTX is still made for the `cc` passed to compile_ptx."""
    import numba.cuda.dispatcher  # noqa: PLC0415

    if numba_cuda.is_available():  # a real GPU: nothing to fake
        return
    device = pytypes.SimpleNamespace(compute_capability=(8, 0))
    monkeypatch.setattr(numba.cuda.dispatcher, "get_current_device", lambda: device)


@pytest.mark.parametrize("name", sorted(k.__name__ for k in signatures("float32")))
def test_kernel_compiles_to_ptx(name, no_device):
    """Every variant in float32 and float64 for sm_80 and sm_90 (a variant is a None weight, mask
    or dropout mask: its `is None` branches are compiled out, so it is its own kernel)."""
    for dtype in ("float32", "float64"):
        kernel = next(k for k in signatures(dtype) if k.__name__ == name)
        for i, sig in enumerate(signatures(dtype)[kernel]):
            for cc in ARCHS if i == 0 else ARCHS[-1:]:  # other variants: one architecture (time)
                ptx, _ = numba_cuda.compile_ptx(kernel.py_func, sig, cc=cc)
                assert f".target sm_{cc[0]}{cc[1]}" in ptx and ".entry" in ptx, (name, dtype, cc)
                if dtype == "float32":  # constants and scalars in the arrays' dtype: no double maths
                    assert not re.search(r"\.f64\b", ptx), f"{name} {sig}: float64 instructions in a float32 kernel"
