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
int16 = np.dtype("int16")  # tg.int16 / tg.int8: dtypes of storage and conversion, no kernel
int8 = np.dtype("int8")
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
    """The dtype torch.tensor() gives to Python data (and NumPy arrays); PyTorch's errors for data
    no tensor can hold (None, strings, ints beyond int64, dicts), instead of an object array."""
    if isinstance(data, (np.ndarray, np.generic)):
        _check_kind(data.dtype, data)
        return data.dtype
    if isinstance(data, bool):
        return bool_
    if isinstance(data, int):
        _check_int(data)
        return int64
    if isinstance(data, float):
        return float32
    arr = np.asarray(data)
    _check_kind(arr.dtype, arr)
    if arr.dtype == np.uint64:  # only Python ints of 2**63 and above make NumPy choose uint64
        _check_int(int(arr.max()))
    if arr.dtype.kind == "f":
        return float32
    if arr.dtype.kind in "iu":
        return int64
    return arr.dtype


_TENSOR_KINDS = "biuf"  # bool, signed and unsigned ints, floats


def _check_int(value: int):
    if not -(2**63) <= value < 2**63:
        raise RuntimeError(f"Overflow when unpacking long: {value} does not fit in int64")


def _check_kind(dtype, arr):
    """Refuse arrays of Python objects or strings, naming the first element that is not a number."""
    if dtype.kind in _TENSOR_KINDS:
        return
    if dtype.kind in "USa":
        raise TypeError(f"new(): invalid data type '{'str' if dtype.kind == 'U' else 'bytes'}'")
    if dtype.kind == "O":
        for item in arr.reshape(-1).tolist():
            if isinstance(item, bool) or isinstance(item, float):
                continue
            if isinstance(item, int):
                _check_int(item)
                continue
            raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")
        if arr.ndim == 0:  # a lone object, e.g. a dict
            raise RuntimeError(f"Could not infer dtype of {type(arr.item()).__name__}")
    raise TypeError(f"can't convert an array of dtype {dtype} to a tensor: only bool, integer and floating dtypes")
