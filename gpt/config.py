"""Configurations: one preset per stage of "Let's build GPT", with its training
hyperparameters and the reference run's numbers (the write-up of the lecture's runs).

Presets are data, not code paths: every stage is the same GPT class with some parts
switched off (see model.py), except the bigram, which is only a logit table.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from .messages import arg, message


@dataclass
class GPTConfig:
    # --- the model
    kind: str = "gpt"  # "gpt" or "bigram"
    vocab_size: int = 65
    block_size: int = 8  # context length T
    n_embd: int = 32  # C
    n_head: int = 4
    n_layer: int = 3
    dropout: float = 0.0
    ffn: str = "mlp"  # "none", "single" (Linear(C, C) + ReLU) or "mlp" (C -> 4C -> C)
    proj: bool = True  # a Linear(C, C) after the concatenated heads
    residual: bool = True  # x = x + f(x) instead of x = f(x)
    layernorm: bool = True  # pre-norm ln1, ln2 in each block and ln_f before lm_head
    attn_scale: str = "head_size"  # "head_size" (the repository) or "n_embd" (the video's first version)
    fast_attention: bool = True  # all heads in one batched matmul (same weights, same result)
    # --- training
    batch_size: int = 32
    max_iters: int = 5000
    learning_rate: float = 1e-3
    eval_interval: int = 500
    eval_iters: int = 200
    weight_decay: float = 0.01  # torch.optim.AdamW's default, which the lecture uses
    # --- the reference run, for comparison (None where the write-up has no number)
    reference: dict = field(default_factory=dict)

    def replace(self, **changes) -> GPTConfig:
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown config field(s): {sorted(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_SMALL = dict(block_size=8, n_embd=32, batch_size=32, max_iters=5000, learning_rate=1e-3)

PRESETS: dict[str, GPTConfig] = {
    # a 65x65 table of next-character logits
    "bigram": GPTConfig(
        kind="bigram", max_iters=3000, learning_rate=1e-2, eval_interval=300,
        reference=dict(params=4225, val=2.49),
    ),
    # embeddings + one causal self-attention head of size 32 + lm_head
    "head": GPTConfig(
        **_SMALL, n_head=1, n_layer=1, ffn="none", proj=False, residual=False, layernorm=False,
        reference=dict(params=7553, val=2.40),
    ),
    # 4 heads of size 8, concatenated
    "multihead": GPTConfig(
        **_SMALL, n_head=4, n_layer=1, ffn="none", proj=False, residual=False, layernorm=False,
        reference=dict(params=7553, val=2.28),
    ),
    # + FeedForward = Linear(32, 32) + ReLU after the attention
    "ffn": GPTConfig(
        **_SMALL, n_head=4, n_layer=1, ffn="single", proj=False, residual=False, layernorm=False,
        reference=dict(params=8609, val=2.2495, train=2.2145,
                       curve={3000: (2.2826, 2.2922), 4000: (2.2432, 2.2456), 4999: (2.2145, 2.2495)}),
    ),
    # 3 blocks of (multihead, ffn): no residual, no norm -> no better than ffn
    "deep": GPTConfig(
        **_SMALL, n_head=4, n_layer=3, ffn="single", proj=False, residual=False, layernorm=False,
        reference=dict(params=16865, val=None, note="no better than ffn (~2.24)"),
    ),
    # + residual connections, proj after the heads, FFN 32 -> 128 -> 32
    "residual": GPTConfig(
        **_SMALL, n_head=4, n_layer=3, ffn="mlp", proj=True, residual=True, layernorm=False,
        reference=dict(params=41921, val=2.08),
    ),
    # experiment C: + pre-norm LayerNorm
    "small": GPTConfig(
        **_SMALL, n_head=4, n_layer=3, ffn="mlp", proj=True, residual=True, layernorm=True,
        reference=dict(params=42369, val=2.0613, train=1.9747,
                       curve={0: (4.3103, 4.3100), 2000: (2.1190, 2.1600), 4999: (1.9747, 2.0613)}),
    ),
    # experiment D: the 10.8M-parameter model
    "large": GPTConfig(
        block_size=256, n_embd=384, n_head=6, n_layer=6, dropout=0.2, batch_size=64,
        max_iters=5000, learning_rate=3e-4, eval_interval=500,
        reference=dict(params=10788929, val=1.4938, best_val=1.4809, best_step=4500, train=1.0503,
                       curve={0: (4.2846, 4.2820), 1000: (1.5327, 1.7199), 2000: (1.3057, 1.5512),
                              3000: (1.2012, 1.5047), 4000: (1.1221, 1.4877), 4500: (1.0857, 1.4809),
                              4999: (1.0503, 1.4938)}),
    ),
}  # fmt: skip

STAGES = list(PRESETS)  # in the lecture's order
CPU_STAGES = STAGES[:-1]  # every stage but `large` trains on a laptop CPU in minutes


def get_config(name_or_config, **overrides) -> GPTConfig:
    """A preset by name (or a config), with field overrides."""
    if isinstance(name_or_config, GPTConfig):
        cfg = name_or_config
    else:
        if name_or_config not in PRESETS:
            raise ValueError(f"unknown preset {name_or_config!r}; choose one of {', '.join(PRESETS)}")
        cfg = PRESETS[name_or_config]
    return cfg.replace(**overrides) if overrides else cfg


# --------------------------------------------------------------------------- validation
class ConfigError(ValueError):
    """A configuration value outside its allowed range (the message names the field: gpt/messages.py)."""


# the fields that fix the model's architecture: a preset is recognised by them
MODEL_FIELDS = ("kind", "block_size", "n_embd", "n_head", "n_layer", "ffn", "proj", "residual", "layernorm")


def preset_of(config: GPTConfig) -> str | None:
    """The name of the preset whose architecture `config` has, or None (a custom shape)."""
    for name, p in PRESETS.items():
        if all(getattr(p, f) == getattr(config, f) for f in MODEL_FIELDS):
            return name
    return None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate(config: GPTConfig) -> GPTConfig:
    """Raise ConfigError, one line naming the field, its value and the allowed range, for the
    first value out of range; return the config unchanged otherwise."""
    for name in ("batch_size", "block_size", "n_embd", "n_head", "n_layer", "max_iters", "eval_interval",
                 "eval_iters", "vocab_size"):  # fmt: skip
        v = getattr(config, name)
        if not _is_int(v) or v < 1:
            raise ConfigError(message(f"{arg(name)} {v!r}: must be an integer >= 1"))
    if config.kind == "gpt" and config.n_embd % config.n_head:
        raise ConfigError(message(
            f"{arg('n_embd')} {config.n_embd}: must be a multiple of {arg('n_head')} {config.n_head} "
            "(each head gets n_embd / n_head)"
        ))  # fmt: skip
    if not 0.0 <= config.dropout < 1.0:  # False for NaN as well
        raise ConfigError(message(f"{arg('dropout')} {config.dropout!r}: must be in [0, 1)"))
    if not (config.learning_rate > 0 and math.isfinite(config.learning_rate)):
        raise ConfigError(message(f"{arg('learning_rate')} {config.learning_rate!r}: must be a finite number > 0"))
    if not (config.weight_decay >= 0 and math.isfinite(config.weight_decay)):
        raise ConfigError(message(f"{arg('weight_decay')} {config.weight_decay!r}: must be a finite number >= 0"))
    for name, allowed in (("kind", ("gpt", "bigram")), ("ffn", ("none", "single", "mlp")),
                          ("attn_scale", ("head_size", "n_embd"))):  # fmt: skip
        if getattr(config, name) not in allowed:
            raise ConfigError(f"{name} {getattr(config, name)!r}: must be one of {', '.join(allowed)}")
    return config
