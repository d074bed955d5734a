"""Test configuration: one hypothesis profile for the suite (no deadlines: CI machines are noisy)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "croupier", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("croupier")

#: Shared fixtures of the shoe tests (a raw shoe on a pty, a reader started against it).
pytest_plugins = ["tests.shoe_support"]
