"""Devices and their array namespaces.

Every array the engine holds lives on a *device*, and each device has an array namespace ("xp")
with NumPy's interface:

    "cpu"     NumPy
    "cuda"    CuPy (an NVIDIA GPU), loaded on first use (cuda_setup.py)
    "strict"  NumPy behind a guard that behaves like CuPy (strict.py), so that the CuPy code path
              is exercised by the test suite on machines without a GPU

Ops never pick a namespace from a global switch: the device comes from the data
(``Tensor.device``), and ``namespace(device)`` maps it to its xp.
"""

from __future__ import annotations

import numpy as np

from . import strict
from .cuda_setup import load_cupy
from .errors import DeviceError

DEVICES = ("cpu", "cuda", "strict")


def normalize_device(device) -> str:
    """'cpu', 'cuda', 'cuda:0', or a Tensor's device -> one of DEVICES."""
    if device is None:
        return "cpu"
    d = str(device)
    if d.startswith("cuda"):
        if d not in ("cuda", "cuda:0"):
            raise DeviceError(f"only one GPU is supported (device 'cuda' or 'cuda:0'), got {d!r}")
        d = "cuda"
    if d not in DEVICES:
        raise DeviceError(f"unknown device {device!r}: expected 'cpu' or 'cuda'")
    return d


def namespace(device: str):
    """The array module (xp) of a device."""
    if device == "cpu":
        return np
    if device == "strict":
        return strict.xp
    return load_cupy()


def synchronize(device: str):
    """Wait until the device has finished the work queued on it (CuPy queues kernels and returns
    at once); nothing to wait for on the CPU."""
    if device == "cuda":
        load_cupy().cuda.Device().synchronize()


def device_of(array) -> str:
    """Which device an array lives on, from its type."""
    if isinstance(array, np.ndarray):
        return "cpu"
    if isinstance(array, strict.StrictArray):
        return "strict"
    if type(array).__module__.startswith("cupy") and isinstance(array, load_cupy().ndarray):
        return "cuda"
    raise TypeError(f"not a backend array: {type(array).__name__}")


def is_array(obj) -> bool:
    try:
        device_of(obj)
    except TypeError:
        return False
    return True
