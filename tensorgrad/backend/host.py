"""Host transfer, storage identity, and the device checks deferred to the next host read.

Moving data between the host (NumPy) and a device is always explicit here: `from_host` makes a
fresh device array, `to_numpy` copies one back, `to_device` moves between devices.
"""

from __future__ import annotations

import collections

import numpy as np

from . import strict
from .cuda_setup import load_cupy
from .devices import device_of, namespace


def to_numpy(array) -> np.ndarray:
    """An explicit copy to a host NumPy array, from any device."""
    if isinstance(array, np.ndarray):
        return array.copy()
    if isinstance(array, strict.StrictArray):
        return strict.to_numpy(array)
    return load_cupy().asnumpy(array)


def from_host(data, dtype, device):
    """Python data or a NumPy array -> a fresh array of `dtype` on `device`."""
    host = np.array(data, dtype=dtype)  # always a copy: the tensor owns its data
    if device == "cpu":
        return host
    if device == "strict":
        return strict.from_numpy(host)
    return load_cupy().asarray(host)


def to_device(array, device: str):
    """Move an array to another device (a no-op when it is already there)."""
    src = device_of(array)
    if src == device:
        return array
    host = array if src == "cpu" else to_numpy(array)
    return from_host(host, host.dtype, device)


def _unwrapped(array):
    """The strict device's NumPy array inside a StrictArray (its strides, flags and base), else `array`."""
    return array._a if isinstance(array, strict.StrictArray) else array


def storage_of(array):
    """The object that owns `array`'s memory: the array itself, or the base it is a view of.
    Two arrays with the same storage_of share memory, so a write to one shows in the other
    (the engine's version counters use this to tell views from fresh arrays)."""
    array = _unwrapped(array)
    base = getattr(array, "base", None)
    while base is not None and base is not array:
        array, base = base, getattr(base, "base", None)
    return array


def writable(array):
    """`array`, or where NumPy made it read-only as a broadcast (an `expand`: dims of stride 0 over
    memory that takes writes) an alias of the same memory that takes them, as PyTorch's expanded
    tensors do: a value written there lands in the one element each place reads.  Any other
    read-only array is returned as it is (a write into it raises NumPy's error); CuPy's arrays
    take writes already."""
    a = _unwrapped(array)
    if not isinstance(a, np.ndarray) or a.flags.writeable or not overlaps_itself(a):
        return array
    root = storage_of(a)
    if not isinstance(root, np.ndarray) or not root.flags.writeable or not root.flags.c_contiguous:
        return array
    alias = np.ndarray(a.shape, a.dtype, buffer=root, offset=address(a) - address(root), strides=a.strides)
    return strict.StrictArray(alias) if isinstance(array, strict.StrictArray) else alias


def address(array) -> int:
    """The address of `array`'s first element (NumPy's array interface, CuPy's device pointer,
    which includes a view's offset): two arrays over one memory differ by their offset in bytes."""
    return array.__array_interface__["data"][0] if isinstance(array, np.ndarray) else array.data.ptr


def is_contiguous(array) -> bool:
    """Whether `array`'s elements lie in row-major order, one after the other (NumPy's and CuPy's
    `flags.c_contiguous`)."""
    return bool(_unwrapped(array).flags.c_contiguous)


def is_dense_in_order(array, dims) -> bool:
    """Whether `array`'s elements lie one after the other with the dims `dims` varying fastest
    first (PyTorch's channels-last test: (1, 3, 2, 0) for an (N, C, H, W) tensor held as
    (N, H, W, C)); a dim of size 1 has no stride that matters."""
    a = _unwrapped(array)
    expected = a.itemsize
    for d in dims:
        if a.shape[d] != 1:
            if a.strides[d] != expected:
                return False
            expected *= a.shape[d]
    return True


def overlaps_itself(array) -> bool:
    """Whether two elements of `array` may share one memory location: a view made by `expand`
    (stride 0) or by `unfold` with overlapping windows.  PyTorch refuses to write into such a
    tensor (which element would hold the value?).  Its dims sorted by stride, each must step past
    everything the smaller ones span; a contiguous array always does."""
    a = _unwrapped(array)
    if is_contiguous(a) or a.size < 2:
        return False
    reach = a.itemsize  # the bytes spanned by the dims taken so far, one element included
    for stride, n in sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n > 1):
        if stride < reach:
            return True
        reach += stride * (n - 1)
    return False


# --------------------------------------------------------------------------- deferred checks
# Reading a value back from a GPU (`bool(x.any())`) waits for every queued kernel; one such read
# inside the forward pass stalls the device once per step.  So checks of device data (token ids
# in range) are queued here instead: the flag stays on the device, and is read at the next point
# that waits for the device anyway (Tensor.item(), .numpy(), .tolist()), where a failed check
# raises its error.  On the CPU the checks run at once.  Out-of-range ids meanwhile read a
# wrapped-around row (CuPy's indexing), never memory outside the array.
# process-wide, as a device's queue: one thread's check may raise in another's read
_pending_checks: collections.deque = collections.deque()
_MAX_PENDING = 256  # then they are read (one sync per 256 checks), so memory stays bounded


def defer_check(flag, fail):
    """Queue a device check: `flag` a 0-d bool array, `fail()` raises the error when it is True."""
    _pending_checks.append((flag, fail))
    if len(_pending_checks) >= _MAX_PENDING:
        run_deferred_checks()


def run_deferred_checks():
    """Read every queued flag, one transfer per device (a sync), and raise the first failed check's error."""
    if not _pending_checks:
        return
    pending = []
    while _pending_checks:  # taken one by one: a check another thread queues meanwhile is read now or next time
        try:
            pending.append(_pending_checks.popleft())
        except IndexError:  # another thread's read took the last one
            break
    failed = []
    for device in dict.fromkeys(device_of(flag) for flag, _ in pending):
        checks = [(flag, fail) for flag, fail in pending if device_of(flag) == device]
        bad = to_numpy(namespace(device).stack([flag for flag, _ in checks]))
        failed += [fail for (_, fail), b in zip(checks, bad) if b]
    if failed:
        failed[0]()
