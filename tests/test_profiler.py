"""tg.profiler: per-op self times that add up, kernel rows named as such, nothing left installed,
and the same numbers computed with the profiler on; tg.host_memory's explicit malloc setting."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model, get_config
from tensorgrad import autograd, observers, profiler


def _tiny_step(model, x, y, opt):
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    with tg.profiler.record("AdamW.step"):
        opt.step()
    return loss


def _model():
    config = get_config("small", n_embd=16, n_head=2, n_layer=2, block_size=8, batch_size=4)
    tg.manual_seed(0)
    model = build_model(config)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    x = tg.randint(65, (4, 8))
    y = tg.randint(65, (4, 8))
    return model, opt, x, y


@pytest.mark.parametrize("path", ["kernels", "reference"])
def test_rows_name_each_op_and_phase_and_add_up_to_at_most_the_wall_time(path):
    model, opt, x, y = _model()
    model.fused = False  # the lecture's code op by op (gpt/fused.py): a row per op
    with tg.kernels.reference() if path == "reference" else contextlib.nullcontext():
        with tg.profiler.profile() as prof:
            _tiny_step(model, x, y, opt)
    rows = {(name, phase): (calls, secs) for name, phase, calls, secs in prof.rows()}
    layernorm = "LayerNorm [kernel]" if path == "kernels" else "LayerNorm"
    assert rows[(layernorm, "forward")][0] == rows[(layernorm, "backward")][0] == 2 * 2 + 1  # two per block, ln_f
    assert rows[("AdamW.step", "region")][0] == 1
    assert ("LayerNorm [kernel]" in {n for n, _ in rows}) == (path == "kernels")
    assert all(secs >= 0 for _, secs in rows.values())
    assert sum(secs for _, secs in rows.values()) <= prof.wall
    table = prof.table()
    assert table.splitlines()[0].startswith("| op | phase | calls |")
    assert "(outside ops)" in table and "**wall**" in table


def test_the_fused_gpt_is_one_row():
    model, opt, x, y = _model()
    with tg.profiler.profile() as prof:
        _tiny_step(model, x, y, opt)
    rows = {(name, phase): calls for name, phase, calls, _ in prof.rows()}
    assert rows[("FusedGPT", "forward")] == rows[("FusedGPT", "backward")] == 1
    assert not any(name.startswith("LayerNorm") for name, _ in rows)


def test_a_region_is_charged_only_for_its_own_time():
    a = tg.ones(256, 256, requires_grad=True)
    with tg.profiler.profile() as prof:
        with tg.profiler.record("outer"):
            time.sleep(0.02)
            with tg.profiler.record("inner"):
                time.sleep(0.05)
            (a * 2).sum().backward()
    rows = {name: secs for name, _, _, secs in prof.rows()}
    assert 0.05 <= rows["inner"] < 0.05 + 0.04  # slept 50 ms (0.04 s: room for a loaded machine's scheduler)
    assert 0.02 <= rows["outer"] < 0.02 + 0.04  # its own 20 ms, not the inner 50 ms
    assert "Mul" in rows and "Sum" in rows


def test_profiled_steps_compute_the_same_numbers():
    results = []
    for profiled in (False, True):
        model, opt, x, y = _model()
        if profiled:
            with tg.profiler.profile():
                loss = _tiny_step(model, x, y, opt)
        else:
            loss = _tiny_step(model, x, y, opt)
        results.append([loss.item()] + [p.detach().numpy().copy() for p in model.parameters()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_nothing_stays_installed_and_profiles_do_not_nest():
    with pytest.raises(ValueError):
        with tg.profiler.profile():
            raise ValueError("a failing step")
    assert autograd._state.profiler is None
    assert profiler._OBSERVER not in observers.observing  # off the engine's hook: apply pays nothing for it
    with tg.profiler.profile():
        assert profiler._OBSERVER in observers.observing
        with pytest.raises(RuntimeError, match="already running"):
            with tg.profiler.profile():
                pass
    assert autograd._state.profiler is None
    assert profiler._OBSERVER not in observers.observing
    with tg.profiler.record("no profile running"):  # only runs the code
        pass


def test_keep_freed_memory_is_explicit_and_applies_once():
    code = (
        "import tensorgrad, sys\n"
        "assert not tensorgrad.host_memory._applied  # importing changes nothing\n"
        "first = tensorgrad.host_memory.keep_freed_memory()\n"
        "assert first == tensorgrad.host_memory.keep_freed_memory()\n"
        "assert first == sys.platform.startswith('linux')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
