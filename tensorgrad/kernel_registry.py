"""The kernel seam: which fused kernel (tensorgrad/kernels/) runs in place of a reference op on a
device.  A kernel names the reference op it `replaces` and says in `accepts(*args, **params)`
whether it takes these arguments; `Function.apply` (autograd.py) looks the op up in the device's
table, filled on the device's first op by the loader the kernels registered for it.  This module
imports nothing of tensorgrad."""

from __future__ import annotations

# Process-wide, as the kernel mode that fills them (tg.kernels.use switches the whole library):
_kernel_tables: dict = {}  # device -> {reference class: kernel class}, filled on the device's first op
_kernel_loaders: dict = {}  # device -> loader(device) -> the device's kernel classes


def register_kernel_loader(device: str, loader):
    """Have `loader(device)` give the kernel classes of `device` when the device runs its first op
    (and again after `clear_kernels`).  tensorgrad/kernels/ registers one for "cpu" and "cuda", so a
    device's kernels are imported (and compiled) only when that device is used."""
    _kernel_loaders[device] = loader
    _kernel_tables.pop(device, None)


def register_kernel(kernel, device: str):
    """Run `kernel` in place of the reference op it names (`kernel.replaces`) on `device`, for the
    inputs its `kernel.accepts(*args, **params)` takes.  `kernel(xp)` must make an object that
    works as the reference's does (for a Function: forward and backward on raw arrays).  It lasts
    until `clear_kernels` (a switch of `tg.kernels.use`), after which the device's loader alone
    fills its table again."""
    kernel_table(device)[kernel.replaces] = kernel


def kernel_table(device: str) -> dict:
    """{reference class: kernel class} of `device`, loading its kernels on first use."""
    table = _kernel_tables.get(device)
    if table is None:
        loader = _kernel_loaders.get(device)
        kernels = loader(device) if loader is not None else ()
        table = _kernel_tables[device] = {kernel.replaces: kernel for kernel in kernels}
    return table


def clear_kernels():
    """Forget every device's kernels: each loader runs again at its device's next op."""
    _kernel_tables.clear()


def dispatch(reference, device: str, *args, **params):
    """The class to run for `reference` on `device` with these arguments: the device's kernel when
    it has one that accepts them, else `reference` itself (what `Function.apply` does for an op;
    this is for the ops and optimizers that call another op themselves)."""
    kernel = kernel_table(device).get(reference)
    return kernel if kernel is not None and kernel.accepts(*args, **params) else reference
