"""controller.floor.store on its own: what one batch writes, whatever transaction its caller is in."""

from __future__ import annotations

import json

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)

from controller.floor import store
from controller.floor.schema import migrate
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
