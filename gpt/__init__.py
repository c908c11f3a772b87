"""gpt: the character-level GPT of "Let's build GPT", every stage, on tensorgrad."""

from .config import CPU_STAGES, PRESETS, STAGES, GPTConfig, get_config
from .data import CharTokenizer, DataError, ShakespeareData, load_text
from .model import (
    BigramLanguageModel,
    Block,
    FeedForward,
    GPTLanguageModel,
    Head,
    MultiHeadAttention,
    build_model,
    count_parameters,
)

__all__ = [
    "BigramLanguageModel", "Block", "CPU_STAGES", "CharTokenizer", "DataError", "FeedForward", "GPTConfig",
    "GPTLanguageModel", "Head", "MultiHeadAttention", "PRESETS", "STAGES", "ShakespeareData", "build_model",
    "count_parameters", "get_config", "load_text",
]  # fmt: skip
