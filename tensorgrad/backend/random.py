"""Random numbers: one seeded generator per device, and its state (for checkpoints).

`manual_seed(s)` seeds every device, the ones used later too: device d draws from the stream
seeded with s + DEVICES.index(d), so the devices' streams differ but all follow from one seed.
"""

from __future__ import annotations

import base64

import numpy as np

from . import strict
from .cuda_setup import load_cupy
from .devices import DEVICES
from .host import to_numpy

# The GPU generator's number of per-thread states: fixed, so a seed gives the same numbers on any
# GPU and a saved state restores on any GPU (CuPy's default depends on the GPU's SM count).
# A multiple of 256 (CuPy launches 256-thread blocks over the states); 64 bytes each for Philox.
_CUDA_RNG_THREADS = 1 << 16


class _DeviceRNG:
    """One seeded generator per device, with the few draws the engine needs.

    NumPy: a PCG64 Generator.  CuPy: a Generator on the counter-based Philox4x32-10 bit generator
    (cuRAND's device API, compiled into CuPy, as in PyTorch), whose integers are drawn on the
    device without a host read (CuPy's RandomState.randint reads a count back in a loop), and
    whose whole state is one device array, so it can be saved and restored exactly.
    """

    def __init__(self, device: str, seed: int):
        self.device = device
        if device == "cuda":
            cupy = load_cupy()
            self._gen = cupy.random.Generator(cupy.random.Philox4x3210(seed, size=_CUDA_RNG_THREADS))
        else:
            self._gen = np.random.Generator(np.random.PCG64(seed))

    def _wrap(self, a):
        return strict.from_numpy(a) if self.device == "strict" else a

    @property
    def generator(self):
        """The NumPy (cpu, strict) or CuPy (cuda) Generator itself, for a kernel that draws the same
        numbers as `uniform` straight from its bit stream (kernels/cpu.py's keep_mask)."""
        return self._gen

    def uniform(self, shape, dtype):
        """U[0, 1) of the given float dtype."""
        return self._wrap(self._gen.random(shape, dtype=dtype))

    def normal(self, shape, dtype):
        return self._wrap(self._gen.standard_normal(shape, dtype=dtype))

    def integers(self, low, high, shape):
        """Uniform int64 in [low, high)."""
        return self._wrap(self._gen.integers(low, high, size=shape, dtype=np.int64))

    def get_state(self) -> dict:
        """A JSON-able description of the generator's state (for checkpoints).

        On the GPU: the bytes of every thread's Philox state (CuPy 14 keeps them in the bit
        generator's `_state` array), base64-encoded; reading them waits for the device."""
        if self.device != "cuda":
            return self._gen.bit_generator.state
        bits = self._gen.bit_generator
        raw = to_numpy(bits._state)
        return {"bit_generator": type(bits).__name__, "threads": _CUDA_RNG_THREADS,
                "state": base64.b64encode(raw.tobytes()).decode("ascii")}  # fmt: skip

    def set_state(self, state: dict):
        if self.device != "cuda":
            self._gen.bit_generator.state = state
            return
        bits = self._gen.bit_generator
        name = state.get("bit_generator") if isinstance(state, dict) else None
        if name != type(bits).__name__ or state.get("threads") != _CUDA_RNG_THREADS:
            raise ValueError(
                f"this random state was saved on another device (generator {name!r}); the GPU's is "
                f"{type(bits).__name__} with {_CUDA_RNG_THREADS} threads"
            )
        raw = np.frombuffer(base64.b64decode(state["state"]), dtype=np.int8)
        if raw.size != bits._state.size:
            raise ValueError(f"the saved GPU random state has {raw.size} bytes, this generator {bits._state.size}")
        bits._state[...] = load_cupy().asarray(raw)


_seed = None  # None: seeded from the OS on first use
_rngs: dict = {}


_SEED_RANGE = 2**64


def manual_seed(seed: int):
    """Seed the generators of every device (the ones made later too).

    As PyTorch: any integer in [-2**63, 2**64); a negative seed is taken modulo 2**64, so
    manual_seed(-1) is manual_seed(2**64 - 1)."""
    global _seed
    seed = int(seed)
    if not -(2**63) <= seed < _SEED_RANGE:
        raise RuntimeError(f"Overflow when unpacking long: seed {seed} must be in [-2**63, 2**64)")
    _seed = seed % _SEED_RANGE
    _rngs.clear()


def rng(device: str) -> _DeviceRNG:
    gen = _rngs.get(device)
    if gen is None:
        seed = _seed if _seed is not None else int(np.random.SeedSequence().entropy % (2**63))
        # A different stream per device, but reproducible from one seed.
        gen = _rngs[device] = _DeviceRNG(device, (seed + DEVICES.index(device)) % _SEED_RANGE)
    return gen
