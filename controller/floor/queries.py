"""Reading the floor's history: each table's state (``croupier floor tables``) and its rounds (``recall``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

from controller.floor.alive import OFFLINE_AFTER
from controller.money import Currency
from controller.tools.ctl import format_round

#: The table's newest journal: the one whose newest recorded row is the table's newest (its own clock),
#: not the one a message was last recorded of: a batch of an old journal delivered again after a
#: recorder's crash made it the table's "newest" (a review, 2026-12-07). A table has a row here per
#: journal, a handful: no index is needed.
NEWEST: Final = "last_at DESC NULLS LAST, last_seen DESC"
NEWEST_JOURNAL = ("SELECT journal_id, game, currency FROM tables WHERE table_id = %s "
                  f"ORDER BY {NEWEST} LIMIT 1")
#: Its last rounds, or one round: a backward scan of the primary key (table, journal, round).
RECALL = ("SELECT record FROM rounds WHERE table_id = %s AND journal_id = %s "
          "AND (%s::bigint IS NULL OR round = %s) ORDER BY round DESC LIMIT %s")
#: A time range of a table's rows (index ``inputs_by_time``, migration 0003), each with its events:
#: those are seqs first_seq..first_seq+event_count-1 of its journal, a range of the events' primary
#: key (``e.row = i.row`` alone has no index and read every event of the journal for each row).
EXPORT = """
    SELECT i.table_id AS table, i.journal_id AS journal, i.row, i.at, i.source, i.ref, i.input,
           COALESCE((SELECT json_agg(e.payload ORDER BY e.seq) FROM events e
                     WHERE e.table_id = i.table_id AND e.journal_id = i.journal_id
                       AND e.seq >= i.first_seq AND e.seq < i.first_seq + i.event_count
                       AND e.row = i.row), '[]'::json) AS events
    FROM inputs i WHERE i.table_id = %s AND i.at >= %s AND i.at < %s
    ORDER BY i.at, i.journal_id, i.row
    """


def tables(conn: psycopg.Connection[Any], offline_after: float = OFFLINE_AFTER) -> list[dict[str, Any]]:
    """Each table's newest journal: game, rows recorded, how far the record is behind the journal's
    length its uplink last reported, when a row of it was last recorded, and whether its uplink is
    online (a heartbeat within ``offline_after`` seconds) and since when (online: since its first
    heartbeat after a silence; offline: since its last heartbeat). The uplink outlives its daemon and
    relays its liveness: ``daemon_stopped_since`` is when the table's open ``daemon_stopped`` alert
    says it stopped (the alert service raises it from the heartbeats; None: no such alert open).
    ``conflicting_rows``: rows of any journal of the table that came again with another body than the one
    recorded (``conflicts``) and that no person has settled yet: the floor was handed two histories."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """
            SELECT DISTINCT ON (table_id) table_id AS table, game, journal_id AS journal,
                   recorded_row, journal_rows, GREATEST(journal_rows - recorded_row, 0) AS behind,
                   EXTRACT(EPOCH FROM last_seen)::float8 AS last_seen, last_at,
                   COALESCE(heartbeat_at > now() - %(off)s * interval '1 second', false) AS online,
                   EXTRACT(EPOCH FROM CASE WHEN heartbeat_at > now() - %(off)s * interval '1 second'
                                           THEN online_since ELSE heartbeat_at END)::float8 AS since,
                   EXISTS (SELECT 1 FROM gaps g WHERE g.table_id = t.table_id AND g.journal_id = t.journal_id
                           AND g.filled_at IS NULL) AS gap,
                   (SELECT COALESCE(a.cause_at, EXTRACT(EPOCH FROM a.raised_at)::float8) FROM alerts a
                    WHERE a.table_id = t.table_id AND a.kind = 'daemon_stopped' AND a.key = ''
                      AND a.cleared_at IS NULL) AS daemon_stopped_since,
                   (SELECT COALESCE(SUM(GREATEST(o.journal_rows - o.recorded_row, 0)), 0)::bigint
                    FROM tables o WHERE o.table_id = t.table_id AND o.journal_id <> t.journal_id
                   ) AS older_behind,
                   (SELECT COUNT(DISTINCT (c.journal_id, c.row)) FROM conflicts c
                    WHERE c.table_id = t.table_id AND c.settled_at IS NULL) AS conflicting_rows
            FROM tables t ORDER BY table_id, {NEWEST}
            """.replace("{NEWEST}", NEWEST), {"off": offline_after})
        return list(cur.fetchall())


def recall(
    conn: psycopg.Connection[Any], table_id: str, last: int, round_no: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The table's newest journal (``{}`` if the floor never heard of it) and its last ``last`` rounds,
    oldest first, or only round ``round_no``: each the record ``croupier ctl recall`` shows."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(NEWEST_JOURNAL, (table_id,))
        journal = cur.fetchone()
        if journal is None:
            return {}, []
        cur.execute(RECALL, (table_id, journal["journal_id"], round_no, round_no, last))
        rounds = [row["record"] for row in cur.fetchall()]
    return dict(journal), rounds[::-1]


def parse_when(text: str) -> float:
    """A time for ``export``, ``report`` and ``/report``: seconds since the epoch, or ISO 8601 (a date, or
    a date and time; UTC unless it names its zone). ValueError naming ``text`` if it is neither, or not
    a time of years 1 to 9999 (a report prints its range as dates): ``nan``, ``inf`` and ``1e999`` are
    numbers to ``float()``, and were taken (NaN matched no round, an infinity every one)."""
    try:
        when = float(text)
    except ValueError:
        try:
            parsed = datetime.fromisoformat(text)
            when = (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
        except (ValueError, OverflowError):
            raise ValueError(f"{text[:40]!r}: not a time (ISO 8601, or seconds since the epoch)") from None
    try:
        datetime.fromtimestamp(when, UTC)  # NaN: ValueError; an infinity or 1e300: OverflowError
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"{text[:40]!r}: not a time of years 1 to 9999 (UTC)") from None
    return when


def export(
    conn: psycopg.Connection[Any], table_id: str, start: float, end: float
) -> Iterator[dict[str, Any]]:
    """Every row of the table (all its journals) journaled at ``start`` <= at < ``end``, in time
    order, each with the events it caused: read through a server-side cursor, a year at a time."""
    with conn.transaction(), conn.cursor("floor_export", row_factory=dict_row) as cur:
        cur.itersize = 2000
        cur.execute(EXPORT, (table_id, start, end))
        yield from cur


def _local(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def tables_text(rows: list[dict[str, Any]]) -> str:
    """``croupier floor tables`` for a person: one line per table."""
    if not rows:
        return "no table recorded yet"
    lines = [f"{'table':<16} {'game':<15} {'rows':>8} {'behind':>6}  {'uplink':<30} journal"]
    for r in rows:
        since = "never heard" if r["since"] is None else _local(r["since"])
        state = f"{'online' if r['online'] else 'OFFLINE'} since {since}" if r["since"] else "never heard"
        flag = "  GAP" if r["gap"] else ""
        if r["daemon_stopped_since"] is not None:
            flag += f"  DAEMON STOPPED since {_local(r['daemon_stopped_since'])}"
        if r["older_behind"]:  # an earlier journal's rows never recorded (its uplink stopped short)
            flag += f"  EARLIER JOURNAL {r['older_behind']} rows short"
        if r["conflicting_rows"]:  # rows sent again with another body: two histories under one journal
            flag += f"  CONFLICTING ROWS {r['conflicting_rows']}"
        lines.append(f"{r['table']:<16} {r['game']:<15} {r['recorded_row']:>8} {r['behind']:>6}  {state:<30} "
                     f"{r['journal']}{flag}")
    return "\n".join(lines)


def recall_text(journal: dict[str, Any], rounds: list[dict[str, Any]]) -> str:
    """The rounds as ``croupier ctl recall`` prints them."""
    currency = Currency(**journal["currency"]) if journal else Currency()
    lines: list[str] = []
    for r in rounds:
        lines.extend(format_round(r, currency))
    return "\n".join(lines) or "no rounds recorded"
