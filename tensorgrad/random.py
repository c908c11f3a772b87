"""Random generators (tg.Generator) and the state of a device's default generator, to save with
a checkpoint and restore on resume.

    g = tg.Generator().manual_seed(42)        # as torch.Generator: its own stream
    x = tg.randn(3, 4, generator=g)           # generator= on rand, randn, randint, randperm,
                                              # multinomial, normal, Tensor.uniform_/normal_, nn.init

    state = tg.random.get_rng_state("cpu")   # a JSON-able dict
    ...
    tg.random.set_rng_state(state, "cpu")    # the same numbers follow as after the get

Every device has its own default generator (seeded together by `tg.manual_seed`); these read
and write one of them.  A tg.Generator's own state: `g.get_state()` / `g.set_state(state)`, the
same kind of dict.  The state is the generator's own description: on the CPU, NumPy's PCG64
state dict; on the GPU, the Philox threads' bytes, base64-encoded (reading them waits for
the device).  A state saved on one device does not fit another's generator (ValueError).

Difference from PyTorch: `torch.random.get_rng_state()` / `torch.cuda.get_rng_state(device)`
return a ByteTensor; here the state is a plain dict, which goes through JSON (and so into a
checkpoint) as it is.  The device is an argument of both functions instead of a module per
device.
"""

from __future__ import annotations

from . import backend
from .backend.random import Generator

# The CPU's default generator, as torch.default_generator: what tg.rand & co. draw from without a
# generator=, and what tg.manual_seed seeds (and returns).  The object stays the same across seeds.
# Process-wide, as PyTorch's: every thread draws from it (a thread wanting its own stream passes a
# tg.Generator).
default_generator = backend.rng("cpu")


def get_rng_state(device: str = "cpu") -> dict:
    """The state of `device`'s generator, as a JSON-able dict."""
    return backend.rng(device).get_state()


def set_rng_state(state: dict, device: str = "cpu") -> None:
    """Restore `device`'s generator to `state` (a dict from get_rng_state on the same kind of device)."""
    backend.rng(device).set_state(state)


__all__ = ["Generator", "default_generator", "get_rng_state", "set_rng_state"]
