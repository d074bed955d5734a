"""The rows that follow a conflicting row of the other history are the other history too.

Two Pis running copies of one journal part at row 2: the floor records Pi A's rows 1..3, then Pi B's uplink
sends its rows 2..4 (past JetStream's duplicate window). Rows 2 and 3 come again with another body and are
kept apart in ``conflicts``; but B's row 4, a key not yet recorded, was recorded as the journal's row 4 (a
review of 2026-12-07's change): its events numbered after B's rows 2..3 (seq 5, where the record's row 4
has seq 4), so the floor held row 4 of the other history on top of the first one's rows 1..3, events 1..3
then 5, and A's true row 4, coming after it, was the one kept apart as a conflict. The record's continuity
of event numbers says which history such a row follows: one whose first seq continues the other body of the
row before it (in the batch, or in ``conflicts`` from an earlier batch) and not the recorded row before it is
kept apart too, and so is every row of the batch that goes on from it."""

from __future__ import annotations

from typing import Any

import psycopg
from floor_support import postgres  # noqa: F401 (fixture)
from test_floor_conflicting_rows import J, T, body

from controller.floor import store
from controller.floor.schema import migrate
from tests.server_fixtures import FloorDatabase


def _other(row: int, first_seq: int, events: int) -> bytes:
    """Row ``row`` of Pi B's history: another card, ``events`` events numbered from ``first_seq``."""
    return body(row, at=1_700_000_100.0 + row, input={"input": "card", "card": "QS"}, first_seq=first_seq,
                events=[{"event": "card_dealt", "table": T, "seq": first_seq + i, "card": "QS"}
                        for i in range(events)])


def _record(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute("SELECT row, input->>'card', first_seq FROM inputs ORDER BY row").fetchall()


def test_the_other_historys_rows_after_a_conflict_are_kept_apart_not_recorded(
        postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        found: list[store.Conflict] = []
        # B: row 2 caused two events (seq 2, 3), so its rows 3 and 4 start at seq 4 and 5.
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1)], conflicts=found)
        assert _record(conn) == [(1, "KH", 1), (2, "KH", 2), (3, "KH", 3)], (
            "row 4 of the other history was recorded on top of the first one's rows 1..3")
        assert found == [store.Conflict(T, J, 2), store.Conflict(T, J, 3), store.Conflict(T, J, 4)]
        # A's own row 4 then comes and is the record; its events follow the record's without a hole.
        found.clear()
        store.write_bodies(conn, [body(4)], conflicts=found)
        assert found == []
        assert _record(conn)[-1] == (4, "KH", 4)
        assert conn.execute("SELECT seq FROM events ORDER BY seq").fetchall() == [(1,), (2,), (3,), (4,)]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(4,)]


def test_the_other_historys_next_row_in_a_later_batch_is_kept_apart_too(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """B's row 4 delivered in the batch after the one that held its row 3: the row before it is known as
    another body by ``conflicts``."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(4, 5, 1), _other(5, 6, 1)], conflicts=found)
        assert found == [store.Conflict(T, J, 4), store.Conflict(T, J, 5)]
        assert [r for r, _, _ in _record(conn)] == [1, 2, 3]
        store.write_bodies(conn, [body(4), body(5)])  # A's, as its uplink sends them
        assert _record(conn)[3:] == [(4, "KH", 4), (5, "KH", 5)]


def test_rows_that_follow_the_record_are_recorded_whatever_came_before_them(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """No false alarm: a true resend, a row after a conflict that continues the record, and rows whose
    events the record cannot place (a row before them missing) are recorded as before."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        found: list[store.Conflict] = []
        # B's row 3 has one event like A's: its row 4 follows both; nothing tells them apart, it is recorded.
        store.write_bodies(conn, [body(2, journal_rows=9), _other(3, 3, 1), body(4), body(7)],
                           conflicts=found)
        assert found == [store.Conflict(T, J, 3)]
        assert [r for r, _, _ in _record(conn)] == [1, 2, 3, 4, 7]
