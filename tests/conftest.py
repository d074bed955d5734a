"""Test configuration: one hypothesis profile for the suite (no deadlines: CI machines are noisy), and
a run that leaves a thread behind fails loudly, whether pytest runs the tests itself or in xdist workers."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import traceback
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "croupier", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("croupier")

#: Shared fixtures: the shoe tests' (a raw shoe on a pty, a reader started against it), the floor's servers.
pytest_plugins = ["tests.shoe_support", "tests.server_fixtures"]

#: Where the controller of an xdist run keeps what its workers reported as threads left running.
THREADS_LEFT = pytest.StashKey[list[str]]()


@pytest.fixture(autouse=True)
def stops_as_they_were() -> Any:
    """Ctrl-C's and a kill's handlers given back as they were after each test: a run stopped in this process
    leaves SIGTERM ignored (``controller.simulation.montecarlo.give_back``: the process is on its way out),
    and an ignored signal is inherited by every command a later test starts, which a kill then no longer
    stops (a review, 2026-12-07: a test of a whole group's kill hung after an in-process stopped run)."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in before.items():
        if handler is not None and signal.getsignal(signum) is not handler:  # None: not Python's to set
            signal.signal(signum, handler)


@pytest.fixture(autouse=True)
def logging_as_it_was() -> Any:
    """The root logger's handlers and level given back as they were after each test: a command run in this
    process (``croupier run``, a floor service) sets up logging on the stderr of its moment, a test's
    captured stream, closed once that test ends; a later test's command then found a handler there (so set
    up none of its own) and wrote "--- Logging error ---" into the stderr it checks, in whichever test the
    workers' share of files put after it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    # pytest's own capturing handlers come and go with each phase of a test: they are pytest's to remove.
    for handler in [h for h in root.handlers if h not in handlers and not _pytests(h)]:
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        if handler not in root.handlers and not _pytests(handler):
            root.addHandler(handler)
    root.setLevel(level)


def _pytests(handler: logging.Handler) -> bool:
    return type(handler).__module__.startswith("_pytest")


def threads_left() -> str:
    """The non-daemon threads still running after a 5 s grace each, named with where they are; "" if none.
    Such a thread makes the interpreter wait for it at exit for ever (CI would hang until its time limit)."""
    left = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    for thread in left:
        thread.join(5)
    left = [t for t in left if t.is_alive()]
    frames = sys._current_frames()
    lines = []
    for thread in left:
        frame = frames.get(thread.ident or -1)
        where = "".join(traceback.format_stack(frame)[-3:]) if frame is not None else "  (no frame)\n"
        lines.append(f"- {thread.name}:\n{where}")
    return "".join(lines)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In an xdist worker: the check is made here, while the worker can still tell the controller (its
    report goes out right after this hook); the controller fails the run in :func:`pytest_unconfigure`."""
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["threads_left"] = threads_left()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """In the controller of an xdist run: keep what a finished worker reported."""
    left = getattr(node, "workeroutput", {}).get("threads_left", "")
    if left:
        node.config.stash.setdefault(THREADS_LEFT, []).append(f"[{node.gateway.id}]\n{left}")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Name the threads a test left running (here, or as reported by xdist's workers) and exit 3."""
    if hasattr(config, "workeroutput"):  # a worker: the controller names them; the worker must not hang
        if config.workeroutput.get("threads_left"):
            os._exit(3)
        return
    left = "".join(config.stash.get(THREADS_LEFT, [])) + threads_left()
    if not left:
        return
    sys.stdout.flush()
    sys.stderr.write("tests left non-daemon threads running; pytest would never exit:\n" + left)
    sys.stderr.flush()
    os._exit(3)
