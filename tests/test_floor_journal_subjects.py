"""One subject per journal: the stream is each journal's cursor, and a floor made with one subject per table
goes on.

With one subject per table the uplink's cursor was the subject's last message: while a restored old
journal's uplink sent its rows beside the live one's, the live uplink, restarted, found the other
journal's row there and published its own journal again from row 1 (a review, 2026-12-07).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import nats
import pytest
from nats.js import api

from controller.floor.cursor import STORED, read_tail
from controller.floor.local import NatsServer
from controller.floor.stream import ensure_stream, rows_consumer
from controller.floor.wire import EARLIER_SUBJECTS, MSG_ID, STREAM, earlier_subject, msg_id, subject
from tests.test_floor_handover import row_of

pytestmark = pytest.mark.timeout(60)


async def _publish(js: Any, subj: str, journal: str, row: int, rows: int) -> None:
    await js.publish(subj, row_of(journal, row, rows, 100.0 + row), stream=STREAM,
                     headers={MSG_ID: msg_id("s1", journal, row), STORED: f"{row - 1}:0"})


def test_another_journal_sent_at_the_same_time_moves_no_cursor(nats_server: NatsServer) -> None:
    async def go() -> tuple[int, int, int]:
        client = await nats.connect(nats_server.url)
        try:
            js = client.jetstream()
            await ensure_stream(js)
            for row in range(1, 6):  # the live journal, then a restored old one sent beside it
                await _publish(js, subject("s1", "live"), "live", row, 9)
            for row in range(1, 4):
                await _publish(js, subject("s1", "old"), "old", row, 3)
            await _publish(js, subject("s1", "live"), "live", 6, 9)
            await _publish(js, subject("s1", "old"), "old", 3, 3)  # a resend, within the window
            live, old = await read_tail(js, "s1", "live"), await read_tail(js, "s1", "old")
            return live.last, old.last, (await read_tail(js, "s1", "new")).last
        finally:
            await client.close()

    assert asyncio.run(go()) == (6, 3, 0)


def test_a_floor_made_with_one_subject_per_table_goes_on_where_it_stood(
        nats_server: NatsServer, caplog: pytest.LogCaptureFixture) -> None:
    """Its stream takes the per-journal subjects beside its own; an uplink resumes after its journal's last
    row on the old subject; the recorders' consumer, filtered to the old subject, is made again after its
    acknowledged floor, so it reads the rows it had not acknowledged and the new subjects' too."""
    async def go() -> tuple[list[str], int, list[str], str | None]:
        client = await nats.connect(nats_server.url)
        try:
            js = client.jetstream()
            await js.add_stream(api.StreamConfig(name=STREAM, subjects=[EARLIER_SUBJECTS],
                                                 storage=api.StorageType.FILE, duplicate_window=120.0))
            for row in range(1, 5):
                await _publish(js, earlier_subject("s1"), "j1", row, 9)
            old = await js.pull_subscribe(EARLIER_SUBJECTS, durable="recorder", stream=STREAM)
            for m in await old.fetch(2, timeout=5):  # rows 1 and 2 recorded and acknowledged
                await m.ack_sync()
            await old.unsubscribe()
            await ensure_stream(js)
            subjects = list((await js.stream_info(STREAM)).config.subjects or [])
            resumed = (await read_tail(js, "s1", "j1")).last
            await _publish(js, subject("s1", "j1"), "j1", 5, 9)
            await rows_consumer(js, "recorder", api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT))
            sub = await js.pull_subscribe_bind(durable="recorder", stream=STREAM)
            got = [str(m.headers[MSG_ID]) for m in await sub.fetch(10, timeout=2)]
            info = await js.consumer_info(STREAM, "recorder")
            return subjects, resumed, got, info.config.filter_subject
        finally:
            await client.close()

    with caplog.at_level(logging.WARNING, logger="croupier.floor"):
        subjects, resumed, got, filtered = asyncio.run(go())
    assert subjects == [EARLIER_SUBJECTS, "croupier.*.rows.*"] and resumed == 4
    assert got == ["s1:j1:3", "s1:j1:4", "s1:j1:5"] and not filtered
    assert "consumer recorder: made again for every subject of the stream after row message 2" in caplog.text


def test_a_new_journal_names_rows_an_earlier_floors_subject_never_got(
        nats_server: NatsServer, caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> int:
        client = await nats.connect(nats_server.url)
        try:
            js = client.jetstream()
            await js.add_stream(api.StreamConfig(name=STREAM, subjects=[EARLIER_SUBJECTS]))
            await ensure_stream(js)
            await _publish(js, earlier_subject("s1"), "old", 9, 34)
            return (await read_tail(js, "s1", "new")).last
        finally:
            await client.close()

    with caplog.at_level(logging.ERROR, logger="croupier.floor"):
        assert asyncio.run(go()) == 0
    assert "row 9 of journal old, which had 34 rows: rows 10..34 of it were never published" in caplog.text
