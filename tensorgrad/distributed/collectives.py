"""Collectives on tensors, in place, with torch.distributed's names: every rank calls them in
the same order with tensors of the same shape and dtype."""

from __future__ import annotations

import enum

from .. import backend
from ..tensor import Tensor
from . import process_group


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    MAX = "max"


def raw_array(tensor: Tensor):
    """The tensor's backend array, which the collective writes in place (`Tensor._data` where the
    tensor keeps its array there and `.data` is a tensor, else `.data`)."""
    array = getattr(tensor, "_data", None)
    return array if array is not None else tensor.data


def _check(tensor, what):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what} expects a tensorgrad Tensor, got {type(tensor).__name__}")
    name = str(tensor.dtype)
    group = process_group.group()
    if group.name == "mpi" and name not in ("float32", "float64", "int32", "int64"):
        raise TypeError(f"{what}: dtype {name} is not supported by the 'mpi' backend (float32, float64, int32, int64)")
    return raw_array(tensor), group


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over all ranks and leave the result in `tensor` on every rank.
    AVG is the sum divided by the world size (floating dtypes only)."""
    if group is not None or async_op:
        raise NotImplementedError("all_reduce: only the default group, synchronously (group=None, async_op=False)")
    if not isinstance(op, ReduceOp):
        raise TypeError(f"all_reduce: op must be a tensorgrad.distributed.ReduceOp (SUM, AVG, MAX), got {op!r}")
    array, g = _check(tensor, "all_reduce")
    if op is ReduceOp.AVG and not backend.is_floating(tensor.dtype):
        raise TypeError(f"all_reduce: ReduceOp.AVG needs a floating tensor, got {tensor.dtype}")
    g.all_reduce(array, op.value)


def broadcast(tensor: Tensor, src: int, group=None, async_op=False):
    """Copy rank `src`'s `tensor` into `tensor` on every rank."""
    if group is not None or async_op:
        raise NotImplementedError("broadcast: only the default group, synchronously (group=None, async_op=False)")
    array, g = _check(tensor, "broadcast")
    if not 0 <= src < g.world_size:
        raise ValueError(f"broadcast: src {src} out of range for world size {g.world_size}")
    g.broadcast(array, src)


def all_gather_object(object_list: list, obj, group=None):
    """Fill `object_list` (of world-size length) with every rank's `obj` (picklable), in rank order."""
    if group is not None:
        raise NotImplementedError("all_gather_object: only the default group (group=None)")
    g = process_group.group()
    if len(object_list) != g.world_size:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} slots, world size is {g.world_size}")
    object_list[:] = g.all_gather_object(obj)
