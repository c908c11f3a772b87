"""The models of "Let's build GPT", in the lecture's form and with its names.

Every stage is built from the same parts; a GPTConfig switches parts off:

    idx (B, T) -> token emb + position emb -> n_layer x Block -> [ln_f] -> lm_head -> logits (B, T, vocab)
    Block:  x = x + sa(ln1(x));  x = x + ffwd(ln2(x))        (residual, pre-norm)
            x = sa(x);           x = ffwd(x)                 (the early stages: no residual, no norm)

state_dict keys are the lecture's (token_embedding_table.weight, blocks.0.sa.heads.0.key.weight,
blocks.0.sa.proj.weight, blocks.0.ffwd.net.0.weight, blocks.0.ln1.weight, ln_f.weight,
lm_head.weight, ...), so weights from the lecture's PyTorch code load directly.
"""

from __future__ import annotations

import math

import tensorgrad as tg
import tensorgrad.nn as nn
from tensorgrad.nn import functional as F

from . import fused
from .config import GPTConfig, get_config


class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, n_embd, head_size, block_size, dropout=0.0, attn_scale="head_size"):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        # A buffer, not a plain attribute: it moves with .to(device) and is in state_dict().
        self.register_buffer("tril", tg.tril(tg.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)
        self.attn_scale = attn_scale

    def scale(self, head_size, C):
        # The dot products have head_size terms: scale by head_size ** -0.5.  The video's first
        # version used C = n_embd; attn_scale="n_embd" restores it to reproduce that run.
        return head_size**-0.5 if self.attn_scale == "head_size" else C**-0.5

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)  # (B, T, hs)
        q = self.query(x)  # (B, T, hs)
        wei = q @ k.transpose(-2, -1) * self.scale(k.shape[-1], C)  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # (B, T, T)
        wei = F.softmax(wei, dim=-1)  # (B, T, T)
        wei = self.dropout(wei)
        v = self.value(x)  # (B, T, hs)
        return wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)


class MultiHeadAttention(nn.Module):
    """num_heads Heads side by side, their outputs concatenated on the last dim, then `proj`.

    Two ways to compute the same thing from the same weights:
    - the lecture's: a Python loop over the Heads, then cat (`fast=False`, for study);
    - the fast one: the per-head key/query/value weights stacked into one matrix at run time,
      so all heads are two batched matmuls on (B, heads, T, head_size).  tests/ prove both equal.
    The parameters (and state_dict keys) are the per-head Linear weights in both cases.
    """

    def __init__(self, num_heads, head_size, n_embd, block_size, dropout=0.0, proj=True,
                 attn_scale="head_size", fast=True):  # fmt: skip
        super().__init__()
        self.heads = nn.ModuleList([Head(n_embd, head_size, block_size, dropout, attn_scale) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd) if proj else None
        self.dropout = nn.Dropout(dropout)
        self.fast = fast

    def forward(self, x, cache=None):
        if self.fast or cache is not None:
            out = self.forward_batched(x, cache)  # (B, T, H * hs)
        else:
            out = tg.cat([h(x) for h in self.heads], dim=-1)  # (B, T, H * hs)
        if self.proj is not None:
            out = self.dropout(self.proj(out))  # (B, T, C)
        return out

    def forward_batched(self, x, cache=None):
        """All heads at once.  With a `cache` (a dict, generation only), x holds only the new
        positions: their keys and values are appended to the cached ones and their queries attend
        to all of them (a KV cache: earlier positions are not recomputed)."""
        B, T, C = x.shape
        H = len(self.heads)
        first = self.heads[0]
        hs = first.key.weight.shape[0]
        w = tg.cat(
            [h.query.weight for h in self.heads]
            + [h.key.weight for h in self.heads]
            + [h.value.weight for h in self.heads],
            dim=0,
        )  # (3 * H * hs, C): every head's query, key and value weights, stacked
        qkv = F.linear(x, w)  # (B, T, 3 * H * hs)
        dropout_p = first.dropout.p if self.training else 0.0
        if cache is None:
            # The lecture's four lines (q k^T * scale, masked_fill with tril, softmax, dropout) and
            # the product with v for every head, as one op with its own backward
            # (tensorgrad/ops/attention.py); it equals the cached path below with t0 = 0.
            return F.packed_self_attention(
                qkv, H, attn_mask=first.tril[:T, :T] != 0, dropout_p=dropout_p, scale=first.scale(hs, C)
            )  # (B, T, H * hs): heads side by side, as cat
        q, k, v = qkv.view(B, T, 3, H, hs).permute(2, 0, 3, 1, 4)  # each (B, H, T, hs)
        t0 = 0  # the position of x's first row
        if "k" in cache:
            t0 = cache["k"].shape[2]
            k = tg.cat([cache["k"], k], dim=2)  # (B, H, t0 + T, hs)
            v = tg.cat([cache["v"], v], dim=2)  # (B, H, t0 + T, hs)
        cache["k"], cache["v"] = k, v
        out = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=first.tril[t0 : t0 + T, : t0 + T] != 0,  # (T, t0 + T): True where a position may look
            dropout_p=dropout_p,
            scale=first.scale(hs, C),
        )  # (B, H, T, hs)  # fmt: skip
        return out.transpose(1, 2).reshape(B, T, H * hs)  # (B, T, H * hs): heads side by side, as cat


