"""gpt: the character-level GPT of "Let's build GPT", every stage, on tensorgrad.

The library, in reading order (each imports only modules above it, and tensorgrad):

    config.py      GPTConfig, one preset per stage of the lecture, validate
    data.py        Tiny Shakespeare (find_dataset: the one lookup), the character tokenizer, get_batch
    fused.py       the GPT as one fused op on the CPU where tensorgrad/kernels/fused_gpt.py takes it
    model.py       Head, MultiHeadAttention, FeedForward, Block, the GPT and the bigram; generate
    checkpoint.py  saving a run, resuming it exactly, load_model (checkpoint_fields.py checks every field)
    memory.py      a training step's peak memory, estimated from the config
    evaluation.py  estimate_loss, and the same evaluation on a thread beside the steps
    threads.py     the CPU threads of a run's steps and evaluations, from the size of its products
    train.py       the training loop (progress.py, rundir.py around it)
    distributed.py the ranks of a data-parallel run (--distributed)
    probe.py       the "thou" probe
    messages.py    errors and log lines that name the library's arguments

gpt/cli/ holds the command-line programs on top of it (tensorgrad-train, ...); the library
never imports it.  Its errors name arguments (max_iters); the programs write them as flags
(--max-iters).
"""

from .config import CPU_STAGES, PRESETS, STAGES, GPTConfig, get_config
from .data import CharTokenizer, DataError, ShakespeareData, find_dataset, load_text
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
    "count_parameters", "find_dataset", "get_config", "load_text",
]  # fmt: skip
