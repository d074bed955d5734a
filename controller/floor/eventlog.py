"""The significant-event log: an append-only, hash-chained record of what a regulator must see.

GLI-13 asks that significant events (alerts, operator commands, key changes, tilts, faults) be kept
in order and that tampering be evident. Each row of ``event_log`` (migration 0005) carries the
SHA-256 of the previous row's hash and its own fields, so changing, removing or inserting a row
breaks the chain from that row on; :func:`verify` walks it and names the first broken row. The
body is hashed as the JSON text the writer stores in ``body_text`` (migration 0006), not as ``body``
(jsonb) prints it: jsonb does not give that text back (``1e+16`` returns as ``10000000000000000``).

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
from decimal import Decimal
from typing import Any, Final

import psycopg

#: The advisory lock every appender takes ("CRLG"); distinct from the migrations' lock.
_LOCK: Final = 0x43524C47
#: The previous hash of the first row.
GENESIS: Final = bytes(32)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _hashed_text(body: str, body_text: str | None) -> str | None:
    """The body's text a stored row's hash covers, from ``body`` (as PostgreSQL prints the jsonb)
    and ``body_text``; None when they disagree (one was changed behind the writer's back).

    The stored text, if it parses to the same JSON value as ``body``; a row written before
    migration 0006 (no text) gives ``body`` re-encoded, the rule it was written under.
    """
    if body_text is None:
        return _canonical(json.loads(body))
    try:
        same = _same_value(_exact(body_text), _exact(body))
    except ValueError:  # not JSON at all
        return None
    return body_text if same else None


def _exact(text: str) -> Any:
    """JSON with every number an exact Decimal: jsonb keeps numbers as exact decimals, so ``1e+16``
    and ``10000000000000000``, ``-0.0`` and ``0.0`` are one value, while 1.5e300 as a double is not."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def _same_value(a: Any, b: Any) -> bool:
    """Equal JSON values, types included (Python has ``True == Decimal(1)``; JSON has not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same_value, a, b))
    return bool(a == b)


def row_hash(prev_hash: bytes, row_id: int, logged_at: datetime, table_id: str | None, kind: str,
             origin: str, body_text: str) -> bytes:
    """The hash a row must carry: SHA-256 of the previous hash and the row's canonical JSON.

    Written out so that a third party can check the log without our code: the JSON array
    ``[id, logged_at, table_id, kind, origin, body]`` with keys sorted, no spaces, UTF-8, and
    ``logged_at`` in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``; the body in it is ``body_text``,
    the canonical text the writer encoded once and stores (for a row from before migration 0006,
    which has none, ``body`` re-encoded: :func:`_hashed_text`). The array's text is therefore its
    first five fields' text with the body's appended, exactly as one dump.
    """
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
            body_text = _canonical(dict(e.body))
            digest = row_hash(prev, row_id, when, e.table_id, e.kind, e.origin, body_text)
            row = (row_id, when, e.table_id, e.kind, e.origin, body_text, prev, digest)
            for column, value in zip(columns, row, strict=True):
                column.append(value)
            prev = digest
        # One statement for the batch: each column an array (binary: text needs no escaping), the
        # bodies as their canonical text, kept as hashed (body_text) and parsed (body).
        own.execute("INSERT INTO event_log (id, logged_at, table_id, kind, origin, body, body_text, "
                    "prev_hash, hash) "
                    "SELECT id, at, t, k, o, b::jsonb, b, p, h FROM unnest(%b::bigint[], %b::timestamptz[], "
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
        cur.execute("SELECT id, logged_at, table_id, kind, origin, body::text, body_text, prev_hash, hash "
                    "FROM event_log ORDER BY id")
        for row_id, logged_at, table_id, kind, origin, body, body_text, prev_hash, digest in cur:
            if int(row_id) != expected_id:
                return Verdict(checked, int(row_id), f"row {expected_id} is missing before row {row_id}")
            if bytes(prev_hash) != prev:
                return Verdict(checked, int(row_id), "its previous hash is not the hash of the row before")
            text = _hashed_text(body, body_text)  # None: body and body_text disagree
            if text is None or row_hash(prev, int(row_id), logged_at, table_id, kind, origin,
                                        text) != bytes(digest):
                return Verdict(checked, int(row_id), "its fields do not give its hash (the row was changed)")
            prev, expected_id, checked = bytes(digest), expected_id + 1, checked + 1
    conn.commit()
    return Verdict(checked)
