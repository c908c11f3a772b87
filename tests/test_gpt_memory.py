"""The step memory estimate: grows with what it should, and refuses in one line what cannot fit."""

import re

import pytest

from gpt.config import get_config
from gpt.memory import MemoryEstimateError, available_bytes, check_fits, count_params, estimate_step_bytes

LARGE_PARAMS = 10_788_929


def test_the_estimate_grows_with_batch_block_width_depth_and_heads():
    base = get_config("large", batch_size=16)
    e = estimate_step_bytes(base, LARGE_PARAMS)
    for change in (dict(batch_size=32), dict(block_size=512), dict(n_embd=768), dict(n_layer=12), dict(n_head=12)):
        assert estimate_step_bytes(base.replace(**change), LARGE_PARAMS) > e, change


def test_the_estimate_is_near_the_measured_peaks():
    """Measured peak RSS of a training step on the CPU (README, "Memory"), MiB; the estimate errs
    above, by at most 20% (the fit's spread is 4-13%)."""
    measured = {(8, 256, 384, 6, 6): 1023, (16, 256, 384, 6, 6): 1714, (16, 256, 384, 6, 12): 2038}
    for (B, T, C, L, H), mib in measured.items():
        cfg = get_config("large", batch_size=B, block_size=T, n_embd=C, n_layer=L, n_head=H)
        ratio = estimate_step_bytes(cfg, LARGE_PARAMS) / 2**20 / mib
        assert 1.0 <= ratio <= 1.2, ((B, T, C, L, H), ratio)


def test_a_step_that_does_not_fit_is_refused_naming_both_numbers():
    cfg = get_config("large", batch_size=4096)
    expected = r"batch_size 4096 and block_size 256 needs about [\d.]+ GB.*2\.0 GB available"
    with pytest.raises(MemoryEstimateError, match=expected):
        check_fits(cfg, LARGE_PARAMS, available=2 * 2**30)
    check_fits(get_config("small"), 42_369, available=2 * 2**30)  # fits: no error


@pytest.mark.parametrize(
    "change, available, fix",
    [
        (dict(n_layer=100_000), 2, "use a smaller n_layer or n_embd: the parameters alone need more than that"),
        (dict(n_embd=40_000), 2, "use a smaller n_layer or n_embd: the parameters alone need more than that"),
        (dict(n_layer=100_000, batch_size=1), 20, "use a smaller n_layer or n_embd, or a smaller batch_size or"),
        (dict(n_layer=100_000), 22, "use a smaller batch_size or block_size, or a smaller n_layer or n_embd"),
    ],
)
def test_a_step_that_does_not_fit_names_the_model_s_size_and_what_to_shrink(change, available, fix):
    """The parameters' part of the estimate (weights, gradients, AdamW's moments) is named with the
    depth and width that set it; where it alone does not fit, no smaller batch helps, and only the
    model is named to shrink."""
    cfg = get_config("small", **change)
    n_params = count_params(cfg)
    expected = (
        rf"needs about [\d.]+ GB of memory \(an estimate\): [\d.]+ GB for the model's {n_params:,} parameters "
        rf"\(n_layer {cfg.n_layer}, n_embd {cfg.n_embd}\) with their gradients and AdamW's two moments, "
        rf"[\d.]+ GB for the activations of {cfg.batch_size} x 8 tokens through {cfg.n_layer} layers; "
        rf"this machine has {available}\.0 GB available: "
    )
    with pytest.raises(MemoryEstimateError, match=expected + re.escape(fix)):
        check_fits(cfg, n_params, available=available * 2**30)


def test_a_bigram_s_table_is_named_by_the_text_s_characters():
    cfg = get_config("bigram", vocab_size=20_000)  # a text of 20,000 distinct characters: a 400M-entry table
    with pytest.raises(MemoryEstimateError, match="characters squared.*: use a text of fewer characters: the param"):
        check_fits(cfg, count_params(cfg), available=2 * 2**30)


def test_the_machine_reports_its_available_memory():
    avail = available_bytes()
    assert avail is None or avail > 0
