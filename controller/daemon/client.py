"""Clients of a table daemon: the command client and the clone-pattern subscriber.

Both are what ``croupier ctl``, ``croupier watch``, the demo's simulated
players and the tests use, so the documented protocol (docs/commands.md,
docs/zeromq.md) is exercised by our own tools every day.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from controller.daemon.client_replies import BadReply as BadReply  # re-exported: ctl and watch catch it here
from controller.daemon.client_replies import check_message as check_message  # re-exported: the display's feed
from controller.daemon.client_replies import check_snapshot, decode_reply
from controller.daemon.config import TableConfig
from controller.daemon.endpoints import check_endpoint, enable_ipv6
from controller.daemon.keys import ClientCredentials, KeyFolder, Role, local_client
from controller.daemon.topics import is_side_topic

#: Seconds a library client waits for a reply (``croupier ctl``/``watch`` wait 2 s: a person is waiting).
DEFAULT_TIMEOUT = 10.0
#: Seconds without any message (a heartbeat comes every second) before a feed is stale.
DEFAULT_STALE_AFTER = 3.0


#: Numbers each client socket's monitor endpoint (unique in the process, so in its context).
_MONITORS = itertools.count()

class DaemonUnavailable(RuntimeError):
    """No reply within the timeout: the daemon is not running or not on that endpoint."""


def local_key(
    config: TableConfig, role: Role = "operator", name: str | None = None, state_dir: Path | None = None
) -> ClientCredentials:
    """A key for a tool on the table's own machine (demo, tests, scenario runner), made on first use
    in the table's key folder (``state_dir``: the one the daemon runs with, if overridden)."""
    return local_client(KeyFolder(config.key_folder(state_dir)), name or f"local-{role}", role)


#: The monitor events that tell a failed CURVE handshake from a daemon that is not there at all.
#: ``EVENT_CONNECTED`` tells a daemon that is not running (nothing ever accepts the connection) from
#: one that does not answer.
_HANDSHAKE_EVENTS = (zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                     | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
                     | zmq.EVENT_CONNECTED)


