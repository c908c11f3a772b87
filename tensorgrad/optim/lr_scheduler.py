"""Learning-rate schedules: linear warm-up then cosine decay (nanoGPT's get_lr), as a
torch-style scheduler that writes each group's "lr"."""

from __future__ import annotations

import math

from .optimizer import Optimizer


class CosineWarmup:
    """lr(t) for step t = 0, 1, 2, ... (one step() after each optimizer.step()):

        t < warmup_steps:              base_lr * (t + 1) / warmup_steps      (linear ramp up)
        warmup_steps <= t <= max_steps: min_lr + (base_lr - min_lr) * (1 + cos(pi * r)) / 2,
                                        r = (t - warmup_steps) / (max_steps - warmup_steps)
        t > max_steps:                 min_lr

    base_lr is each group's lr when the scheduler is made; the constructor already sets
    lr(0), so the first optimizer.step() uses it.  Usage, as with torch schedulers:

        sched = CosineWarmup(opt, warmup_steps=100, max_steps=5000, min_lr=1e-4)
        for t in range(5000): ...; opt.step(); sched.step()
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, max_steps: int, min_lr: float = 0.0):
        if warmup_steps < 0 or max_steps < warmup_steps:
            raise ValueError(
                f"need 0 <= warmup_steps <= max_steps, got warmup_steps={warmup_steps}, max_steps={max_steps}"
            )
        self.optimizer = optimizer
        self.warmup_steps = warmup_steps
        self.max_steps = max_steps
        self.min_lr = min_lr
        self.base_lrs = [group.setdefault("initial_lr", group["lr"]) for group in optimizer.param_groups]
        self.last_epoch = 0
        self._apply()

    def lr_at(self, t: int, base_lr: float) -> float:
        if t < self.warmup_steps:
            return base_lr * (t + 1) / self.warmup_steps
        if t > self.max_steps:
            return self.min_lr
        span = self.max_steps - self.warmup_steps
        r = (t - self.warmup_steps) / span if span > 0 else 1.0
        return self.min_lr + (base_lr - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * r))

    def _apply(self):
        self._last_lr = [self.lr_at(self.last_epoch, base) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def step(self):
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list:
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {
            "warmup_steps": self.warmup_steps,
            "max_steps": self.max_steps,
            "min_lr": self.min_lr,
            "base_lrs": list(self.base_lrs),
            "last_epoch": self.last_epoch,
        }

    def load_state_dict(self, state_dict: dict):
        self.warmup_steps = state_dict["warmup_steps"]
        self.max_steps = state_dict["max_steps"]
        self.min_lr = state_dict["min_lr"]
        self.base_lrs = list(state_dict["base_lrs"])
        self.last_epoch = state_dict["last_epoch"]
        self._apply()
