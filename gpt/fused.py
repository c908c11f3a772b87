"""The GPT as one fused op where it can be: GPTLanguageModel.forward asks `logits(model, idx)` first.

tensorgrad/kernels/fused_gpt.py computes the model's logits, and their gradient with respect to
every parameter, with one compiled function for the model's forward and one for its backward
(kernels/cpu_gpt.py) instead of some thirty ops per block.  It reads the model's own parameters
(the same Tensors: state_dict, checkpoints, the optimizer see no difference) and draws the same
dropout masks.  The loss on these logits is the lecture's `F.cross_entropy` of their views as one
op (`loss`: FusedGPTLoss), or the lecture's code itself for targets that op does not take.

It runs where all of these hold, and the lecture's code runs otherwise:
- model.fused (True unless switched off: `tensorgrad-train --fused off`), and the kernels on
  (TENSORGRAD_KERNELS=reference or tg.kernels.use("reference") switch the fused op off too);
- the `small` / `large` architecture: residual pre-norm blocks, projection, the 4x MLP with ReLU,
  ln_f; no KV cache (generation);
- no hooks on any module or parameter (they would see none of the per-op tensors);
- with dropout drawn (training, p > 0), the fast attention (the lecture's loop over heads draws
  one mask per head, in another order);
- what FusedGPT.accepts checks of the arrays: the CPU, float32, ids in range, short sequences.

A backward with create_graph=True (a gradient of a gradient) recomputes the logits op by op and
differentiates those (FusedGPT.backward_graph); where the forward drew dropout masks it cannot (a
recomputation would draw others), and the engine's "double backward is not implemented" error is
raised when a second pass reaches it: set model.fused = False for that.
"""

from __future__ import annotations

import operator
import weakref

import tensorgrad as tg
from tensorgrad import nn
from tensorgrad.kernels.fused_gpt import FusedGPT, FusedGPTLoss


class _Plan:
    """What `logits` reads of a model, found once by walking it: every module (for their hooks),
    the parameters in FusedGPT's order (None: the model is not the one the op fuses), and the
    modules whose settings are read at each call.  `registries` (every module's parameters,
    buffers and submodules, dicts), their `sizes` and `entries` (each entry's registry, name and
    value, as three columns) let each call check in a few microseconds that no module, parameter
    or buffer was added, removed or replaced since: a walk of the model costs a millisecond."""

    def __init__(self, model):
        self.modules = list(model.modules())
        registries = [m.__dict__[r] for m in self.modules for r in ("_parameters", "_buffers", "_modules")]
        self.registries, self.sizes = registries, list(map(len, registries))
        entries = [(registry, name, value) for registry in registries for name, value in registry.items()]
        self.entries = tuple(zip(*entries)) or ((), (), ())  # (registries, names, values), each entry's
        self.params = self.blocks = None
        self.accepted = None  # weak references to the parameters' arrays FusedGPT.accepts_params last took
        if model.ln_f is None or model.ln_f.weight is None or model.ln_f.bias is None or model.lm_head.bias is None:
            return
        params = [model.token_embedding_table.weight, model.position_embedding_table.weight]
        blocks = []
        for block in model.blocks:
            ps = _block_params(block)
            if ps is None or len(block.sa.heads) != len(model.blocks[0].sa.heads):
                return
            params += ps
            blocks.append((block.sa, block.sa.heads[0].dropout, block.sa.dropout, block.ffwd.net[3], block.ln1,
                           block.ln2))  # fmt: skip
        if not blocks:
            return
        self.params = params + [model.ln_f.weight, model.ln_f.bias, model.lm_head.weight, model.lm_head.bias]
        self.blocks = blocks
        self.first = model.blocks[0].sa.heads[0]

    def valid(self) -> bool:
        """Every registry of the same size, and every entry the same object (C loops: `map`)."""
        if list(map(len, self.registries)) != self.sizes:
            return False
        registries, names, values = self.entries
        return all(map(operator.is_, map(dict.get, registries, names), values))


_has_hooks, _hooks, _data = (operator.attrgetter(name) for name in ("_has_hooks", "_hooks", "_data"))
_referent = weakref.ref.__call__  # a weak reference's object (None once it is freed)


