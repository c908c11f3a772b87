"""Shared test set-up: hypothesis profiles, device parametrisation, optional torch."""

from __future__ import annotations

import hypothesis_profiles
import pytest

import tensorgrad as tg
from tensorgrad import backend

hypothesis_profiles.load()

# Devices every engine test runs on: NumPy, the strict CuPy-like guard, and a real GPU if present.
DEVICES = ["cpu", "strict"] + (["cuda"] if tg.cuda.is_available() else [])
# ... and the paths: on "cpu" (and "cuda") the fused kernels run by default (tensorgrad/kernels/);
# "cpu-reference" is the CPU with the reference ops (tg.kernels.use("reference")).  "strict" always
# runs the reference.
_PATHS = ["cpu", "cpu-reference", "strict"] + (["cuda", "cuda-reference"] if tg.cuda.is_available() else [])


@pytest.fixture(params=_PATHS)
def device(request):
    name, _, path = request.param.partition("-")
    previous = tg.kernels.mode()
    tg.kernels.use(path or "kernels")
    yield name
    tg.kernels.use(previous)


@pytest.fixture(autouse=True)
def _seed():
    tg.manual_seed(0)
    yield
    backend._pending_checks.clear()  # a device check a test left unread must not fail the next test
