"""The uplink's cursor (the stream itself), a journal replaced by a new one, and a gap the recorder raises."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats
import pytest
from floor_support import (
    Proc,
    digest,
    nats_server,  # noqa: F401 (fixture)
    postgres,  # noqa: F401 (fixture)
    query,
    recorded_row,
    run_until,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for, expected_payloads

from controller.cli import main as cli_main
from controller.daemon.config import TableConfig
from controller.daemon.journal import Journal
from controller.daemon.service import TableService
from controller.floor.cursor import STORED, Stored
from controller.floor.derive import JournalSource, Replay
from controller.floor.local import NatsServer
from controller.floor.stream import ensure_stream
from controller.floor.wire import MSG_ID, subject
from controller.inputs import Input
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(90)


def write_journal(config: TableConfig, inputs: list[Input]) -> str:
    """A real journal of ``inputs`` in the table's state dir (as the daemon writes it); its id."""
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    for n, inp in enumerate(inputs):
        journal.append(inp, "command tester", 1_700_000_000.0 + n)
    journal.close()
    return journal.header["id"]


def publish_rows(url: str, config: TableConfig, rows: set[int]) -> None:
    """Publish only ``rows`` of the journal, as an uplink does (message id, stored-rows header)."""

    async def go() -> None:
        nc = await nats.connect(url)
        js = nc.jetstream()
        await ensure_stream(js)
        source = JournalSource(config)
        replay, last, stored = Replay(source), source.last_row(), Stored()
        for entry in source.entries(1, last):
            message = replay.message(entry, last)
            if entry.id in rows:
                ack = await js.publish(subject(config.table_id, message.journal_id), message.body(),
                                       headers={MSG_ID: message.id, STORED: stored.header()})
                stored.add(entry.id, ack.seq)
        source.close()
        await nc.close()

    asyncio.run(go())


def recorder(tmp_path: Path, nats_url: str, dsn: str, *extra: str) -> Proc:
    return Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_url, "--db", dsn, *extra).start()


def assert_journal_recorded(dsn: str, config: TableConfig, journal_id: str, inputs: list[Input]) -> None:
    got = query(dsn, "SELECT row, input FROM inputs WHERE table_id = %s AND journal_id = %s ORDER BY row",
                config.table_id, journal_id)
    assert [(r, digest(i)) for r, i in got] == [(n, digest(inp.to_dict())) for n, inp in enumerate(inputs, 1)]
    events = query(dsn, "SELECT payload FROM events WHERE table_id = %s AND journal_id = %s ORDER BY seq",
                   config.table_id, journal_id)
    assert [digest(p) for (p,) in events] == [digest(p) for p in expected_payloads(config.table_id, inputs)]


def test_an_uplink_restarted_after_a_crash_republishes_rows_missing_below_the_stream_s_last(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    """The stream holds rows 1, 2, 4, 5 (row 3 went into a dying connection; the uplink died before
    publishing it again): the restarted uplink publishes row 3 and goes on from row 6."""
    config = config_for(tmp_path, name="u1")
    inputs, _ = baccarat_play(4, seed=2)
    journal_id = write_journal(config, inputs)
    publish_rows(nats_server.url, config, {1, 2, 4, 5})
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url).start()
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    run_until("every row recorded", lambda: recorded_row(postgres.dsn, "u1") == len(inputs), 30, uplink, rec)
    assert "the stream lacks rows [3]" in uplink.text() and "resuming after row 5 of" in uplink.text()
    assert_journal_recorded(postgres.dsn, config, journal_id, inputs)
    assert query(postgres.dsn, "SELECT * FROM gaps") == []


