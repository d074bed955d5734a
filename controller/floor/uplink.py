"""``croupier uplink``: a table's journal carried to NATS JetStream, row by row, in order, exactly once.

The journal is the outbox and the stream is the cursor: at start the uplink asks the stream for the
last message on its table's subject; if it is of this journal, publishing resumes at the next row,
otherwise at row 1 (a new journal starts its own rows). Rows go out in order, one connection, with
at most ``window`` publishes awaiting JetStream's acknowledgement. The stream stores them in the
order the server read them, so order can only break where a connection does: rows written into a
dying connection are lost while later ones could still reach the server. Hence nothing written
before a loss reaches the stream after it (the client keeps no publishes for a reconnect: see
:meth:`Uplink.connect`), and a failed publish, an ack timeout or a lost connection drops the whole
window: the uplink asks the stream again which rows it holds and publishes, in order, with the same
message ids, the rows it lacks. The daemon never waits for any of this: the uplink is its own process
reading the journal read-only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext, api

from controller.daemon import faults
from controller.daemon.config import TableConfig
from controller.daemon.journal import JournalMismatch
from controller.floor.cursor import STORED, Stored, Tail, read_tail
from controller.floor.derive import JournalSource, Replay, entry_key
from controller.floor.stream import ensure_stream
from controller.floor.wire import MSG_ID, STREAM, RowMessage, subject

log = logging.getLogger("croupier.floor")

#: What a publish or a JetStream request raises while the server is away or slow.
NATS_ERRORS: tuple[type[BaseException], ...] = (nats.errors.Error, asyncio.TimeoutError, OSError)
#: What awaiting a publish's ack raises: those, or its cancellation by a lost connection.
ACK_ERRORS: tuple[type[BaseException], ...] = (*NATS_ERRORS, asyncio.CancelledError)
T = TypeVar("T")


async def connect(url: str, stop: asyncio.Event, **options: Any) -> NATS:
    """A client that reconnects for ever (the floor server may be down for hours); tried until it first
    connects, or ``stop``. ``url``: one server, or a cluster's servers separated by commas."""

    async def quiet(exc: Exception) -> None:  # the client's own errors: a line in the log, no traceback
        log.warning("NATS: %s: %s", type(exc).__name__, exc)

    async def first() -> NATS:
        return await nats.connect(
            servers=url.split(","), max_reconnect_attempts=-1, reconnect_time_wait=0.5, connect_timeout=2,
            allow_reconnect=True, ping_interval=5, max_outstanding_pings=2, error_cb=quiet, **options)

    return await retrying(f"connecting to {url}", first, stop)


class Stopped(Exception):
    """A stop (SIGTERM) came while the floor was away: a clean end, nothing is in hand."""


async def retrying(what: str, call: Callable[[], Awaitable[T]], stop: asyncio.Event) -> T:
    """``call()`` until it succeeds, waiting a little longer each time (at most 2 s); :class:`Stopped` on
    stop."""
    delay = 0.1
    while True:
        try:
            return await call()
        except NATS_ERRORS as exc:
            log.warning("%s failed (%s: %s): retrying", what, type(exc).__name__, exc)
        if stop.is_set():
            raise Stopped(f"stopped while retrying {what}")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


def forked(source: JournalSource, tail: Tail) -> None:
    """:class:`JournalMismatch` unless the stream's row ``tail.last`` of the journal is the journal's own
    (its time, source, ref and input). A journal restored from an older copy keeps its id, and once it has
    grown past what the stream holds its rows from the copy's end are other inputs under the same row
    numbers: published, the floor would keep the first history and drop the second, or hold some of
    each (a review, 2026-12-07). A person decides what the table's history is."""
    if not tail.last or tail.body is None:
        return
    held = RowMessage.parse(tail.body)
    [entry] = source.entries(tail.last, tail.last)
    if held.row_key != entry_key(entry):
        raise JournalMismatch(
            source.path, f"row {tail.last} of journal {source.journal_id} is not the one the stream holds "
            "(another time or input): the journal was restored from an older copy, or replaced by another "
            "with its id; publishing it would give the floor two histories under one journal")


