"""tensorgrad.nn: the layer library (modules land here with the nn issue)."""

from . import functional

__all__ = ["functional"]
