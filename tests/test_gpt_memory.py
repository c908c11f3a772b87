"""The step memory estimate: grows with what it should, and refuses in one line what cannot fit."""

import pytest

from gpt.config import get_config
from gpt.memory import MemoryEstimateError, available_bytes, check_fits, estimate_step_bytes

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


def test_the_machine_reports_its_available_memory():
    avail = available_bytes()
    assert avail is None or avail > 0
