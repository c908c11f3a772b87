"""Shared test set-up: hypothesis profiles, device parametrisation, optional torch."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import tensorgrad as tg
from tensorgrad import backend

# Property tests take the `device` fixture, which is a constant string per test, and the
# autouse seed need not rerun per example: function-scoped fixtures are safe here.
_FIXTURES_OK = [HealthCheck.function_scoped_fixture]

# CI must not flake: derandomized (the same examples every run) and bounded.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, *_FIXTURES_OK],
)
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=_FIXTURES_OK)
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_FIXTURES_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

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
