"""An alert service's first start judges the rows PostgreSQL does not hold yet.

Its consumer was created delivering only rows newer than itself, and what stood was read from
PostgreSQL: a tilt in the stream that no recorder had written yet (recorders down, or behind) was
judged by neither, and the pit never heard of it (a helper's review, 2026-12-07). A first start now
takes the rows after the recorders' acknowledged floor (each acknowledged after its commit, so every
row below it is in PostgreSQL), and no row below it a second time.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from alerting_support import alerts_of, raised, start_service
from floor_support import query
from nats.js import api

from controller.floor.local import NatsServer
from controller.floor.stream import ensure_stream, rows_consumer
from controller.floor.wire import MSG_ID, STREAM, msg_id, subject
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)


def tilted(table: str, row: int) -> bytes:
    """A row whose input tilted ``table`` (the body fields the alert service reads)."""
    tilt = {"event": "tilt", "table": table, "seq": row, "round": 1, "reason": "device_offline", "card": "",
            "detail": "shoe offline"}
    return json.dumps({"format": 1, "table": table, "journal": "j1", "row": row, "at": time.time(),
                       "source": "shoe", "events": [tilt], "game": "baccarat", "options": {},
                       "journal_rows": row, "round": None}).encode()


async def _publish(url: str, *rows: tuple[str, int], recorded: int = -1) -> None:
    """Publish the ``rows`` (table, row) as uplinks would; with ``recorded`` >= 0, a recorders' consumer
    that acknowledged the first ``recorded`` of them (and wrote nothing: this test has no recorder)."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await ensure_stream(js)
        for table, row in rows:
            await js.publish(subject(table, "j1"), tilted(table, row), stream=STREAM,
                             headers={MSG_ID: msg_id(table, "j1", row)})
        if recorded >= 0:
            await rows_consumer(js, "recorder", api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT))
            psub = await js.pull_subscribe_bind(durable="recorder", stream=STREAM)
            if recorded:
                msgs: list[Any] = await psub.fetch(recorded, timeout=5)
                for m in msgs:
                    await m.ack_sync()
    finally:
        await nc.close()


def test_a_first_start_with_no_recorder_yet_judges_the_stream(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:
    asyncio.run(_publish(nats_server.url, ("t1", 1)))
    service = start_service(tmp_path, nats_server.url, postgres.dsn)
    try:
        raised(postgres.dsn, "t1", "tilt", "", service)
    finally:
        assert service.stop() == 0, service.text()


def test_a_first_start_takes_the_rows_after_the_recorders_floor_and_none_below_it(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:
    # t0's tilt was recorded (acknowledged by the recorders: in PostgreSQL, were a recorder running, and
    # judged from there); t1's was not.
    asyncio.run(_publish(nats_server.url, ("t0", 1), ("t1", 1), recorded=1))
    service = start_service(tmp_path, nats_server.url, postgres.dsn)
    try:
        raised(postgres.dsn, "t1", "tilt", "", service)
        assert alerts_of(postgres.dsn, "t0", "tilt") == []
        assert query(postgres.dsn, "SELECT count(*) FROM alerts WHERE kind = 'tilt'") == [(1,)]
    finally:
        assert service.stop() == 0, service.text()
