"""False positives of the conflict-follower rule: true rows of the record kept apart (a review, 12-07)."""

from __future__ import annotations

import psycopg
from floor_support import postgres  # noqa: F401 (fixture)
from test_floor_conflict_followers import _other, _record
from test_floor_conflicting_rows import T, body

from controller.floor import store
from controller.floor.schema import migrate
from tests.server_fixtures import FloorDatabase


def _a(row: int, first_seq: int, events: int) -> bytes:
    """Row ``row`` of the record's history (Pi A), ``events`` events numbered from ``first_seq``."""
    return body(row, first_seq=first_seq,
                events=[{"event": "card_dealt", "table": T, "seq": first_seq + i, "card": "KH"}
                        for i in range(events)])


def test_a_true_row_delivered_before_the_row_under_it_is_not_kept_apart_nor_the_rows_after_it(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """B's row 4 is in ``conflicts`` (next seq 6). A's row 4 has two events (seq 4, 5), so A's row 5
    starts at seq 6. A's row 5 delivered before A's row 4 (two writers, a redelivery, a mended stream):
    row 4 not recorded yet, nothing stops the match with B's row 4, and A's 5 is kept apart; then every
    later row of A follows A's 5 in ``conflicts``, with no recorded row 5 to guard it: all kept apart."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_a(5, 6, 1)], conflicts=found)   # row 5 before row 4
        store.write_bodies(conn, [_a(4, 4, 2)], conflicts=found)
        store.write_bodies(conn, [_a(6, 7, 1)], conflicts=found)
        store.write_bodies(conn, [_a(7, 8, 1)], conflicts=found)
        assert found == []
        assert [r for r, _, _ in _record(conn)] == [1, 2, 3, 4, 5, 6, 7]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(7,)]


def test_a_true_row_after_a_hole_in_one_batch_is_not_kept_apart(postgres: FloorDatabase) -> None:  # noqa: F811
    """Same, in one batch with a gap (A's row 4 still to come): [A5, A6]."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_a(5, 6, 1), _a(6, 7, 1)], conflicts=found)
        store.write_bodies(conn, [_a(4, 4, 2)], conflicts=found)
        assert found == []
        assert [r for r, _, _ in _record(conn)] == [1, 2, 3, 4, 5, 6]


def test_the_records_row_after_the_other_historys_in_one_batch_is_not_kept_apart(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """One batch (past the duplicate window) holds B's rows 2..4 and then A's row 4 and 5. B's 4 came
    first, but A's 4 is the body whose first seq goes on from the recorded row 3: A's 4 and 5 are recorded,
    B's 2..4 kept apart. Before, the first body delivered was the one compared with: A's 4 was kept apart as
    differing from a row itself kept apart, and A's 5 followed it, a hole in the record (gap and conflict
    raised), A's 6 recorded above it."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1), body(4), body(5)],
                           conflicts=found)
        store.write_bodies(conn, [body(6)], conflicts=found)
        assert [(r, card) for r, card, _ in _record(conn)] == [(n, "KH") for n in range(1, 7)], found
        assert sorted(c.row for c in found) == [2, 3, 4]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(6,)]


def test_two_bodies_that_both_go_on_from_the_recorded_row_keep_one_history_in_one_batch(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """Pis A and B part at row 4, both numbering its events from seq 4 (the recorded row 3's next): B's 4
    has two events, A's one. One batch: B's 4, A's 4, A's 5, B's 5. Both row 4s go on from row 3, so the
    first delivered, B's, is the record's; but each row's bodies were chosen apart: both row 5s go on
    (each from its own row 4), and the first delivered, A's 5, was the one compared with, while it
    follows A's 4, kept apart: A's 5 was kept apart as following the other history, B's 5 as differing
    from it, row 5 a hole in the record (both bodies in conflicts, a gap for ever). The body chosen for a
    row is the one that goes on from the body chosen for the row before."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(4, 4, 2), _a(4, 4, 1), _a(5, 5, 1), _other(5, 6, 1)],
                           conflicts=found)
        assert [(r, card, seq) for r, card, seq in _record(conn)][3:] == [(4, "QS", 4), (5, "QS", 6)], found
        assert conn.execute("SELECT row, body->'input'->>'card' FROM conflicts ORDER BY row").fetchall() == [
            (4, "KH"), (5, "KH")]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(5,)]


def test_the_chain_goes_on_from_a_recorded_row_and_not_from_another_body_of_it(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """Rows 1..3 and 5 recorded (row 4 still to come). One batch: B's 4 (from seq 4, the only row 4 in it:
    recorded), B's 5 and 6 (going on from B's 4), and A's 6, going on from the recorded row 5. The chain ran
    from B's 4 through B's 5, another body of the recorded row 5, to B's 6: both row 6s "went on", the
    first delivered (B's) was compared with and kept apart as following B's 5, and A's 6 as differing
    from it: a hole at row 6. docs/floor.md: the body compared with goes on from the recorded row before."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3), body(5)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(4, 4, 2), _other(5, 6, 1), _other(6, 7, 1), body(6)],
                           conflicts=found)
        assert [(r, card) for r, card, _ in _record(conn)][4:] == [(5, "KH"), (6, "KH")], found
        assert sorted(c.row for c in found) == [5, 6]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(6,)]


def test_of_two_bodies_going_on_from_the_row_before_the_one_the_recorded_row_after_goes_on_from_is_chosen(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """A's row 5 came first (delivered out of order) and is recorded, row 4 still to come. Then one batch: B's
    4 (two events, seq 4..5) and A's 4 (one event, seq 4). Both go on from the recorded row 3, and the first
    delivered, B's, was the one compared with: B's 4 recorded between A's 3 and A's 5 (whose seq 5 does not go
    on from it), A's own row 4 kept apart. The recorded row 5 says which body of row 4 is the record's."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3), _a(5, 5, 1)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(4, 4, 2), _a(4, 4, 1)], conflicts=found)
        assert [(r, card, seq) for r, card, seq in _record(conn)][3:] == [(4, "KH", 4), (5, "KH", 5)], found
        assert conn.execute("SELECT row, body->'input'->>'card' FROM conflicts").fetchall() == [(4, "QS")]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(5,)]


def test_of_two_bodies_of_a_row_after_a_row_not_known_the_one_the_recorded_row_after_goes_on_from_is_chosen(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """As above, row 3 not recorded yet either (no chain to walk): the first delivered, B's 4, was recorded
    under A's 5 and A's own row 4 kept apart, A's 3 then recorded under B's 4."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), _a(5, 5, 1)])
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(4, 4, 2), _a(4, 4, 1)], conflicts=found)
        store.write_bodies(conn, [body(3)], conflicts=found)
        assert _record(conn)[2:] == [(3, "KH", 3), (4, "KH", 4), (5, "KH", 5)], found
        assert conn.execute("SELECT row, body->'input'->>'card' FROM conflicts").fetchall() == [(4, "QS")]
