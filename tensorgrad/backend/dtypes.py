"""Dtypes and PyTorch's promotion rules.

A dtype *is* a NumPy dtype object; CuPy uses the same objects, so one set serves every device.
"""

from __future__ import annotations

import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")


def as_dtype(dtype):
    """Normalise anything NumPy understands as a dtype (np.float32, "float32", ...)."""
    if dtype is None:
        return None
    if dtype is float:
        return float32
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    return np.dtype(dtype)


def is_floating(dtype) -> bool:
    return dtype.kind == "f"


def result_type(a, b):
    """PyTorch's promotion between two tensor dtypes (not NumPy's).

    float with float -> the wider float; float with int/bool -> the float;
    int with int -> the wider int; bool with bool -> bool.
    """
    if a == b:
        return a
    fa, fb = a.kind == "f", b.kind == "f"
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    return np.promote_types(a, b)


def default_dtype_for(data):
    """The dtype torch.tensor() gives to Python data (and NumPy arrays)."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return data.dtype
    if isinstance(data, bool):
        return bool_
    if isinstance(data, int):
        return int64
    if isinstance(data, float):
        return float32
    arr = np.asarray(data)
    if arr.dtype.kind == "f":
        return float32
    if arr.dtype.kind in "iu":
        return int64
    return arr.dtype
