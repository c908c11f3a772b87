"""tg.set_num_threads (explicit, as torch.set_num_threads) and the training programs' choice by work."""

import subprocess
import sys
import textwrap

import pytest

import tensorgrad as tg
from gpt import fused
from gpt.config import get_config
from gpt.threads import PARALLEL_FLOPS, eval_threads_for, largest_product_flops, threads_for, using_threads


def test_set_num_threads_sets_the_blas_and_kernel_threads_and_restores():
    numba = pytest.importorskip("numba")
    before = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        assert tg.get_num_threads() == 1 and numba.get_num_threads() == 1
        x = tg.randn(64, 64)
        assert (x @ x).shape == (64, 64)  # still computes
    finally:
        tg.set_num_threads(before)
    assert tg.get_num_threads() == before


def test_a_thread_started_later_runs_the_kernels_on_the_chosen_count():
    """Numba keeps its thread count per thread, and a new thread starts at every core: after
    tg.set_num_threads(1), a kernel large enough to split, called from another thread (an
    evaluation beside the steps), runs its serial loop, and Numba's count there becomes 1."""
    import threading

    numba = pytest.importorskip("numba")
    from tensorgrad.kernels import cpu

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: every thread starts at one Numba thread")
    ran = []

    class Loop:  # cpu._Loop's two compilations, recording which ran
        def serial(self, *args):
            ran.append(("serial", numba.get_num_threads()))

        def parallel(self, *args):
            ran.append(("parallel", numba.get_num_threads()))

    def call():
        ran.append(("started", numba.get_num_threads()))
        cpu._run("test", Loop(), cpu._PARALLEL_MIN * 2)

    before = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
        assert ran == [("started", numba.config.NUMBA_NUM_THREADS), ("serial", 1)]
        ran.clear()
        tg.set_num_threads(2)
        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
        assert ran == [("started", numba.config.NUMBA_NUM_THREADS), ("parallel", 2)]
    finally:
        tg.set_num_threads(before)


def test_the_chosen_count_holds_after_the_kernels_load_another_blas_library():
    """Numba's import loads SciPy's own BLAS library, with one thread per core.  set_num_threads(1)
    before the first op must still mean one thread after it: get_num_threads() says 1 and a product
    large enough to split runs as one part.  A fresh process, so that Numba is not loaded yet."""
    pytest.importorskip("numba")
    pytest.importorskip("threadpoolctl")
    code = textwrap.dedent(
        """
        import tensorgrad as tg
        tg.set_num_threads(1)
        x = tg.randn(4096, 512)
        (x @ x.T).relu()  # the first ops: the CPU kernels load, and Numba with them
        from tensorgrad.kernels import cpu_threads
        print(tg.get_num_threads(), len(cpu_threads.thread_parts(4096)))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_set_num_threads_refuses_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match="integer >= 1"):
        tg.set_num_threads(bad)


def test_small_models_train_on_one_thread_and_large_ones_on_every_core():
    for stage in ("bigram", "head", "multihead", "ffn", "deep", "residual", "small"):
        assert threads_for(get_config(stage), cores=8) == 1, stage
    assert threads_for(get_config("large"), cores=8) == 8
    assert largest_product_flops(get_config("large")) > 100 * PARALLEL_FLOPS
    assert largest_product_flops(get_config("small")) < PARALLEL_FLOPS / 10


def test_the_fused_models_evaluations_use_every_core_the_others_the_steps_count():
    """gpt/fused.py's `takes` picks the model the fused op runs (small; not large: T = 256, not the
    earlier stages: another architecture); its evaluations' parts run on every core."""
    assert [s for s in ("bigram", "head", "multihead", "ffn", "deep", "residual", "small", "large")
            if fused.takes(get_config(s))] == ["small"]  # fmt: skip
    assert eval_threads_for(get_config("small"), fused=True, cores=8) == 8
    assert eval_threads_for(get_config("small"), fused=False, cores=8) == 1  # --fused off: the step's
    assert eval_threads_for(get_config("residual"), fused=False, cores=8) == 1
    assert eval_threads_for(get_config("large"), fused=False, cores=8) == 8
    with tg.kernels.reference():  # TENSORGRAD_KERNELS=reference: no fused op
        assert not fused.takes(get_config("small"))


def test_train_sets_the_evaluation_threads_around_each_evaluation_alone(monkeypatch):
    """train(eval_threads=2) runs estimate_loss (at steps 0 and 2) on 2 threads and the steps on the
    count set before;
    None leaves the count as it is throughout."""
    from cli_helpers import TEXT

    from gpt import ShakespeareData
    from gpt import train as gtrain

    seen = []
    estimate = gtrain.estimate_loss
    monkeypatch.setattr(gtrain, "estimate_loss", lambda *a: (seen.append(tg.get_num_threads()), estimate(*a))[1])
    before = tg.get_num_threads()
    config = get_config("small", max_iters=3, eval_interval=2, eval_iters=1, batch_size=2)
    try:
        tg.set_num_threads(1)
        gtrain.train(config, ShakespeareData(TEXT), log=lambda s: None, eval_threads=2)
        assert seen == [2, 2] and tg.get_num_threads() == 1
        seen.clear()
        gtrain.train(config, ShakespeareData(TEXT), log=lambda s: None)
        assert seen == [1, 1] and tg.get_num_threads() == 1
    finally:
        tg.set_num_threads(before)


def test_using_threads_restores_the_count_after_an_error():
    before = tg.get_num_threads()
    with pytest.raises(KeyError), using_threads(1 if before > 1 else 2):
        assert tg.get_num_threads() != before
        raise KeyError("inside")
    assert tg.get_num_threads() == before


def test_the_cores_are_the_ones_this_process_may_run_on(monkeypatch):
    """A program limited to fewer cores than the machine has (taskset, a container's cpuset) counts
    those: one thread per core of the machine would take turns on them."""
    import os  # noqa: PLC0415

    from gpt import threads  # noqa: PLC0415

    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert threads.cpu_cores() == 1
    assert threads_for(get_config("large")) == 1  # every core it may use: the one
    monkeypatch.delattr(os, "sched_getaffinity")
    assert threads.cpu_cores() == 64
    monkeypatch.setattr(os, "process_cpu_count", lambda: 2, raising=False)
    assert threads.cpu_cores() == 2
