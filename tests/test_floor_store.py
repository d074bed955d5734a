"""controller.floor.store on its own: what one batch writes, whatever transaction its caller is in."""

from __future__ import annotations

import json

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)

from controller.floor import store
from controller.floor.queries import NEWEST_JOURNAL, tables
from controller.floor.schema import migrate
from controller.floor.wire import RowMessage, UnknownFormat, subject_table
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(60)


def body(row: int) -> bytes:
    return json.dumps({
        "format": 1, "table": "s1", "journal": "j1", "row": row, "at": 1.5 + row, "source": "shoe",
        "ref": None, "input": {"input": "new_shoe"}, "first_seq": row,
        "events": [{"event": "shoe_ready", "table": "s1", "seq": row}],
        "game": "baccarat", "options": {}, "journal_rows": 2, "round": None,
        "currency": {"code": "EUR", "minor_units": 2}}).encode()


def test_batches_written_inside_one_transaction_of_the_caller_are_each_only_themselves(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """The second batch's unknown bodies are its own (the first batch's staging rows are not kept)."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with conn.transaction():
            assert store.write_bodies(conn, [b'{"format": 2}', body(1)]) == [0]
            assert store.write_bodies(conn, [body(2)]) == []
        assert conn.execute("SELECT row, event_count FROM inputs ORDER BY row").fetchall() == [(1, 1), (2, 1)]
        assert conn.execute("SELECT recorded_row, journal_rows FROM tables").fetchall() == [(2, 2)]


@pytest.mark.parametrize("odd", [
    {"events": [{"event": "shoe_ready", "table": "s1", "seq": "one"}]},  # an event's seq not a number
    {"round": {"round": 1}},  # a round record without its fields
    {"row": True},  # int(True) is 1 in Python; the database refuses 'true'::bigint
], ids=["event_seq", "round", "row_bool"])
def test_a_body_the_recorder_reads_in_python_is_one_the_database_takes(
        postgres: FloorDatabase, odd: dict[str, object]) -> None:  # noqa: F811
    """Review hR: the recorder sorts a batch the database refused with RowMessage.parse and writes the
    bodies it reads again (recorder._record). A body that parse reads but the SQL refuses makes that
    second write fail too: the exception leaves Recorder.run, and the restarted recorder stops at the
    same batch, so one such message halts the floor's recording of every table."""
    raw = json.dumps({**json.loads(body(1)), **odd}).encode()
    try:
        RowMessage.parse(raw)
    except ValueError:
        return  # named and left unacknowledged by the recorder: what it is for
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [raw, body(2)])  # read in Python: the database must take it too


def test_a_body_the_sql_takes_but_python_cannot_read_fails_the_batch_as_a_bad_body(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """A command row whose input is a string passes the SQL, then its significant-event parse refuses
    it: one of BAD_BODY (the recorder sorts the batch out), not a ValueError that stops the recorder."""
    raw = json.dumps({**json.loads(body(1)), "source": "command:alice", "input": "deal"}).encode()
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with pytest.raises(store.BAD_BODY):
            store.write_bodies(conn, [raw, body(2)])
        assert conn.execute("SELECT count(*) FROM inputs").fetchall() == [(0,)]


@pytest.mark.parametrize("raw", [b"[]", b"1", b'"x"', b"null", b'{"table": "s1"}',
                                 b'{"format": 1, "table": "s1"}'],
                         ids=["array", "number", "string", "null", "no_format", "no_fields"])
def test_a_body_of_no_format_is_malformed_not_left_to_a_newer_recorder(
        postgres: FloorDatabase, raw: bytes) -> None:  # noqa: F811
    """A body that is no object, or an object without a format field, is no newer uplink's: it was
    nak'd and delivered again for ever (a review, 2026-12-07). The SQL refuses the batch (BAD_BODY) and
    the recorder's parse names it malformed (terminated: a gap)."""
    with pytest.raises(ValueError) as why:
        RowMessage.parse(raw)
    assert not isinstance(why.value, UnknownFormat)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with pytest.raises(store.BAD_BODY):
            store.write_bodies(conn, [raw, body(1)])
        assert conn.execute("SELECT count(*) FROM inputs").fetchall() == [(0,)]
        assert store.write_bodies(conn, [b'{"format": 2}', body(1)]) == [0]  # a newer format's: left


def test_a_body_naming_another_table_than_its_subjects_is_refused(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """Table p1's NATS user may publish only on croupier.p1.rows, but a body naming table s1 there was
    written into s1's history (a review, 2026-12-07: another table's credits)."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with pytest.raises(store.BAD_BODY):
            store.write_bodies(conn, [body(1)], ["p1"])
        assert conn.execute("SELECT count(*) FROM inputs").fetchall() == [(0,)]
        assert store.write_bodies(conn, [body(1)], ["s1"]) == []
        assert subject_table("croupier.s1.rows.j1") == "s1" and subject_table("croupier.s1.rows") == "s1"
        assert subject_table("croupier.s1.alive") is None and subject_table("croupier.s1.rows.j1.x") is None
        assert subject_table("croupier.s1.alive", "alive") == "s1"
        assert subject_table("croupier.s1.alive.j1", "alive") is None


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_a_body_nested_too_deep_is_malformed_not_a_database_away(
        postgres: FloorDatabase, depth: int) -> None:  # noqa: F811
    """Nested past Python's stack, parse raised RecursionError (it stopped the recorder); past
    PostgreSQL's, the error (SQLSTATE 54001) was taken for a database away and retried for ever."""
    deep = b'{"format": 1, "table": "s1", "x": ' + b"[" * depth + b"]" * depth + b"}"
    with pytest.raises(ValueError, match="nested too deep|not a floor row message"):
        RowMessage.parse(deep)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with pytest.raises(store.BAD_BODY):
            store.write_bodies(conn, [body(1), deep])
        assert store.write_bodies(conn, [body(1)]) == []  # the connection is still good


def test_an_old_journals_batch_delivered_again_does_not_make_it_the_tables_newest(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """A recorder killed after its commit, before its ack: its batch of the table's old journal comes again
    after the new journal's rows. It moved the old journal's last_seen, and floor recall, floor tables and
    the pit board took it for the table's current journal (a review, 2026-12-07)."""
    def of(journal: str, row: int, at: float) -> bytes:
        return json.dumps({**json.loads(body(row)), "journal": journal, "at": at}).encode()

    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        old = [of("old", r, 100.0 + r) for r in (1, 2)]
        store.write_bodies(conn, old)
        store.write_bodies(conn, [of("new", 1, 500.0)])
        assert conn.execute(NEWEST_JOURNAL, ("s1",)).fetchone()[0] == "new"
        store.write_bodies(conn, old)  # delivered again: nothing new
        assert conn.execute(NEWEST_JOURNAL, ("s1",)).fetchone()[0] == "new"
        assert [r["journal"] for r in tables(conn)] == ["new"]


def test_a_second_missing_range_of_a_journal_is_a_hole_too(postgres: FloorDatabase) -> None:  # noqa: F811
    """A journal's rows 3 and 7 never came (3 a malformed body the recorder terminated: a gap for ever).
    ``recorded_row`` stays at 2, and holes() gives only the first missing range of each journal, so rows
    7 are never a hole, never written to ``gaps`` nor logged nor raised: docs/floor.md promises "a missing
    row range is recorded and raised, never skipped"."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(r) for r in (1, 2, 4, 5, 6, 8, 9)])
        found = store.holes(conn)
        for hole in found:
            store.record_gap(conn, hole)
        assert [(h.first_row, h.last_row) for h in found] == [(3, 3), (7, 7)]