async def held_alike(js: JetStreamContext, path: Path, body: bytes, ack: api.PubAck) -> None:
    """:class:`JournalMismatch` if the stream dropped the publish of ``body`` as a duplicate (its message id
    within the duplicate window: ``ack.duplicate``, ``ack.seq`` the message it holds under that id) of a
    message with another row (time, source, ref or input, as :func:`forked` compares): another uplink sent
    that row of this journal from another history (two Pis running copies of one journal) moments before,
    and the server would drop this one unseen by the recorders, which find such a row only when it comes
    after the window. Costs a read only for a duplicate, which a running uplink rarely gets (a resend)."""
    if not ack.duplicate:
        return
    sent = RowMessage.parse(body)
    try:
        held = await js.get_msg(STREAM, seq=ack.seq)
    except NATS_ERRORS as exc:  # gone from the stream, or the server away: nothing to compare with
        log.warning("%s: row %d of journal %s was a duplicate of stream message %d, which cannot be read "
                    "(%s): not compared", sent.table_id, sent.row, sent.journal_id, ack.seq, exc)
        return
    if (held.headers or {}).get(MSG_ID) != sent.id:
        return
    kept = RowMessage.parse(held.data or b"")
    if kept.row_key != sent.row_key:
        raise JournalMismatch(
            path, f"table {sent.table_id} journal {sent.journal_id} row {sent.row}: the stream holds another "
            f"row under its id (stream message {ack.seq}), sent by another uplink moments before, and "
            "dropped this one as a duplicate: two histories under one journal (two Pis running copies?)")


class WindowBroken(nats.errors.Error):
    """A row not published: since the window began a publish failed or the connection was lost, and a
    row may go out only behind every row before it (the uplink asks the stream again first)."""


@dataclass
class _InFlight:
    message: RowMessage
    body: bytes
    ack: asyncio.Task[api.PubAck]


