"""Writing floor messages into PostgreSQL: one transaction per batch, idempotent, holes found and kept.

A batch is written whole or not at all, and every insert is ``ON CONFLICT DO NOTHING`` on the
journal's own keys, so a message recorded twice (redelivered after a crash before its ack, or taken
by a second recorder) changes nothing. Each batch first locks the ``tables`` rows of the journals it
touches, in key order: recorders writing the same journal take turns, and never deadlock. Then it
moves each journal's ``recorded_row`` (every row up to it is recorded) over the rows now present.
Rows recorded above a missing one are a *hole*; :func:`holes` lists them for the recorder to judge
(a hole that nothing left to deliver can fill is a gap: :func:`record_gap`). Last, in the same
transaction, the batch's significant rows go into the event log (controller.floor.significant).

Speed: the message bodies go to PostgreSQL as they came off the wire, copied into a temporary table
and parsed there once (``jsonb``, in C); their fields are taken out once into a typed temporary
table, and each floor table takes the whole batch from it in one set-based statement: a handful of
statements per batch whatever its size and however many journals it spans, and no JSON parsed or
built in Python (bench/floor_ingest.py; docs/floor.md, "How fast") but the few rows that may be
significant events (a superset chosen in SQL, judged by
:func:`controller.floor.significant.row_kind`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from controller.floor import significant
from controller.floor.wire import FORMAT, RowMessage

#: Work done on the database connection by the recorder (retried whole if the database was away).
Work = Callable[["psycopg.Connection[Any]"], object]



class BadBody(ValueError):
    """A body the SQL took that RowMessage.parse refuses (a command row whose input is not an object)."""


#: Malformed bodies (not JSON, a field missing or of the wrong type) make the whole batch fail with
#: one of these; the recorder then sorts the batch in Python (RowMessage.parse) and writes the rest.
BAD_BODY: tuple[type[Exception], ...] = (psycopg.DataError, psycopg.IntegrityError, BadBody)

# The batch, one message body a line (COPY's text format), parsed once into ``jsonb`` (floor_batch);
# then each body's fields taken out once, typed, into floor_rows, which every later statement reads.
# Both are the session's own temporary tables, made at its first batch. Their large values (a round
# record is a few kB) are kept uncompressed (STORAGE EXTERNAL): the default would compress each at
# the insert and decompress it again at every statement that reads a field of it, which was a third
# of the database's time per row (docs/floor.md, "How fast").
_BATCH = """
DO $$ BEGIN
IF to_regclass('pg_temp.floor_batch') IS NULL THEN
    CREATE TEMPORARY TABLE floor_batch (n integer NOT NULL, t text, d jsonb NOT NULL) ON COMMIT DELETE ROWS;
    ALTER TABLE floor_batch ALTER d SET STORAGE EXTERNAL;
    CREATE TEMPORARY TABLE floor_rows (
        n integer NOT NULL, table_id text, journal_id text, row bigint, at float8, source text, ref text,
        input jsonb, first_seq bigint, events jsonb, round jsonb, journal_rows bigint, game text,
        options jsonb, currency jsonb) ON COMMIT DELETE ROWS;
    ALTER TABLE floor_rows ALTER events SET STORAGE EXTERNAL, ALTER round SET STORAGE EXTERNAL;
END IF;
END $$
"""
# Empty, unless the caller's transaction wrote a batch before (ON COMMIT empties them otherwise).
_EMPTY = "DELETE FROM floor_batch; DELETE FROM floor_rows"
_ROWS = """
INSERT INTO floor_rows
SELECT n, d->>'table', d->>'journal', (d->>'row')::bigint, (d->>'at')::float8, d->>'source', d->>'ref',
       d->'input', (d->>'first_seq')::bigint, d->'events', d->'round', (d->>'journal_rows')::bigint,
       d->>'game', d->'options', d->'currency'
