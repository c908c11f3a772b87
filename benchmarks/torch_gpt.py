"""The lecture's PyTorch model, parametrised by the same GPTConfig: the reference that the
parity tests and the benchmarks compare tensorgrad with.  Module names are the lecture's,
so state_dict keys match gpt.model's one for one.  (PyTorch is used only here, in tests
and in benchmarks, never by tensorgrad itself.)"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, c, head_size):
        super().__init__()
        self.key = nn.Linear(c.n_embd, head_size, bias=False)
        self.query = nn.Linear(c.n_embd, head_size, bias=False)
        self.value = nn.Linear(c.n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(c.block_size, c.block_size)))
        self.dropout = nn.Dropout(c.dropout)
        self.attn_scale = c.attn_scale

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        scale = k.shape[-1] ** -0.5 if self.attn_scale == "head_size" else C**-0.5
        wei = q @ k.transpose(-2, -1) * scale
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        return wei @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        head_size = c.n_embd // c.n_head
        self.heads = nn.ModuleList([Head(c, head_size) for _ in range(c.n_head)])
        self.proj = nn.Linear(head_size * c.n_head, c.n_embd) if c.proj else None
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        if self.proj is not None:
            out = self.dropout(self.proj(out))
        return out


class FeedForward(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c.n_embd
        if c.ffn == "single":
            self.net = nn.Sequential(nn.Linear(n, n), nn.ReLU())
        else:
            self.net = nn.Sequential(nn.Linear(n, 4 * n), nn.ReLU(), nn.Linear(4 * n, n), nn.Dropout(c.dropout))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.sa = MultiHeadAttention(c)
        self.ffwd = FeedForward(c) if c.ffn != "none" else None
        self.ln1 = nn.LayerNorm(c.n_embd) if c.layernorm else None
        self.ln2 = nn.LayerNorm(c.n_embd) if c.layernorm and self.ffwd is not None else None
        self.residual = c.residual

    def forward(self, x):
        if not self.residual:
            x = self.sa(x)
            return self.ffwd(x) if self.ffwd is not None else x
        x = x + self.sa(self.ln1(x) if self.ln1 is not None else x)
        if self.ffwd is not None:
            x = x + self.ffwd(self.ln2(x) if self.ln2 is not None else x)
        return x


class GPTLanguageModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block_size = c.block_size
        self.token_embedding_table = nn.Embedding(c.vocab_size, c.n_embd)
        self.position_embedding_table = nn.Embedding(c.block_size, c.n_embd)
        self.blocks = nn.Sequential(*[Block(c) for _ in range(c.n_layer)])
        self.ln_f = nn.LayerNorm(c.n_embd) if c.layernorm else None
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T, device=idx.device))
        x = self.blocks(x)
        if self.ln_f is not None:
            x = self.ln_f(x)
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))


class BigramLanguageModel(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))


def build_torch_model(config):
    return BigramLanguageModel(config.vocab_size) if config.kind == "bigram" else GPTLanguageModel(config)


def copy_weights_to_torch(tg_model, torch_model, dtype=torch.float64):
    """Load a tensorgrad model's state_dict into the twin (same keys) and cast it."""
    state = {k: torch.from_numpy(v.numpy()) for k, v in tg_model.state_dict().items()}
    torch_model.load_state_dict(state)
    return torch_model.to(dtype)
