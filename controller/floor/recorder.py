"""``croupier floor record``: the stream written into PostgreSQL, acknowledged only after the commit.

A durable pull consumer (shared by every recorder: each batch goes to one of them) with explicit
acks. A batch is parsed, written in one transaction (controller.floor.store) and only then
acknowledged, so a recorder killed at any instant leaves its batch unacknowledged and JetStream
delivers it again after ``ack_wait``: to this recorder restarted or to another, and the primary keys
make the second write a no-op. A database that is down is retried (the batch is kept, not acked).
A batch the database refuses is written again without its malformed bodies (one by one if need
be); a malformed body is terminated, never recordable, and its row becomes a gap (docs/floor.md).

Holes: rows recorded above a missing one. With several recorders a hole is normal for an instant
(another recorder is committing the batch before), and an uplink that died while republishing a
few rows (controller.floor.cursor) fills its hole when it is restarted. A hole is a *gap* when it
stayed ``gap_grace`` seconds while the consumer had nothing pending and nothing awaiting an ack
(three checks in a row), or four times as long in any case: then it is written to ``gaps`` and
logged as an error; if the rows come after all, the gap is marked filled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import psycopg
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import api

from controller.daemon import faults
from controller.floor import alive, store
from controller.floor.database import Database
from controller.floor.pull import Puller
from controller.floor.schema import migrate
from controller.floor.stream import ensure_stream, rows_consumer
from controller.floor.uplink import NATS_ERRORS, retrying
from controller.floor.wire import (
    FORMAT,
    MSG_ID,
    RECORD_BATCH,
    RECORD_WRITERS,
    STREAM,
    RowMessage,
    UnknownFormat,
    own_table,
    subject_table,
)

log = logging.getLogger("croupier.floor")

#: Consecutive idle checks (nothing pending, nothing unacknowledged) a hole must survive to be a gap.
IDLE_CHECKS = 3


def _back_to(free: asyncio.Queue[Database], writer: Database) -> Callable[[object], None]:
    """A done callback that gives ``writer`` back to the ``free`` ones when its batch is done."""
    return lambda _: free.put_nowait(writer)


def _name(m: Msg) -> str:
    """The message id of ``m`` (``<table>:<journal>:<row>``), as its uplink gave it, for the log."""
    return (m.headers or {}).get(MSG_ID, "(no message id)")


def _say_conflicts(conflicts: list[store.Conflict]) -> None:
    """An ERROR per journal for the rows that came again with another body than the one recorded, once
    (committed into ``conflicts``; a redelivery adds nothing): JetStream and the recorder took them as
    resends, and nothing said that the floor was handed two histories under one journal (a review)."""
    by_journal: dict[tuple[str, str], set[int]] = {}
    for c in conflicts:  # a row once, though both its bodies may be kept apart (a row "5, 5" said before)
        by_journal.setdefault((c.table_id, c.journal_id), set()).add(c.row)
    for (table_id, journal_id), rows in sorted(by_journal.items()):
        shown = ", ".join(map(str, sorted(rows)[:20])) + (" ..." if len(rows) > 20 else "")
        log.error("CONFLICT: table %s journal %s: row(s) %s (%d) came again with another input, time, source "
                  "or ref than the one recorded, or follow such a row: two histories under one journal (two "
                  "Pis running copies of it, or a journal restored under its id)? The first recorded is "
                  "kept; the other body is in conflicts", table_id, journal_id, shown, len(rows))


class Recorder:
    """One recorder process's work; :attr:`stop` ends it after the batch in hand."""

    def __init__(self, nc: NATS, dsn: str, *, durable: str = "recorder", batch: int = RECORD_BATCH,
                 ack_wait: float = 30.0, gap_grace: float = 60.0, check_every: float = 1.0,
                 replicas: int = 1, writers: int = RECORD_WRITERS) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.board = alive.Board()
        self.dsn = dsn
        self.durable = durable
        self.batch = batch
        self.ack_wait = ack_wait
        self.gap_grace = gap_grace
        self.replicas = replicas
        self.check_every = check_every
        self.stop = asyncio.Event()
        #: The migrations, heartbeats and hole checks; the batches go to :attr:`writers`.
        self.db = Database(dsn, self.stop)
        if writers < 1:
            raise ValueError("a recorder needs at least one writer")
        self.writers = [Database(dsn, self.stop) for _ in range(writers)]
        #: Holes seen: (first seen, idle checks in a row).
        self._suspects: dict[store.Hole, tuple[float, int]] = {}
        self._checked = 0.0
        #: Messages recorded by this process (for its log).
        self.recorded = 0

    async def run(self) -> None:
        await retrying("creating the stream", lambda: ensure_stream(self.js, self.replicas), self.stop)
        config = api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT, ack_wait=self.ack_wait,
                                    max_ack_pending=20_000, num_replicas=self.replicas)
        await retrying("joining the consumer", lambda: rows_consumer(self.js, self.durable, config),
                       self.stop)
        puller = Puller(self.nc, STREAM, self.durable)
        await puller.start()
        await self.db.run(lambda conn: migrate(conn))
        await self.board.listen(self.nc)
        free: asyncio.Queue[Database] = asyncio.Queue()
        for writer in self.writers:
            free.put_nowait(writer)
        writing: set[asyncio.Task[None]] = set()
        ahead = asyncio.ensure_future(self._fetch(puller))
        stopped = False
        try:
            while not self.stop.is_set():
                msgs = await ahead
                if msgs:
                    writer = await free.get()
                    self._raise_failed(writing)
                    task = asyncio.ensure_future(self._record(msgs, writer))
                    writing.add(task)
                    task.add_done_callback(_back_to(free, writer))
                # The next batch comes in while this one is written (on a worker thread). It waits
                # unacknowledged, as any batch in hand.
                ahead = asyncio.ensure_future(self._fetch(puller))
                self._raise_failed(writing)
                if time.monotonic() - self._checked >= self.check_every:
                    self._checked = time.monotonic()
                    await self._record_heartbeats()
                    await self._check_holes()
            stopped = True
        finally:
            ahead.cancel()  # what it fetched is delivered again after ack_wait
            await asyncio.gather(ahead, return_exceptions=True)
            if not stopped:  # a fault or a cancel: the batches in hand are left unacknowledged
                for task in writing:
                    task.cancel()
            await asyncio.gather(*writing, return_exceptions=True)  # stopped: each is committed and acked
            await puller.close()
            self.db.close()
            for writer in self.writers:
                writer.close()
        self._raise_failed(writing)

    @staticmethod
    def _raise_failed(writing: set[asyncio.Task[None]]) -> None:
        """Forget the batches written; raise what failed one (a fault, not a database away: that is
        retried inside it), so that the recorder stops and says so rather than going on without it."""
        for task in [t for t in writing if t.done()]:
            writing.discard(task)
            failed = None if task.cancelled() else task.exception()
            if failed is not None:
                raise failed

    async def _fetch(self, puller: Puller) -> list[Msg]:
        """The next batch: what the consumer has now, up to :attr:`batch` (waiting at most 1 s for one)."""
        try:
            return await puller.fetch(self.batch, timeout=1.0)
        except NATS_ERRORS as exc:
            log.warning("fetch failed (%s: %s): retrying", type(exc).__name__, exc)
            await asyncio.sleep(0.5)
            return []

    async def _record(self, msgs: list[Msg], writer: Database) -> None:
        """Write ``msgs`` in one transaction, then acknowledge them. A body of another format is left
        to a newer recorder (nak'd with a delay: not ours to judge); a malformed one, which no
        recorder can ever record, is terminated (a missing row: a gap) and the rest recorded."""
        bodies, subjects = [m.data for m in msgs], [m.subject for m in msgs]
        malformed: dict[int, str] = {}
        conflicts: list[store.Conflict] = []
        try:
            unknown = set(await self._write(writer, bodies, subjects, conflicts))
        except store.BAD_BODY:  # sorted out in Python, message by message
            unknown, malformed = await self._sort_out(writer, bodies, subjects, conflicts)
        faults.point("floor_committed")
        _say_conflicts(conflicts)
        for n, m in enumerate(msgs):
            try:
                if n in malformed:
                    log.error("message %s on %s not recorded, malformed (%s): terminated, it will be a "
                              "gap", _name(m), m.subject, malformed[n])
                    await m.term()
                elif n in unknown:
                    log.error("message %s on %s not recorded: not a floor row message of format %d",
                              _name(m), m.subject, FORMAT)
                    await m.nak(delay=self.ack_wait)
                else:
                    await m.ack()
            except NATS_ERRORS as exc:  # committed: a redelivery will be a no-op
                log.warning("ack failed (%s): the batch will be delivered again", exc)
        self.recorded += len(msgs) - len(unknown) - len(malformed)

    async def _sort_out(self, writer: Database, bodies: list[bytes], subjects: list[str],
                        conflicts: list[store.Conflict]) -> tuple[set[int], dict[int, str]]:
        """Record the ``bodies`` of a batch the database refused (``subjects``: the subject each came on):
        those this code reads in one transaction, or if the database refuses that too, each in its own.
        The positions of the bodies of another format, and of the malformed ones with what is wrong."""
        unknown: set[int] = set()
        malformed: dict[int, str] = {}
        good: list[int] = []
        for n, body in enumerate(bodies):
            try:
                own_table(RowMessage.parse(body).table_id, subjects[n])
                good.append(n)
            except UnknownFormat:
                unknown.add(n)
            except ValueError as exc:
                malformed[n] = str(exc)
        try:
            await self._write(writer, [bodies[g] for g in good], [subjects[g] for g in good], conflicts)
        except store.BAD_BODY:  # parse read a body the database refuses: each alone finds it
            for g in good:
                try:
                    await self._write(writer, [bodies[g]], [subjects[g]], conflicts)
                except store.BAD_BODY as exc:
                    malformed[g] = f"the database refuses it: {exc}"
        return unknown, malformed

    async def _write(self, writer: Database, bodies: list[bytes], subjects: list[str],
                     conflicts: list[store.Conflict]) -> list[int]:
        """:func:`store.write_bodies` on ``writer``'s worker thread: the positions of another format. A
        table's NATS user publishes only on its own subject: a body naming another table than its subject's
        is refused (it wrote that table's money into the history; a review, 2026-12-07)."""
        tables = [subject_table(s) or "" for s in subjects]
        # write_bodies adds to ``conflicts`` only once its transaction is committed: a try the database's
        # loss undid adds nothing.
        return await writer.run(lambda conn: store.write_bodies(conn, bodies, tables, conflicts))

    async def _record_heartbeats(self) -> None:
        heard = self.board.take()
        await self.db.run(lambda conn: alive.record(conn, heard))

    async def _check_holes(self) -> None:
        found: list[store.Hole] = []

        def look(conn: psycopg.Connection[Any]) -> None:
            found[:] = store.holes(conn)

        await self.db.run(look)
        if not found:
            self._suspects.clear()
            return
        try:
            info = await self.js.consumer_info(STREAM, self.durable)
            idle = info.num_pending == 0 and info.num_ack_pending == 0
        except NATS_ERRORS:
            idle = False
        now = time.monotonic()
        suspects = {}
        for hole in found:
            since, count = self._suspects.get(hole, (now, 0))
            count = count + 1 if idle else 0
            suspects[hole] = (since, count)
            age = now - since
            if (count >= IDLE_CHECKS and age >= self.gap_grace) or age >= 4 * self.gap_grace:
                new = await self._record_gap(hole)
                if new:
                    log.error("GAP: table %s journal %s rows %d..%d are missing from the stream (recorded "
                              "in gaps)", hole.table_id, hole.journal_id, hole.first_row, hole.last_row)
        self._suspects = suspects

    async def _record_gap(self, hole: store.Hole) -> bool:
        new: list[bool] = []
        await self.db.run(lambda conn: new.append(store.record_gap(conn, hole)))
        return new[-1]
