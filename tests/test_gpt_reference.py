"""The same weights give the same loss and gradients in tensorgrad and in the lecture's PyTorch code."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model, get_config

torch = pytest.importorskip("torch")
from benchmarks.torch_gpt import build_torch_model, copy_weights_to_torch  # noqa: E402

pytestmark = pytest.mark.reference


@pytest.mark.parametrize("name", ["bigram", "head", "multihead", "ffn", "deep", "residual", "small"])
def test_loss_and_gradients_match_pytorch(name):
    tg.manual_seed(0)
    config = get_config(name)
    model = build_model(config)
    twin = copy_weights_to_torch(model, build_torch_model(config))
    model.double()
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 65, (4, 8))
    targets = rng.integers(0, 65, (4, 8))
    logits, loss = model(tg.tensor(idx), tg.tensor(targets))
    t_logits, t_loss = twin(torch.from_numpy(idx), torch.from_numpy(targets))
    # float64 on both sides: 1e-6 is far above rounding and far below any real difference.
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-6)
    np.testing.assert_allclose(logits.numpy(), t_logits.detach().numpy(), rtol=1e-6, atol=1e-9)
    loss.backward()
    t_loss.backward()
    t_grads = dict(twin.named_parameters())
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_grads[n].grad.numpy(), rtol=1e-6, atol=1e-9, err_msg=n)


def test_large_architecture_matches_pytorch_on_a_reduced_size():
    """The large preset's structure (dropout off in eval, 6 heads) at a size a unit test can afford."""
    tg.manual_seed(0)
    config = get_config("large", n_embd=48, n_layer=2, block_size=16)
    model = build_model(config)
    twin = copy_weights_to_torch(model, build_torch_model(config))
    model.double().eval()
    twin.eval()
    idx = np.random.default_rng(1).integers(0, 65, (2, 16))
    _, loss = model(tg.tensor(idx), tg.tensor(idx))
    _, t_loss = twin(torch.from_numpy(idx), torch.from_numpy(idx))
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-6)  # float64: see above
