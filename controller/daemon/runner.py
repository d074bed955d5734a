"""Running a daemon: in the foreground (``croupier run``) or on a thread (tests, ``--through-daemon``)."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from types import TracebackType

from controller.daemon.server import Daemon

log = logging.getLogger("croupier.daemon")


#: How soon a thread waiting for the GIL gets it from a busy one (Python's default is 5 ms). The shoe is
#: read on the loop, but a panel's worker thread (or the pump thread of a shoe port without an fd) needs
#: the GIL for each input it posts; with the loop busy (a request flood) each wait would otherwise add
#: up to 5 ms to that input (bench/flood_latency.py).
SWITCH_INTERVAL = 0.0005


def run_foreground(daemon: Daemon) -> None:
    """Serve until SIGINT or SIGTERM (the journal is already replayed by ``daemon.open()``)."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    asyncio.run(daemon.serve(install_signals=True))


class DaemonThread:
    """A daemon serving on its own thread and loop; a context manager that stops it on exit.

    The daemon is the real one (journal, sockets, shoe reader); only the
    process boundary is missing, which is what in-process tests and the
    through-daemon scenario runner want for speed.
    """

    def __init__(self, daemon: Daemon, timeout: float = 30.0) -> None:
        self.daemon = daemon
        self.timeout = timeout
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"daemon {daemon.config.table_id}", daemon=True
        )

    def _run(self) -> None:
        try:
            asyncio.run(self.daemon.serve())
        except BaseException as exc:  # reported by start()/stop() on the caller's thread
            self.error = exc
            self.daemon.ready.set()

    def start(self) -> DaemonThread:
        if self.daemon.service is None:
            self.daemon.open()
        self._thread.start()
        if not self.daemon.ready.wait(self.timeout):
            raise TimeoutError(f"daemon not ready after {self.timeout} s")
        if self.error is not None:
            raise self.error
        return self

    def stop(self) -> None:
        self.daemon.request_stop()
        self._thread.join(self.timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"daemon did not stop within {self.timeout} s")

    def __enter__(self) -> DaemonThread:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
