"""Writing floor messages into PostgreSQL: one transaction per batch, idempotent, holes found and kept.

A batch is written whole or not at all, and every insert is ``ON CONFLICT DO NOTHING`` on the
journal's own keys, so a message recorded twice (redelivered after a crash before its ack, or taken
by a second recorder) changes nothing. Each batch first locks the ``tables`` rows of the journals it
touches, in key order: recorders writing the same journal take turns, and never deadlock. Then it
moves each journal's ``recorded_row`` (every row up to it is recorded) over the rows now present.
Rows recorded above a missing one are a *hole*; :func:`holes` lists them for the recorder to judge
(a hole that nothing left to deliver can fill is a gap: :func:`record_gap`). Last, in the same
transaction, the batch's significant rows go into the event log (controller.floor.significant).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from controller.floor import significant
from controller.floor.wire import RowMessage

#: Work done on the database connection by the recorder (retried whole if the database was away).
Work = Callable[["psycopg.Connection[Any]"], object]


@dataclass(frozen=True, slots=True)
class Hole:
    """Rows ``first_row``..``last_row`` of a journal are missing, and a later row is recorded."""

    table_id: str
    journal_id: str
    first_row: int
    last_row: int


def write_batch(conn: psycopg.Connection[Any], messages: Sequence[RowMessage]) -> None:
    """Record ``messages`` in one transaction (the caller acknowledges them only after this returns)."""
    by_journal: dict[tuple[str, str], list[RowMessage]] = {}
    for m in sorted(messages, key=lambda m: (m.table_id, m.journal_id, m.row)):
        by_journal.setdefault((m.table_id, m.journal_id), []).append(m)
    with conn.transaction(), conn.cursor() as cur:
        for (table_id, journal_id), rows in by_journal.items():
            newest = rows[-1]
            cur.execute(
                "INSERT INTO tables (table_id, journal_id, game, options, currency) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (table_id, journal_id, newest.game, Jsonb(newest.options), Jsonb(newest.currency)))
            cur.execute("SELECT recorded_row FROM tables WHERE table_id = %s AND journal_id = %s FOR UPDATE",
                        (table_id, journal_id))
            cur.executemany(
                "INSERT INTO inputs (table_id, journal_id, row, at, source, ref, input, first_seq, "
                "event_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(table_id, journal_id, m.row, m.at, m.source, m.ref, Jsonb(m.input), m.first_seq,
                  len(m.events)) for m in rows])
            events = [(table_id, journal_id, int(e["seq"]), m.row, str(e["event"]), Jsonb(e))
                      for m in rows for e in m.events]
            if events:
                cur.executemany("INSERT INTO events (table_id, journal_id, seq, row, event, payload) "
                                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", events)
            rounds = [(table_id, journal_id, int(r["round"]), str(r["status"]), r.get("opened_at"),
                       r.get("ended_at"), int(r["first_seq"]), int(r["last_seq"]), r.get("house_net"),
                       Jsonb(r))
                      for m in rows if (r := m.round) is not None]
            if rounds:
                cur.executemany(
                    "INSERT INTO rounds (table_id, journal_id, round, status, opened_at, ended_at, "
                    "first_seq, last_seq, house_net, record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING", rounds)
            _advance(cur, table_id, journal_id, max(m.journal_rows for m in rows), newest.at)
        # Last: the event log's lock after every tables row lock (eventlog's rule), held to the commit.
        significant.log_batch(cur, [m for rows in by_journal.values() for m in rows])


def _advance(cur: psycopg.Cursor[Any], table_id: str, journal_id: str, journal_rows: int,
             at: float) -> None:
    """Move ``recorded_row`` to the end of the run of recorded rows that starts right after it."""
    # The rows after recorded_row, numbered in order: the first run is where row - its number is
    # still recorded_row (an index range of the few rows above it, not a scan of the journal).
    cur.execute(
        """
        UPDATE tables SET
            recorded_row = COALESCE((
                SELECT MAX(x.row) FROM (
                    SELECT i.row, i.row - ROW_NUMBER() OVER (ORDER BY i.row) AS start FROM inputs i
                    WHERE i.table_id = %(t)s AND i.journal_id = %(j)s AND i.row > tables.recorded_row) x
                WHERE x.start = tables.recorded_row), tables.recorded_row),
            journal_rows = GREATEST(tables.journal_rows, %(n)s),
            last_at = GREATEST(tables.last_at, %(at)s),
            last_seen = now()
        WHERE table_id = %(t)s AND journal_id = %(j)s
        RETURNING recorded_row
        """, {"t": table_id, "j": journal_id, "n": journal_rows, "at": at})
    row = cur.fetchone()
    if row is not None:
        cur.execute("UPDATE gaps SET filled_at = now() WHERE table_id = %s AND journal_id = %s "
                    "AND last_row <= %s AND filled_at IS NULL", (table_id, journal_id, row[0]))


def holes(conn: psycopg.Connection[Any]) -> list[Hole]:
    """Every journal with a row recorded above a missing one: the first missing range of each."""
    rows = conn.execute(
        """
        SELECT t.table_id, t.journal_id, t.recorded_row + 1,
               (SELECT MIN(i.row) FROM inputs i WHERE i.table_id = t.table_id AND i.journal_id = t.journal_id
                  AND i.row > t.recorded_row) - 1
        FROM tables t
        WHERE EXISTS (SELECT 1 FROM inputs i WHERE i.table_id = t.table_id AND i.journal_id = t.journal_id
                      AND i.row > t.recorded_row)
        ORDER BY 1, 2
        """).fetchall()
    conn.commit()
    return [Hole(str(a), str(b), int(c), int(d)) for a, b, c, d in rows]


def record_gap(conn: psycopg.Connection[Any], hole: Hole) -> bool:
    """Keep ``hole`` in ``gaps``; True if it was not recorded before."""
    with conn.transaction():
        done = conn.execute(
            "INSERT INTO gaps (table_id, journal_id, first_row, last_row) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING", (hole.table_id, hole.journal_id, hole.first_row, hole.last_row))
        return done.rowcount == 1

