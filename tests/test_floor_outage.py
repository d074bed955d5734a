"""A floor outage the table never notices: nats-server down while the table deals, then the backfill.

The short form of ``bench/floor_outage.py`` (which measures card-to-subscriber latency around a
5-minute outage): here a few seconds, and what must hold whatever the timing: every input answered
as usual during the outage, the journal gathered meanwhile sent in row order once the server is back,
``croupier floor tables --json`` showing the table's lag at zero, and the
floor holding every row and event once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from floor_support import (
    Capture,
    Dealer,
    Proc,
    assert_exactly_once,
    journal_rows,
    nats_server,  # noqa: F401 (fixture)
    postgres,  # noqa: F401 (fixture)
    recorded_row,
    run_until,
    stream_rows,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for

from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.local import NatsServer
from controller.floor.schema import migrate
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)


def test_a_floor_outage_goes_unnoticed_by_the_table_and_is_backfilled_in_order(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """nats-server is SIGKILLed while the table deals and comes back seconds later: every input is taken
    as usual (the daemon has no idea); the uplink sends what the journal gathered, in row order, and
    the floor has it all, once, with nothing behind."""
    config = config_for(tmp_path, name="f3")
    inputs, _ = baccarat_play(20, seed=21)
    half = len(inputs) // 2
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url,
                  "--heartbeat", "0.5")
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_server.url, "--db", postgres.dsn)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
    def floor_tables() -> dict[str, dict[str, Any]]:  # `croupier floor tables --json`, in this process
        assert cli_main(["floor", "tables", "--json", "--db", postgres.dsn]) == 0
        return {t["table"]: t for t in map(json.loads, capsys.readouterr().out.splitlines())}

    assert floor_tables() == {}  # no table yet: no line at all (it printed an empty one)
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            uplink.start()
            rec.start()
            Dealer(client, inputs[:half], pause=0).start().join(60)
            wait_for("the first half recorded", lambda: recorded_row(postgres.dsn, "f3") == half, 40,
                     uplink, rec)
            nats_server.kill()
            dealer = Dealer(client, inputs[half:], tag="outage", chunk=10, pause=0.2).start()
            dealer.join(60)  # each reply checked: the table goes on as if nothing happened
            assert dealer.resent == 0 and client.call("status")["journal_fault"] is None
            assert recorded_row(postgres.dsn, "f3") == half
            nats_server.start()
            seq = int(client.call("ping")["seq"])
        finally:
            client.close()
        published = capture.until(seq)
        lags: list[dict[str, Any]] = []

        def caught_up() -> bool:
            lags.append(floor_tables()["f3"])
            return bool(lags[-1]["recorded_row"] == len(inputs) and lags[-1]["behind"] == 0)

        run_until("backfilled, nothing behind", caught_up, 60, uplink, rec)
    journal, _ = journal_rows(config)
    assert stream_rows(nats_server.url, "f3") == [(journal, r) for r in range(1, len(inputs) + 1)]
    recorded = [lag["recorded_row"] for lag in lags]
    assert recorded == sorted(recorded) and recorded[0] >= half and lags[-1]["behind"] == 0
    assert assert_exactly_once(postgres.dsn, config, published) == len(inputs)