FROM floor_batch WHERE d->>'format' = %(f)s
"""
# A journal not seen before, with the game, options and currency of its newest row in the batch.
_NEW_JOURNALS = """
INSERT INTO tables (table_id, journal_id, game, options, currency)
SELECT DISTINCT ON (table_id, journal_id) table_id, journal_id, game, options, currency
FROM floor_rows r
WHERE NOT EXISTS (SELECT 1 FROM tables t WHERE t.table_id = r.table_id AND t.journal_id = r.journal_id)
ORDER BY table_id, journal_id, row DESC
ON CONFLICT DO NOTHING
"""
_LOCK = """
SELECT t.table_id FROM tables t
WHERE (t.table_id, t.journal_id) IN (SELECT table_id, journal_id FROM floor_rows)
ORDER BY t.table_id, t.journal_id FOR UPDATE
"""
# A message whose key (table, journal, row) is recorded, or held by an earlier message of the batch, with
# another body: two histories under one journal (docs/floor.md, "A row sent again with another body"). The
# body compared is the journal row itself, its at, source, ref and input (what the uplink's own fork check,
# uplink.forked, compares): a true resend carries them equal, while its journal_rows and Croupier-Stored
# mark are what the journal and the stream were at its sending, and its events and round are derived from
# the rows by the uplink's replay (a newer uplink, republishing, may put more fields in them). The other
# body is kept in ``conflicts`` once (those new are returned, for the log) and taken out of the batch, so
# nothing of it (its events, its round, its significant rows) is written: the first stays the record.
# And a row not recorded yet that follows such another body of the row before it (its first seq continues
# that body's events, in the batch or in ``conflicts``, and not the record's) is the other history going on:
# kept apart too, with every row of the batch that goes on from it (seq after seq). Recorded, it put the other
# history's row on top of the first's rows, its events numbered past a hole, and the first history's own row
# was then the one kept apart (a review). A row whose events fit both cannot be told: it is recorded; so is
# one whose record's row before it is not known (not recorded, not in the batch: delivered out of order): a
# true row so kept apart, its followers in later batches all followed it in ``conflicts``, none guarded.
# Of a new row's bodies in one batch, the one compared with is the one whose first seq goes on, row after
# row (``chain``), from the recorded row before it, else the first delivered: the first always, the record's
# own row after the other history's was kept apart with its followers, a hole (a review). Only journals with
# two bodies of a row in the batch (``contested``) walk the chain: a true batch costs one grouping. The chain
# holds one body a row, the first delivered of those going on from the one chosen for the row before (or
# from the recorded row), and stops at a recorded row: bodies chosen row by row apart, two bodies both going
# on from row 3 gave B's 4 and A's 5, and one going on through another body of a recorded row was taken for
# the record's; either way a hole, both bodies of a row kept apart (a review, 2026-12-08). Of those, one the
# recorded row after goes on from comes first, and so it does of a row's bodies off the chain (``leads``): the
# first delivered put the other history's row between the record's (its row after delivered out of order,
# recorded) and kept the record's own row apart (a review).
_CONFLICTS = """
WITH RECURSIVE contested AS (
    SELECT DISTINCT table_id, journal_id FROM floor_rows GROUP BY table_id, journal_id, row
    HAVING COUNT(DISTINCT jsonb_build_array(at, source, ref, input)) > 1
), leads AS (
    SELECT r.n FROM floor_rows r JOIN contested USING (table_id, journal_id)
    JOIN inputs k ON (k.table_id, k.journal_id, k.row, k.first_seq)
                   = (r.table_id, r.journal_id, r.row + 1, r.first_seq + jsonb_array_length(r.events))
), chain AS (
    (SELECT DISTINCT ON (r.table_id, r.journal_id, r.row) r.n, r.table_id, r.journal_id, r.row,
            r.first_seq + jsonb_array_length(r.events) AS next_seq
     FROM floor_rows r JOIN contested USING (table_id, journal_id)
     JOIN inputs i ON (i.table_id, i.journal_id, i.row, i.first_seq + i.event_count)
                    = (r.table_id, r.journal_id, r.row - 1, r.first_seq)
     WHERE NOT EXISTS (SELECT 1 FROM inputs j WHERE (j.table_id, j.journal_id, j.row)
                       = (r.table_id, r.journal_id, r.row))
     ORDER BY r.table_id, r.journal_id, r.row, NOT EXISTS (SELECT 1 FROM leads l WHERE l.n = r.n), r.n)
    UNION ALL
    SELECT r.n, c.table_id, c.journal_id, c.row + 1, r.first_seq + jsonb_array_length(r.events)
    FROM chain c CROSS JOIN LATERAL (
        SELECT f.n, f.first_seq, f.events FROM floor_rows f
        WHERE (f.table_id, f.journal_id, f.row, f.first_seq)
              = (c.table_id, c.journal_id, c.row + 1, c.next_seq)
          AND NOT EXISTS (SELECT 1 FROM inputs j WHERE (j.table_id, j.journal_id, j.row)
                          = (f.table_id, f.journal_id, f.row))
        ORDER BY NOT EXISTS (SELECT 1 FROM leads l WHERE l.n = f.n), f.n LIMIT 1) r
), firsts AS (
    SELECT DISTINCT ON (r.table_id, r.journal_id, r.row) r.table_id, r.journal_id, r.row, r.at, r.source,
           r.ref, r.input, r.first_seq, r.first_seq + jsonb_array_length(r.events) AS next_seq
    FROM floor_rows r LEFT JOIN chain c USING (n) LEFT JOIN leads l USING (n)
    ORDER BY r.table_id, r.journal_id, r.row, c.n IS NULL, l.n IS NULL, r.n
), fresh AS (
    SELECT f.* FROM firsts f WHERE NOT EXISTS (
        SELECT 1 FROM inputs i WHERE (i.table_id, i.journal_id, i.row) = (f.table_id, f.journal_id, f.row))
), kept AS (
    SELECT i.table_id, i.journal_id, i.row, i.at, i.source, i.ref, i.input, i.first_seq,
           i.first_seq + i.event_count AS next_seq
    FROM inputs i WHERE (i.table_id, i.journal_id, i.row) IN (
        SELECT table_id, journal_id, row + d FROM floor_rows, (VALUES (0), (-1)) AS v(d))
    UNION ALL
    SELECT * FROM fresh
), differs AS (
    SELECT r.n, r.table_id, r.journal_id, r.row, r.first_seq + jsonb_array_length(r.events) AS next_seq
    FROM floor_rows r JOIN kept k USING (table_id, journal_id, row)
    WHERE (r.at, r.source, r.ref, r.input) IS DISTINCT FROM (k.at, k.source, k.ref, k.input)
), others_before AS (
    SELECT table_id, journal_id, row, next_seq FROM differs
    UNION ALL
    SELECT c.table_id, c.journal_id, c.row,
           (c.body->>'first_seq')::bigint + jsonb_array_length(c.body->'events') FROM conflicts c
    WHERE (c.table_id, c.journal_id, c.row) IN (SELECT table_id, journal_id, row - 1 FROM fresh)
), placed AS (
    SELECT f.table_id, f.journal_id, f.row,
           (LAG(f.row) OVER w = f.row - 1 AND LAG(f.next_seq) OVER w = f.first_seq) AS goes_on,
           EXISTS (SELECT 1 FROM others_before o WHERE (o.table_id, o.journal_id, o.row, o.next_seq)
                   = (f.table_id, f.journal_id, f.row - 1, f.first_seq))
           AND EXISTS (SELECT 1 FROM kept k WHERE (k.table_id, k.journal_id, k.row)
                       = (f.table_id, f.journal_id, f.row - 1))
           AND NOT EXISTS (SELECT 1 FROM kept k WHERE (k.table_id, k.journal_id, k.row, k.next_seq)
                           = (f.table_id, f.journal_id, f.row - 1, f.first_seq)) AS follows_other
    FROM fresh f WINDOW w AS (PARTITION BY f.table_id, f.journal_id ORDER BY f.row)
), segments AS (
    SELECT p.*, COUNT(*) FILTER (WHERE p.goes_on IS NOT TRUE)
                    OVER (PARTITION BY p.table_id, p.journal_id ORDER BY p.row) AS segment
    FROM placed p
), astray AS (
    SELECT table_id, journal_id, row FROM (
        SELECT s.table_id, s.journal_id, s.row, bool_or(s.follows_other)
                   OVER (PARTITION BY s.table_id, s.journal_id, s.segment ORDER BY s.row) AS away
        FROM segments s) z
    WHERE away
), other AS (
    SELECT r.n, r.table_id, r.journal_id, r.row,
           md5(jsonb_build_array(r.at, r.source, r.ref, r.input)::text) AS digest
    FROM floor_rows r
    WHERE r.n IN (SELECT n FROM differs)
       OR (r.table_id, r.journal_id, r.row) IN (SELECT table_id, journal_id, row FROM astray)
), dropped AS (
    DELETE FROM floor_rows WHERE n IN (SELECT n FROM other)
)
INSERT INTO conflicts (table_id, journal_id, row, digest, body)
SELECT DISTINCT ON (o.table_id, o.journal_id, o.row, o.digest) o.table_id, o.journal_id, o.row, o.digest, b.d
FROM other o JOIN floor_batch b USING (n) ORDER BY o.table_id, o.journal_id, o.row, o.digest, o.n
ON CONFLICT DO NOTHING
RETURNING table_id, journal_id, row
"""
_INPUTS = """
INSERT INTO inputs (table_id, journal_id, row, at, source, ref, input, first_seq, event_count)
SELECT table_id, journal_id, row, at, source, ref, input, first_seq, jsonb_array_length(events)
FROM floor_rows
ON CONFLICT DO NOTHING
"""
_EVENTS = """
INSERT INTO events (table_id, journal_id, seq, row, event, payload)
SELECT table_id, journal_id, (e->>'seq')::bigint, row, e->>'event', e
FROM floor_rows, jsonb_array_elements(events) e
ON CONFLICT DO NOTHING
"""
_ROUNDS = """
INSERT INTO rounds (table_id, journal_id, round, status, opened_at, ended_at, first_seq, last_seq,
                    house_net, record)
