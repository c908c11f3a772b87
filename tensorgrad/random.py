"""The random state of a device's generator, to save with a checkpoint and restore on resume.

    state = tg.random.get_rng_state("cpu")   # a JSON-able dict
    ...
    tg.random.set_rng_state(state, "cpu")    # the same numbers follow as after the get

Every device has its own generator (seeded together by `tg.manual_seed`); these read and
write one of them.  The state is the generator's own description: on the CPU, NumPy's PCG64
state dict; on the GPU, the Philox threads' bytes, base64-encoded (reading them waits for
the device).  A state saved on one device does not fit another's generator (ValueError).

Difference from PyTorch: `torch.random.get_rng_state()` / `torch.cuda.get_rng_state(device)`
return a ByteTensor; here the state is a plain dict, which goes through JSON (and so into a
checkpoint) as it is.  The device is an argument of both functions instead of a module per
device.
"""

from __future__ import annotations

from . import backend


def get_rng_state(device: str = "cpu") -> dict:
    """The state of `device`'s generator, as a JSON-able dict."""
    return backend.rng(device).get_state()


def set_rng_state(state: dict, device: str = "cpu") -> None:
    """Restore `device`'s generator to `state` (a dict from get_rng_state on the same kind of device)."""
    backend.rng(device).set_state(state)


__all__ = ["get_rng_state", "set_rng_state"]
