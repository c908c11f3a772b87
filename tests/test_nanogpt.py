"""nanoGPT's model.py, unchanged but for its imports (tests/nanogpt_model.py), on tensorgrad against
the same source on PyTorch at the same weights: logits, loss, every gradient, an AdamW step from
its configure_optimizers, crop_block_size, and generate() with top_k."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

SOURCE = Path(__file__).with_name("nanogpt_model.py")
TORCH_IMPORTS = {
    "import tensorgrad as torch\n": "import torch\n",
    "import tensorgrad.nn as nn\n": "import torch.nn as nn\n",
    "from tensorgrad.nn import functional as F\n": "from torch.nn import functional as F\n",
}


def _ours():
    spec = importlib.util.spec_from_file_location("nanogpt_model_tg", SOURCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def _theirs():
    """The original: the vendored source with its three torch imports put back."""
    text = SOURCE.read_text()
    for ours, original in TORCH_IMPORTS.items():
        assert text.count(ours) == 1
        text = text.replace(ours, original)
    module = types.ModuleType("nanogpt_model_torch")
    sys.modules[module.__name__] = module
    exec(compile(text, str(SOURCE), "exec"), module.__dict__)
    return module


OURS, THEIRS = _ours(), _theirs()


def twin_models(bias=True, dropout=0.0, vocab_size=50, block_size=16):
    """The same GPT in both libraries, float64, PyTorch's initial weights copied into ours."""
    kwargs = dict(block_size=block_size, vocab_size=vocab_size, n_layer=2, n_head=2, n_embd=16, dropout=dropout,
                  bias=bias)  # fmt: skip
    torch.manual_seed(0)
    theirs = THEIRS.GPT(THEIRS.GPTConfig(**kwargs)).double()
    tg.manual_seed(0)
    ours = OURS.GPT(OURS.GPTConfig(**kwargs)).double()
    ours.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("bias", [True, False])
def test_forward_backward_matches_pytorch(bias):
    ours, theirs = twin_models(bias=bias)
    idx = np.random.default_rng(0).integers(0, 50, (3, 16))
    targets = np.random.default_rng(1).integers(0, 50, (3, 16))
    targets[0, :4] = -1  # nanoGPT's ignore_index
    logits, loss = ours(tg.tensor(idx), tg.tensor(targets))
    t_logits, t_loss = theirs(torch.from_numpy(idx), torch.from_numpy(targets))
    # float64 on both sides, same formulas up to summation order: rounding only
    np.testing.assert_allclose(logits.numpy(), t_logits.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-12)
    loss.backward()
    t_loss.backward()
    t_params = dict(theirs.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(t_params)  # the tied lm_head / wte weight is listed once in both
    for n, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[n].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)
    # inference: only the last position's logits
    logits, loss = ours(tg.tensor(idx))
    assert loss is None and logits.shape == (3, 1, 50)
    np.testing.assert_allclose(logits.numpy(), theirs(torch.from_numpy(idx))[0].detach().numpy(), rtol=1e-9)


def test_configure_optimizers_step_and_crop_match_pytorch():
    ours, theirs = twin_models()
    idx = np.random.default_rng(0).integers(0, 50, (2, 16))
    opt = ours.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
    t_opt = theirs.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
    assert [len(g["params"]) for g in opt.param_groups] == [len(g["params"]) for g in t_opt.param_groups]
    for _ in range(2):
        for model, optimizer, lib in ((ours, opt, tg), (theirs, t_opt, torch)):
            _, loss = model(lib.tensor(idx), lib.tensor(idx))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    t_params = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        np.testing.assert_allclose(p.numpy(), t_params[n].detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=n)
    ours.crop_block_size(8)
    theirs.crop_block_size(8)
    short = idx[:, :8]
    np.testing.assert_allclose(
        ours(tg.tensor(short))[0].numpy(), theirs(torch.from_numpy(short))[0].detach().numpy(), rtol=1e-9
    )


def test_generate_greedy_top_k_matches_pytorch():
    """top_k=1 leaves one token with probability 1: sampling is deterministic, so both libraries
    must produce the same continuation (past block_size, which crops the context)."""
    ours, theirs = twin_models(block_size=8)
    ours.eval()
    theirs.eval()
    idx = np.random.default_rng(0).integers(0, 50, (2, 5))
    out = ours.generate(tg.tensor(idx), 6, temperature=0.8, top_k=1)
    t_out = theirs.generate(torch.from_numpy(idx), 6, temperature=0.8, top_k=1)
    assert out.dtype == tg.int64 and out.shape == (2, 11)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())


def test_generate_top_k_samples_only_the_top_k():
    ours, _ = twin_models()
    ours.eval()
    tg.manual_seed(3)
    idx = tg.tensor(np.random.default_rng(0).integers(0, 50, (4, 3)))
    out = ours.generate(idx, 5, top_k=3).numpy()
    for step in range(3, 8):
        logits, _ = ours(tg.tensor(out[:, :step]))
        top3 = np.argsort(-logits.numpy()[:, -1, :], axis=-1, kind="stable")[:, :3]
        assert all(out[b, step] in top3[b] for b in range(4)), step