SELECT table_id, journal_id, (round->>'round')::bigint, round->>'status', (round->>'opened_at')::float8,
       (round->>'ended_at')::float8, (round->>'first_seq')::bigint, (round->>'last_seq')::bigint,
       (round->>'house_net')::bigint, round
FROM floor_rows WHERE jsonb_typeof(round) = 'object'
ON CONFLICT DO NOTHING
"""
# Each journal's recorded_row moved to the end of the run of recorded rows that starts right after
# it: the rows above it, numbered in order, are that run while row - its number is still
# recorded_row (an index range of the few rows above it, not a scan of the journal). Its currency
# becomes its newest row's when the batch holds the newest row recorded (a redelivered or gap-filling
# batch does not take it back): a ``limits`` row may change the decimals, and the pit board starts its
# tile with these. Then the gaps now below it are marked filled.
_ADVANCE = """
WITH seen AS (
    SELECT table_id, journal_id, MAX(journal_rows) AS n, MAX(at) AS at, MAX(row) AS top,
           (ARRAY_AGG(currency ORDER BY row DESC))[1] AS currency
    FROM floor_rows GROUP BY 1, 2
), moved AS (
    UPDATE tables SET
        recorded_row = COALESCE((
            SELECT MAX(x.row) FROM (
                SELECT i.row, i.row - ROW_NUMBER() OVER (ORDER BY i.row) AS start FROM inputs i
                WHERE i.table_id = tables.table_id AND i.journal_id = tables.journal_id
                  AND i.row > tables.recorded_row) x
            WHERE x.start = tables.recorded_row), tables.recorded_row),
        journal_rows = GREATEST(tables.journal_rows, seen.n),
        last_at = GREATEST(tables.last_at, seen.at),
        currency = CASE WHEN seen.top >= (
            SELECT MAX(i.row) FROM inputs i
            WHERE i.table_id = tables.table_id AND i.journal_id = tables.journal_id)
            THEN seen.currency ELSE tables.currency END,
        last_seen = CASE WHEN seen.top > tables.recorded_row THEN now() ELSE tables.last_seen END
    FROM seen WHERE tables.table_id = seen.table_id AND tables.journal_id = seen.journal_id
    RETURNING tables.table_id, tables.journal_id, tables.recorded_row
)
UPDATE gaps SET filled_at = now() FROM moved
WHERE gaps.table_id = moved.table_id AND gaps.journal_id = moved.journal_id
  AND gaps.last_row <= moved.recorded_row AND gaps.filled_at IS NULL
