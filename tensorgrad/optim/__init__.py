"""tensorgrad.optim: optimizers and learning-rate schedules, with torch.optim's names."""

from . import lr_scheduler
from .adamw import AdamW
from .lr_scheduler import CosineWarmup
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "AdamW", "CosineWarmup", "Optimizer", "lr_scheduler"]