def test_floor_export_gives_a_time_range_of_rows_with_their_events_as_json_lines(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    config = config_for(tmp_path, name="u6")
    inputs, _ = baccarat_play(1, seed=3)
    journal_id = write_journal(config, inputs)  # row n journaled at 1_700_000_000 + n - 1
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url).start()
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    run_until("recorded", lambda: recorded_row(postgres.dsn, "u6") == len(inputs), 30, uplink, rec)
    start = datetime.fromtimestamp(1_700_000_002, UTC).isoformat()  # rows 3, 4 and 5
    assert cli_main(["floor", "export", "u6", "--from", start, "--to", "1700000005", "--db", postgres.dsn]) \
        == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["table"], d["journal"], d["row"], d["at"]) for d in lines] == [
        ("u6", journal_id, n, 1_700_000_000.0 + n - 1) for n in (3, 4, 5)]
    assert [d["input"] for d in lines] == [inp.to_dict() for inp in inputs[2:5]]
    assert_journal_recorded(postgres.dsn, config, journal_id, inputs)  # the events are the daemon's
    recorded = query(postgres.dsn, "SELECT payload FROM events WHERE table_id = 'u6' AND row BETWEEN 3 AND 5 "
                                   "ORDER BY seq")
    assert [e for d in lines for e in d["events"]] == [p for (p,) in recorded] and recorded
    assert cli_main(["floor", "export", "u6", "--from", "yesterday", "--to", "1", "--db", postgres.dsn]) == 2


def test_a_new_journal_starts_its_own_rows_and_the_old_one_stays_whole(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    config = config_for(tmp_path, name="u2")
    first, _ = baccarat_play(3, seed=5)
    second, _ = baccarat_play(2, seed=6)
    old_id = write_journal(config, first)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url).start()
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    try:
        wait_for("the first journal recorded", lambda: recorded_row(postgres.dsn, "u2") == len(first), 30,
                 uplink, rec)
        shutil.move(config.state_dir, tmp_path / "old-state")  # the operator starts the table anew
        new_id = write_journal(config, second)
        wait_for("the new journal recorded", lambda: query(
            postgres.dsn, "SELECT recorded_row FROM tables WHERE journal_id = %s", new_id)
            == [(len(second),)], 30, uplink, rec)
    finally:
        uplink.stop()
        rec.stop()
    assert new_id != old_id
    assert_journal_recorded(postgres.dsn, config, old_id, first)
    assert_journal_recorded(postgres.dsn, config, new_id, second)


