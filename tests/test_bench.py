"""The benchmark harness runs (a smoke test: its numbers are measured by hand, not in CI)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import bench  # noqa: E402


def test_a_tensorgrad_step_worker_reports_time_and_memory():
    result = bench.worker_tensorgrad("small", steps=2, backend_name="numpy")
    assert result["ms"] > 0 and result["min_ms"] <= result["ms"] and result["peak_mb"] > 0
    assert 0 < result["floor_ms"] < result["ms"]  # the GEMMs at NumPy's best rate take part of the step


def test_the_step_profile_prints_each_op_and_the_wall_time(capsys):
    from benchmarks import profile_step

    profile_step.profile_tensorgrad("small", steps=2, path="op-by-op", device="cpu", limit=None)
    out = capsys.readouterr().out
    assert "| LayerNorm [kernel] | forward | 7 |" in out  # 7 per step: two per block, the final one
    assert "| AdamW.step | region | 1 |" in out and "**wall**" in out
    profile_step.profile_tensorgrad("small", steps=2, path="kernels", device="cpu", limit=None)
    out = capsys.readouterr().out
    assert "| FusedGPT | forward | 1 |" in out and "LayerNorm" not in out  # the whole model: one op per step


def test_the_cpu_clock_measures_wall_time():
    import time

    ms = bench._clock("tensorgrad", "cpu")(lambda: time.sleep(0.02))
    assert 15 < ms < 1000


def test_the_bench_names_the_blas_kernel_and_measures_the_reference_path():
    import tensorgrad as tg

    assert bench.blas_report().startswith("BLAS: ")
    try:
        result = bench.worker_tensorgrad("small", steps=1, backend_name="numpy", path="reference")
    finally:
        tg.kernels.use("kernels")
    assert result["ms"] > 0


def test_the_gpu_peak_is_the_cupy_pools_peak_in_use_over_a_step(monkeypatch):
    """_cupy_peak_mb's hook, driven by a stand-in for CuPy's allocator (the real one needs a GPU)."""
    cupy = pytest.importorskip("cupy")
    from types import SimpleNamespace

    used = [100 << 20]
    monkeypatch.setattr(cupy, "get_default_memory_pool", lambda: SimpleNamespace(used_bytes=lambda: used[0]))
    monkeypatch.setattr(cupy.cuda, "Device", lambda: SimpleNamespace(synchronize=lambda: None))

    def step():  # three allocations, as CuPy's pool reports them to its memory hooks
        for mb in (300, 500, 200):
            used[0] = mb << 20
            for hook in cupy.cuda.memory_hook.get_memory_hooks().values():
                hook.malloc_postprocess(device_id=0, size=mb << 20, mem_size=mb << 20, mem_ptr=1, pmem_id=1)

    assert bench._cupy_peak_mb(step) == 500
    assert cupy.cuda.memory_hook.get_memory_hooks() == {}  # the hook is gone after the step


def test_the_torch_seed_runs_repeat_for_a_seed_and_differ_between_seeds():
    """benchmarks/torch_seeds.py's runs (PyTorch's spread of the reference's val loss): a seed gives
    the same losses twice, another seed others."""
    pytest.importorskip("torch")
    from benchmarks import torch_seeds
    from gpt.data import DataError, find_dataset

    try:
        find_dataset(download=False)
    except DataError:
        pytest.skip("needs Tiny Shakespeare (data/tinyshakespeare/input.txt)")
    first, again, other = (torch_seeds.train("small", seed, max_iters=3) for seed in (1, 1, 2))
    assert first[:3] == again[:3] and first[2] != other[2]
    assert 3.5 < first[2] < 5  # three steps from the start: about ln 65 = 4.17
