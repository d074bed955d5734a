"""One way for a test to wait on a process or a thread it started: poll a check until it holds.

Why polling: the daemons, simulators and views under test run in other processes or threads and
say nothing when a state is reached; a test reads their status (a status call, a drawn view) again
until it shows what it waits for. The limit only bounds a failure, so it is generous: on a loaded
2-core machine a daemon's start takes several seconds, and a passing test never waits it out.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(check: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Until ``check()`` is true; else fail, naming ``what`` was waited for."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.02)
