"""The benchmark harness runs (a smoke test: its numbers are measured by hand, not in CI)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import tensorgrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import bench  # noqa: E402


def test_a_tensorgrad_step_worker_reports_time_and_memory():
    result = bench.worker_tensorgrad("small", steps=2, backend_name="numpy")
    assert result["ms"] > 0 and result["min_ms"] <= result["ms"] and result["peak_mb"] > 0
    assert result["floor_ms"] == pytest.approx(1000 * bench.step_flops(tg_config("small")) / bench.GEMM_RATE)


def test_the_cpu_clock_measures_wall_time():
    import time

    ms = bench._clock("tensorgrad", "cpu")(lambda: time.sleep(0.02))
    assert 15 < ms < 1000


def test_allow_tf32_sets_cupys_switch_before_import_and_refuses_after(monkeypatch):
    monkeypatch.delenv("CUPY_TF32", raising=False)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    tg.cuda.allow_tf32()
    assert os.environ["CUPY_TF32"] == "1"
    tg.cuda.allow_tf32(False)
    assert os.environ["CUPY_TF32"] == "0"
    monkeypatch.setitem(sys.modules, "cupy", object())
    with pytest.raises(RuntimeError, match="before CuPy is imported"):
        tg.cuda.allow_tf32()


def tg_config(name):
    from gpt import get_config

    return get_config(name)


def test_the_bench_names_the_blas_kernel_and_measures_the_reference_path():
    assert bench.blas_report().startswith("BLAS: ")
    try:
        result = bench.worker_tensorgrad("small", steps=1, backend_name="numpy", path="reference")
    finally:
        tg.kernels.use("kernels")
    assert result["ms"] > 0
