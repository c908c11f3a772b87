"""How much memory a training step needs, estimated from the config before the first step.

A batch or block size whose activations do not fit is otherwise found out by the operating system,
which kills the process minutes later without a message. `check_fits` compares the estimate with
the memory the machine has available and raises `MemoryEstimateError` (one line, both numbers)
before any work.

The estimate counts what a step keeps alive at its peak, the end of the forward pass:

    params      weights, gradients and AdamW's two moments: 4 arrays of n_params
    per layer   the activations each op saves for its backward, per token (B * T of them), in
                units of C: ln1 1, q/k/v 3, heads' output 1, proj 1, dropout 1, residual 1, ln2 1,
                FFN (C -> 4C -> C) 4 + 4 + 1, dropout 1, residual 1; and per (batch, head) the
                (T, T) attention probabilities, their dropped-out copy and the 1-byte keep mask
    logits      (B, T, vocab), with the softmax the loss keeps
    runtime     Python, NumPy, Numba and the compiled kernels

times a margin for the backward pass's temporaries (gradients of a layer's activations alive
beside them). The margin was fitted to measured peaks of the `large` model at several batch, block,
width, depth and head counts (tests/test_gpt_memory.py checks it); the estimate lands 4-13% above each of them,
so it errs on the side of refusing a step that would only just fit.
"""

from __future__ import annotations

from .config import ConfigError, GPTConfig
from .messages import arg, message

BACKWARD_MARGIN = 1.30  # peak / (what the forward keeps), fitted as the docstring says
RUNTIME_BYTES = 250 * 2**20  # the interpreter and libraries, before any tensor


class MemoryEstimateError(ConfigError, MemoryError):
    """A training step would need more memory than the machine has available (a ConfigError: the
    batch or block size asks for it, and the message names them)."""


def count_params(config: GPTConfig) -> int:
    """The parameters of the model `config` builds (gpt/model.py), counted without building it."""
    C, V = config.n_embd, config.vocab_size
    if config.kind == "bigram":
        return V * V
    ffn = {"none": 0, "single": C * C + C, "mlp": 2 * 4 * C * C + 4 * C + C}[config.ffn]
    norms = (1 + (config.ffn != "none")) * 2 * C if config.layernorm else 0
    layer = 3 * C * C + (C * C + C if config.proj else 0) + ffn + norms
    return V * C + config.block_size * C + config.n_layer * layer + (2 * C if config.layernorm else 0) + C * V + V


def activation_units_per_token(config: GPTConfig) -> int:
    """Activations one layer keeps per token, in units of n_embd elements (see the docstring)."""
    dropout = config.dropout > 0
    attention = 3 + 1  # q, k, v and the heads' concatenated output
    attention += config.layernorm + config.proj + (dropout and config.proj) + config.residual
    ffn = {"none": 0, "single": 2, "mlp": 9}[config.ffn] + (dropout and config.ffn != "none")
    ffn += (config.layernorm + config.residual) if config.ffn != "none" else 0
    return attention + ffn


def parameter_bytes(n_params: int, itemsize: int = 4) -> int:
    """The step's arrays of n_params each: the weights, their gradients and AdamW's two moments."""
    return 4 * n_params * itemsize


def activation_bytes(config: GPTConfig, itemsize: int = 4) -> int:
    """What the forward pass keeps for the backward at its peak (the docstring's list), before the margin."""
    B, T, C, V = config.batch_size, config.block_size, config.n_embd, config.vocab_size
    logits = 3 * B * T * V * itemsize
    if config.kind == "bigram":
        return logits
    per_layer = activation_units_per_token(config) * B * T * C * itemsize
    scores = B * config.n_head * T * T
    per_layer += scores * (itemsize + (itemsize + 1 if config.dropout > 0 else 0))
    embeddings = 2 * B * T * C * itemsize
    return config.n_layer * per_layer + embeddings + logits


def estimate_step_bytes(config: GPTConfig, n_params: int, itemsize: int = 4) -> int:
    """Peak bytes of one training step of `config` with `n_params` parameters (float32: itemsize 4)."""
    params, kept = parameter_bytes(n_params, itemsize), activation_bytes(config, itemsize)
    return int(RUNTIME_BYTES + params + BACKWARD_MARGIN * kept)


def available_bytes() -> int | None:
    """The memory the machine can give a new allocation now (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB"


def check_fits(config: GPTConfig, n_params: int, itemsize: int = 4, available: int | None = None):
    """Raise MemoryEstimateError when a step's estimated peak exceeds the memory available.

    The message splits the estimate into the parameters' part (set by the model's depth and width)
    and the activations' (the batch's, through every layer), and names what to shrink: the model
    alone where its parameters do not fit by themselves (no batch is small enough), else first the
    larger part's settings.  `available` defaults to the machine's (no check where it cannot be
    read)."""
    available = available_bytes() if available is None else available
    if available is None:
        return
    need = estimate_step_bytes(config, n_params, itemsize)
    if need <= available:
        return
    params, activations = parameter_bytes(n_params, itemsize), int(BACKWARD_MARGIN * activation_bytes(config, itemsize))
    batch = f"a smaller {arg('batch_size')} or {arg('block_size')}"
    model = f"a smaller {arg('n_layer')} or {arg('n_embd')}"
    tokens = f"{config.batch_size} x {config.block_size} tokens"
    if config.kind == "bigram":  # a vocab x vocab table: only the text sets its size
        what, model = f"a table of the text's {config.vocab_size} characters squared", "a text of fewer characters"
        through = f"the logits of {tokens}"
    else:
        what = f"{arg('n_layer')} {config.n_layer}, {arg('n_embd')} {config.n_embd}"
        through = f"the activations of {tokens} through {config.n_layer} layers"
    if RUNTIME_BYTES + params > available:  # no batch is small enough
        fix = f"use {model}: the parameters alone need more than that"
    elif params >= activations:
        fix = f"use {model}, or {batch}"
    else:
        fix = f"use {batch}, or {model}"
    raise MemoryEstimateError(message(
        f"a training step with {arg('batch_size')} {config.batch_size} and {arg('block_size')} {config.block_size} "
        f"needs about {_gb(need)} of memory (an estimate): {_gb(params)} for the model's {n_params:,} parameters "
        f"({what}) with their gradients and AdamW's two moments, {_gb(activations)} for {through}; "
        f"this machine has {_gb(available)} available: {fix}"
    ))  # fmt: skip
