"""The pit board's alerts, which come on core NATS (a message missed is gone) and from PostgreSQL at a load:
a clear the board missed left the alert on its tile for good, across reloads, and an acknowledgement heard
after its clear put it back (a helper's review, 2026-12-07). Now a load keeps only the alerts heard since
its read began, and an alert heard cleared is never shown again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from psycopg.types.json import Jsonb

from controller.floor import alerts
from controller.floor.schema import migrate
from pitboard.board import Board
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(60)


def test_an_alert_cleared_while_the_board_was_deaf_leaves_its_tile_at_the_next_load(
        postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        conn.execute("INSERT INTO tables (table_id, journal_id, game, options, currency) VALUES "
                     "('t1', 'j1', 'baccarat', '{}', %s)", (Jsonb({"code": "EUR", "minor_units": 2}),))
        conn.commit()
        tilt = alerts.raise_alert(conn, table_id="t1", kind="tilt", severity="critical", detail="tilt")
        shoe = alerts.raise_alert(conn, table_id="t1", kind="device_offline", key="shoe", severity="warning",
                                  detail="shoe offline")
    board = Board(postgres.dsn)
    asyncio.run(board.load())
    assert sorted(board.tiles["t1"].alerts) == [tilt.id, shoe.id]
    with psycopg.connect(postgres.dsn) as conn:  # cleared while the board heard nothing
        alerts.clear_alert(conn, table_id="t1", kind="tilt")
    asyncio.run(board.load())
    assert sorted(board.tiles["t1"].alerts) == [shoe.id]
    with psycopg.connect(postgres.dsn) as conn:  # an operator's acknowledgement racing the service's clear
        acked = alerts.acknowledge(conn, shoe.id, "Ann")
        cleared = alerts.clear_alert(conn, table_id="t1", kind="device_offline", key="shoe")
    assert acked is not None and cleared is not None
    board.take_alert(json.dumps(cleared.message()).encode())
    board.take_alert(json.dumps(acked.message()).encode())
    assert board.tiles["t1"].alerts == {}
    asyncio.run(board.load())
    assert board.tiles["t1"].alerts == {}


def test_an_unusable_operators_file_is_a_500_that_names_nothing_of_the_server(tmp_path: Path) -> None:
    """The error's words (the file's path, what is wrong with it) went to whoever sent a token (a
    review, 2026-12-07): they are the log's."""
    from aiohttp.test_utils import TestClient, TestServer

    from pitboard.server import make_app

    secret = tmp_path / "operators.json"
    secret.write_text("{}", encoding="utf-8")
    secret.chmod(0o644)

    async def ask() -> tuple[int, str]:
        async with TestClient(TestServer(make_app(Board("postgresql:///nowhere"), secret))) as http:
            answer = await http.post("/alerts/1/ack", headers={"Authorization": "Bearer any"})
            return answer.status, await answer.text()

    status, text = asyncio.run(ask())
    assert status == 500 and str(tmp_path) not in text and "log says why" in text