class FeedForward(nn.Module):
    """The same small MLP applied to every position on its own."""

    def __init__(self, n_embd, kind="mlp", dropout=0.0):
        super().__init__()
        if kind == "single":  # the lecture's first version
            self.net = nn.Sequential(nn.Linear(n_embd, n_embd), nn.ReLU())
        elif kind == "mlp":  # the standard two layers, 4x wider inside
            self.net = nn.Sequential(
                nn.Linear(n_embd, 4 * n_embd),
                nn.ReLU(),
                nn.Linear(4 * n_embd, n_embd),
                nn.Dropout(dropout),
            )
        else:
            raise ValueError(f"unknown feed-forward kind {kind!r}: expected 'single' or 'mlp'")

    def forward(self, x):
        return self.net(x)  # (B, T, C) -> (B, T, C)


class Block(nn.Module):
    """Communication (attention) then computation (feed-forward)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        c = config
        head_size = c.n_embd // c.n_head
        self.sa = MultiHeadAttention(
            c.n_head, head_size, c.n_embd, c.block_size, c.dropout, c.proj, c.attn_scale, c.fast_attention
        )
        self.ffwd = FeedForward(c.n_embd, c.ffn, c.dropout) if c.ffn != "none" else None
        self.ln1 = nn.LayerNorm(c.n_embd) if c.layernorm else None
        self.ln2 = nn.LayerNorm(c.n_embd) if c.layernorm and self.ffwd is not None else None
        self.residual = c.residual

    def forward(self, x, cache=None):
        if not self.residual:
            x = self.sa(x, cache)  # (B, T, C): each layer replaces x
            return self.ffwd(x) if self.ffwd is not None else x
        # Pre-norm residual: the branches read a normalised x and add to the untouched stream.
        x = x + self.sa(self.ln1(x) if self.ln1 is not None else x, cache)  # (B, T, C)
        if self.ffwd is not None:
            x = x + self.ffwd(self.ln2(x) if self.ln2 is not None else x)  # (B, T, C)
        return x


class LanguageModel(nn.Module):
    """What every stage shares: the loss and sampling."""

    block_size: int

    def loss(self, logits, targets):
        B, T, V = logits.shape
        return F.cross_entropy(logits.view(B * T, V), targets.view(B * T))

    @tg.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True):
        """Append max_new_tokens sampled ids to idx (B, T), in eval mode, without a graph.

        The context is cropped to the last block_size ids, so any prompt length works.  With
        use_cache (GPT models), keys and values of earlier positions are kept while the context
        fits in block_size, so each new token costs one position instead of the whole context;
        once the window slides, every position's embedding changes and the context is recomputed,
        exactly as without the cache (tests/ check both give the same tokens).

        temperature: a finite number > 0; each draw is from softmax(logits / temperature).  Its limit
        at 0 is greedy (the most likely id; tied ones equally likely), and a temperature too small
        for the logits' dtype (logits / T overflows, or T rounds to 0) draws exactly that limit.
        """
        if not (temperature > 0 and math.isfinite(temperature)):  # NaN fails the first test
            raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
        was_training = self.training
        self.eval()
        cache = None
        try:
            for _ in range(max_new_tokens):
                if use_cache and isinstance(self, GPTLanguageModel) and idx.shape[1] <= self.block_size:
                    if cache is None:  # the prompt, all at once
                        cache = KVCache(len(self.blocks))
                        logits, _ = self(idx, cache=cache)  # (B, T, V)
                    else:  # only the newest id
                        logits, _ = self(idx[:, -1:], cache=cache)  # (B, 1, V)
                else:
                    idx_cond = idx[:, -self.block_size :]  # (B, <=block_size)
                    logits, _ = self(idx_cond)  # (B, T, V)
                logits = _scaled(logits[:, -1, :], temperature)  # (B, V): the last position predicts the next id
                if top_k is not None:
                    logits = _keep_top_k(logits, top_k)
                probs = F.softmax(logits, dim=-1)  # (B, V)
                idx_next = tg.multinomial(probs, num_samples=1)  # (B, 1)
                idx = tg.cat((idx, idx_next), dim=1)  # (B, T + 1)
        finally:
            self.train(was_training)
        return idx


class KVCache:
    """Per layer, the keys and values (B, heads, t, head_size) of the positions seen so far."""

    def __init__(self, n_layer):
        self.layers = [{} for _ in range(n_layer)]
        self.length = 0


def _scaled(logits, temperature):
    """logits / temperature (B, V), shifted so that each row's largest is 0: softmax is the same,
    and a tiny temperature gives 0 there and -inf below, the greedy limit, never inf - inf = NaN.
    Where T rounds to 0 in the logits' dtype, 0 / T is NaN: the row's largest are set to 0."""
    top = logits.max(dim=-1, keepdim=True).values  # (B, 1)
    return ((logits - top) / temperature).masked_fill(logits == top, 0.0)


def _keep_top_k(logits, k):
    """-inf everywhere but the k largest logits of each row (B, V)."""
    kth = tg.topk(logits, min(k, logits.shape[-1]), dim=-1).values[:, -1:]  # (B, 1): the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


class BigramLanguageModel(LanguageModel):
    """Each token reads the logits of the next token straight off a table."""

    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)
        self.block_size = 1  # the prediction depends on the last token only

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)  # (B, T, V)
        loss = None if targets is None else self.loss(logits, targets)
        return logits, loss


class GPTLanguageModel(LanguageModel):
    """Token + position embeddings, a stack of Blocks, a final LayerNorm, the lm_head."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        c = self.config = config
        self.block_size = c.block_size
        self.token_embedding_table = nn.Embedding(c.vocab_size, c.n_embd)
        self.position_embedding_table = nn.Embedding(c.block_size, c.n_embd)
        self.blocks = nn.Sequential(*[Block(c) for _ in range(c.n_layer)])
        self.ln_f = nn.LayerNorm(c.n_embd) if c.layernorm else None
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size)
        # PyTorch's default initialisation (the write-up's step-0 losses of 4.28-4.31 show it).
        self.fused = True  # run as one fused op where it can (gpt/fused.py); False: always the code below

    def forward(self, idx, targets=None, cache=None):
        """idx (B, T) -> logits (B, T, V) and the loss.  `cache` (a KVCache, generation only):
        idx holds the positions after the cached ones."""
        B, T = idx.shape
        start = cache.length if cache is not None else 0
        if start + T > self.block_size:
            raise ValueError(f"context of {start + T} tokens is longer than block_size={self.block_size}")
        logits = fused.logits(self, idx) if cache is None else None  # the same, compiled (gpt/fused.py)
        if logits is not None:
            return logits, (None if targets is None else fused.loss(self, logits, targets))
        tok_emb = self.token_embedding_table(idx)  # (B, T, C)
        pos_emb = self.position_embedding_table(tg.arange(start, start + T, device=idx.device))  # (T, C)
        x = tok_emb + pos_emb  # (B, T, C)
        if cache is None:
            x = self.blocks(x)  # (B, T, C)
        else:
            for block, layer_cache in zip(self.blocks, cache.layers):
                x = block(x, layer_cache)  # (B, T, C)
            cache.length += T
        if self.ln_f is not None:
            x = self.ln_f(x)  # (B, T, C)
        logits = self.lm_head(x)  # (B, T, V)
        loss = None if targets is None else self.loss(logits, targets)
        return logits, loss


def build_model(name_or_config, vocab_size=65, **overrides) -> LanguageModel:
    """The model of a preset ("small", "large", ...) or of a GPTConfig."""
    config = get_config(name_or_config, vocab_size=vocab_size, **overrides)
    if config.kind == "bigram":
        return BigramLanguageModel(config.vocab_size)
    if config.n_embd % config.n_head:
        raise ValueError(f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}")
    return GPTLanguageModel(config)


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())
