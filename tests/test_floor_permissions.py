"""Who may do what: a table publishes only its own rows (NATS users); a reader of the history only reads."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.errors
import nats.js.errors
import psycopg
import pytest
from floor_support import (  # noqa: F401 (fixtures)
    Proc,
    nats_server,
    own_postgres,
    postgres,
    recorded_row,
    run_until,
    serve,
)
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import write_journal

from controller.cli import main as cli_main
from controller.floor import alerts, eventlog
from controller.floor.local import NatsServer, Postgres
from controller.floor.schema import migrate
from controller.floor.stream import ensure_stream
from controller.floor.wire import MSG_ID, STREAM, subject
from tests.server_fixtures import FloorDatabase

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(90)

#: docs/floor.md's pattern: a table publishes its rows and reads the stream's tail, nothing else.
USERS = """
authorization {
  users = [
    {user: floor, password: floor-secret}
    {user: p1, password: p1-secret, permissions: {
      publish: {allow: ["croupier.p1.>", "$JS.API.STREAM.INFO.CROUPIER", "$JS.API.STREAM.MSG.GET.CROUPIER"]}
      subscribe: {allow: ["_INBOX.>"]}}}
  ]
}
"""


@pytest.fixture
def secured_nats() -> Iterator[NatsServer]:
    yield from serve(lambda: NatsServer(config=USERS))


def test_a_table_publishes_its_own_rows_and_cannot_publish_another_table_s(
        tmp_path: Path, secured_nats: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    config = config_for(tmp_path, name="p1")
    inputs, _ = baccarat_play(2, seed=3)
    write_journal(config, inputs)
    secret = tmp_path / "p1.password"
    secret.write_text("p1-secret\n")
    floor_secret = tmp_path / "floor.password"
    floor_secret.write_text("floor-secret\n")
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", secured_nats.url, "--user", "floor",
               "--password-file", str(floor_secret), "--db", postgres.dsn).start()  # it creates the stream
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", secured_nats.url,
                  "--user", "p1", "--password-file", str(secret)).start()
    run_until("the table's rows recorded", lambda: recorded_row(postgres.dsn, "p1") == len(inputs), 40,
              uplink, rec)

    async def forge() -> tuple[bool, bool]:
        """As p1: publish a row on p2's subject. Then as the floor: did the stream take it?"""
        table = await nats.connect(secured_nats.url, user="p1", password="p1-secret")
        try:
            await table.jetstream().publish(subject("p2", "x"), b"{}", timeout=2, headers={MSG_ID: "p2:x:1"})
            refused = False
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError, nats.js.errors.APIError):
            refused = True
        finally:
            await table.close()
        floor = await nats.connect(secured_nats.url, user="floor", password="floor-secret")
        try:
            await ensure_stream(floor.jetstream())
            await floor.jetstream().get_last_msg(STREAM, subject("p2", "x"))
            stored = True
        except nats.js.errors.NotFoundError:
            stored = False
        finally:
            await floor.close()
        return refused, stored

    refused, stored = asyncio.run(forge())
    assert refused and not stored


def test_the_recorder_s_role_writes_and_the_reader_s_role_only_reads(
        tmp_path: Path, nats_server: NatsServer, own_postgres: Postgres,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """deploy/floor/roles.sql as the database's superuser; the recorder runs as croupier_recorder,
    and croupier_reader can query but not write. Roles are a cluster's, not a database's: a cluster
    of its own."""
    with psycopg.connect(own_postgres.dsn, autocommit=True) as admin:
        admin.execute((ROOT / "deploy" / "floor" / "roles.sql").read_bytes())
    as_recorder = own_postgres.dsn.replace("croupier@", "croupier_recorder@")
    as_reader = own_postgres.dsn.replace("croupier@", "croupier_reader@")
    config = config_for(tmp_path, name="r1")
    inputs, _ = baccarat_play(2, seed=4)
    write_journal(config, inputs)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url).start()
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_server.url, "--db", as_recorder)
    rec.start()
    run_until("recorded", lambda: recorded_row(as_reader, "r1") == len(inputs), 40, uplink, rec)
    assert cli_main(["floor", "recall", "r1", "--last", "2", "--json", "--db", as_reader]) == 0
    assert len(json.loads(capsys.readouterr().out)["rounds"]) == 2
    with psycopg.connect(as_reader) as reader, pytest.raises(psycopg.errors.InsufficientPrivilege):
        reader.execute("DELETE FROM inputs")


def test_the_board_s_role_acknowledges_and_nothing_more_and_the_alert_service_writes_as_the_recorder(
        own_postgres: Postgres) -> None:  # noqa: F811
    """deploy/floor/roles.sql before the tables (granting what it can) and again after the recorder's
    role migrated (the board's column grant): croupier_board reads and acknowledges, nothing else."""
    roles = (ROOT / "deploy" / "floor" / "roles.sql").read_bytes()
    as_role = {r: own_postgres.dsn.replace("croupier@", f"croupier_{r}@") for r in ("recorder", "board")}
    with psycopg.connect(own_postgres.dsn, autocommit=True) as admin:
        admin.execute(roles)
        with psycopg.connect(as_role["recorder"]) as recorder:  # as `croupier floor alerts` starts and raises
            migrate(recorder)
            raised = alerts.raise_alert(recorder, table_id="b1", kind="tilt", severity="critical",
                                        detail="tilt in round 3")
        assert raised is not None
        admin.execute(roles)  # again, now the tables are there
    with psycopg.connect(as_role["board"]) as board:
        assert [a.id for a in alerts.open_alerts(board, "b1")] == [raised.id]
        acked = alerts.acknowledge(board, raised.id, "Ann")
        assert acked is not None and acked.acked_by == "Ann"
        assert eventlog.verify(board).intact
        for sql in ("UPDATE alerts SET cleared_at = now()", "UPDATE alerts SET detail = 'x'",
                    "DELETE FROM alerts", "INSERT INTO inputs SELECT * FROM inputs", "DELETE FROM event_log"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                board.execute(sql)
            board.rollback()
