"""The daemon's ZeroMQ sockets: bound with their limits and keys, and the request loops that answer on them.

A PUB socket publishes every event; a ROUTER snapshot socket answers late
joiners; a ROUTER command socket takes operator commands (docs/zeromq.md).
Every socket has a send high-water mark and ``LINGER`` 0, so a slow, stuck or
dead peer costs dropped messages for that peer, never a stalled table or a
hung shutdown; a request loop answers a bug with an error reply, never by
dying, and paces a flood so it cannot hold back a card.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import zmq
import zmq.asyncio

from controller.daemon.auth import CurveGuard
from controller.daemon.commands import error_reply
from controller.daemon.config import ZmqSpec
from controller.daemon.endpoints import enable_ipv6
from controller.daemon.handshakes import HandshakeLog
from controller.daemon.keys import KeyInfo
from controller.daemon.requests import Pacer, limit_inbound
from controller.daemon.service import dumps
from controller.daemon.startup import DaemonError
from controller.quote import quote

log = logging.getLogger("croupier.daemon")

#: Replies queued for one command client before ZeroMQ drops them (a reply is a few hundred bytes).
ROUTER_HWM = 1000
#: Snapshot replies queued for one client: each may be the state and 2,000 events (hundreds of KB), so a
#: client that asks and never reads holds at most this many (a REQ client has one in flight).
SNAPSHOT_HWM = 2

Reply = dict[str, Any]


@dataclass(frozen=True)
class Bound:
    """The three bound sockets and the log of refused CURVE handshakes on them."""

    pub: zmq.Socket[bytes]
    snapshot: zmq.asyncio.Socket
    command: zmq.asyncio.Socket
    handshakes: HandshakeLog


def _plain(sock: Any) -> Any:
    return sock


def bind_all(ctx: zmq.asyncio.Context, sync_ctx: zmq.Context[Any], guard: CurveGuard, spec: ZmqSpec,
             curve_events: bool, opened: list[Any]) -> Bound:
    """Bind pub, snapshot and command (each added to ``opened`` before it binds, for the caller to close).

    The command socket always takes keys; the event sockets only when the table file says so
    (``security.curve_events``). DaemonError if one cannot bind.
    """
    events = guard.secure if curve_events else _plain
    pub = bind(events(sync_ctx.socket(zmq.PUB)), "pub", spec.pub, spec.pub_hwm, opened)
    snap = bind(events(ctx.socket(zmq.ROUTER)), "snapshot", spec.snapshot, SNAPSHOT_HWM, opened)
    cmd = bind(guard.secure(ctx.socket(zmq.ROUTER)), "command", spec.command, ROUTER_HWM, opened)
    curve = [("command", spec.command, cmd)]
    if curve_events:
        curve += [("pub", spec.pub, pub), ("snapshot", spec.snapshot, snap)]
    handshakes = HandshakeLog.started(sync_ctx, guard.refusals, curve)  # refusals ZAP never sees
    return Bound(pub, snap, cmd, handshakes)


def bind(sock: Any, name: str, endpoint: str, hwm: int, opened: list[Any]) -> Any:
    """Set ``sock``'s limits and bind it to ``endpoint``; DaemonError names the socket if it cannot."""
    enable_ipv6(sock)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, hwm)
    sock.setsockopt(zmq.RCVHWM, hwm)
    limit_inbound(sock)
    opened.append(sock)
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise DaemonError(
                f"cannot bind the {name} socket to {endpoint}: the address is in use by another program "
                f"(another daemon or demo on this table?); zeromq.{name} in the table file (or croupier "
                f"run --{name} ENDPOINT) moves it"
            ) from None
        raise DaemonError(f"cannot bind the {name} socket to {endpoint}: {exc} (zeromq.{name} in the "
                          "table file)") from None
    return sock


def _envelope(frames: list[bytes]) -> tuple[list[bytes], bytes]:
    """A ROUTER request's reply envelope (its identity, and the empty delimiter a REQ peer sent) and
    its payload (the last frame)."""
    identity, rest = frames[0], frames[1:]
    delim = [b""] if len(rest) >= 2 and rest[0] == b"" else []
    return [identity, *delim], rest[-1] if rest else b""


async def serve_commands(sock: zmq.asyncio.Socket, guard: CurveGuard,
                         handle: Callable[[bytes, KeyInfo], Awaitable[Reply]],
                         identify: Callable[[Reply], Reply], pacer: Pacer) -> None:
    """Answer each command with ``handle``'s reply for the key that sent it, until cancelled."""
    while True:
        parts = await sock.recv_multipart(copy=False)
        started = time.perf_counter()
        caller = guard.caller(parts[-1])
        envelope, payload = _envelope([p.bytes for p in parts])
        try:
            reply = await handle(payload, caller) if caller is not None else error_reply(
                "this key is no longer authorised")
        except Exception as exc:  # a bug must not kill the table: answer it, log it
            log.exception("command %r failed", payload[:200])
            reply = error_reply(f"internal error: {type(exc).__name__}: {quote(str(exc), 200)}")
        await sock.send_multipart([*envelope, dumps(identify(reply))])
        await pacer.pace(started)  # a flood of requests must not hold back a card


async def serve_snapshots(sock: zmq.asyncio.Socket, answer: Callable[[bytes], Reply],
                          identify: Callable[[Reply], Reply], pacer: Pacer, guard: CurveGuard | None = None,
                          ) -> None:
    """Answer each snapshot request with ``answer``'s reply, until cancelled. ``guard``: the socket takes
    keys (``security.curve_events``), and each request's key is looked up again, as a command's is: the
    handshake alone let a key removed since keep reading the table over its open connection (a review,
    2026-12-07)."""
    while True:
        parts = await sock.recv_multipart(copy=False)
        started = time.perf_counter()
        envelope, payload = _envelope([p.bytes for p in parts])
        try:
            revoked = guard is not None and guard.caller(parts[-1]) is None
            reply = error_reply("this key is no longer authorised") if revoked else answer(payload)
        except Exception as exc:  # a bug must not end the snapshot socket: answer it, log it
            log.exception("snapshot request %r failed", payload[:200])
            reply = error_reply(f"internal error: {type(exc).__name__}: {quote(str(exc), 200)}")
        await sock.send_multipart([*envelope, dumps(identify(reply))])
        await pacer.pace(started)
