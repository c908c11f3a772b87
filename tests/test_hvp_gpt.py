"""Hessian-vector products of the lecture's GPT with respect to every parameter, against PyTorch:
the second-order pass (create_graph=True, each op's backward_graph) through the whole model, on
the fused kernels and the reference ops, with the fast attention and the lecture's loop over heads."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model, get_config

torch = pytest.importorskip("torch")
from benchmarks.torch_gpt import build_torch_model, copy_weights_to_torch  # noqa: E402

pytestmark = pytest.mark.reference


def hvp(lib, loss, params, vs):
    """H v = d/dp (dL/dp . v), by a gradient of the gradient (PyTorch's double-backward form)."""
    grads = lib.autograd.grad(loss, params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vs))
    return lib.autograd.grad(dot, params)


@pytest.mark.parametrize("path", ["kernels", "reference"])
@pytest.mark.parametrize("name, fast_attention", [("small", True), ("small", False), ("ffn", True)])
def test_hessian_vector_product_matches_pytorch(name, fast_attention, path):
    previous = tg.kernels.mode()
    tg.kernels.use(path)
    try:
        tg.manual_seed(0)
        config = get_config(name, fast_attention=fast_attention)
        model = build_model(config)
        twin = copy_weights_to_torch(model, build_torch_model(config)).double()
        model.double()
        rng = np.random.default_rng(0)
        idx, targets = rng.integers(0, 65, (2, 8)), rng.integers(0, 65, (2, 8))
        names = [n for n, _ in model.named_parameters()]
        t_params = dict(twin.named_parameters())
        vs = [rng.standard_normal(p.shape) for _, p in model.named_parameters()]
        _, loss = model(tg.tensor(idx), tg.tensor(targets))
        ours = hvp(tg, loss, [p for _, p in model.named_parameters()], [tg.tensor(v) for v in vs])
        _, t_loss = twin(torch.from_numpy(idx), torch.from_numpy(targets))
        theirs = hvp(torch, t_loss, [t_params[n] for n in names], [torch.from_numpy(v) for v in vs])
        for n, a, b in zip(names, ours, theirs):
            # float64 on both sides, the same math in another order: 1e-9 relative to the largest entry
            b = b.numpy()
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-9, atol=1e-9 * np.abs(b).max(), err_msg=n)
    finally:
        tg.kernels.use(previous)
