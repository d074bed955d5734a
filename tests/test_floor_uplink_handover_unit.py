"""The uplink's hand-over to a new journal, with a stand-in for JetStream (no servers)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from nats.js import api
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import write_journal

import controller.floor.uplink as uplink_module
from controller.daemon.journal import Journal
from controller.floor.cursor import Stored, Tail
from controller.floor.uplink import Uplink
from controller.floor.wire import RowMessage

pytestmark = pytest.mark.timeout(60)


class FakeStream:
    """What the uplink needs of JetStream: publish (stored at once, acknowledged) and its tail."""

    def __init__(self) -> None:
        self.rows: list[RowMessage] = []

    async def publish(self, subj: str, body: bytes, **_: Any) -> api.PubAck:
        self.rows.append(RowMessage.parse(body))
        return api.PubAck(stream="CROUPIER", seq=len(self.rows))

    async def read_tail(self, _js: Any, _table: str, journal_id: str, _finished: Any = None) -> Tail:
        stored, body = Stored(), None
        for seq, m in enumerate(self.rows, 1):
            if m.journal_id == journal_id:
                stored.add(m.row, seq)
                body = m.body()
        return Tail(stored.row, [], stored, body)


class FakeClient:
    _pending: list[bytes] = []
    _pending_data_size = 0


def test_a_journal_replaced_as_the_connection_drops_is_still_published_to_its_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon journals its last rows, the journal is replaced and the NATS connection drops, all
    within one of the uplink's polls (50 ms). The disconnect marks the (empty) window broken, so the next
    pass publishes nothing, finds nothing in flight, and returns on ``replaced()`` without looking whether
    the old journal has rows it never sent: they are never published, and nothing says so (their last
    published row's ``journal_rows`` is its own row, so the new journal's start finds no shortfall)."""
    config = config_for(tmp_path, name="h1")
    first, _ = baccarat_play(2, seed=5)
    second, _ = baccarat_play(1, seed=6)
    old_id = write_journal(config, first[:-3])
    stream = FakeStream()
    monkeypatch.setattr(uplink_module, "read_tail", stream.read_tail)

    async def no_stream(*_: Any) -> None:
        return None

    monkeypatch.setattr(uplink_module, "ensure_stream", no_stream)

    async def go() -> None:
        up = Uplink(config)
        up.js = stream  # type: ignore[assignment]
        up.nc = FakeClient()  # type: ignore[assignment]
        task = asyncio.ensure_future(up.run())
        for _ in range(200):
            await asyncio.sleep(0.01)
            if len(stream.rows) == len(first) - 3:
                break
        assert len(stream.rows) == len(first) - 3
        # Within one poll: the daemon's last three rows, the table given a new journal, a disconnect.
        journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                               options=config.options_dict(), fsync=False)
        for n, inp in enumerate(first[-3:]):
            journal.append(inp, "command tester", 1_700_001_000.0 + n)
        journal.close()
        shutil.move(config.state_dir, tmp_path / "old-state")
        write_journal(config, second)
        await up._disconnected()
        for _ in range(200):
            await asyncio.sleep(0.01)
            if any(m.journal_id != old_id for m in stream.rows):
                break
        await asyncio.sleep(0.2)
        up.stop.set()
        await asyncio.wait_for(task, 5)

    asyncio.run(go())
    old_rows = [m.row for m in stream.rows if m.journal_id == old_id]
    assert old_rows == list(range(1, len(first) + 1))
