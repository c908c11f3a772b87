"""A training step reads nothing back from the device: on a GPU every read (bool(x), x.item(),
a copy to the host) waits for all queued kernels, so a read inside the step stalls it.

The strict device (tensorgrad/backend_strict.py) stands in for CuPy: every way it has to hand a
value to the host is counted while the model runs forward, backward and an AdamW step.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model
from tensorgrad import backend_strict

READS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist")


@pytest.fixture
def reads(monkeypatch):
    """A list that collects the name of every device-to-host read."""
    seen = []
    for name in READS:
        original = getattr(backend_strict.StrictArray, name)

        def counted(self, *args, _name=name, _original=original):
            seen.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(backend_strict.StrictArray, name, counted)
    original_to_numpy = backend_strict.to_numpy

    def to_numpy(a):
        seen.append("to_numpy")
        return original_to_numpy(a)

    monkeypatch.setattr(backend_strict, "to_numpy", to_numpy)
    return seen


@pytest.mark.parametrize("preset", ["small", "large"])
def test_a_training_step_never_reads_from_the_device(preset, reads):
    tg.manual_seed(0)
    overrides = {"n_layer": 1, "n_embd": 12, "n_head": 2, "block_size": 8} if preset == "large" else {}
    model = build_model(preset, **overrides).to("strict")  # large keeps its dropout
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    idx = tg.tensor(np.random.default_rng(0).integers(0, 65, (4, 8)), device="strict")
    for _ in range(2):
        _, loss = model(idx, idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    assert reads == []
    assert np.isfinite(loss.item())  # the read at a log step; it also runs the queued id checks
    assert "item" in reads  # (the counter does count)
