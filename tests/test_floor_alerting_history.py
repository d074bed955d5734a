"""What a starting alert service learns from PostgreSQL (controller/floor/alerting/history.py): the
floor-wide shoe index, the judged seqs and what stands at a first start, and each table's drift
window, which the live rows then go on with (real PostgreSQL, no processes)."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
from alerting_support import COUPS

from tests.server_fixtures import FloorDatabase


def test_a_starting_service_learns_the_shoe_index_and_what_stands_from_postgresql(
        postgres: FloorDatabase) -> None:
    from controller.floor.alerting import history
    from controller.floor.schema import migrate

    cards = [c for coup in COUPS for c in coup.split()]
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        for table, journal in (("t1", "j1"), ("t2", "j2")):
            conn.execute("INSERT INTO tables (table_id, journal_id, game, options, currency) "
                         "VALUES (%s, %s, 'baccarat', '{}', '{}')", (table, journal))
        events = [("t1", "j1", 1, {"event": "new_shoe", "decks": 8, "shoe_number": 1})]
        events += [("t1", "j1", 2 + i, {"event": "card_dealt", "round": 1, "card": c, "hand": "player"})
                   for i, c in enumerate(cards)]
        events.append(("t1", "j1", 18, {"event": "new_shoe", "decks": 8, "shoe_number": 2}))
        events += [("t1", "j1", 19, {"event": "tilt", "round": 2, "reason": "device_offline", "card": "",
                                     "detail": "shoe lid offline"}),
                   ("t1", "j1", 20, {"event": "device", "device": "shoe", "online": False, "detail": "x"}),
                   ("t1", "j1", 21, {"event": "device", "device": "shoe", "online": True, "detail": "x"}),
                   ("t1", "j1", 22, {"event": "device", "device": "shoe lid", "online": False,
                                     "detail": "lid open"})]
        events.append(("t2", "j2", 1, {"event": "new_shoe", "decks": 8, "shoe_number": 1}))
        events += [("t2", "j2", 2 + i, {"event": "card_dealt", "round": 1, "card": c, "hand": "player"})
                   for i, c in enumerate(cards[:5])]  # t2 is dealing the same order when the service starts
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO events (table_id, journal_id, seq, row, event, payload) "
                            "VALUES (%s, %s, %s, 1, %s, %s)",
                            [(t, j, s, e["event"], json.dumps({**e, "seq": s})) for t, j, s, e in events])
        conn.commit()
        pit, actions = history.load(conn, time.time())
        standing = history.standing(conn)
    assert actions == [] and pit.shoes.history.shoes == ["t1:j1:1"]
    assert pit.judged == {("t1", "j1"): 22, ("t2", "j2"): 6}
    # A first start (its consumer new) judges what stands: t1 is tilted and its lid open, its shoe back.
    assert [[e["seq"] for e in m["events"]] for m in standing] == [[19, 21, 22]]
    got = [(type(a).__name__, a.kind, a.key) for m in standing for a in pit.row(m, time.time())]
    # The shoe's clear is written whether or not this service raised it (with two services the other may
    # have; PostgreSQL's clear of an alert not open does nothing).
    assert got == [("Raise", "tilt", ""), ("Clear", "device_offline", "shoe"),
                   ("Raise", "device_offline", "shoe lid")]
    # The stream redelivers t2's row 6 (seq 6, judged: not counted twice), then the rest of the shoe.
    rest: list[dict[str, Any]] = [{"event": "card_dealt", "seq": 6 + i, "card": c}
                                  for i, c in enumerate(cards[4:])]
    rest.append({"event": "new_shoe", "seq": 6 + len(cards[4:]), "decks": 8, "shoe_number": 2})
    row = {"table": "t2", "journal": "j2", "row": 2, "at": 0.0, "game": "baccarat", "options": {},
           "events": rest}
    got = pit.row(row, time.time())
    assert [(a.kind, a.key) for a in got] == [("false_shuffle", "j2:1")]
    assert got[0].detail.startswith("shoe 1: 16 cards in the same order as shoe t1:j1:1")  # type: ignore[union-attr]


def test_a_drift_window_from_postgresql_goes_on_live_and_across_new_decimals(
        postgres: FloorDatabase) -> None:
    """A restarted service's drift window (the newest journal's last settled rounds, each at its record's
    decimals, else its journal's currency's) is the one the live rows go on with; a round under other
    decimals goes on with it at the finer scale, the alert still open (docs/floor.md, ``results_drift``),
    and a service restarted after that round has the same window."""
    from alerting_rules_support import rigged_rounds, settled_row

    from controller.floor.alerting import history
    from controller.floor.alerting.shoes import Raise
    from controller.floor.schema import migrate
    from controller.money import Odds

    records = rigged_rounds(Odds(2, 1), 402, seed=5)  # Banker paid 2:1: out of the band within 400
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        conn.execute("INSERT INTO tables (table_id, journal_id, game, options, currency) "
                     "VALUES ('t1', 'j1', 'baccarat', '{}', '{\"code\": \"\", \"minor_units\": 2}')")
        with conn.cursor() as cur:  # older records without their decimals: the journal's currency's
            cur.executemany("INSERT INTO rounds (table_id, journal_id, round, status, first_seq, last_seq, "
                            "house_net, record) VALUES ('t1', 'j1', %s, 'settled', %s, %s, %s, %s)",
                            [(r["round"], r["round"], r["round"], r["house_net"], json.dumps(r))
                             for r in (next(records) for _ in range(400))])
        conn.commit()
        pit, actions = history.load(conn, time.time(), drift_window=400)
    assert [(type(a).__name__, a.kind, a.key) for a in actions] == [("Raise", "results_drift", "banker")]
    played = [{**next(records), "minor_units": 2}, {**next(records), "minor_units": 0}]
    live = settled_row("t1", 1000, "baccarat", played[0])
    assert pit.row({**live, "journal": "j1"}, time.time()) == []  # the same window: still out, raised once
    again = settled_row("t1", 1001, "baccarat", played[1])
    assert pit.row({**again, "journal": "j1"}, time.time()) == []  # still out, at 2 decimals: raised once
    with psycopg.connect(postgres.dsn) as conn:  # the service restarted after them: the same window
        conn.cursor().executemany(
            "INSERT INTO rounds (table_id, journal_id, round, status, first_seq, last_seq, house_net, "
            "record) VALUES ('t1', 'j1', %s, 'settled', %s, %s, %s, %s)",
            [(r["round"], r["round"], r["round"], r["house_net"], json.dumps(r)) for r in played])
        conn.commit()
        restarted, actions = history.load(conn, time.time(), drift_window=400)
    last = [a for a in actions if a.key == "banker"][-1]  # its history judged again: out at the end
    assert isinstance(last, Raise) and last.data["minor_units"] == 2, last
    window, after = pit.drift.tables["t1"][3]["banker"], restarted.drift.tables["t1"][3]["banker"]
    assert (after.staked, after.net, after.squares, len(after)) == (window.staked, window.net,
                                                                    window.squares, 400)
    assert window.staked == 399 * 100 + 100 * 100  # rounds 3..402, the last at 0 decimals: 100 is 10,000
