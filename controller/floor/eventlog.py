"""The significant-event log: an append-only, hash-chained record of what a regulator must see.

GLI-13 asks that significant events (alerts, operator commands, key changes, tilts, faults) be kept
in order and that tampering be evident. Each row of ``event_log`` (migration 0005) carries the
SHA-256 of the previous row's hash and its own fields, so changing, removing or inserting a row
breaks the chain from that row on; :func:`verify` walks it and names the first broken row.

Writers call :func:`append` (an alert's change) or :func:`append_many` (a recorder's batch) inside
their own transaction, so an event is logged exactly when what caused it is committed. ``origin``
says, once, where the event came from: a redelivered batch or a second recorder appends nothing
new. Appends are serialized by a transaction-scoped advisory lock, taken last (after any ``tables``
row lock) so that writers never deadlock; ids therefore run 1, 2, 3 ... in commit order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import psycopg

#: The advisory lock every appender takes ("CRLG"); distinct from the migrations' lock.
_LOCK: Final = 0x43524C47
#: The previous hash of the first row.
GENESIS: Final = bytes(32)


def row_hash(prev_hash: bytes, row_id: int, logged_at: datetime, table_id: str | None, kind: str,
             origin: str, body: Mapping[str, Any]) -> bytes:
    """The hash a row must carry: SHA-256 of the previous hash and the row's canonical JSON.

    Written out so that a third party can check the log without our code: the JSON array
    ``[id, logged_at, table_id, kind, origin, body]`` with keys sorted, no spaces, UTF-8, and
    ``logged_at`` in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``.
    """
    return _chained(prev_hash, row_id, logged_at, table_id, kind, origin, _canonical(body))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _chained(prev_hash: bytes, row_id: int, logged_at: datetime, table_id: str | None, kind: str,
             origin: str, body_text: str) -> bytes:
    """:func:`row_hash` from the body's canonical text, which the writer also stores (encoded once):
    the array's text is its first five fields' text with the body's appended, exactly as one dump."""
    when = logged_at.astimezone(UTC).isoformat(timespec="microseconds")
    head = _canonical([row_id, when, table_id, kind, origin])
    return hashlib.sha256(prev_hash + f"{head[:-1]},{body_text}]".encode()).digest()


@dataclass(frozen=True, slots=True)
class Entry:
    """One event to log: its table (None: floor-wide), kind, origin (once only) and body."""

    table_id: str | None
    kind: str
    origin: str
    body: Mapping[str, Any]


def append(cur: psycopg.Cursor[Any], *, table_id: str | None, kind: str, origin: str,
           body: Mapping[str, Any], logged_at: datetime | None = None) -> bool:
    """Append one event in the caller's transaction (``cur``'s); False if ``origin`` was logged before."""
    return append_many(cur, [Entry(table_id, kind, origin, body)], logged_at=logged_at) == 1


def append_many(cur: psycopg.Cursor[Any], entries: Sequence[Entry], *,
                logged_at: datetime | None = None) -> int:
    """Append ``entries`` in order, in the caller's transaction, each whose origin is new (logged
    before, or earlier in ``entries``: skipped); how many were appended.

    A recorder's batch logs its rows with one lock, one look-up of the origins and one insert,
    however many rows it has; the hash rule is :func:`row_hash`, row by row.
    """
    if not entries:
        return 0  # no lock taken: a batch of dealt cards never waits for another writer's log
    with cur.connection.cursor() as own:  # plain tuples, whatever row factory the caller's cursor has
        own.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        own.execute("SELECT origin FROM event_log WHERE origin = ANY(%s)", ([e.origin for e in entries],))
        seen = {str(origin) for (origin,) in own.fetchall()}
        fresh = []
        for e in entries:
            if e.origin not in seen:
                seen.add(e.origin)
                fresh.append(e)
        if not fresh:
            return 0
        own.execute("SELECT id, hash FROM event_log ORDER BY id DESC LIMIT 1")
        last = own.fetchone()
        row_id, prev = (0, GENESIS) if last is None else (int(last[0]), bytes(last[1]))
        # Microseconds, as PostgreSQL keeps them: the hash is recomputed from the stored value.
        when = (logged_at or datetime.now(UTC)).astimezone(UTC)
        columns: list[list[Any]] = [[], [], [], [], [], [], [], []]
        for e in fresh:
            row_id += 1
            body = _canonical(dict(e.body))
            digest = _chained(prev, row_id, when, e.table_id, e.kind, e.origin, body)
            row = (row_id, when, e.table_id, e.kind, e.origin, body, prev, digest)
            for column, value in zip(columns, row, strict=True):
                column.append(value)
            prev = digest
        # One statement for the batch: each column an array (binary: text needs no escaping), the
        # bodies as their canonical text.
        own.execute("INSERT INTO event_log (id, logged_at, table_id, kind, origin, body, prev_hash, hash) "
                    "SELECT id, at, t, k, o, b::jsonb, p, h FROM unnest(%b::bigint[], %b::timestamptz[], "
                    "%b::text[], %b::text[], %b::text[], %b::text[], %b::bytea[], %b::bytea[]) "
                    "AS x(id, at, t, k, o, b, p, h)", columns)
    return len(fresh)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`verify` found: how many rows it checked, and the first that breaks the chain."""

    rows: int
    broken_id: int | None = None
    reason: str = ""

    @property
    def intact(self) -> bool:
        """True when every row's hash follows from the one before it."""
        return self.broken_id is None


def verify(conn: psycopg.Connection[Any], *, batch: int = 5000) -> Verdict:
    """Walk the whole chain in id order (streamed, a batch at a time) and judge it."""
    prev, expected_id, checked = GENESIS, 1, 0
    with conn.cursor(name="event_log_verify") as cur:
        cur.itersize = batch
        cur.execute("SELECT id, logged_at, table_id, kind, origin, body, prev_hash, hash "
                    "FROM event_log ORDER BY id")
        for row_id, logged_at, table_id, kind, origin, body, prev_hash, digest in cur:
            if int(row_id) != expected_id:
                return Verdict(checked, int(row_id), f"row {expected_id} is missing before row {row_id}")
            if bytes(prev_hash) != prev:
                return Verdict(checked, int(row_id), "its previous hash is not the hash of the row before")
            if row_hash(prev, int(row_id), logged_at, table_id, kind, origin, body) != bytes(digest):
                return Verdict(checked, int(row_id), "its fields do not give its hash (the row was changed)")
            prev, expected_id, checked = bytes(digest), expected_id + 1, checked + 1
    conn.commit()
    return Verdict(checked)
