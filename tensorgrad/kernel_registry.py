"""The kernel seam: which fused kernel (tensorgrad/kernels/) runs in place of a reference op on a
device.  A kernel names the reference op it `replaces` and says in `accepts(*args, **params)`
whether it takes these arguments.  A device's table holds, per reference op, its kernels in order:
`Function.apply` (autograd.py) runs the first whose `accepts` holds, else the reference, so each
alternative path of an op (a fused one for short sequences, one in parts for long ones, ...) is a
kernel of its own, whose forward and backward need not ask again which path they are on.  The
table is filled on the device's first op by the loader the kernels registered for it.  This module
imports nothing of tensorgrad."""

from __future__ import annotations

# Process-wide, as the kernel mode that fills them (tg.kernels.use switches the whole library):
_kernel_tables: dict = {}  # device -> {reference class: (kernel class, ...) in order}, filled on the device's first op
_kernel_loaders: dict = {}  # device -> loader(device) -> the device's kernel classes, in order


def register_kernel_loader(device: str, loader):
    """Have `loader(device)` give the kernel classes of `device` when the device runs its first op
    (and again after `clear_kernels`).  tensorgrad/kernels/ registers one for "cpu" and "cuda", so a
    device's kernels are imported (and compiled) only when that device is used.  Of the kernels
    that replace one op, the first in the loader's order that accepts the inputs runs."""
    _kernel_loaders[device] = loader
    _kernel_tables.pop(device, None)


def register_kernel(kernel, device: str):
    """Run `kernel` in place of the reference op it names (`kernel.replaces`) on `device`, for the
    inputs its `kernel.accepts(*args, **params)` takes (ahead of the device's other kernels of that
    op: they run for the inputs it does not take).  `kernel(xp)` must make an object that works as
    the reference's does (for a Function: forward and backward on raw arrays).  It lasts until
    `clear_kernels` (a switch of `tg.kernels.use`), after which the device's loader alone fills its
    table again."""
    table = kernel_table(device)
    table[kernel.replaces] = (kernel, *table.get(kernel.replaces, ()))


def kernel_table(device: str) -> dict:
    """{reference class: (kernel class, ...) in order} of `device`, loading its kernels on first use."""
    table = _kernel_tables.get(device)
    if table is None:
        loader = _kernel_loaders.get(device)
        table = {}
        for kernel in loader(device) if loader is not None else ():
            table[kernel.replaces] = (*table.get(kernel.replaces, ()), kernel)
        _kernel_tables[device] = table
    return table


def clear_kernels():
    """Forget every device's kernels: each loader runs again at its device's next op."""
    _kernel_tables.clear()


def dispatch(reference, device: str, *args, **params):
    """The class to run for `reference` on `device` with these arguments: the first of the device's
    kernels for it that accepts them, else `reference` itself (what `Function.apply` does for an
    op; this is for the ops and optimizers that call another op themselves)."""
    for kernel in kernel_table(device).get(reference, ()):
        if kernel.accepts(*args, **params):
            return kernel
    return reference
