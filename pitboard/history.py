"""The board's start from PostgreSQL: each table's tile as of its newest recorded row, and a table's detail.

Blocking psycopg calls, run on a worker thread by the server (``asyncio.to_thread``), each on a
connection of its own: the board survives PostgreSQL restarting, and one slow query never holds
another. The tile is folded by :meth:`pitboard.tile.Tile.apply` from the recorded events (from the
current shoe's ``new_shoe``, at most :data:`REPLAY` events back), so it equals what the same events
give live.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import psycopg
from psycopg.rows import dict_row

from controller.floor import alerts, queries
from controller.floor.gaming_day import MIDNIGHT, GamingDay
from controller.money import round_decimals
from pitboard.tile import UNFOLDABLE, Tile, currency_of, kept_since

log = logging.getLogger("croupier.pitboard")

#: At most this many of a table's newest events are replayed into its tile at start.
REPLAY: Final = 5000

TABLES: Final = """
    SELECT DISTINCT ON (table_id) table_id, journal_id, game, currency, recorded_row, journal_rows,
           GREATEST(EXTRACT(EPOCH FROM last_seen),
                    COALESCE(EXTRACT(EPOCH FROM heartbeat_at), 0))::float8 AS heard
    FROM tables WHERE %(t)s::text IS NULL OR table_id = %(t)s ORDER BY table_id, {NEWEST}
    """.replace("{NEWEST}", queries.NEWEST)
#: The events to replay: from the current shoe's start (index ``events_by_name``), no more than REPLAY.
#: A settlement comes with its round's recorded decimals (a ``limits`` row may have changed them since).
EVENTS: Final = """
    SELECT e.seq, e.payload, i.at, r.record->'minor_units' AS minor_units FROM events e
    JOIN inputs i ON i.table_id = e.table_id AND i.journal_id = e.journal_id AND i.row = e.row
    LEFT JOIN rounds r ON e.event = 'round_settled' AND r.table_id = e.table_id
      AND r.journal_id = e.journal_id AND r.round = (e.payload->>'round')::bigint
    WHERE e.table_id = %(t)s AND e.journal_id = %(j)s AND e.row <= %(r)s
      AND e.seq >= GREATEST(
          COALESCE((SELECT MAX(seq) FROM events WHERE table_id = %(t)s AND event = 'new_shoe'
                    AND journal_id = %(j)s), 1),
          (SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_id = %(t)s AND journal_id = %(j)s)
          - %(n)s)
    ORDER BY e.seq
    """
#: Each device's newest word (an unplugged shoe may predate the shoe being replayed).
DEVICES: Final = """
    SELECT DISTINCT ON (payload->>'device') payload, 0::float8 AS at, NULL AS minor_units FROM events
    WHERE table_id = %(t)s AND journal_id = %(j)s AND event = 'device' AND row <= %(r)s
    ORDER BY payload->>'device', seq DESC
    """
#: Rounds of every journal of the table that count for the last hour or today (index ``rounds_recent``),
#: each with the decimals it was played under and its journal's currency (a record from before records
#: carried them is in those).
ROUNDS: Final = """
    SELECT r.journal_id, r.round, r.ended_at, r.house_net, t.currency,
           jsonb_build_object('minor_units', r.record->'minor_units') AS record
    FROM rounds r JOIN tables t ON t.table_id = r.table_id AND t.journal_id = r.journal_id
    WHERE r.table_id = %s AND r.ended_at >= %s AND r.status = 'settled'
    """


def load_tiles(dsn: str, table_id: str | None = None, day: GamingDay = MIDNIGHT) -> dict[str, Tile]:
    """Every table's tile (or only ``table_id``'s) as PostgreSQL has it now, open alerts included, with
    the rounds of the last hour and of ``day``'s today. What a table sent that the board cannot show is
    logged once per table and left out, as live (:meth:`Tile.fold`): an event or a round it cannot
    fold, or (the table left out of this load) a journal whose currency is not one. A bad row recorded
    stopped the board's start for every table (``follow`` tried the whole load again, for good)."""
    now = time.time()
    tiles: dict[str, Tile] = {}
    with psycopg.connect(dsn, connect_timeout=5) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(TABLES, {"t": table_id})
        for t in cur.fetchall():
            tile = Tile(t["table_id"])
            try:
                tile.new_journal(t["journal_id"], t["game"], t["currency"])
            except ValueError as exc:
                log.warning("%s: not loaded, journal %s: %s", tile.table, t["journal_id"], exc)
                continue
            tile.journal_rows, tile.heard = int(t["journal_rows"]), float(t["heard"])
            keys = {"t": tile.table, "j": tile.journal, "r": int(t["recorded_row"]), "n": REPLAY}
            cur.execute(DEVICES, keys)
            devices = cur.fetchall()
            cur.execute(EVENTS, keys)
            left_out = [why for e in [*devices, *cur.fetchall()]
                        if (why := tile.fold(e["payload"], float(e["at"]), e["minor_units"])) is not None]
            tile.last_row = int(t["recorded_row"])
            cur.execute(ROUNDS, (tile.table, kept_since(now, day)))
            for r in cur.fetchall():
                try:  # its journal's code, the decimals it was played under
                    net, scale = int(r["house_net"]), round_decimals(r["record"], r["currency"])
                    money = currency_of({"code": (r["currency"] or {}).get("code", ""), "minor_units": scale})
                except UNFOLDABLE as exc:
                    left_out.append(f"round {r['round']} of journal {r['journal_id']}: {exc!r:.200}")
                    continue
                tile.settled[(r["journal_id"], int(r["round"]))] = (float(r["ended_at"]), net, money)
            if left_out:
                log.warning("%s: %d event(s) or round(s) the board cannot fold, left out: %s",
                            tile.table, len(left_out), "; ".join(left_out[:3]))
            tiles[tile.table] = tile
        conn.commit()
        for alert in alerts.open_alerts(conn, table_id):
            if alert.table_id in tiles:
                tiles[alert.table_id].alerts[alert.id] = alert.message()
    return tiles


def table_detail(dsn: str, table_id: str, last: int = 10) -> dict[str, Any] | None:
    """A table opened on the board: its last rounds as ``croupier floor recall`` gives them (the records
    and their lines) and its alerts, open and recent; None if the floor never heard of it."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        journal, rounds = queries.recall(conn, table_id, last)
        if not journal:
            return None
        return {
            "table": table_id, "journal": journal["journal_id"], "game": journal["game"],
            "rounds": [{"record": r, "lines": queries.recall_text(journal, [r]).splitlines()}
                       for r in rounds[::-1]],
            "open": [a.message() for a in alerts.open_alerts(conn, table_id)],
            "recent": [a.message() for a in alerts.recent(conn, table_id, 20)],
        }
