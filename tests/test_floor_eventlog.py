"""The significant-event log: appended once per origin, chained by hash, append-only, and a changed,
removed or inserted row named by :func:`verify` (the check `croupier floor verify` runs)."""

from __future__ import annotations

import threading

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from server_fixtures import FloorDatabase

from controller.floor import eventlog
from controller.floor.schema import migrate

pytestmark = pytest.mark.timeout(60)


def _log(conn: psycopg.Connection[object], n: int, prefix: str = "test") -> None:
    for i in range(n):
        with conn.transaction(), conn.cursor() as cur:
            eventlog.append(cur, table_id="bac1", kind="operator_command", origin=f"{prefix}:{i}",
                            body={"command": "void", "n": i, "who": "pit é"})


def test_a_chain_verifies_and_an_origin_is_logged_once(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        _log(conn, 5)
        with conn.transaction(), conn.cursor() as cur:  # a redelivered batch logs nothing new
            assert not eventlog.append(cur, table_id="bac1", kind="operator_command", origin="test:2",
                                       body={"command": "void", "n": 2, "who": "pit é"})
        assert eventlog.verify(conn) == eventlog.Verdict(rows=5)
        ids = [i for (i,) in conn.execute("SELECT id FROM event_log ORDER BY id").fetchall()]
        assert ids == [1, 2, 3, 4, 5]


def test_rows_cannot_be_changed_or_removed_through_sql(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        _log(conn, 2)
        for sql in ("UPDATE event_log SET kind = 'x'", "DELETE FROM event_log", "TRUNCATE event_log"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)
            conn.rollback()


@pytest.mark.parametrize(("tamper", "broken", "reason"), [
    ("UPDATE event_log SET body = jsonb_set(body, '{who}', '\"someone else\"') WHERE id = 3", 3, "changed"),
    ("DELETE FROM event_log WHERE id = 2", 3, "missing"),
    ("UPDATE event_log SET id = 7 WHERE id = 4", 5, "missing"),
    # The body's stored text (what the hash covers) and its jsonb must agree, types and all: n = 1
    # made true, the text left; the text made not JSON; both changed alike (the hash then fails).
    ("UPDATE event_log SET body = jsonb_set(body, '{n}', 'true') WHERE id = 2", 2, "changed"),
    ("UPDATE event_log SET body_text = 'not json' WHERE id = 3", 3, "changed"),
    ("UPDATE event_log SET body_text = replace(body_text, 'pit', 'bar'), "
     "body = replace(body_text, 'pit', 'bar')::jsonb WHERE id = 4", 4, "changed"),
])
def test_verify_names_the_first_broken_row(postgres: FloorDatabase, tamper: str, broken: int,  # noqa: F811
                                           reason: str) -> None:
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        _log(conn, 5)
        # What a superuser with a grudge could do: lift the guard, change the history.
        conn.execute("ALTER TABLE event_log DISABLE TRIGGER event_log_append_only")
        conn.execute(tamper)
        conn.commit()
        verdict = eventlog.verify(conn)
        assert not verdict.intact
        assert verdict.broken_id == broken and reason in verdict.reason, verdict


def test_writers_at_once_give_one_unbroken_chain(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)

    def writer(name: str) -> None:
        with psycopg.connect(postgres.dsn) as conn:
            _log(conn, 20, prefix=name)

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with psycopg.connect(postgres.dsn) as conn:
        assert eventlog.verify(conn) == eventlog.Verdict(rows=60)


@pytest.mark.parametrize("value", [1e16, -0.0], ids=["1e16", "minus_zero"])
def test_a_float_in_a_body_verifies_as_written(postgres: FloorDatabase, value: float) -> None:  # noqa: F811
    """Review hR: the hash covers the body's canonical JSON as the writer dumped it (``1e+16``,
    ``-0.0``), but the body is kept as jsonb, whose numbers come back as ``10000000000000000`` (an
    int to Python) and ``0.0``: verify (and a third party reading the stored body) then finds an
    untouched row "changed"."""
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with conn.transaction(), conn.cursor() as cur:
            eventlog.append(cur, table_id="bac1", kind="alert_raised", origin="float", body={"value": value})
        assert eventlog.verify(conn).intact, eventlog.verify(conn)
