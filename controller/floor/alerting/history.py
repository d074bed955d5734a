"""What a starting alert service learns from PostgreSQL: open alerts, tables, every shoe, recent rounds.

A restarted service must neither raise twice nor forget: the open alerts stay open (their causes are
cleared only when seen to clear), the floor-wide shoe index is rebuilt from every ``new_shoe``,
``card_dealt``, ``card_burned``, ``round_result`` and ``device`` (a shoe gone empty) event on record
(so a shoe repeated a month later on another table is still found), and each table's drift window
from its newest journal's last settled rounds' records. The events read here are marked judged, so
the stream's redelivery of the same rows does not count them again.
"""

from __future__ import annotations

from typing import Any

import psycopg

from controller.floor import alerts
from controller.floor.alerting.rules import FEED_LOST, Pit
from controller.floor.alerting.shoes import Action, DriftWatch
from controller.money import round_decimals

_SHOE_EVENTS = ("new_shoe", "card_dealt", "card_burned", "round_result", "device")


def _judged(pit: Pit, table_id: str, journal: str, seq: int) -> None:
    key = (table_id, journal)
    pit.judged[key] = max(pit.judged.get(key, 0), seq)


def load(conn: psycopg.Connection[Any], now: float, drift_window: int | None = None,
         feed_lost: float = FEED_LOST) -> tuple[Pit, list[Action]]:
    """A :class:`Pit` as the floor's history leaves it, and the alerts that history calls for now
    (shoes that ended before this service saw them, tables drifting: raised once, no-ops if open)."""
    opened = {(a.table_id, a.kind, a.key) for a in alerts.open_alerts(conn)}
    pit = Pit(opened, drift=DriftWatch() if drift_window is None else DriftWatch(drift_window),
              feed_lost=feed_lost)
    actions: list[Action] = []
    with conn.cursor() as cur:
        cur.execute("SELECT table_id, extract(epoch FROM max(GREATEST(heartbeat_at, last_seen))) "
                    "FROM tables GROUP BY table_id")
        for table_id, heard in cur.fetchall():
            pit.known(str(table_id), float(heard), now)
    with conn.cursor(name="alerting_shoes") as cur:  # streamed: the whole floor's shoes
        cur.itersize = 20_000
        cur.execute("SELECT e.table_id, e.journal_id, e.seq, e.payload FROM events e JOIN tables t "
                    "USING (table_id, journal_id) WHERE e.event = ANY(%s) "
                    "ORDER BY e.table_id, t.first_seen, e.journal_id, e.seq", (list(_SHOE_EVENTS),))
        for table_id, journal, seq, payload in cur:
            actions += pit.shoes.journal(table_id, journal)
            actions += pit.shoes.event(table_id, journal, payload)
            _judged(pit, table_id, journal, int(seq))
    with conn.cursor() as cur:
        cur.execute("SELECT DISTINCT ON (table_id) table_id, journal_id, game, options, currency FROM tables "
                    "ORDER BY table_id, first_seen DESC")
        newest = cur.fetchall()
        for table_id, journal, game, options, currency in newest:
            cur.execute("SELECT last_seq, record FROM (SELECT round, last_seq, jsonb_build_object('status', "
                        "status, 'settlements', record->'settlements', 'bets', record->'bets', "
                        "'minor_units', record->'minor_units') AS record "
                        "FROM rounds WHERE table_id = %s AND journal_id = %s AND status = 'settled' "
                        "ORDER BY round DESC LIMIT %s) last ORDER BY round",
                        (table_id, journal, pit.drift.window))
            for seq, record in cur.fetchall():
                decimals = round_decimals(record, currency)  # as the live rows' (rules.py)
                actions += pit.drift.round(table_id, game, options, record, decimals)
                _judged(pit, table_id, journal, int(seq))
        cur.execute("SELECT table_id, journal_id, max(seq) FROM events GROUP BY table_id, journal_id")
        for table_id, journal, seq in cur.fetchall():
            _judged(pit, table_id, journal, int(seq))
    conn.commit()
    return pit, pit.filter(actions)


def standing(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """Each table's newest journal's last ``tilt``/``tilt_cleared`` event and each device's last ``device``
    event, as one row message a table: what a first start (a consumer new to the stream, which takes
    only rows newer than itself) must judge so that a table tilted or a device offline now is raised."""
    with conn.cursor() as cur:
        cur.execute(
            "WITH newest AS (SELECT DISTINCT ON (table_id) table_id, journal_id, game, options FROM tables "
            "ORDER BY table_id, first_seen DESC), "
            "last AS (SELECT DISTINCT ON (e.table_id, CASE WHEN e.event = 'device' THEN e.payload->>'device' "
            "END) e.table_id, e.journal_id, e.seq, e.payload FROM events e JOIN newest n USING "
            "(table_id, journal_id) WHERE e.event IN ('tilt', 'tilt_cleared', 'device') "
            "ORDER BY e.table_id, CASE WHEN e.event = 'device' THEN e.payload->>'device' END, e.seq DESC) "
            "SELECT table_id, journal_id, payload FROM last ORDER BY table_id, seq")
        messages: dict[str, dict[str, Any]] = {}
        for table_id, journal, payload in cur.fetchall():
            message = messages.setdefault(table_id, {"table": table_id, "journal": journal, "at": 0.0,
                                                     "events": []})
            message["events"].append(payload)
    conn.commit()
    return list(messages.values())


def unfilled_gaps(conn: psycopg.Connection[Any]) -> list[tuple[str, str, int, int]]:
    """Every recorded gap not filled since."""
    with conn.cursor() as cur:
        cur.execute("SELECT table_id, journal_id, first_row, last_row FROM gaps WHERE filled_at IS NULL")
        found = [(str(t), str(j), int(f), int(last)) for t, j, f, last in cur.fetchall()]
    conn.commit()
    return found


def conflicts(conn: psycopg.Connection[Any]) -> list[tuple[str, str, int, int]]:
    """Each journal with rows that came again with another body (``conflicts``), not settled by a person:
    (table, journal, its first such row, how many rows)."""
    with conn.cursor() as cur:
        cur.execute("SELECT table_id, journal_id, min(row), count(DISTINCT row) FROM conflicts "
                    "WHERE settled_at IS NULL GROUP BY table_id, journal_id")
        found = [(str(t), str(j), int(f), int(n)) for t, j, f, n in cur.fetchall()]
    conn.commit()
    return found
