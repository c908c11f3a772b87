"""The hypothesis profiles of this suite, loaded by conftest.py, and again by whatever imports a
library that loads a profile of its own (PyTorch's internal test utilities do, on import)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Property tests take the `device` fixture, which is a constant string per test, and the
# autouse seed need not rerun per example: function-scoped fixtures are safe here.
_FIXTURES_OK = [HealthCheck.function_scoped_fixture]

def _register():
    """Our profiles, (re)registered: PyTorch's test utilities register profiles of their own on
    import, one of them named "dev", which would replace ours of that name."""
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


def load():
    """CI: the derandomized `ci` profile; HYPOTHESIS_PROFILE=thorough for 500 examples; else `dev`."""
    _register()
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
