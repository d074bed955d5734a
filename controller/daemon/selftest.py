"""The daemon's self-test: no request is answered before the table knows it can work.

In order (docs/daemon.md, "Start-up"); the sockets are bound between keys and devices, so the
devices' start-up statuses are published, while requests wait until the self-test is over:

1. configuration: the table file was validated whole (``croupier run`` exits 2 otherwise);
2. journal: opened, its header matches the table, every row replayed (exit 3 otherwise);
3. keys: the server pair and every authorised key readable (exit 4 otherwise);
4. devices: the panels' pins opened (exit 4 otherwise), and the shoe said hello: a
   protocol v1 shoe its HELLO, a plain-protocol one its port opened, within
   ``hello_timeout`` seconds.

A shoe that does not say hello in time does not stop the start (the
operator must still be able to see and command the table), but it is never
silent: the shoe goes offline through the journal ("shoe: no hello within
N s of start (self-test)"), which halts play exactly as a shoe unplugged
mid-shift does, it is logged as an error, reported by ``status`` under
``selftest`` and in systemd's STATUS line, and cleared by the shoe's first
HELLO or connection.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

#: Seconds the self-test waits for the shoe's hello (a v1 shoe sends HELLO as soon as the line opens).
HELLO_TIMEOUT = 5.0


@dataclass
class SelfTest:
    """The results of the start-up checks, one line each, and the wait for the shoe's hello."""

    checks: dict[str, str] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    _hello: asyncio.Event | None = None
    _hello_status: str = "hello"

    def passed(self, check: str, detail: str) -> None:
        """``check`` passed (perhaps late: its fault, if it had one, is cleared)."""
        self.checks[check] = f"ok: {detail}"
        self.faults = [f for f in self.faults if not f.startswith(f"{check}:")]

    def failed(self, check: str, detail: str) -> None:
        self.checks[check] = f"FAULT: {detail}"
        self.faults.append(f"{check}: {detail}")

    def expect_hello(self, protocol: str) -> None:
        """Arm the wait (on the loop thread): a v1 shoe's HELLO, or a plain shoe's port opening."""
        self._hello = asyncio.Event()
        self._hello_status = "hello" if protocol == "v1" else "connected"

    def observe(self, status: str, detail: dict[str, Any]) -> bool:
        """A shoe status on the loop thread; True when it is the hello (the awaited one ends the wait)."""
        if self._hello is None or status != self._hello_status:
            return False
        if not self._hello.is_set():
            said = " ".join(f"{k} {v}" for k, v in detail.items() if k != "port")
            self.checks["shoe"] = f"ok: {status} {said}".rstrip()
            self.faults = [f for f in self.faults if not f.startswith("shoe:")]
            self._hello.set()
        return True

    async def wait_hello(self, timeout: float) -> bool:
        """True when the shoe said hello within ``timeout`` seconds."""
        assert self._hello is not None
        try:
            await asyncio.wait_for(self._hello.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def summary(self) -> str:
        """One line for logs and systemd's STATUS."""
        if self.faults:
            return "self-test FAULT: " + "; ".join(self.faults)
        return "self-test passed: " + ", ".join(self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": not self.faults, "checks": dict(self.checks)}