class CommandClient:
    """Sends commands to a daemon's command socket (a REQ socket, remade after a timeout).

    ``key``: the client's CURVE credentials. A table answers authorised keys
    only (docs/security.md); without one, or with a key it does not know, the
    handshake fails and every request times out with :class:`DaemonUnavailable`.
    """

    def __init__(
        self,
        endpoint: str,
        timeout: float = DEFAULT_TIMEOUT,
        ctx: zmq.Context[Any] | None = None,
        key: ClientCredentials | None = None,
    ) -> None:
        self.endpoint = check_endpoint(endpoint)
        self.timeout_ms = int(timeout * 1000)
        self._ctx = ctx or zmq.Context.instance()
        self._sock: zmq.Socket[bytes] | None = None
        self._monitor: zmq.Socket[bytes] | None = None
        self.key = key

    def _socket(self) -> zmq.Socket[bytes]:
        if self._sock is None:
            sock = enable_ipv6(self._ctx.socket(zmq.REQ))
            if self.key is not None:
                self.key.secure(sock)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.RCVTIMEO, self.timeout_ms)
            sock.setsockopt(zmq.SNDTIMEO, self.timeout_ms)
            # To say, if nothing answers, whether anything listens and whether the CURVE handshake failed.
            # Its own name: pyzmq's default names it by the socket's fd, which a new socket may reuse while
            # a closed one's monitor is still being reaped ("Address already in use" on a reconnect).
            self._monitor = sock.get_monitor_socket(
                _HANDSHAKE_EVENTS, f"inproc://croupier-client-monitor-{os.getpid()}-{next(_MONITORS)}")
            sock.connect(self.endpoint)
            self._sock = sock
        return self._sock

    def _handshake_seen(self) -> str:
        """What the connection's monitor saw: ``auth`` (our key refused), ``failed`` (the handshake
        failed: the server key is not that daemon's, or the socket wants a key we did not give), ``ok``
        (connected and secured, or plain), ``connected`` (connected, no handshake seen) or ``""``
        (nothing accepted the connection: nothing listens there)."""
        seen = ""
        monitor = self._monitor
        while monitor is not None and monitor.poll(0):
            event = recv_monitor_message(monitor)["event"]
            if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                return "auth"
            if event in (zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL):
                seen = "failed"
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED and seen in ("", "connected"):
                seen = "ok"
            elif event == zmq.EVENT_CONNECTED and not seen:
                seen = "connected"
        return seen

    def send_raw(self, payload: bytes) -> dict[str, Any]:
        sock = self._socket()
        try:
            sock.send(payload)
            data = sock.recv()
        except zmq.Again:
            seen = self._handshake_seen()
            self.close()  # a REQ socket that lost its reply cannot be used again
            waited = f"nothing answers at {self.endpoint} within {self.timeout_ms / 1000:g} s"
            if not seen:
                raise DaemonUnavailable(
                    f"{waited}: nothing is listening there: the table's daemon is not running (start "
                    "it: croupier run TABLE, or see systemctl status 'croupier@*'), or this is not its "
                    "endpoint (zeromq: in the table file)"
                ) from None
            if self.key is None and seen == "failed":
                raise DaemonUnavailable(
                    f"{waited}: no key given, and a table answers authorised CURVE keys only "
                    "(--key FILE or $CROUPIER_KEY; docs/security.md)"
                ) from None
            raise DaemonUnavailable(self._why_unanswered(seen)) from None
        return decode_reply(self.endpoint, data)

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return self.send_raw(json.dumps({"cmd": cmd, **fields}).encode())

    def _why_unanswered(self, seen: str) -> str:
        where, secs = self.endpoint, f"{self.timeout_ms / 1000:g} s"
        if self.key is None or seen == "connected":
            return (f"something at {where} took the request but did not answer within {secs}: the "
                    "daemon busy or stuck (its log says; --timeout to wait longer), or not a Croupier "
                    "socket")
        if seen == "auth":
            return (f"the daemon at {where} refused the key {self.key.path}: it is not authorised on "
                    "that table (croupier keys list / keys authorize there; docs/security.md)")
        if seen == "failed":
            return (f"something listens at {where} but the CURVE handshake failed: it is not the table "
                    "whose server key this client uses (another table's daemon at that endpoint, the "
                    "table's keys made anew, or a socket without keys such as the table's snapshot port): "
                    "refused, nothing done; check --table/--endpoint and --server-key")
        return (f"the daemon at {where} took the request over a secured connection but did not answer "
                f"within {secs}: busy or stuck (its log says; croupier ctl --timeout to wait longer)")

    def close(self) -> None:
        if self._sock is not None:
            if self._monitor is not None:
                self._sock.disable_monitor()
                self._monitor.close(linger=0)
                self._monitor = None
            self._sock.close(linger=0)
            self._sock = None


def request_snapshot(
    endpoint: str,
    since: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    ctx: zmq.Context[Any] | None = None,
    journal_id: str | None = None,
    key: ClientCredentials | None = None,
) -> dict[str, Any]:
    """Ask the snapshot socket for the state (and the events after ``since`` if it still holds them).

    ``journal_id``: the journal ``since`` counts in; a daemon with another
    journal then answers with the state alone (the client must redraw).
    """
    request: dict[str, Any] = {}
    if since is not None:
        request["since"] = since
        if journal_id is not None:
            request["journal_id"] = journal_id
    client = CommandClient(endpoint, timeout, ctx, key)
    try:
        return client.send_raw(json.dumps(request).encode())
    finally:
        client.close()


