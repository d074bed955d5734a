"""CURVE handshakes that fail before the ZAP check: logged from ZeroMQ's socket monitor, rate-limited.

Why: the ZAP authenticator (controller/daemon/auth.py) sees only clients that
complete the first half of the CURVE handshake: one with an unknown key. A
client with no key at all (plain ZeroMQ) or with another table's server key
fails earlier, inside libzmq, and ZAP never hears of it. The only place that
shows those is the socket's monitor: ``EVENT_HANDSHAKE_FAILED_PROTOCOL`` with
the ZMTP error code. What it carries (libzmq 4.3's monitor, the one pyzmq
exposes) is the daemon's own endpoint and the error, not the peer; the peer's
address is read from the connection's file descriptor when its
``EVENT_ACCEPTED`` is seen and the connection is still open (TCP only; an
``ipc://`` peer has no address). ``EVENT_HANDSHAKE_FAILED_AUTH`` (the ZAP
refusal) is not logged again here: the ZAP handler already named the key.

A thread of its own, like the ZAP authenticator, so a flood of failed
handshakes never runs on the table's loop; lines go through the guard's
:class:`RateLimitedLog` (10 a minute per socket, the rest counted).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import Any, Final

import zmq
from zmq.utils.monitor import parse_monitor_message

from controller.daemon.auth import RateLimitedLog

_EVENTS: Final = (zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                  | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
#: ZMTP errors a refused CURVE client causes, in words for the floor.
_WHY: Final[dict[int, str]] = {
    zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH: "the client does not use CURVE (no key given?)",
    zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC: "the client's hello cannot be decrypted (it uses another "
                                           "table's server key?)",
}


def _peer(fd: int) -> str:
    """The TCP peer of a connection's file descriptor (read through a copy: the descriptor is
    libzmq's), or "" (closed already, an ipc peer, ...)."""
    with contextlib.suppress(OSError, ValueError):
        copy = socket.socket(fileno=os.dup(fd))
        try:
            peer = copy.getpeername()
            if not isinstance(peer, tuple):
                return ""
            return f"{peer[0].removeprefix('::ffff:')}:{peer[1]}"  # an IPv4 client of a dual-stack socket
        finally:
            copy.close()
    return ""


class HandshakeLog:
    """Watches the monitors of the table's CURVE sockets and logs each failed handshake."""

    def __init__(self, ctx: zmq.Context[Any], refusals: RateLimitedLog) -> None:
        self._ctx = ctx
        self._refusals = refusals
        self._watched: list[tuple[str, str, zmq.Socket[bytes]]] = []  # (name, endpoint, monitor)
        #: Per monitor: the connections accepted and not yet gone, descriptor -> peer ("" unknown).
        self._open: dict[str, dict[int, str]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def started(cls, ctx: zmq.Context[Any], refusals: RateLimitedLog,
                sockets: list[tuple[str, str, Any]]) -> HandshakeLog:
        """Watch each ``(name, endpoint, socket)`` of the table's CURVE servers, from now on."""
        handshakes = cls(ctx, refusals)
        for name, endpoint, sock in sockets:
            handshakes.watch(name, endpoint, sock)
        handshakes.start()
        return handshakes

    def watch(self, name: str, endpoint: str, sock: Any) -> None:
        """Monitor ``sock`` (a CURVE server named ``name``, bound to ``endpoint``); before :meth:`start`."""
        address = f"inproc://croupier-handshakes-{id(self)}-{len(self._watched)}"
        sock.monitor(address, _EVENTS)
        monitor: zmq.Socket[bytes] = self._ctx.socket(zmq.PAIR)
        monitor.connect(address)
        self._watched.append((name, endpoint, monitor))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="curve-handshakes", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        for _name, _endpoint, monitor in self._watched:
            monitor.close(linger=0)

    def _run(self) -> None:
        poller = zmq.Poller()
        for _name, _endpoint, monitor in self._watched:
            poller.register(monitor, zmq.POLLIN)
        while not self._stop.is_set():
            for monitor, _ in poller.poll(200):
                name, endpoint = next((n, e) for n, e, m in self._watched if m is monitor)
                batch: list[Any] = []
                while monitor.poll(0):
                    batch.append(parse_monitor_message(monitor.recv_multipart()))
                self._take(name, endpoint, batch)

    def _take(self, name: str, endpoint: str, batch: list[Any]) -> None:
        """One read of a monitor's queue, in order.

        A connection's peer is read when it is accepted, unless its disconnection is already in
        the batch (its descriptor may be another connection's by now). The failure event does not
        say which connection failed: it is named only when one connection was being accepted.
        """
        pending = self._open.setdefault(name, {})
        closed = {e["value"] for e in batch if e["event"] == zmq.EVENT_DISCONNECTED}
        for event in batch:
            kind, value = event["event"], event["value"]
            if kind == zmq.EVENT_ACCEPTED:
                pending[value] = "" if value in closed else _peer(value)
            elif kind == zmq.EVENT_DISCONNECTED:
                pending.pop(value, None)
            else:
                code = value if kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL else None
                why = (_WHY.get(code, f"ZMTP error 0x{code:08X}") if code is not None
                       else "the client left during it (no key given, or not ZeroMQ?)")
                peers = list(pending.values())
                peer = peers[0] if len(peers) == 1 and peers[0] else "unknown"
                self._refusals.warning(
                    f"failed handshakes on {name}",
                    "refused a client on the %s socket (%s): CURVE handshake failed: %s; peer %s",
                    name, endpoint, why, peer)
