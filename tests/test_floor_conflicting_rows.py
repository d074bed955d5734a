"""A row sent again with another body under its key (table, journal, row) is an error the floor shows.

Two Pis running copies of one journal (a cloned SD card), or a journal restored under its id by hand,
give the floor two histories under one journal. JetStream's duplicate check and the recorder's ``ON
CONFLICT DO NOTHING`` took the second body as a resend: the first was kept, and nothing said so (a review,
2026-12-07). Now the first stays the record, the other is kept in ``conflicts`` and logged at ERROR, the
message is still acknowledged, ``floor tables`` counts the rows and the alert service raises
``conflicting_rows``; a true resend (the same row) stays silent. Within JetStream's duplicate window the
server drops the second body before any recorder sees it: the uplink that sent it is told (its PubAck's
``duplicate``) and compares.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nats
import psycopg
import pytest
from floor_support import Proc, floor_tables, nats_server, postgres, query, wait_for  # noqa: F401 (fixtures)

from controller.daemon.journal import JournalMismatch
from controller.floor import store
from controller.floor.local import NatsServer
from controller.floor.schema import migrate
from controller.floor.stream import ensure_stream
from controller.floor.uplink import held_alike
from controller.floor.wire import MSG_ID, STREAM, msg_id, subject
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)

T, J = "c1", "j-cloned"


def body(row: int, **changed: Any) -> bytes:
    """Row ``row`` of journal J as its uplink sends it (``changed``: another history's fields)."""
    fields: dict[str, Any] = {
        "format": 1, "table": T, "journal": J, "row": row, "at": 1_700_000_000.5 + row, "source": "shoe",
        "ref": None, "input": {"input": "card", "card": "KH"}, "first_seq": row,
        "events": [{"event": "card_dealt", "table": T, "seq": row, "card": "KH"}],
        "game": "baccarat", "options": {}, "journal_rows": row, "round": None,
        "currency": {"code": "EUR", "minor_units": 2}}
    return json.dumps({**fields, **changed}).encode()


def publish(url: str, messages: list[tuple[int, bytes]], window: float = 1.0) -> list[Any]:
    """Publish each (row, body) with the uplink's message id; the stream made first with a ``window``
    seconds duplicate window (a 2-minute one would have the server drop the second bodies)."""

    async def go() -> list[Any]:
        nc = await nats.connect(url)
        js = nc.jetstream()
        await ensure_stream(js, duplicate_window=window)
        acks = [await js.publish(subject(T, J), data, headers={MSG_ID: msg_id(T, J, row)})
                for row, data in messages]
        await nc.close()
        return acks

    return asyncio.run(go())


def recorded_three(tmp_path: Path, url: str, dsn: str) -> tuple[Proc, Proc]:
    """Rows 1..3 published and recorded by a recorder and an alert service started here (the caller stops
    them), and the stream's one-second duplicate window passed: a body sent again now reaches the floor."""
    publish(url, [(n, body(n)) for n in (1, 2, 3)])
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", url, "--db", dsn).start()
    alerts = Proc(tmp_path / "alerts.log", "floor", "alerts", "--nats", url, "--db", dsn).start()
    try:
        wait_for("rows 1..3 recorded", lambda: query(dsn, "SELECT MAX(recorded_row) FROM tables") == [(3,)],
                 60, rec)
    except BaseException:
        alerts.stop()
        rec.stop()
        raise
    time.sleep(1.5)  # past the duplicate window: the server keeps both bodies
    return rec, alerts


def test_a_row_recorded_again_with_another_body_is_kept_apart_logged_counted_and_raised(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    rec, alerts = recorded_three(tmp_path, nats_server.url, postgres.dsn)
    try:
        other = body(2, at=1_700_000_100.0, input={"input": "card", "card": "QS"}, first_seq=2,
                     events=[{"event": "card_dealt", "table": T, "seq": 2, "card": "QS"},
                             {"event": "tilt", "table": T, "seq": 4, "reason": "the other history's"}])
        publish(nats_server.url, [(2, other), (3, body(3, journal_rows=9)), (4, body(4))])
        wait_for("row 4 recorded", lambda: query(postgres.dsn, "SELECT MAX(recorded_row) FROM tables")
                 == [(4,)], 60, rec)
        wait_for("the conflicting_rows alert", lambda: query(
            postgres.dsn, "SELECT table_id, key, severity, data FROM alerts WHERE kind = 'conflicting_rows'")
            == [(T, J, "critical", {"first_row": 2, "rows": 1})], 60, alerts)

        # The first body stays the record, nothing of the other is written (its extra event, seq 4).
        assert query(postgres.dsn, "SELECT row, input->>'card', at FROM inputs ORDER BY row") == [
            (1, "KH", 1_700_000_001.5), (2, "KH", 1_700_000_002.5), (3, "KH", 1_700_000_003.5),
            (4, "KH", 1_700_000_004.5)]
        assert query(postgres.dsn, "SELECT seq, payload->>'event' FROM events ORDER BY seq") == [
            (1, "card_dealt"), (2, "card_dealt"), (3, "card_dealt"), (4, "card_dealt")]
        # The other is kept for a person, once; the true resend of row 3 (another journal_rows) is not.
        assert query(postgres.dsn, "SELECT row, body->'input'->>'card' FROM conflicts") == [(2, "QS")]
        log = rec.text()
        assert log.count("CONFLICT:") == 1, log
        line = next(x for x in log.splitlines() if "CONFLICT:" in x)
        assert "ERROR" in line and f"table {T} journal {J}: row(s) 2 (1)" in line, line
        # Every message acknowledged (none redelivered for ever, none left pending).
        info = asyncio.run(_consumer(nats_server.url))
        assert (info.num_pending, info.num_ack_pending) == (0, 0)
        assert floor_tables(postgres.dsn)[T]["conflicting_rows"] == 1
    finally:
        assert alerts.stop() == 0, alerts.text()
        assert rec.stop() == 0, rec.text()


async def _consumer(url: str) -> Any:
    nc = await nats.connect(url)
    info = await nc.jetstream().consumer_info(STREAM, "recorder")
    await nc.close()
    return info


def test_two_bodies_of_one_row_in_one_batch_keep_the_first_and_a_redelivery_says_nothing_again(
        postgres: FloorDatabase) -> None:  # noqa: F811
    """In process, the recorder's own transaction: the batch's first body of a row is its record, and
    the conflict is new only once (a batch delivered again after a crash before its ack adds nothing)."""
    other = body(1, input={"input": "card", "card": "QS"},
                 events=[{"event": "card_dealt", "table": T, "seq": 1},
                         {"event": "tilt", "table": T, "seq": 2}])
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        found: list[store.Conflict] = []
        store.write_bodies(conn, [body(1), other, body(1, journal_rows=5)], conflicts=found)
        assert found == [store.Conflict(T, J, 1)]
        found.clear()
        store.write_bodies(conn, [body(1), other], conflicts=found)  # the batch delivered again
        assert found == []
        assert conn.execute("SELECT input->>'card' FROM inputs").fetchall() == [("KH",)]
        assert conn.execute("SELECT seq FROM events").fetchall() == [(1,)]
        assert conn.execute("SELECT row, body->'input'->>'card' FROM conflicts").fetchall() == [(1, "QS")]
        assert conn.execute("SELECT recorded_row FROM tables").fetchall() == [(1,)]


def test_an_uplink_whose_row_the_server_drops_as_a_duplicate_of_another_body_is_told(
        nats_server: NatsServer) -> None:  # noqa: F811
    """Within the duplicate window the server drops the second body before any recorder sees it; its PubAck
    says ``duplicate`` with the held message's seq, and the uplink compares the two rows."""
    other = body(1, input={"input": "card", "card": "QS"})
    first, resent, changed = publish(
        nats_server.url, [(1, body(1)), (1, body(1, journal_rows=7)), (1, other)], window=120.0)
    assert not first.duplicate and resent.duplicate and changed.duplicate
    assert resent.seq == changed.seq == first.seq

    async def check(data: bytes, ack: Any) -> None:
        nc = await nats.connect(nats_server.url)
        try:
            await held_alike(nc.jetstream(), Path("journal.sqlite3"), data, ack)
        finally:
            await nc.close()

    asyncio.run(check(body(1, journal_rows=7), resent))  # a true resend: silent
    with pytest.raises(JournalMismatch, match=f"table {T} journal {J} row 1: the stream holds another row"):
        asyncio.run(check(other, changed))


def test_the_error_names_a_row_once_though_both_its_bodies_were_kept_apart(
        caplog: pytest.LogCaptureFixture) -> None:
    """Both bodies of row 5 kept apart (one following the other history, one differing from it): the
    ERROR said "row(s) 4, 5, 5 (3)" (a review)."""
    from controller.floor.recorder import _say_conflicts

    with caplog.at_level("ERROR", logger="croupier"):
        _say_conflicts([store.Conflict(T, J, 5), store.Conflict(T, J, 4), store.Conflict(T, J, 5)])
    assert [r.getMessage().split(" came again")[0] for r in caplog.records] == [
        f"CONFLICT: table {T} journal {J}: row(s) 4, 5 (2)"]
