"""Random numbers: the Generator class, and the default generator of every device.

A `Generator` owns one seeded stream on one device and makes the few draws the engine needs.
The default generators (`rng(device)`, one per device, what tg.rand & co. draw from when no
`generator=` is given) are instances of the same class.  `manual_seed(s)` seeds every device's
default, the ones made later too: device d's default is seeded with s + DEVICES.index(d), so the
devices' streams differ but all follow from one seed (the CPU's is seeded with s itself).
"""

from __future__ import annotations

import base64

import numpy as np

from . import strict
from .cuda_setup import load_cupy
from .devices import DEVICES, normalize_device
from .host import to_numpy

# The GPU generator's number of per-thread states: fixed, so a seed gives the same numbers on any
# GPU and a saved state restores on any GPU (CuPy's default depends on the GPU's SM count).
# A multiple of 256 (CuPy launches 256-thread blocks over the states); 64 bytes each for Philox.
_CUDA_RNG_THREADS = 1 << 16

_SEED_RANGE = 2**64
# What a new torch.Generator() is seeded with (c10's default_rng_seed_val): a new Generator here
# starts from the same seed, so initial_seed() agrees; the numbers drawn do not (other algorithms).
DEFAULT_SEED = 67280421310721


def check_seed(seed) -> int:
    """PyTorch's seed rule: any integer in [-2**63, 2**64); a negative seed is taken modulo 2**64,
    so -1 is 2**64 - 1.  Outside it, PyTorch's ValueError ("Overflow when unpacking long long")."""
    seed = int(seed)
    if not -(2**63) <= seed < _SEED_RANGE:
        raise ValueError(f"Overflow when unpacking long long: seed {seed} must be in [-2**63, 2**64)")
    return seed % _SEED_RANGE


def _os_seed() -> int:
    """A non-deterministic seed, from the operating system's entropy."""
    return int(np.random.SeedSequence().entropy % (2**63))


class Generator:
    """One seeded stream of random numbers on one device, as torch.Generator.

        g = Generator("cpu").manual_seed(42)   # manual_seed returns the generator
        g.uniform((3,), float32)               # the backend draw behind tg.rand(3, generator=g)

    NumPy (cpu, strict): a PCG64 Generator.  CuPy (cuda): a Generator on the counter-based
    Philox4x32-10 bit generator (cuRAND's device API, compiled into CuPy, as in PyTorch), whose
    numbers are drawn on the device without a host read (CuPy's RandomState.randint reads a
    count back in a loop), and whose whole state is one device array, so it can be saved and
    restored exactly.  A seed names the stream completely: the same seed gives the same numbers on
    every run and machine (of the same kind of device).  The draws are not PyTorch's stream.

    The state (`get_state`) is a JSON-able dict, where PyTorch's is a ByteTensor: on the CPU
    NumPy's PCG64 state dict, on the GPU the Philox threads' bytes, base64-encoded.
    """

    def __init__(self, device="cpu"):
        self.device = normalize_device(device)
        self._build(DEFAULT_SEED)

    def _build(self, seed: int):
        """A fresh stream from `seed` (an integer in [0, 2**64))."""
        self._initial_seed = seed
        if self.device == "cuda":
            cupy = load_cupy()
            self._gen = cupy.random.Generator(cupy.random.Philox4x3210(seed, size=_CUDA_RNG_THREADS))
        else:
            self._gen = np.random.Generator(np.random.PCG64(seed))

    def __repr__(self):
        return f"Generator(device={self.device!r}, initial_seed={self._initial_seed})"

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed` (PyTorch's range: [-2**63, 2**64), negatives modulo
        2**64); returns the generator, as PyTorch's does, so `g = Generator().manual_seed(0)`."""
        self._build(check_seed(seed))
        return self

    def seed(self) -> int:
        """Restart from a non-deterministic seed (the OS's entropy), and return that seed."""
        seed = _os_seed()
        self._build(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream was last started from (manual_seed, seed, or the default)."""
        return self._initial_seed

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

    def permutation(self, n: int):
        """A uniformly random permutation of 0..n-1 (int64).  NumPy: its Fisher-Yates shuffle.
        CuPy's Generator has none: the ranks of n float64 uniforms drawn on the device, as
        PyTorch's CUDA randperm sorts random keys (a tie among n keys, probability about
        n**2 / 2**54, leaves that pair in index order)."""
        if self.device == "cuda":
            return self._gen.random((n,), dtype=np.float64).argsort().astype(np.int64)
        return self._wrap(self._gen.permutation(n).astype(np.int64, copy=False))

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

    def set_state(self, state: dict) -> Generator:
        """Restore a state from get_state (of the same kind of device); returns the generator."""
        if self.device != "cuda":
            self._gen.bit_generator.state = state
            return self
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
        return self


# Process-wide, as PyTorch's default generators (tg.manual_seed seeds them for every thread):
_seed = None  # None: each default generator is seeded from the OS when it is made
_rngs: dict = {}  # device -> its default Generator


def manual_seed(seed: int):
    """Seed the default generators of every device (the ones made later too); returns the CPU's."""
    global _seed
    _seed = check_seed(seed)
    for device, gen in _rngs.items():
        gen._build((_seed + DEVICES.index(device)) % _SEED_RANGE)
    return rng("cpu")


def rng(device: str) -> Generator:
    """The default generator of `device`, made on first use."""
    gen = _rngs.get(device)
    if gen is None:
        gen = Generator.__new__(Generator)
        gen.device = device
        # A different stream per device, but reproducible from one seed.
        gen._build(_os_seed() if _seed is None else (_seed + DEVICES.index(device)) % _SEED_RANGE)
        _rngs[device] = gen  # only once built: a device that failed to load is tried again next time
    return gen


def generator_for(device: str, generator, op: str) -> Generator:
    """The generator a draw on `device` uses: `generator` if given (of that device, as PyTorch
    checks), else the device's default."""
    if generator is None:
        return rng(device)
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}(): generator must be a tensorgrad Generator, got {type(generator).__name__}")
    if generator.device != device:
        raise RuntimeError(f"Expected a '{device}' device type for generator but found '{generator.device}'")
    return generator
