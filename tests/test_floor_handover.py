"""A table's journal replaced while its uplink was down short of the old journal's end (a helper's review,
2026-12-07): the old journal's last rows were never published, and nothing said so. The uplink now logs
an ERROR naming them when it starts on the new journal, and ``floor tables`` shows the shortfall."""

from __future__ import annotations

import asyncio
import json
import logging

import nats
import psycopg
import pytest
from floor_support import nats_server, postgres  # noqa: F401 (fixtures)

from controller.floor import store
from controller.floor.cursor import read_tail
from controller.floor.local import NatsServer
from controller.floor.queries import tables, tables_text
from controller.floor.schema import migrate
from controller.floor.stream import ensure_stream
from controller.floor.wire import MSG_ID, msg_id, subject
from tests.server_fixtures import FloorDatabase
from tests.test_floor_store import body

pytestmark = pytest.mark.timeout(60)


def row_of(journal: str, row: int, rows: int, at: float) -> bytes:
    return json.dumps({**json.loads(body(row)), "journal": journal, "journal_rows": rows, "at": at}).encode()


def test_an_uplink_starting_on_a_new_journal_names_the_old_journals_rows_never_published(
        nats_server: NatsServer, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    async def go() -> None:
        client = await nats.connect(nats_server.url)
        try:
            js = client.jetstream()
            await ensure_stream(js)
            await js.publish(subject("s1", "old"), row_of("old", 9, 34, 109.0),
                             headers={MSG_ID: msg_id("s1", "old", 9)})
            tail = await read_tail(js, "s1", "new")
            assert tail.last == 0  # the new journal starts at row 1
        finally:
            await client.close()

    with caplog.at_level(logging.ERROR, logger="croupier.floor"):
        asyncio.run(go())
    assert "row 9 of journal old, which had 34 rows: rows 10..34 of it were never published" in caplog.text


def test_floor_tables_shows_an_earlier_journal_short_of_its_rows(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_bodies(conn, [row_of("old", r, 34, 100.0 + r) for r in range(1, 10)])
        store.write_bodies(conn, [row_of("new", 1, 1, 500.0)])
        [line] = tables(conn)
    assert line["journal"] == "new" and line["older_behind"] == 25
    assert "EARLIER JOURNAL 25 rows short" in tables_text([line])
