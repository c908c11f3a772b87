"""A training step reads nothing back from the device: on a GPU every read (bool(x), x.item(),
a copy to the host, and the reads CuPy makes without saying so) waits for all queued kernels, so
a read inside the step stalls it.

The strict device (tensorgrad/backend/strict.py) stands in for CuPy: `recording()` counts every
way it has to hand a value to the host, while batches are drawn, the model runs forward,
backward and an AdamW step, and while the loss is estimated.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model, get_config
from gpt.data import ShakespeareData
from gpt.train import estimate_loss
from tensorgrad.backend import strict as backend_strict

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 20


def _model(preset):
    tg.manual_seed(0)
    overrides = {"n_layer": 1, "n_embd": 12, "n_head": 2, "block_size": 8} if preset == "large" else {}
    return build_model(preset, vocab_size=65, **overrides).to("strict")  # large keeps its dropout


@pytest.mark.parametrize("preset", ["small", "large"])
def test_a_training_step_never_reads_from_the_device(preset):
    model = _model(preset)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    data = ShakespeareData(TEXT, device="strict")
    with backend_strict.recording() as rec:
        for _ in range(2):
            xb, yb = data.get_batch("train", 8, 4)  # tg.randint and a gather, on the device
            _, loss = model(xb, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        assert rec.reads == []
        assert np.isfinite(loss.item())  # the read at a log step; it also runs the queued id checks
        assert rec.reads == ["to_numpy", "item"]  # the queued id checks in one transfer, then the loss


def test_an_evaluation_reads_once_per_split():
    model = _model("small")
    data = ShakespeareData(TEXT, device="strict")
    config = get_config("small").replace(block_size=8, batch_size=4, eval_iters=3)
    with backend_strict.recording() as rec:
        losses = estimate_loss(model, data, config)
    assert set(losses) == {"train", "val"} and all(np.isfinite(v) for v in losses.values())
    # the queued id checks of both splits in one transfer, then each split's summed loss
    assert rec.reads == ["to_numpy", "item", "item"]


def test_cupys_hidden_reads_are_counted():
    """The syncs CuPy 14 makes inside calls that look asynchronous (see backend_strict's docstring)."""
    xp = backend_strict.xp
    a = xp.asarray([1.0, -2.0, 3.0])
    for what, run in [
        ("boolean-mask indexing", lambda: a[a > 0]),
        ("boolean-mask indexing", lambda: a.__setitem__(a > 0, 0.0)),
        ("where", lambda: xp.where(a > 0)),
        ("nonzero", lambda: xp.nonzero(a)),
        ("nonzero", lambda: a.nonzero()),
        ("random.randint", lambda: xp.random.randint(0, 5, size=3)),
        ("item", lambda: a[0].item()),
        ("__float__", lambda: float(a[0])),
        ("to_numpy", lambda: tg.backend.to_numpy(a)),
    ]:
        with backend_strict.recording() as rec:
            run()
        assert rec.reads == [what]
    with backend_strict.recording() as rec:  # and these read nothing
        xp.where(a > 0, a, 0.0)
        a[xp.asarray([0, 2])]
        a[1:]
        tg.backend.erf(xp, a)  # a device kernel on a GPU
    assert rec.reads == []


def test_strict_arrays_have_no_index_as_cupy_arrays_have_none():
    import cupy

    a = backend_strict.xp.asarray(2)
    assert not hasattr(cupy.ndarray, "__index__") and not hasattr(a, "__index__")
    with pytest.raises(TypeError):
        range(a)
    with pytest.raises(TypeError):
        [0, 1, 2][a]
