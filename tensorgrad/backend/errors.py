"""The engine's two error types (tg.DeviceError, tg.ShapeError), raised by every layer above."""

from __future__ import annotations


class DeviceError(RuntimeError):
    """A device that cannot be used here, or arrays on different devices."""


class ShapeError(RuntimeError, ValueError):
    """Shapes that do not fit an op.  PyTorch raises RuntimeError for these; it is a ValueError
    too, so both `except RuntimeError` (code ported from PyTorch) and `except ValueError` work."""


class LinAlgError(RuntimeError):
    """A matrix a linear algebra op cannot take (singular, not positive-definite, no convergence):
    torch.linalg.LinAlgError, a RuntimeError too."""
