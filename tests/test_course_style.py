"""Code written the way PyTorch courses write it (makemore's "becoming a backprop ninja"): an MLP
with batch norm built by hand, every intermediate's .retain_grad(), the whole backward written
out, each manual gradient compared with autograd's; and the course's hand-written layers with
`self.out += self.bias`. Only the import differs from the PyTorch original."""

from __future__ import annotations

import tensorgrad as torch  # the course's code below, unchanged but for this line
from tensorgrad.testing import compare_grads

F = torch.nn.functional


class Linear:
    """The course's hand-written layer (no nn.Module), with its in-place bias add."""

    def __init__(self, fan_in, fan_out, bias=True, generator=None):
        self.weight = torch.randn((fan_in, fan_out), generator=generator, dtype=torch.float64) / fan_in**0.5
        self.bias = torch.zeros(fan_out, dtype=torch.float64) if bias else None

    def __call__(self, x):
        self.out = x @ self.weight
        if self.bias is not None:
            self.out += self.bias
        return self.out

    def parameters(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])


def test_a_batch_norm_mlp_backpropagated_by_hand_matches_autograd(capsys):
    n_embd, n_hidden, vocab_size, block_size, n = 10, 64, 27, 3, 32
    g = torch.Generator().manual_seed(2147483647)
    C = torch.randn((vocab_size, n_embd), generator=g, dtype=torch.float64)
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g, dtype=torch.float64) * (5 / 3) / (30**0.5)
    b1 = torch.randn(n_hidden, generator=g, dtype=torch.float64) * 0.1
    W2 = torch.randn((n_hidden, vocab_size), generator=g, dtype=torch.float64) * 0.1
    b2 = torch.randn(vocab_size, generator=g, dtype=torch.float64) * 0.1
    bngain = torch.randn((1, n_hidden), dtype=torch.float64, generator=g) * 0.1 + 1.0
    bnbias = torch.randn((1, n_hidden), dtype=torch.float64, generator=g) * 0.1
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    Xb = torch.randint(0, vocab_size, (n, block_size), generator=g)
    Yb = torch.randint(0, vocab_size, (n,), generator=g)

    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff**2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)  # Bessel's correction
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hpreact,
              bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani, embcat, emb]:  # fmt: skip
        t.retain_grad()
    loss.backward()

    with torch.no_grad():
        dlogprobs = torch.zeros_like(logprobs)
        dlogprobs[range(n), Yb] = -1.0 / n
        dprobs = (1.0 / probs) * dlogprobs
        dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
        dcounts = counts_sum_inv * dprobs
        dcounts_sum = (-(counts_sum**-2)) * dcounts_sum_inv
        dcounts += torch.ones_like(counts) * dcounts_sum
        dnorm_logits = counts * dcounts
        dlogits = dnorm_logits.clone()
        dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
        dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
        dh = dlogits @ W2.T
        dW2 = h.T @ dlogits
        db2 = dlogits.sum(0)
        dhpreact = (1.0 - h**2) * dh
        dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
        dbnraw = bngain * dhpreact
        dbnbias = dhpreact.sum(0, keepdim=True)
        dbndiff = bnvar_inv * dbnraw
        dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
        dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
        dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
        dbndiff += (2 * bndiff) * dbndiff2
        dhprebn = dbndiff.clone()
        dbnmeani = (-dbndiff).sum(0)
        dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
        dembcat = dhprebn @ W1.T
        dW1 = embcat.T @ dhprebn
        db1 = dhprebn.sum(0)
        demb = dembcat.view(emb.shape)
        dC = torch.zeros_like(C)
        for k in range(Xb.shape[0]):
            for j in range(Xb.shape[1]):
                dC[Xb[k, j]] += demb[k, j]

    checks = [("logprobs", dlogprobs, logprobs), ("probs", dprobs, probs), ("counts_sum_inv", dcounts_sum_inv,
              counts_sum_inv), ("counts_sum", dcounts_sum, counts_sum), ("counts", dcounts, counts), ("norm_logits",
              dnorm_logits, norm_logits), ("logit_maxes", dlogit_maxes, logit_maxes), ("logits", dlogits, logits),
              ("h", dh, h), ("W2", dW2, W2), ("b2", db2, b2), ("hpreact", dhpreact, hpreact), ("bngain", dbngain,
              bngain), ("bnbias", dbnbias, bnbias), ("bnraw", dbnraw, bnraw), ("bnvar_inv", dbnvar_inv, bnvar_inv),
              ("bnvar", dbnvar, bnvar), ("bndiff2", dbndiff2, bndiff2), ("bndiff", dbndiff, bndiff), ("bnmeani",
              dbnmeani, bnmeani), ("hprebn", dhprebn, hprebn), ("embcat", dembcat, embcat), ("W1", dW1, W1),
              ("b1", db1, b1), ("emb", demb, emb), ("C", dC, C)]  # fmt: skip
    results = [compare_grads(name, manual, t) for name, manual, t in checks]
    assert all(r.approximate for r in results), capsys.readouterr().out
    assert len(capsys.readouterr().out.splitlines()) == len(checks)


def test_the_courses_hand_written_layers_train(capsys):
    """A forward of hand-written Linear layers (out += bias in place) and its gradients."""
    g = torch.Generator().manual_seed(42)
    layers = [Linear(6, 8, generator=g), Linear(8, 4, generator=g)]
    params = [p for layer in layers for p in layer.parameters()]
    for p in params:
        p.requires_grad = True
    x = torch.randn((5, 6), generator=g, dtype=torch.float64)
    out = x
    for layer in layers:
        out = torch.tanh(layer(out))
        out.retain_grad()
    loss = (out**2).sum()
    loss.backward()
    with torch.no_grad():  # the last layer by hand: loss = sum(tanh(a)^2), a = h @ W + b
        dout = 2 * out
        da = (1 - out**2) * dout
        db = da.sum(0)
    assert compare_grads("b2", db, layers[1].bias).approximate
    assert all(p.grad is not None and p.grad.shape == p.shape for p in params)