class Uplink:
    """One table's uplink: publish every row of its journal, then follow it, until :attr:`stop` is set.
    :meth:`connect` first (it makes the client the uplink needs), then :meth:`run`."""

    def __init__(self, config: TableConfig, *, window: int = 128, poll: float = 0.05,
                 publish_timeout: float = 5.0, replicas: int = 1) -> None:
        self.config = config
        self.js: JetStreamContext
        self.nc: NATS | None = None
        self.window = window
        self.poll = poll
        self.publish_timeout = publish_timeout
        self.replicas = replicas
        self.stop = asyncio.Event()
        #: The last row the stream acknowledged, the journal followed and its length (the heartbeat's).
        self.acked = 0
        self.journal_id: str | None = None
        self.journal_rows = 0
        #: The publishes awaiting their ack (a lost connection cancels them all at once).
        self._in_flight: deque[_InFlight] = deque()
        #: A publish failed or the connection was lost: no row goes out until the stream is asked again.
        self._broken = False
        #: The journals this process followed to their end and handed over from: their last row.
        self._finished: dict[str, int] = {}

    async def connect(self, url: str, **options: Any) -> NATS:
        """The uplink's client (see :func:`connect`), made so that nothing written before a lost
        connection reaches the stream after it: a publish while it reconnects fails instead of waiting
        in nats-py's reconnect buffer (``pending_size=0``), and what the client had not yet written
        when the connection broke is dropped before it reconnects (:meth:`_disconnected`)."""
        self.nc = await connect(url, self.stop, pending_size=0, disconnected_cb=self._disconnected, **options)
        self.js = self.nc.jetstream()
        return self.nc

    async def _disconnected(self) -> None:
        """nats-py's disconnect callback, run after the old socket closed and before any reconnect.
        nats-py would write its unsent publishes on the next connection, behind the ones lost in
        the dead one (rows 256-379 stored before 254-255): they go, and so does the whole window (its
        acks will not come; the uplink asks the stream what it holds). nats-py has no public call to
        empty its buffer, hence its two attributes (a list of commands and their size)."""
        assert self.nc is not None
        self.nc._pending.clear()
        self.nc._pending_data_size = 0
        self._broken = True
        for item in self._in_flight:
            item.ack.cancel()

    async def run(self) -> None:
        await retrying("creating the stream", lambda: ensure_stream(self.js, self.replicas), self.stop)
        while not self.stop.is_set():
            source = JournalSource(self.config)
            try:
                await self._publish_journal(source)
            finally:
                source.close()

    def _send(self, message: RowMessage, body: bytes, stored: Stored) -> asyncio.Task[api.PubAck]:
        return asyncio.ensure_future(self._publish(message, body, stored.header()))

    async def _publish(self, message: RowMessage, body: bytes, header: str) -> api.PubAck:
        """One row's publish, refused once the window is broken: were row 254's publish to fail while
        the client reconnects, 255's could succeed just after, stored before 254."""
        if self._broken:
            raise WindowBroken(f"row {message.row} held back")
        try:
            return await self.js.publish(subject(message.table_id, message.journal_id), body,
                                         timeout=self.publish_timeout, stream=STREAM,
                                         headers={MSG_ID: message.id, STORED: header})
        except NATS_ERRORS:
            self._broken = True
            raise

    async def _publish_journal(self, source: JournalSource) -> None:
        table_id, journal_id = self.config.table_id, source.journal_id
        self.journal_id, self.journal_rows = journal_id, source.last_row()
        self._broken = False  # nothing in flight yet
        tail = await retrying("reading the stream's cursor",
                              lambda: read_tail(self.js, table_id, journal_id, self._finished), self.stop)
        stored, missing = tail.stored, set(tail.missing)
        replay = Replay(source)
        last = source.last_row()
        if tail.last > last:
            raise JournalMismatch(
                source.path, f"the stream holds row {tail.last} of journal {journal_id} but the journal has "
                f"{last} rows: restored from an older copy, or not the table's journal?")
        forked(source, tail)
        pending = self._in_flight = deque()
        begun = replay.resume(source, min([tail.last, *(row - 1 for row in missing)]))
        if begun:
            log.info("%s: state from the journal's checkpoint at row %d", table_id, begun)
        for start in range(begun + 1, tail.last + 1, 1000):  # the rows already sent, to rebuild the state
            for entry in source.entries(start, min(tail.last, start + 999)):
                message = replay.message(entry, last)
                if entry.id in missing:
                    body = message.body()
                    pending.append(_InFlight(message, body, self._send(message, body, stored)))
        if missing:
            log.warning("%s: the stream lacks rows %s of journal %s below its row %d: publishing them again",
                        table_id, sorted(missing), journal_id, tail.last)
        log.info("%s: journal %s, resuming after row %d of %d", table_id, journal_id, tail.last, last)
        self.acked = tail.last
        delay = 0.1
        rewritten: str | None = None
        while True:
            if not self.stop.is_set() and not self._broken and len(pending) < self.window and not rewritten:
                last = self.journal_rows = source.last_row()
                if last != replay.row:  # before a row goes out: is the file still the journal replayed?
                    rewritten = source.rewritten(replay.last)
                    if rewritten:
                        log.error("%s: journal %s was rewritten in place (%s): restored from a copy, or "
                                  "another journal put in its file; starting over on it", table_id,
                                  journal_id, rewritten)
                if replay.row < last and not rewritten:
                    stop_row = min(last, replay.row + self.window - len(pending))
                    for entry in source.entries(replay.row + 1, stop_row):
                        message = replay.message(entry, last)
                        body = message.body()
                        pending.append(_InFlight(message, body, self._send(message, body, stored)))
                        await asyncio.sleep(0)  # the publish goes out
                        faults.point("floor_published")
            if not pending:
                self._broken = False  # nothing in flight: nothing can be stored out of order
                # Replaced, and every row of the old journal sent (read after: its last rows may come just
                # before the hand-over, and a dropped connection skipped their pass: a review, 2026-12-07).
                if self.stop.is_set() or rewritten:
                    return
                if source.replaced() and replay.row >= source.last_row():
                    self._finished[journal_id] = replay.row
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), self.poll)
                continue
            head = pending[0]
            try:
                ack = await head.ack
            except ACK_ERRORS as exc:
                task = asyncio.current_task()
                if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                    raise  # the uplink itself is cancelled, not its publish by a lost connection
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                stored = await self._again(journal_id, exc)
                continue
            delay = 0.1
            await held_alike(self.js, source.path, head.body, ack)
            pending.popleft()
            stored.add(head.message.row, ack.seq)
            self.acked = max(self.acked, head.message.row)

    async def _again(self, journal_id: str, exc: BaseException) -> Stored:
        """After a failed publish, an ack timeout or a lost connection: drop the whole window, ask the
        stream which rows of the journal it holds (waiting until it answers) and publish again, in
        order and with their message ids, the window's rows it lacks; so the next row the stream stores
        is the one after the last it holds. The stream's record of the journal is returned."""
        pending, table_id = self._in_flight, self.config.table_id
        first, final = pending[0].message.row, pending[-1].message.row
        lost = isinstance(exc, asyncio.CancelledError)
        reason = "connection lost" if lost else f"{type(exc).__name__}: {exc}"
        log.warning("%s: row %d not acknowledged (%s): rows %d..%d dropped, asking the stream what it holds",
                    table_id, first, reason, first, final)
        for item in pending:
            item.ack.cancel()
        await asyncio.gather(*(item.ack for item in pending), return_exceptions=True)
        self._broken = False  # a loss from here on breaks the window again (the publishes below refuse)
        tail = await retrying("reading the stream's cursor",
                              lambda: read_tail(self.js, table_id, journal_id), self.stop)
        held = tail.stored
        lacking = [item for item in pending
                   if item.message.row > held.row and item.message.row not in held.above]
        self.acked = max(self.acked, held.row)
        pending.clear()
        for item in lacking:
            item.ack = self._send(item.message, item.body, held)
            pending.append(item)
        if lacking:
            log.warning("%s: the stream holds rows up to %d: publishing rows %d..%d again",
                        table_id, held.row, lacking[0].message.row, lacking[-1].message.row)
        return held
