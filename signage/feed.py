"""Following one table over ZeroMQ, on asyncio, exactly as docs/zeromq.md says.

SUB first, then a snapshot, then only events with ``seq == last + 1``; a gap
asks ``{"since": last}`` and applies the missed events or redraws from the
state. The display is a subscriber like any other: it never sends anything
on the table's PUB path and asks the snapshot socket only to (re)sync or to
check that a silent table is still there, so it cannot slow the table down.

Every change produces one new JSON text (the whole screen, from
:class:`signage.view.TableView`); browsers are woken and each sends the
latest text, so a slow browser skips intermediate states instead of queueing
them.

Heartbeats (``<table>.heartbeat``) tell it at once about a new journal
(another ``journal_id``: redraw from a fresh snapshot) or missed events
(``last_seq`` ahead: re-sync). A *stale feed* is a table the display has heard
nothing from (no event, heartbeat or lamps) for ``stale_after`` seconds and
whose snapshot socket does not answer either: the screen says so rather than
showing an old round as if it were live.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

import zmq
import zmq.asyncio

from controller.daemon.client import BadReply, check_message, heartbeat_says
from controller.daemon.keys import ClientCredentials
from controller.daemon.topics import is_side_topic
from signage.view import TableView
from signage.watchers import Watched

log = logging.getLogger("croupier.display")

#: Seconds to wait for a snapshot reply before the table counts as not answering.
SNAPSHOT_TIMEOUT = 2.0


class FrameError(ValueError):
    """A published message the display cannot use: ``<table>: <what is wrong>``."""


class TableFeed(Watched):
    """One table: its sockets, its :class:`TableView`, and the browsers waiting for changes."""

    def __init__(
        self,
        table: str,
        game: str,
        pub: str,
        snapshot: str,
        settings: dict[str, Any],
        ctx: zmq.asyncio.Context,
        stale_after: float = 5.0,
        key: ClientCredentials | None = None,
    ) -> None:
        super().__init__()
        self.table = table
        #: The display's CURVE key, for a table whose file says ``security.curve_events``.
        self.key = key
        self.pub = pub
        self.snapshot_endpoint = snapshot
        self.ctx = ctx
        self.stale_after = stale_after
        self.view = TableView(table, game, settings)
        self.synced = False
        #: The daemon run the screen was drawn from (the snapshot's ``run``).
        self.daemon_run: str | None = None
        self.stale = True  # until the first snapshot
        self.gaps = 0
        self.last_heard = time.monotonic()
        self.last_sync = 0.0
        self.payload = self._render()

    def _render(self) -> str:
        view = self.view.to_dict()
        view["feed"] = {"stale": self.stale, "synced": self.synced, "gaps": self.gaps}
        return json.dumps(view, separators=(",", ":"))

    def _changed(self) -> None:
        self.payload = self._render()
        self.wake()

    # ---------------------------------------------------------------- ZeroMQ
    def _secured(self, sock: zmq.asyncio.Socket) -> zmq.asyncio.Socket:
        """``sock`` as a CURVE client of the table when the display has a key (before it connects)."""
        if self.key is not None:
            self.key.secure(sock)
        return sock

    async def request_snapshot(self, since: int | None) -> dict[str, Any] | None:
        """One snapshot request on a fresh REQ socket; None if nothing answered in time."""
        sock = self._secured(self.ctx.socket(zmq.REQ))
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.connect(self.snapshot_endpoint)
            request: dict[str, Any] = {}
            if since is not None:
                request["since"] = since
                if self.view.journal is not None:
                    request["journal_id"] = self.view.journal  # the daemon leaves out events of another
            await sock.send(json.dumps(request).encode())
            if not await sock.poll(int(SNAPSHOT_TIMEOUT * 1000)):
                return None
            reply: dict[str, Any] = json.loads(await sock.recv())
            return reply
        finally:
            sock.close(linger=0)

    async def resync(self, since: int | None) -> bool:
        """Ask for the state (and missed events); True if the table answered."""
        reply = await self.request_snapshot(since)
        self.last_sync = time.monotonic()
        if reply is None:
            return False
        if not reply.get("ok"):
            log.warning("%s: snapshot refused: %s", self.table, reply.get("error"))
            return False
        if reply.get("table") != self.table:  # pointed at another table's daemon: never its money
            self.view.problem = (f"the snapshot socket answers for table {reply.get('table')!r}, "
                                 f"not {self.table!r}: check the display's endpoints")
            log.error("%s: %s", self.table, self.view.problem)
            return False
        self.last_heard = time.monotonic()
        journal = reply.get("journal_id")
        missed = reply.get("events")
        same_journal = journal is None or journal == self.view.journal
        self.daemon_run = reply.get("run")
        if since is not None and missed is not None and same_journal and self.synced:
            for event in missed:
                if event["seq"] == self.view.seq + 1:
                    self.view.apply(event)
        if not self.synced or self.view.seq != reply["seq"] or not same_journal:
            self.view.load_snapshot(reply)
        self.synced = True
        return True

    def take_frame(self, data: bytes, topic: bytes = b"") -> str:
        """One PUB message's JSON frame (and its topic); :class:`FrameError` names the table and what is
        wrong. A side topic is filed by its topic, never as an event, whatever fields it has."""
        side = is_side_topic(topic)
        try:  # the Subscriber's reading (a message nested past the stack raised RecursionError here)
            payload = check_message(f"table {self.table}'s events", not side, data)
        except BadReply as exc:
            raise FrameError(f"{self.table}: {exc}") from None
        return self._take(payload, side)

    def _take(self, payload: dict[str, Any], side: bool) -> str:
        """Apply one published message: ``ok``, ``side``, ``gap`` (resync needed) or ``old``."""
        if side or "seq" not in payload:
            if payload.get("event") == "heartbeat":
                says = heartbeat_says(payload, self.view.journal, self.daemon_run, self.view.seq)
                if says is not None:  # another journal, or one restored from a copy: redraw; ahead: re-sync
                    return "gap" if says == "gap" else "journal"
                limits = payload.get("limits")
                if isinstance(limits, dict) and limits != self.view.limits:
                    self.view.limits = dict(limits)  # a start under other limits: no event says so
                    return "ok"
            return "side"  # a side topic: the table is alive; nothing numbered changed
        seq = payload["seq"]
        if not isinstance(seq, int) or not isinstance(payload.get("event"), str):
            raise FrameError(
                f"{self.table}: an event needs an integer seq and an event name: {payload!r:.120}"
            )
        if seq <= self.view.seq:
            return "old"
        if seq != self.view.seq + 1:
            return "gap"
        try:
            self.view.apply(payload)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FrameError(
                f"{self.table}: event seq {seq} ({payload['event']}) does not fit: {exc!r}"
            ) from None
        return "ok"

    async def run(self) -> None:
        """Follow the table until cancelled; reconnects by itself (ZeroMQ does) after a daemon restart."""
        sub = self._secured(self.ctx.socket(zmq.SUB))
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.RCVHWM, 100_000)
        sub.setsockopt(zmq.SUBSCRIBE, f"{self.table}.".encode())
        sub.connect(self.pub)
        try:
            while not await self.resync(None):
                self._set_stale(True)
                await asyncio.sleep(0.5)
            self._set_stale(False, force=True)
            while True:
                if not await sub.poll(500):
                    await self._quiet()
                    continue
                changed = False
                need: str | None = None
                while True:  # drain what is there, then draw once
                    try:
                        topic, data = await sub.recv_multipart(flags=zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self.last_heard = time.monotonic()
                    try:
                        what = self.take_frame(data, topic)
                    except FrameError as exc:
                        # Shown on the screen and logged; the table's own journal is the record,
                        # so a fresh snapshot puts the screen right.
                        log.warning("%s", exc)
                        self.view.problem = str(exc)
                        need = "journal"
                        break
                    if what in ("gap", "journal"):
                        need = what
                        break
                    changed = changed or what == "ok"
                if need == "gap":
                    self.gaps += 1
                    await self.resync(self.view.seq)
                    changed = True
                elif need == "journal":
                    self.synced = False  # throw away everything shown: a fresh snapshot
                    await self.resync(None)
                    changed = True
                if self.stale:
                    self.stale = False
                    changed = True
                if changed:
                    self._changed()
        finally:
            sub.close(linger=0)

    async def _quiet(self) -> None:
        """Nothing published for a while: check the table is still there (and not newer than us)."""
        silent = time.monotonic() - self.last_heard
        if silent < self.stale_after:
            return
        before = (self.view.seq, self.view.journal)
        alive = await self.resync(self.view.seq)
        if alive:
            self.last_heard = time.monotonic()
        self._set_stale(not alive, force=(self.view.seq, self.view.journal) != before)

    def _set_stale(self, stale: bool, force: bool = False) -> None:
        if stale != self.stale or force:
            self.stale = stale
            self._changed()


async def run_feeds(feeds: list[TableFeed]) -> None:
    """Run every table's feed; one table's trouble never stops the others."""

    async def guarded(feed: TableFeed) -> None:
        while True:
            try:
                await feed.run()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: the feed failed; following it again in 1 s", feed.table)
                with contextlib.suppress(Exception):
                    feed._set_stale(True)
                await asyncio.sleep(1.0)

    await asyncio.gather(*(guarded(f) for f in feeds))
