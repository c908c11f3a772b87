"""tg.set_num_threads (explicit, as torch.set_num_threads) and the training programs' choice by work."""

import pytest

import tensorgrad as tg
from gpt.config import get_config
from gpt.threads import PARALLEL_FLOPS, largest_product_flops, threads_for


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
