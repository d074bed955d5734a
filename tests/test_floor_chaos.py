"""The floor under crashes: the daemon, uplink, recorders, nats-server and PostgreSQL killed mid-flow.

While a table deals (its daemon its own process, ``croupier run``, dealt by commands that carry a
``ref`` and are sent again while it is away), the daemon dies right after a journal commit (before it
published the row's events or replied) and by SIGKILL; the uplink dies right after sending a row
(before its ack) and by SIGKILL, once during a clean stop; a recorder dies right after committing a
batch (before its ack) and by SIGKILL; nats-server is SIGKILLed; PostgreSQL is stopped with ``pg_ctl
stop -m immediate``. Each is restarted. At the end the floor holds every journal row once and every
event once, equal to what a ZeroMQ subscriber captured (live, or filled in by its resync after a daemon
restart), and no gap was recorded.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from floor_support import (
    Capture,
    Dealer,
    Proc,
    TableDaemon,
    assert_exactly_once,
    nats_server,  # noqa: F401 (fixture)
    own_postgres,  # noqa: F401 (fixture)
    recorded_row,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for

from controller.floor.local import NatsServer, Postgres

pytestmark = pytest.mark.timeout(180)

#: The crashes, in order (each waits for the floor to move on first, so each lands mid-flow).
KILLS = ("uplink", "daemon", "recorder", "nats", "uplink-term", "postgres", "recorder", "daemon", "nats",
         "uplink", "recorder", "nats")


def test_nothing_lost_nothing_doubled_through_kills_of_every_process(
        tmp_path: Path, nats_server: NatsServer, own_postgres: Postgres) -> None:  # noqa: F811
    config = config_for(tmp_path, name="f2")
    inputs, _ = baccarat_play(50, seed=9)
    nats, db = nats_server.url, own_postgres.dsn
    daemon = TableDaemon(config, tmp_path / "daemon.log", fault="journal_commit:60")
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats, "--window", "8",
                  fault="floor_published:30")
    recorders = [Proc(tmp_path / f"rec{n}.log", "floor", "record", "--nats", nats, "--db", db,
                      "--batch", "10", "--ack-wait", "2", "--gap-grace", "15",
                      fault="floor_committed:3" if n == 1 else "")
                 for n in (1, 2)]
    everyone = (daemon.proc, uplink, *recorders)
    kills: dict[str, int] = {}
    daemon.start()
    capture = Capture(config)
    client = daemon.client()
    dealer = Dealer(client, inputs, pause=0.4)  # about 12 s of play, longer with the daemon's restarts
    try:
        for p in (uplink, *recorders):
            p.start()
        dealer.start()
        # The armed faults fire on their own: restart those processes as a supervisor would.
        wait_for("the daemon died right after a journal commit", lambda: not daemon.proc.running(), 40,
                 *everyone)
        daemon.start()
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
            if victim == "daemon":
                daemon.kill_and_restart()
            elif victim == "uplink":
                uplink.kill()
                uplink.start()
            elif victim == "uplink-term":  # SIGKILL during its clean stop (so once it is up)
                wait_for("the uplink is up", lambda: uplink.said("resuming after row"), 30, *everyone)
                assert uplink.proc is not None
                uplink.proc.terminate()
                time.sleep(0.05)
                if uplink.running():  # else its clean stop ended first (this thread slept long): a stop
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
        dealer.join(90)
        seq = int(client.call("ping")["seq"])
        published = capture.until(seq)
        wait_for("every row recorded", lambda: recorded_row(db, "f2") == len(inputs), 60, *everyone)
    finally:
        client.close()
        for p in everyone:
            p.stop()
    assert kills == {"uplink": 3, "daemon": 2, "recorder": 3, "nats": 3, "postgres": 1}
    assert daemon.proc.kills == 2 and dealer.resent > 0
    assert capture.refilled > 0  # the events of the row journaled as the daemon died came by the resync
    assert assert_exactly_once(db, config, published) == len(inputs)
    assert "GAP" not in "".join(p.text() for p in everyone)