def test_rows_missing_from_the_stream_are_recorded_as_a_gap_and_logged(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    """No uplink comes to fill the hole: after the grace the recorder writes the gap and says so."""
    config = config_for(tmp_path, name="u3")
    inputs, _ = baccarat_play(2, seed=8)
    journal_id = write_journal(config, inputs)
    publish_rows(nats_server.url, config, {1, 2, 5, 6})
    rec = recorder(tmp_path, nats_server.url, postgres.dsn, "--gap-grace", "1")
    run_until("the gap recorded", lambda: bool(query(postgres.dsn, "SELECT 1 FROM gaps")), 30, rec)
    assert query(postgres.dsn, "SELECT table_id, journal_id, first_row, last_row, filled_at FROM gaps") == [
        ("u3", journal_id, 3, 4, None)]
    assert f"GAP: table u3 journal {journal_id} rows 3..4 are missing" in rec.text()
    assert recorded_row(postgres.dsn, "u3") == 2


def test_a_body_the_recorder_cannot_read_is_left_unrecorded_and_the_rest_of_its_batch_recorded(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    """A newer format, a body that is not JSON, one whose row is not a number and one Python reads but
    the database refuses (a time below a double's range), in one batch with a journal's rows: the
    database refuses the batch whole, the recorder sorts it message by message (the last one alone),
    records the journal's rows, leaves the newer format to a newer recorder and terminates the three
    malformed ones (never recordable: JetStream stops delivering them), each named in its log."""
    config = config_for(tmp_path, name="u6")
    inputs, _ = baccarat_play(1, seed=3)
    journal_id = write_journal(config, inputs)
    publish_rows(nats_server.url, config, set(range(1, len(inputs) + 1)))
    tiny = json.dumps({"format": 1, "table": "u6", "journal": "j", "row": 4, "at": 0.5, "source": "shoe",
                       "ref": None, "input": {"input": "card"}, "first_seq": 1, "events": [],
                       "game": "baccarat", "options": {}, "journal_rows": 4, "round": None,
                       "currency": {"code": "EUR", "minor_units": 2}}).replace('"at": 0.5', '"at": 1e-400')
    strange = [b'{"format":2,"table":"u6"}', b"not json", json.dumps(
        {"format": 1, "table": "u6", "journal": "j", "row": "first"}).encode(), tiny.encode()]

    async def go() -> None:
        nc = await nats.connect(nats_server.url)
        for n, body in enumerate(strange, 1):
            await nc.jetstream().publish(subject("u6", "other"), body, headers={MSG_ID: f"u6:other:{n}"})
        await nc.close()

    asyncio.run(go())
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    run_until("the rows recorded, the others named", lambda: recorded_row(postgres.dsn, "u6") == len(inputs)
              and rec.text().count("not recorded") == 4, 30, rec)
    assert_journal_recorded(postgres.dsn, config, journal_id, inputs)
    assert query(postgres.dsn, "SELECT count(*) FROM inputs") == [(len(inputs),)]
    assert all(f"u6:other:{n}" in rec.text() for n in (1, 2, 3, 4))
    assert rec.text().count("terminated") == 3 and "the database refuses it" in rec.text()


def test_an_uplink_resuming_far_into_a_journal_starts_from_the_daemon_s_checkpoint(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    """The daemon checkpoints every 30 inputs (at a round's end); the stream already holds rows
    1..100: the uplink takes the state at the newest checkpoint before row 100, not a replay from row
    1, and the events it derives after it are still the daemon's."""
    config = config_for(tmp_path, name="u4")
    inputs, _ = baccarat_play(12, seed=12)
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    service = TableService(config, journal, checkpoint_every=30)
    service.replay()
    for inp in inputs:
        service.submit(inp, "command tester")
    journal_id = journal.header["id"]
    journal.close()
    publish_rows(nats_server.url, config, set(range(1, 101)))
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url).start()
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    run_until("every row recorded", lambda: recorded_row(postgres.dsn, "u4") == len(inputs), 30, uplink, rec)
    used = re.search(r"state from the journal's checkpoint at row (\d+)\n", uplink.text())
    assert used and 30 <= int(used.group(1)) <= 100, uplink.text()
    assert_journal_recorded(postgres.dsn, config, journal_id, inputs)


def test_floor_tables_says_which_uplinks_are_online_and_since_when(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """A quiet table's uplink still says it is alive; once it stops, the table is offline since then."""
    config = config_for(tmp_path, name="u5")
    inputs, _ = baccarat_play(1, seed=1)
    write_journal(config, inputs)

    def listed(*extra: str) -> dict[str, Any]:
        assert cli_main(["floor", "tables", "--json", "--db", postgres.dsn, *extra]) == 0
        out = capsys.readouterr().out
        return json.loads(out) if out.strip() else {}

    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url,
                  "--heartbeat", "0.3").start()
    rec = recorder(tmp_path, nats_server.url, postgres.dsn)
    try:
        wait_for("recorded", lambda: recorded_row(postgres.dsn, "u5") == len(inputs), 30, uplink, rec)
        wait_for("online", lambda: listed().get("online") is True, 30, uplink, rec)
        up = listed()
        assert up["behind"] == 0 and up["since"] is not None
        uplink.stop()
        wait_for("offline", lambda: listed("--offline-after", "1").get("online") is False, 30, uplink, rec)
        down = listed("--offline-after", "1")
        assert down["since"] >= up["since"]  # offline since its last heartbeat
        assert cli_main(["floor", "tables", "--db", postgres.dsn, "--offline-after", "1"]) == 0
        assert "u5" in capsys.readouterr().out.splitlines()[1].split()[0]
    finally:
        uplink.stop()
        rec.stop()
