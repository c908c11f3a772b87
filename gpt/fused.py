"""The GPT as one fused op where it can be: GPTLanguageModel.forward asks `logits(model, idx)` first.

tensorgrad/kernels/fused_gpt.py computes the model's logits, and their gradient with respect to
every parameter, with one compiled function per block forward and backward (kernels/cpu_gpt.py)
instead of some thirty ops per block.  It reads the model's own parameters (the same Tensors:
state_dict, checkpoints, the optimizer see no difference) and draws the same dropout masks.  The
loss stays the lecture's (LanguageModel.loss on these logits).

It runs where all of these hold, and the lecture's code runs otherwise:
- model.fused (True unless switched off: `tensorgrad-train --fused off`), and the kernels on
  (TENSORGRAD_KERNELS=reference or tg.kernels.use("reference") switch the fused op off too);
- the `small` / `large` architecture: residual pre-norm blocks, projection, the 4x MLP with ReLU,
  ln_f; no KV cache (generation);
- no hooks on any module or parameter (they would see none of the per-op tensors);
- with dropout drawn (training, p > 0), the fast attention (the lecture's loop over heads draws
  one mask per head, in another order);
- what FusedGPT.accepts checks of the arrays: the CPU, float32, ids in range, short sequences.

A backward with create_graph=True (a gradient of a gradient) through the fused op raises the
engine's "double backward is not implemented" error when it reaches it: set model.fused = False
for that.
"""

from __future__ import annotations

from tensorgrad import nn
from tensorgrad.kernels.fused_gpt import FusedGPT


def _has_hooks(model) -> bool:
    for m in model.modules():
        if m._has_hooks:
            return True
    return any(p._hooks is not None for p in model.parameters())


def _block_params(block):
    """A Block's parameters in FusedGPT's order, or None where the block is not the one it fuses."""
    sa, ffwd, ln1, ln2 = block.sa, block.ffwd, block.ln1, block.ln2
    if not block.residual or ffwd is None or ln1 is None or ln2 is None or sa.proj is None:
        return None
    net = ffwd.net
    if len(net) != 4 or type(net[1]) is not nn.ReLU or sa.proj.bias is None:
        return None
    if any(ln.weight is None or ln.bias is None for ln in (ln1, ln2)):
        return None
    if any(lin.bias is None for lin in (net[0], net[2])):
        return None
    heads = sa.heads
    return [ln1.weight, ln1.bias, *[h.query.weight for h in heads], *[h.key.weight for h in heads],
            *[h.value.weight for h in heads], sa.proj.weight, sa.proj.bias, ln2.weight, ln2.bias,
            net[0].weight, net[0].bias, net[2].weight, net[2].bias]  # fmt: skip


def logits(model, idx):
    """model(idx)'s logits (B, T, V) by the fused op, or None where it does not take them."""
    if not model.fused or idx.device != "cpu" or model.ln_f is None or model.ln_f.weight is None:
        return None
    if model.ln_f.bias is None or model.lm_head.bias is None or _has_hooks(model):
        return None
    params = [model.token_embedding_table.weight, model.position_embedding_table.weight]
    eps, dropout = [], []
    n_head = None
    for block in model.blocks:
        ps = _block_params(block)
        if ps is None:
            return None
        heads = block.sa.heads
        n_head = len(heads) if n_head is None else n_head
        if len(heads) != n_head:
            return None
        p_att = heads[0].dropout.p if model.training else 0.0
        p_proj = block.sa.dropout.p if model.training else 0.0
        p_ffn = block.ffwd.net[3].p if model.training else 0.0
        if (p_att or p_proj or p_ffn) and not block.sa.fast:
            return None
        params += ps
        eps.append((block.ln1.eps, block.ln2.eps))
        dropout.append((p_att, p_proj, p_ffn))
    if n_head is None:
        return None
    eps.append(model.ln_f.eps)
    params += [model.ln_f.weight, model.ln_f.bias, model.lm_head.weight, model.lm_head.bias]
    first = model.blocks[0].sa.heads[0]
    T = idx.shape[1]
    C = params[0].shape[-1]
    config = dict(
        n_layer=len(model.blocks), n_head=n_head, vocab_size=params[0].shape[0], device=idx.device,
        scale=first.scale(C // n_head, C), eps=tuple(eps), mask=(first.tril[:T, :T] != 0)._data,
        dropout=tuple(dropout),
    )  # fmt: skip
    if not FusedGPT.accepts(idx._data, *(p._data for p in params), **config):
        return None
    return FusedGPT.apply(idx, *params, **config)