def heartbeat_says(
    beat: dict[str, Any], journal_id: str | None, run: str | None, seq: int | None
) -> str | None:
    """What a heartbeat tells a follower drawn from ``journal_id`` and the daemon's ``run``, showing ``seq``
    (docs/zeromq.md, step 5): ``"journal"`` another journal (redraw); ``"gap"`` a ``last_seq`` ahead
    (re-sync); ``"restored"`` one behind of another run, a restart onto the journal restored from an older
    copy, whose seqs come again (redraw, or every event up to ``seq`` would be dropped as already shown);
    None otherwise: one behind of the run drawn from was sent before the snapshot (a review found one
    such redrew every start). The one rule of the Subscriber and the display's feed."""
    if beat.get("journal_id") != journal_id:
        return "journal"
    last = beat.get("last_seq", 0)
    if seq is None or not isinstance(last, int):
        return None
    if last > seq:
        return "gap"
    return "restored" if last < seq and beat.get("run") != run else None


class Subscriber:
    """The clone pattern: subscribe, take a snapshot, then apply only newer events, re-syncing on a gap.

    :meth:`events` yields ``("snapshot", reply)`` whenever it (re)synced (redraw
    from ``reply["state"]``) and ``("event", payload)`` for each event in
    ``seq`` order, never one twice and never with a gap: a gap triggers a new
    snapshot request (with ``since``, so the daemon returns the missed events
    if it still has them). The heartbeat keeps it honest without events
    (docs/zeromq.md): a heartbeat whose ``last_seq`` is ahead is a gap, one
    with another ``journal_id`` means a new journal (a fresh snapshot, never
    old events), one behind of another ``run`` a restart onto the journal
    restored from an older copy (its seqs come again: a fresh snapshot), and
    one behind of the run drawn from was sent before the snapshot (ignored).
    Nothing at all for ``stale_after`` seconds yields
    ``("stale", {...})`` once, then ``("live", first_message)`` when the feed
    is back. Side topics (``lamps``, ``shoe_status``, ``heartbeat``: no
    ``seq``) are yielded as ``("side", payload)`` with ``side=True``.
    """

    def __init__(
        self,
        pub: str,
        snapshot: str,
        table: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        ctx: zmq.Context[Any] | None = None,
        side: bool = False,
        stale_after: float = DEFAULT_STALE_AFTER,
        key: ClientCredentials | None = None,
    ) -> None:
        self._ctx = ctx or zmq.Context.instance()
        self.side = side
        #: Needed only when the table has ``security.curve_events`` on.
        self.key = key
        self.snapshot_endpoint = check_endpoint(snapshot)
        self.timeout = timeout
        self.stale_after = stale_after
        self.sub = enable_ipv6(self._ctx.socket(zmq.SUB))
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.RCVHWM, 100_000)
        self.sub.setsockopt(zmq.SUBSCRIBE, f"{table}.".encode() if table else b"")
        #: The table this subscriber follows ("": any): a snapshot another table answers is refused.
        self.table = table
        if key is not None:
            key.secure(self.sub)
        self.pub_endpoint = check_endpoint(pub)
        self.sub.connect(self.pub_endpoint)
        self.seq: int | None = None
        self.journal_id: str | None = None
        #: The daemon run drawn from (its snapshot's ``run``).
        self.run: str | None = None
        self.gaps = 0
        #: Times the journal changed under us (a new state dir): everything was redrawn.
        self.redraws = 0
        self.stale = False
        self._unsynced = False
        #: The lamps as last received (a lamps message, or a heartbeat that disagreed with it).
        self.lamps: dict[str, Any] | None = None

    def sync(self) -> dict[str, Any]:
        """The snapshot to draw from; a RuntimeError if it was refused, is another table's or is no
        snapshot (BadReply), checked whole first, so the clone loop never draws from half a reply."""
        reply = request_snapshot(self.snapshot_endpoint, self.seq, self.timeout, self._ctx, self.journal_id,
                                 self.key)
        if not reply.get("ok"):
            raise RuntimeError(f"snapshot refused: {reply.get('error')}")
        if self.table and reply.get("table") != self.table:  # endpoints of another table's daemon
            raise RuntimeError(f"the snapshot socket {self.snapshot_endpoint} answers for table "
                               f"{reply.get('table')!r}, not {self.table!r}: check the endpoints")
        return check_snapshot(self.snapshot_endpoint, reply)  # BadReply: nothing of it is drawn

    def events(self, timeout: float | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield forever (or until no event came for ``timeout`` seconds; heartbeats do not count)."""
        poller = zmq.Poller()
        poller.register(self.sub, zmq.POLLIN)
        if self.seq is None:
            yield from self._resync()
        heard = last_event = time.monotonic()
        while True:
            now = time.monotonic()
            waits = [] if self.stale else [heard + self.stale_after - now]
            if timeout is not None:
                waits.append(last_event + timeout - now)
            wait = min(waits) if waits else None
            if not poller.poll(None if wait is None else max(0, int(wait * 1000) + 1)):
                now = time.monotonic()
                if timeout is not None and now - last_event >= timeout:
                    return
                if not self.stale and now - heard >= self.stale_after:
                    self.stale = True
                    yield "stale", {"silent": round(now - heard, 3), "seq": self.seq,
                                    "journal_id": self.journal_id}
                continue
            heard = time.monotonic()
            topic, data = self.sub.recv_multipart()
            payload = check_message(self.pub_endpoint, not is_side_topic(topic), data)
            if self.stale:
                self.stale = False
                yield "live", payload
            if timeout is not None and self._check_timeout(payload, heard, last_event, timeout):
                return
            if "seq" not in payload or is_side_topic(topic):  # a side topic: derived state, not numbered
                yield from self._side(payload)
                continue
            last_event = heard
            if self._unsynced:
                yield from self._resync()
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

    @staticmethod
    def _check_timeout(payload: dict[str, Any], now: float, last_event: float, timeout: float) -> bool:
        """Heartbeats arrive every second: only events reset the idle ``timeout``."""
        return "seq" not in payload and now - last_event >= timeout

    def _side(self, payload: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """A side message; a heartbeat also checks the journal, the seq and the lamps."""
        if payload.get("event") == "lamps":
            self.lamps = {k: v for k, v in payload.items() if k not in ("event", "table")}
        if payload.get("event") == "heartbeat":
            yield from self._check(payload)
            lamps = payload.get("lamps")
            if lamps is not None and lamps != self.lamps and self.side:
                # A lamps message we missed (dropped, or sent before we connected): resync them.
                self.lamps = lamps
                yield "side", {"event": "lamps", "table": payload["table"], **lamps}
        if self.side:
            yield "side", payload

    def _check(self, beat: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """A heartbeat, judged by :func:`heartbeat_says`."""
        says = heartbeat_says(beat, self.journal_id, self.run, self.seq)
        if self._unsynced or says == "journal":
            yield from self._resync()
        elif says == "restored":
            self.redraws += 1
            self.seq = None
            yield from self._resync()
        elif says == "gap":
            self.gaps += 1
            yield from self._resync()

    def _resync(self) -> Iterator[tuple[str, dict[str, Any]]]:
        try:
            reply = self.sync()
        except DaemonUnavailable:
            if self.seq is None:
                raise  # nothing drawn yet: the caller says nothing answers
            self._unsynced = True  # the daemon went away again: retry at its next message
            return
        self._unsynced = False
        missed = reply.pop("events", None)
        if reply.get("journal_id") != self.journal_id:
            if self.journal_id is not None:
                self.redraws += 1
            self.journal_id = reply.get("journal_id")
            missed = None  # a new journal: its seqs are not ours, redraw from the state
        self.run = reply.get("run")
        if self.seq is not None and missed is not None:
            for payload in missed:
                if payload["seq"] == self.seq + 1:
                    self.seq = payload["seq"]
                    yield "event", payload
            if self.seq == reply["seq"]:
                return
        self.seq = reply["seq"]
        if "lamps" in reply:
            self.lamps = {k: v for k, v in reply["lamps"].items() if k not in ("event", "table")}
        yield "snapshot", reply

    def close(self) -> None:
        self.sub.close(linger=0)
