"""Clients of a table daemon: the command client and the clone-pattern subscriber.

Both are what ``croupier ctl``, ``croupier watch``, the demo's simulated
players and the tests use, so the documented protocol (docs/commands.md,
docs/zeromq.md) is exercised by our own tools every day.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import zmq

from controller.daemon.config import TableConfig
from controller.daemon.keys import ClientCredentials, KeyFolder, Role, client_credentials, local_client


class DaemonUnavailable(RuntimeError):
    """No reply within the timeout: the daemon is not running or not on that endpoint."""


def local_key(
    config: TableConfig, role: Role = "operator", name: str | None = None, state_dir: Path | None = None
) -> ClientCredentials:
    """A key for a tool on the table's own machine (demo, tests, scenario runner), made on first use
    in the table's key folder (``state_dir``: the one the daemon runs with, if overridden)."""
    return local_client(KeyFolder(config.key_folder(state_dir)), name or f"local-{role}", role)


def add_key_arguments(parser: argparse.ArgumentParser) -> None:
    """``--key`` and ``--server-key`` for the tools that talk to a table (ctl, watch)."""
    parser.add_argument(
        "--key",
        default=os.environ.get("CROUPIER_KEY"),
        help="your CURVE key (a .key_secret made by `croupier keys new`); default $CROUPIER_KEY. "
        "Without one the command socket answers nothing",
    )
    parser.add_argument(
        "--server-key",
        default=os.environ.get("CROUPIER_SERVER_KEY"),
        help="the table's public key (server.key); default $CROUPIER_SERVER_KEY, else server.key beside "
        "--key, else the one in the table file's key folder",
    )


def credentials(
    key: str | None, server_key: str | None, table: TableConfig | None
) -> ClientCredentials | None:
    """The client's CURVE credentials from ``--key``/``--server-key`` (None: no key given)."""
    if key is None:
        return None
    key_path = Path(key)
    server = Path(server_key) if server_key else None
    if server is None and not (key_path.parent / "server.key").exists() and table is not None:
        server = KeyFolder(table.key_folder()).server_public_file
    return client_credentials(key_path, server)



class CommandClient:
    """Sends commands to a daemon's command socket (a REQ socket, remade after a timeout).

    ``key``: the client's CURVE credentials. A table answers authorised keys
    only (docs/security.md); without one, or with a key it does not know, the
    handshake fails and every request times out with :class:`DaemonUnavailable`.
    """

    def __init__(
        self,
        endpoint: str,
        timeout: float = 10.0,
        ctx: zmq.Context[Any] | None = None,
        key: ClientCredentials | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.timeout_ms = int(timeout * 1000)
        self._ctx = ctx or zmq.Context.instance()
        self._sock: zmq.Socket[bytes] | None = None
        self.key = key

    def _socket(self) -> zmq.Socket[bytes]:
        if self._sock is None:
            sock = self._ctx.socket(zmq.REQ)
            if self.key is not None:
                self.key.secure(sock)
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
            hint = (" (no key given: a table answers authorised CURVE keys only, see --key)"
                    if self.key is None else f" (key {self.key.path}: is it authorised on this table?)")
            raise DaemonUnavailable(
                f"no reply from {self.endpoint} within {self.timeout_ms / 1000:g} s{hint}"
            ) from None
        return reply

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return self.send_raw(json.dumps({"cmd": cmd, **fields}).encode())

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None


def request_snapshot(
    endpoint: str,
    since: int | None = None,
    timeout: float = 10.0,
    ctx: zmq.Context[Any] | None = None,
    key: ClientCredentials | None = None,
) -> dict[str, Any]:
    """Ask the snapshot socket for the state (and the events after ``since`` if it still holds them)."""
    client = CommandClient(endpoint, timeout, ctx, key)
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
        key: ClientCredentials | None = None,
    ) -> None:
        self._ctx = ctx or zmq.Context.instance()
        self.side = side
        #: Needed only when the table has ``security.curve_events`` on.
        self.key = key
        self.snapshot_endpoint = snapshot
        self.timeout = timeout
        self.sub = self._ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 100_000)
        self.sub.setsockopt(zmq.SUBSCRIBE, f"{table}.".encode() if table else b"")
        if key is not None:
            key.secure(self.sub)
        self.sub.connect(pub)
        self.seq: int | None = None
        self.gaps = 0

    def sync(self) -> dict[str, Any]:
        reply = request_snapshot(self.snapshot_endpoint, self.seq, self.timeout, self._ctx, self.key)
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
