"""Test configuration: one hypothesis profile for the suite (no deadlines: CI machines are noisy)."""

from __future__ import annotations

import os
import sys
import threading
import traceback

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "croupier", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("croupier")

#: Shared fixtures of the shoe tests (a raw shoe on a pty, a reader started against it).
pytest_plugins = ["tests.shoe_support"]


def pytest_unconfigure(config: pytest.Config) -> None:
    """A test that leaves a non-daemon thread running makes the interpreter wait for it at exit for
    ever (CI would hang until its time limit): name the threads and where they are, and exit 3."""
    left = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    for thread in left:
        thread.join(5)
    left = [t for t in left if t.is_alive()]
    if not left:
        return
    frames = sys._current_frames()
    lines = ["tests left non-daemon threads running; pytest would never exit:"]
    for thread in left:
        frame = frames.get(thread.ident or -1)
        where = "".join(traceback.format_stack(frame)[-3:]) if frame is not None else "  (no frame)\n"
        lines.append(f"- {thread.name}:\n{where}")
    sys.stdout.flush()
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    os._exit(3)