"""
# The rows that may be significant (significant.row_kind judges them): a command's, one of the inputs
# that are an operator's act or a device's news, or one that raised or ended a tilt. In the batch's
# order by journal and row, as the event log takes them.
_MAYBE_SIGNIFICANT = """
SELECT n FROM floor_rows WHERE
    source LIKE 'command:%%' OR input->>'input' = ANY(%(inputs)s)
    OR events @> '[{"event": "tilt"}]' OR events @> '[{"event": "tilt_cleared"}]'
ORDER BY table_id, journal_id, row
"""
# Of another format: an object with a format field of another value (a newer uplink's), left to a newer
# recorder. Anything else without this format (an array, a number, an object without the field) is no
# format's: malformed, as a body of this format naming another table than its subject's (``t``: a
# table's NATS user may publish only on its own subject, so its rows may name only its own table).
_UNKNOWN = ("SELECT n FROM floor_batch WHERE jsonb_typeof(d) = 'object' AND d ? 'format' "
            "AND d->>'format' IS DISTINCT FROM %(f)s ORDER BY n")
_REFUSED = """
SELECT n FROM floor_batch WHERE jsonb_typeof(d) <> 'object' OR NOT d ? 'format'
    OR (d->>'format' = %(f)s AND t IS NOT NULL AND d->>'table' IS DISTINCT FROM t)