def _plan(model) -> _Plan:
    plan = model.__dict__.get("_fused_plan")
    if plan is None or not plan.valid():
        plan = _Plan(model)
        object.__setattr__(model, "_fused_plan", plan)  # a plain attribute: not a module, not in state_dict
    return plan


def _block_params(block):
    """A Block's parameters in FusedGPT's order, or None where the block is not the one it fuses."""
    sa, ffwd, ln1, ln2 = block.sa, block.ffwd, block.ln1, block.ln2
    if not block.residual or ffwd is None or ln1 is None or ln2 is None or sa.proj is None:
        return None
    net = ffwd.net
    if len(net) != 4 or type(net[1]) is not nn.ReLU or type(net[3]) is not nn.Dropout or sa.proj.bias is None:
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
    if not model.fused or idx.device != "cpu":
        return None
    plan = _plan(model)
    params = plan.params
    if params is None:
        return None
    if any(map(_has_hooks, plan.modules)) or any(map(_hooks, params)):
        return None  # hooks would see none of the per-op tensors
    eps, dropout = [], []
    training = model.training
    for sa, att_drop, proj_drop, ffn_drop, ln1, ln2 in plan.blocks:
        ps = (att_drop.p, proj_drop.p, ffn_drop.p) if training else (0.0, 0.0, 0.0)
        if any(ps) and not sa.fast:
            return None
        eps.append((ln1.eps, ln2.eps))
        dropout.append(ps)
    eps.append(model.ln_f.eps)
    first = plan.first
    T = idx.shape[1]
    H = len(plan.blocks[0][0].heads)
    arrays = list(map(_data, params))
    V, C = arrays[0].shape[0], arrays[0].shape[-1]
    if plan.accepted is None or not all(map(operator.is_, arrays, map(_referent, plan.accepted))):  # a new array
        if not FusedGPT.accepts_params(*arrays, n_layer=len(plan.blocks), n_head=H, vocab_size=V):
            return None
        plan.accepted = list(map(weakref.ref, arrays))  # weak: a replaced array is freed, never taken for another
    mask = first.tril._data[:T, :T] != 0
    if not FusedGPT.accepts_input(idx._data, arrays[1].shape[0], vocab_size=V, device=idx.device, mask=mask):
        return None
    config = dict(
        n_layer=len(plan.blocks), n_head=H, vocab_size=V, device=idx.device, scale=first.scale(C // H, C),
        eps=tuple(eps), mask=mask, dropout=tuple(dropout),
    )  # fmt: skip
    if not any(any(ps) for ps in dropout):  # a gradient of the gradient: the same logits op by op
        config["graph"] = lambda g: _graph(model, idx, params, g)
    return FusedGPT.apply(idx, *params, **config)


def takes(config) -> bool:
    """Whether the model of `config` is the one the fused op runs on the CPU (the config's side of
    what `logits` checks at each call: the architecture, the sequence length, the kernels on), for
    choices made before a run, such as its threads (gpt/threads.py)."""
    return (
        config.kind == "gpt" and config.ffn == "mlp" and config.proj and config.residual and config.layernorm
        and config.block_size <= FusedGPT.max_len and tg.kernels.mode() == "kernels"
    )  # fmt: skip


def loss(model, logits, targets):
    """The model's loss on the fused op's logits: the lecture's `F.cross_entropy(logits.view(B * T,
    V), targets.view(B * T))` as one op (FusedGPTLoss) where it takes the targets, else the
    lecture's code itself (LanguageModel.loss: its checks, its errors)."""
    ids = getattr(targets, "_data", None)
    if ids is not None and targets.device == logits.device and FusedGPTLoss.accepts(logits._data, ids):
        return FusedGPTLoss.apply(logits, targets)
    return model.loss(logits, targets)


def _graph(model, idx, params, g):
    """FusedGPT.backward_graph's recomputation (no dropout drawn): the lecture's code on the same
    parameters, and the parameters' gradients of its logits as recorded Tensors."""
    model.fused = False
    try:
        with tg.enable_grad():
            reference, _ = model(idx)
    finally:
        model.fused = True
    return tg.autograd.grad(reference, params, g, create_graph=True, allow_unused=True)
