"""Clients of a table daemon: the command client and the clone-pattern subscriber.

Both are what ``croupier ctl``, ``croupier watch``, the demo's simulated
players and the tests use, so the documented protocol (docs/commands.md,
docs/zeromq.md) is exercised by our own tools every day.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import zmq


class DaemonUnavailable(RuntimeError):
    """No reply within the timeout: the daemon is not running or not on that endpoint."""


class CommandClient:
    """Sends commands to a daemon's command socket (a REQ socket, remade after a timeout)."""

    def __init__(self, endpoint: str, timeout: float = 10.0, ctx: zmq.Context[Any] | None = None) -> None:
        self.endpoint = endpoint
        self.timeout_ms = int(timeout * 1000)
        self._ctx = ctx or zmq.Context.instance()
        self._sock: zmq.Socket[bytes] | None = None

    def _socket(self) -> zmq.Socket[bytes]:
        if self._sock is None:
            sock = self._ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RCVTIMEO, self.timeout_ms)
            sock.setsockopt(zmq.SNDTIMEO, self.timeout_ms)
            sock.connect(self.endpoint)
            self._sock = sock
        return self._sock

    def send_raw(self, payload: bytes) -> dict[str, Any]:
        sock = self._socket()
        try:
            sock.send(payload)
            reply: dict[str, Any] = json.loads(sock.recv())
        except zmq.Again:
            self.close()  # a REQ socket that lost its reply cannot be used again
            raise DaemonUnavailable(
                f"no reply from {self.endpoint} within {self.timeout_ms / 1000:g} s"
            ) from None
        return reply

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return self.send_raw(json.dumps({"cmd": cmd, **fields}).encode())

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None


def request_snapshot(
    endpoint: str, since: int | None = None, timeout: float = 10.0, ctx: zmq.Context[Any] | None = None
) -> dict[str, Any]:
    """Ask the snapshot socket for the state (and the events after ``since`` if it still holds them)."""
    client = CommandClient(endpoint, timeout, ctx)
    try:
        return client.send_raw(json.dumps({} if since is None else {"since": since}).encode())
    finally:
        client.close()


class Subscriber:
    """The clone pattern: subscribe, take a snapshot, then apply only newer events, re-syncing on a gap.

    :meth:`events` yields ``("snapshot", reply)`` whenever it (re)synced and
    ``("event", payload)`` for each event in ``seq`` order, never one twice
    and never with a gap: a gap triggers a new snapshot request (with
    ``since``, so the daemon returns the missed events if it still has them).
    Side topics (``<table>.lamps``, ``<table>.shoe_status``: no ``seq``) are
    yielded as ``("side", payload)`` with ``side=True`` and skipped otherwise.
    """

    def __init__(
        self,
        pub: str,
        snapshot: str,
        table: str = "",
        timeout: float = 10.0,
        ctx: zmq.Context[Any] | None = None,
        side: bool = False,
    ) -> None:
        self._ctx = ctx or zmq.Context.instance()
        self.side = side
        self.snapshot_endpoint = snapshot
        self.timeout = timeout
        self.sub = self._ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 100_000)
        self.sub.setsockopt(zmq.SUBSCRIBE, f"{table}.".encode() if table else b"")
        self.sub.connect(pub)
        self.seq: int | None = None
        self.gaps = 0

    def sync(self) -> dict[str, Any]:
        reply = request_snapshot(self.snapshot_endpoint, self.seq, self.timeout, self._ctx)
        if not reply.get("ok"):
            raise RuntimeError(f"snapshot refused: {reply.get('error')}")
        return reply

    def events(self, timeout: float | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield forever (or until nothing arrived for ``timeout`` seconds)."""
        poller = zmq.Poller()
        poller.register(self.sub, zmq.POLLIN)
        if self.seq is None:
            yield from self._resync()
        while True:
            if not poller.poll(None if timeout is None else int(timeout * 1000)):
                return
            _topic, data = self.sub.recv_multipart()
            payload = json.loads(data)
            if "seq" not in payload:  # a side topic: state derived from events, not numbered
                if self.side:
                    yield "side", payload
                continue
            seq = payload["seq"]
            assert self.seq is not None
            if seq <= self.seq:
                continue  # already in the snapshot (published while we were syncing)
            if seq != self.seq + 1:
                self.gaps += 1
                yield from self._resync()
                if seq <= (self.seq or 0):
                    continue
                if seq != (self.seq or 0) + 1:
                    continue  # still ahead: the next message re-checks; the snapshot has it all
            self.seq = seq
            yield "event", payload

    def _resync(self) -> Iterator[tuple[str, dict[str, Any]]]:
        reply = self.sync()
        missed = reply.pop("events", None)
        if self.seq is not None and missed is not None:
            for payload in missed:
                if payload["seq"] == self.seq + 1:
                    self.seq = payload["seq"]
                    yield "event", payload
            if self.seq == reply["seq"]:
                return
        self.seq = reply["seq"]
        yield "snapshot", reply

    def close(self) -> None:
        self.sub.close(linger=0)
