"""``croupier floor conflicts``: the rows kept apart listed beside the record, and settled with a log entry.

Run as an operator runs it (its own process) against a real PostgreSQL whose ``conflicts`` the real store
filled: another body of recorded rows 2 and 3, and the other history's row 4 that follows them."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from test_floor_conflict_followers import _other
from test_floor_conflicting_rows import J, T, body

from controller.floor import eventlog, store
from controller.floor.schema import migrate
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)


def _conflicts(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", "floor", "conflicts", *args, "--db", dsn],
                          capture_output=True, text=True, timeout=60)


def _kept_apart(dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3)])
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1)])


def _rows_kept(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return [int(r) for (r,) in conn.execute("SELECT row FROM conflicts ORDER BY row")]


def test_an_empty_floor_has_no_conflicting_rows(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
    out = _conflicts(postgres.dsn)
    assert (out.returncode, out.stdout.strip()) == (0, "no conflicting rows"), out.stderr
    assert _conflicts(postgres.dsn, "--json").stdout == ""  # JSON lines: none for none


def test_the_rows_kept_apart_are_listed_beside_the_recorded_rows(postgres: FloorDatabase) -> None:  # noqa: F811
    _kept_apart(postgres.dsn)
    out = _conflicts(postgres.dsn, "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["table"], r["journal"], r["row"]) for r in rows] == [(T, J, 2), (T, J, 3), (T, J, 4)]
    two = rows[0]
    assert two["differ"] == ["at", "input"]
    assert (two["recorded"]["input"]["card"], two["other"]["input"]["card"]) == ("KH", "QS")
    assert two["recorded"]["at"] == 1_700_000_002.5 and two["other"]["at"] == 1_700_000_102.0
    assert rows[2]["recorded"] is None and rows[2]["differ"] == ["at", "source", "ref", "input"]
    shown = _conflicts(postgres.dsn).stdout
    assert f"{T} journal {J} row 4 (kept apart 20" in shown
    assert "no row of this key is recorded: kept apart as following the other history" in shown
    assert ('  input  recorded {"card":"KH","input":"card"}\n'
            '         other    {"card":"QS","input":"card"}') in shown
    assert _conflicts(postgres.dsn, "another_table").stdout.strip() == "no conflicting rows"


def test_settling_a_journal_marks_its_rows_and_logs_who_and_why(postgres: FloorDatabase) -> None:  # noqa: F811
    _kept_apart(postgres.dsn)
    no_reason = _conflicts(postgres.dsn, T, "--settle", J)
    assert no_reason.returncode == 2 and "needs the TABLE and a --reason" in no_reason.stderr
    other = _conflicts(postgres.dsn, T, "--settle", "j-another", "--reason", "checked")
    assert other.returncode == 1 and "has no conflicting rows not settled: nothing settled" in other.stdout
    assert _rows_kept(postgres.dsn) == [2, 3, 4]
    done = _conflicts(postgres.dsn, T, "--settle", J, "--reason", "Pi B ran a restored copy")
    assert done.returncode == 0, done.stderr
    assert f"settled: table {T} journal {J} rows 2, 3, 4 marked settled" in done.stdout
    assert _rows_kept(postgres.dsn) == [2, 3, 4]  # marked, not removed: the rule of followers reads them
    assert _conflicts(postgres.dsn).stdout.strip() == "no conflicting rows"
    kept = [json.loads(line) for line in _conflicts(postgres.dsn, "--all", "--json").stdout.splitlines()]
    assert [r["settled"]["reason"] for r in kept] == ["Pi B ran a restored copy"] * 3
    assert all(r["settled"]["by"].endswith("(croupier)") for r in kept), kept
    assert "  settled 20" in _conflicts(postgres.dsn, "--all").stdout
    with psycopg.connect(postgres.dsn) as conn:
        logged = conn.execute("SELECT table_id, kind, body FROM event_log ORDER BY id DESC LIMIT 1"
                              ).fetchone()
        assert logged is not None
        table_id, kind, entry = logged
        assert (table_id, kind) == (T, "conflicts_settled")
        assert {k: entry[k] for k in ("journal", "rows", "reason")} == {
            "journal": J, "rows": [2, 3, 4], "reason": "Pi B ran a restored copy"}
        assert entry["by"] and entry["db_user"]
        assert eventlog.verify(conn).intact
    again = _conflicts(postgres.dsn, T, "--settle", J, "--reason", "again")
    assert again.returncode == 1  # nothing left to settle: nothing logged twice


def test_the_other_historys_next_row_after_a_settle_is_still_kept_apart(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """A's rows 1..4 recorded, B's 2..4 kept apart; a person settles the journal (the rows were B's, a
    restored copy). B's uplink then sends its row 5 (seq 6, going on from B's 4, not from the record's 4,
    whose next seq is 5). Before the settle it is kept apart as following the other history; after it the
    floor had lost what B's 4 was (its row in ``conflicts``, which the follower rule reads), so B's 5 was
    recorded on top of A's rows, its events numbered past a hole, and A's own row 5 then kept apart."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [body(1), body(2), body(3), body(4)])
        store.write_bodies(conn, [_other(2, 2, 2), _other(3, 4, 1), _other(4, 5, 1)])
    done = _conflicts(postgres.dsn, T, "--settle", J, "--reason", "Pi B ran a restored copy")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(postgres.dsn) as conn:
        found: list[store.Conflict] = []
        store.write_bodies(conn, [_other(5, 6, 1)], conflicts=found)
        store.write_bodies(conn, [body(5)], conflicts=found)
        record = conn.execute("SELECT row, input->>'card' FROM inputs ORDER BY row").fetchall()
        assert record == [(n, "KH") for n in range(1, 6)], found
