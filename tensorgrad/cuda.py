"""tg.cuda.is_available(), as torch.cuda.is_available()."""

from __future__ import annotations

from . import backend


def is_available() -> bool:
    """True when CuPy is installed and sees a usable NVIDIA GPU."""
    return backend.cuda_is_available()
