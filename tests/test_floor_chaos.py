"""The floor under crashes: uplink, recorders, nats-server and PostgreSQL killed mid-flow, restarted.

While a table deals, the uplink dies right after sending a row (before its ack) and by SIGKILL,
once during a clean stop; a recorder dies right after committing a batch (before its ack) and by
SIGKILL; nats-server is SIGKILLed; PostgreSQL is stopped with ``pg_ctl stop -m immediate``. Each is
restarted. At the end the floor holds every journal row once and every published event once, and
no gap was recorded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from floor_support import (
    Capture,
    Dealer,
    Proc,
    assert_exactly_once,
    nats_server,  # noqa: F401 (fixture)
    own_postgres,  # noqa: F401 (fixture)
    postgres,  # noqa: F401 (fixture)
    recorded_row,
    run_until,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for
from test_zmq_snapshot import send_all

from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.local import NatsServer, Postgres
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(180)

#: The crashes, in order (each waits for the floor to move on first, so each lands mid-flow).
KILLS = ("uplink", "recorder", "nats", "uplink-term", "postgres", "recorder", "nats", "uplink", "recorder",
         "nats")


def test_nothing_lost_nothing_doubled_through_kills_of_every_floor_process(
        tmp_path: Path, nats_server: NatsServer, own_postgres: Postgres) -> None:  # noqa: F811
    config = config_for(tmp_path, name="f2")
    inputs, _ = baccarat_play(50, seed=9)
    nats, db = nats_server.url, own_postgres.dsn
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats, "--window", "8",
                  fault="floor_published:30")
    recorders = [Proc(tmp_path / f"rec{n}.log", "floor", "record", "--nats", nats, "--db", db,
                      "--batch", "10", "--ack-wait", "2", "--gap-grace", "15",
                      fault="floor_committed:3" if n == 1 else "")
                 for n in (1, 2)]
    everyone = (uplink, *recorders)
    kills: dict[str, int] = {}
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        dealer = Dealer(client, inputs, pause=0.4)  # about 12 s of play
        try:
            for p in everyone:
                p.start()
            dealer.start()
            # The two armed faults fire on their own: restart those processes as a supervisor would.
            wait_for("the uplink died at its fault point", lambda: not uplink.running(), 40, *everyone)
            uplink.start()
            wait_for("recorder 1 died at its fault point", lambda: not recorders[0].running(), 40, *everyone)
            recorders[0].start()
            for n, victim in enumerate(KILLS):
                before = recorded_row(db, "f2")
                wait_for(f"progress before kill {n} ({victim})",
                         lambda b=before: recorded_row(db, "f2") > b or dealer.done.is_set(), 30, *everyone)
                time.sleep(0.2)
                kills[victim.split("-")[0]] = kills.get(victim.split("-")[0], 0) + 1
                if victim == "uplink":
                    uplink.kill()
                    uplink.start()
                elif victim == "uplink-term":  # SIGKILL during its clean stop (so once it is up)
                    wait_for("the uplink is up", lambda: uplink.said("resuming after row"), 30, *everyone)
                    assert uplink.proc is not None
                    uplink.proc.terminate()
                    time.sleep(0.05)
                    uplink.kill()
                    uplink.start()
                elif victim == "recorder":
                    recorders[n % 2].kill()
                    recorders[n % 2].start()
                elif victim == "nats":
                    nats_server.kill()
                    time.sleep(0.3)
                    nats_server.start()
                else:
                    own_postgres.stop("immediate")
                    time.sleep(0.3)
                    own_postgres.start()
            dealer.join(60)
            seq = int(client.call("ping")["seq"])
        finally:
            client.close()
        published = capture.until(seq)
        try:
            wait_for("every row recorded", lambda: recorded_row(db, "f2") == len(inputs), 60, *everyone)
        finally:
            for p in everyone:
                p.stop()
    assert kills == {"uplink": 3, "recorder": 3, "nats": 3, "postgres": 1}
    assert assert_exactly_once(db, config, published) == len(inputs)
    assert "GAP" not in "".join(p.text() for p in everyone)


def test_a_floor_outage_goes_unnoticed_by_the_table_and_is_backfilled(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """nats-server is down while the table deals: every input is taken as usual (the daemon has no
    idea); when the server is back the uplink sends what the journal gathered, and the floor has it
    all, once, with nothing behind."""
    config = config_for(tmp_path, name="f3")
    inputs, _ = baccarat_play(20, seed=21)
    half = len(inputs) // 2
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url,
                  "--heartbeat", "0.5")
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_server.url, "--db", postgres.dsn)
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            uplink.start()
            rec.start()
            send_all(client, inputs[:half])
            wait_for("the first half recorded", lambda: recorded_row(postgres.dsn, "f3") == half, 40,
                     uplink, rec)
            nats_server.kill()
            send_all(client, inputs[half:])  # each reply checked: the table goes on as if nothing happened
            assert client.call("status")["journal_fault"] is None
            assert recorded_row(postgres.dsn, "f3") == half
            nats_server.start()
            seq = int(client.call("ping")["seq"])
        finally:
            client.close()
        published = capture.until(seq)
        run_until("backfilled", lambda: recorded_row(postgres.dsn, "f3") == len(inputs), 60, uplink, rec)
    assert assert_exactly_once(postgres.dsn, config, published) == len(inputs)
    assert cli_main(["floor", "tables", "--json", "--db", postgres.dsn]) == 0
    assert json.loads(capsys.readouterr().out)["behind"] == 0
