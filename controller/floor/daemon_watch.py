"""The uplink's ear on its daemon: is it alive, and has its journal failed (relayed in the heartbeat).

A stopped daemon journals nothing, so the floor cannot tell it from a quiet table by the rows; and a
journal fault is not journaled at all (it is the journal failing). The uplink runs beside the daemon,
so it subscribes to the daemon's ZeroMQ side topics ``<table>.heartbeat`` and ``<table>.journal_fault``
(docs/zeromq.md; the endpoint and, with ``security.curve_events``, an observer key from the table's
key folder) and says what it heard in its own heartbeat to the floor (controller/floor/alive.py),
at once when it changes. A daemon is stopped when its PUB socket disconnects (the socket monitor
says so the instant the process is gone) or when no heartbeat came for three of its intervals.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any, Final

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from controller.daemon.config import TableConfig

log = logging.getLogger("croupier.floor")

#: Heartbeat intervals of silence after which the daemon is taken as stopped.
MISSED: Final = 3


class DaemonWatch:
    """What the uplink knows of its daemon: :attr:`daemon` (alive, stopped, or None before the first
    word), :attr:`journal_fault`; :attr:`changed` is set whenever either changes."""

    def __init__(self, config: TableConfig, changed: asyncio.Event) -> None:
        self.config = config
        self.changed = changed
        self.daemon: str | None = None
        self.since: float | None = None
        self.journal_fault: dict[str, Any] | None = None
        self._heard = time.monotonic()
        self._interval = 1.0

    def fields(self) -> dict[str, Any]:
        """The heartbeat's fields about the daemon (docs/floor.md, "Alerts")."""
        return {"daemon": self.daemon, "daemon_at": self.since, "journal_fault": self.journal_fault}

    def _set(self, daemon: str, fault: dict[str, Any] | None = None, *, heard_fault: bool = False) -> None:
        """``daemon`` is alive or stopped; with ``heard_fault``, its journal fault is ``fault``."""
        changed = False
        if daemon != self.daemon:
            log.info("%s: the daemon is %s", self.config.table_id, daemon)
            self.daemon, self.since, changed = daemon, time.time(), True
        if heard_fault and fault != self.journal_fault:
            self.journal_fault, changed = fault, True
        if changed:
            self.changed.set()

    def _heard_from(self, topic: str, body: dict[str, Any]) -> None:
        self._heard = time.monotonic()
        if topic.endswith(".journal_fault"):
            self._set("alive", {k: body.get(k) for k in ("at", "file", "error")}, heard_fault=True)
            return
        self._interval = float(body.get("interval") or 1.0)
        fault = body.get("journal_fault")
        known = self.journal_fault or {"at": body.get("at")}  # the time it first was heard stays
        now = {"at": known.get("at"), **fault} if isinstance(fault, dict) else None
        self._set("alive", now, heard_fault=True)

    async def run(self, stop: asyncio.Event) -> None:
        """Listen until ``stop``."""
        ctx = zmq.asyncio.Context()
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        table = self.config.table_id
        for topic in ("heartbeat", "journal_fault"):
            sub.setsockopt(zmq.SUBSCRIBE, f"{table}.{topic}".encode())
        if self.config.spec.security.curve_events:
            from controller.daemon.client import local_key

            local_key(self.config, "observer", "uplink").secure(sub)
        monitor = sub.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        sub.connect(self.config.spec.zeromq.pub)
        poller = zmq.asyncio.Poller()
        poller.register(sub, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        try:
            while not stop.is_set():
                ready = dict(await poller.poll(200))
                if monitor in ready:
                    event = parse_monitor_message(await monitor.recv_multipart())
                    if event["event"] == zmq.EVENT_DISCONNECTED:
                        self._set("stopped")
                if sub in ready:
                    frames = await sub.recv_multipart()
                    with contextlib.suppress(ValueError, IndexError):
                        self._heard_from(bytes(frames[0]).decode(), json.loads(frames[1]))
                if time.monotonic() - self._heard > MISSED * max(self._interval, 1.0):
                    self._set("stopped")
        finally:
            sub.disable_monitor()
            monitor.close(0)
            sub.close(0)
            ctx.term()