"""


@dataclass(frozen=True, slots=True)
class Conflict:
    """Row ``row`` of a journal came again with another body than the one recorded (kept in ``conflicts``)."""

    table_id: str
    journal_id: str
    row: int


@dataclass(frozen=True, slots=True)
class Hole:
    """Rows ``first_row``..``last_row`` of a journal are missing, and a later row is recorded."""

    table_id: str
    journal_id: str
    first_row: int
    last_row: int


def _escape(field: bytes) -> bytes:
    """A field of COPY's text format: its four special bytes escaped."""
    escaped = field.replace(b"\\", b"\\\\").replace(b"\n", b"\\n")
    return escaped.replace(b"\r", b"\\r").replace(b"\t", b"\\t")


def _copy_line(n: int, table: str | None, body: bytes) -> bytes:
    """``n``, ``table`` (None: NULL, not checked) and ``body`` as a line of COPY's text format."""
    return b"%d\t%s\t%s\n" % (n, b"\\N" if table is None else _escape(table.encode()), _escape(body))


def write_bodies(conn: psycopg.Connection[Any], bodies: Sequence[bytes],
                 tables: Sequence[str | None] | None = None, conflicts: list[Conflict] | None = None,
                 ) -> list[int]:
    """Record the message ``bodies`` (as published) in one transaction; the positions of those not
    recorded because their format is not this code's (the caller acknowledges the others only after
    this returns). One of :data:`BAD_BODY` if any body is malformed, or names another table than
    ``tables`` (the table of the subject each came on; None: not checked): then nothing is recorded.
    A body whose key is recorded with another row (:data:`_CONFLICTS`) is kept apart, and each such key
    new to ``conflicts`` is added to the list ``conflicts`` once committed: the caller says it (an ERROR)."""
    found: list[Conflict] = []
    try:
        unknown = _write_bodies(conn, bodies, tables if tables is not None else [None] * len(bodies), found)
    except psycopg.OperationalError as exc:
        # A body nested past PostgreSQL's stack (SQLSTATE class 54, a program limit) is malformed, not
        # a database away: as an OperationalError it was retried for ever (a review, 2026-12-07).
        if (exc.sqlstate or "").startswith("54"):
            raise BadBody(f"the database cannot take it: {exc}") from None
        raise
    if conflicts is not None:
        conflicts.extend(found)
    return unknown


