"""The stream holds a table's rows in journal order even when nats-server dies with publishes in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import pytest
from floor_support import Proc, journal_rows, nats_server, stream_rows, wait_for  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import write_journal

from controller.floor.local import NatsServer
from controller.floor.wire import STREAM

pytestmark = pytest.mark.timeout(60)


def held(url: str) -> int:
    """How many messages the stream holds (0 while it is not there yet or the server is away)."""

    async def count() -> int:
        client = await nats.connect(url, connect_timeout=1, allow_reconnect=False)
        try:
            return int((await client.jetstream().stream_info(STREAM)).state.messages)
        finally:
            await client.close()

    try:
        return asyncio.run(count())
    except (TimeoutError, nats.errors.Error, OSError):
        return 0


def test_nats_server_killed_with_a_window_of_publishes_in_flight_leaves_the_rows_in_order(
        tmp_path: Path, nats_server: NatsServer) -> None:  # noqa: F811
    """An uplink catches up a long journal with 512 publishes in flight; nats-server is SIGKILLed
    twice on the way and restarted on the same store: the stream holds rows 1..N, each once,
    in that order (no row stored after a later one that went out before it)."""
    config = config_for(tmp_path, name="o1")
    inputs, _ = baccarat_play(90, seed=26)
    journal = write_journal(config, inputs)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url,
                  "--window", "512").start()
    try:
        for level in (len(inputs) // 4, len(inputs) * 3 // 5):
            wait_for(f"{level} rows in the stream", lambda n=level: held(nats_server.url) >= n, 30, uplink)
            nats_server.kill()
            nats_server.start()
        wait_for("every row in the stream", lambda: held(nats_server.url) >= len(inputs), 30, uplink)
    finally:
        uplink.stop()
    assert journal_rows(config)[0] == journal
    rows = [row for _, row in stream_rows(nats_server.url, "o1")]
    assert rows == list(range(1, len(inputs) + 1)), [r for n, r in enumerate(rows, 1) if r != n][:20]