def _write_bodies(conn: psycopg.Connection[Any], bodies: Sequence[bytes], subjects: Sequence[str | None],
                  conflicts: list[Conflict]) -> list[int]:
    params = {"f": str(FORMAT)}
    # Three round trips to the server whatever the batch (the tables, the COPY, the rest in one
    # pipeline), then the commit: a light load's small batches are quick (docs/floor.md, "How fast").
    with (conn.transaction(), conn.cursor() as cur, conn.cursor() as significant_cur,
          conn.cursor() as refused_cur, conn.cursor() as conflicts_cur):
        cur.execute(f"{_BATCH}; {_EMPTY}")
        with cur.copy("COPY floor_batch (n, t, d) FROM STDIN") as copy:
            copy.write(b"".join(_copy_line(n, t, body)
                                for n, (t, body) in enumerate(zip(subjects, bodies, strict=True))))
        with conn.pipeline():
            refused_cur.execute(_REFUSED, params)
            for statement in (_ROWS, _NEW_JOURNALS, _LOCK):
                cur.execute(statement, params)
            conflicts_cur.execute(_CONFLICTS)  # under the lock: the rows recorded before are seen
            for statement in (_INPUTS, _EVENTS, _ROUNDS, _ADVANCE):
                cur.execute(statement, params)
            cur.execute(_UNKNOWN, params)
            significant_cur.execute(_MAYBE_SIGNIFICANT,
                                    {**params, "inputs": sorted(significant.SIGNIFICANT_INPUTS)})
        if refused_cur.fetchone() is not None:  # the transaction rolls back: the recorder sorts them out
            raise BadBody("a body is no floor row message, or names another table than its subject's")
        unknown = [int(n) for (n,) in cur.fetchall()]
        conflicts.extend(Conflict(str(t), str(j), int(r)) for t, j, r in conflicts_cur.fetchall())
        try:
            maybe = [RowMessage.parse(bodies[int(n)]) for (n,) in significant_cur.fetchall()]
        except ValueError as exc:  # the transaction rolls back: nothing of the batch is recorded
            raise BadBody(str(exc)) from None
        # Last: the event log's lock after every tables row lock (eventlog's rule), held to the commit.
        significant.log_batch(cur, maybe)
        return unknown


def write_batch(conn: psycopg.Connection[Any], messages: Sequence[RowMessage]) -> None:
    """Record ``messages`` in one transaction (as :func:`write_bodies` their bodies)."""
    write_bodies(conn, [m.body() for m in messages])


def holes(conn: psycopg.Connection[Any]) -> list[Hole]:
    """Every missing range of each table's journal below a row recorded: each range, not only the first (a
    permanent gap keeps ``recorded_row`` below it, and a later one was never found: a review, 2026-12-07)."""
    rows = conn.execute(
        """
        SELECT table_id, journal_id, prev + 1, row - 1 FROM (
            SELECT i.table_id, i.journal_id, i.row,
                   LAG(i.row, 1, t.recorded_row)
                       OVER (PARTITION BY i.table_id, i.journal_id ORDER BY i.row) AS prev
            FROM inputs i JOIN tables t ON t.table_id = i.table_id AND t.journal_id = i.journal_id
            WHERE i.row > t.recorded_row) above
        WHERE row > prev + 1
        ORDER BY 1, 2, 3
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
