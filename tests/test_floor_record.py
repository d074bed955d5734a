"""The floor end to end: a dealing table, its uplink, recorders, a real nats-server and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from floor_support import (
    Capture,
    Proc,
    assert_exactly_once,
    nats_server,  # noqa: F401 (fixture)
    postgres,  # noqa: F401 (fixture)
    query,
    recorded_row,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for
from test_zmq_snapshot import send_all

from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.local import NatsServer, free_port
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)


def test_a_dealing_table_is_recorded_row_for_row_and_event_for_event(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """Inputs equal the journal (hash of each row's input, its time and source); events equal what a
    ZeroMQ subscriber received from the daemon, by seq; rounds are there; two recorders, no gap."""
    config = config_for(tmp_path, name="f1")
    inputs, engine = baccarat_play(25, seed=4)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url,
                  "--window", "16")
    recorders = [Proc(tmp_path / f"rec{n}.log", "floor", "record", "--nats", nats_server.url,
                      "--db", postgres.dsn, "--batch", "20") for n in (1, 2)]
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, inputs[: len(inputs) // 2])
            uplink.start()
            for r in recorders:
                r.start()
            send_all(client, inputs[len(inputs) // 2:])  # while the uplink follows the journal
            seq = int(client.call("ping")["seq"])
            table_recall = client.call("recall", n=3)["rounds"]
            round_two = client.call("recall", round=2)["rounds"]
        finally:
            client.close()
        published = capture.until(seq)
        try:
            wait_for("every row recorded", lambda: recorded_row(postgres.dsn, "f1") == len(inputs), 60,
                     uplink, *recorders)
        finally:
            for p in (uplink, *recorders):
                assert p.stop() == 0, p.text()
    assert assert_exactly_once(postgres.dsn, config, published) == len(inputs)
    rounds = query(postgres.dsn, "SELECT round, status FROM rounds WHERE table_id = 'f1' ORDER BY round")
    assert [r[0] for r in rounds] == list(range(1, engine.round_no + 1))
    assert {r[1] for r in rounds} == {"settled"}
    # The floor's recall is the table's own: the same three round records, field for field.
    assert cli_main(["floor", "recall", "f1", "--last", "3", "--json", "--db", postgres.dsn]) == 0
    recalled = json.loads(capsys.readouterr().out)
    assert recalled["rounds"] == table_recall and len(table_recall) == 3
    assert cli_main(["floor", "recall", "f1", "--round", "2", "--json", "--db", postgres.dsn]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == round_two and round_two[0]["round"] == 2
    assert cli_main(["floor", "recall", "f1", "--last", "1", "--db", postgres.dsn]) == 0
    assert capsys.readouterr().out.startswith(f"Round {engine.round_no} (baccarat, settled)")
    assert cli_main(["floor", "tables", "--json", "--db", postgres.dsn]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed["table"], listed["recorded_row"], listed["behind"]) == ("f1", len(inputs), 0)
    assert listed["gap"] is False


def test_a_writer_that_fails_after_its_commit_stops_the_recorder_and_nothing_is_lost(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    """A recorder writes two batches at once (``--writers``). One failing between its commit and its
    acks (storage failing, ``floor_committed`` eio) must not be left behind while the other writer goes
    on: the recorder stops and says why, its batches in hand unacknowledged; the next recorder gets
    them again and every row is recorded once."""
    config = config_for(tmp_path, name="f3")
    inputs, _ = baccarat_play(8, seed=5)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", nats_server.url)
    failing = Proc(tmp_path / "rec1.log", "floor", "record", "--nats", nats_server.url, "--db", postgres.dsn,
                   "--batch", "4", "--writers", "2", "--ack-wait", "2", fault="floor_committed:2:eio")
    second = Proc(tmp_path / "rec2.log", "floor", "record", "--nats", nats_server.url, "--db", postgres.dsn,
                  "--batch", "4", "--ack-wait", "2")
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, inputs)
            seq = int(client.call("ping")["seq"])
        finally:
            client.close()
        published = capture.until(seq)
        uplink.start()
        failing.start()
        try:
            wait_for("the failing recorder to stop", lambda: not failing.running(), 60, uplink, failing)
            assert failing.stop() not in (0, None), failing.text()
            assert "Input/output error" in failing.text(), failing.text()
            second.start()
            wait_for("every row recorded", lambda: recorded_row(postgres.dsn, "f3") == len(inputs), 60,
                     uplink, second)
        finally:
            for p in (uplink, failing, second):
                p.stop()
    assert assert_exactly_once(postgres.dsn, config, published) == len(inputs)


def test_a_recorder_stopped_while_its_database_is_away_stops_at_once_with_nothing_in_hand(
        tmp_path: Path, nats_server: NatsServer) -> None:  # noqa: F811
    """SIGTERM while the database is away: its connections (the writers' too) give up retrying and the
    recorder ends cleanly, rather than retrying on until the stop's grace runs out and it is cut off
    with work in hand (their stop was the recorder's first event, which the command replaced)."""
    nobody = f"postgresql://croupier_recorder@127.0.0.1:{free_port()}/floor"
    recorder = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_server.url, "--db", nobody)
    recorder.start()
    try:
        wait_for("the database to be retried", lambda: recorder.said("database unavailable"), 30, recorder)
    finally:
        code = recorder.stop()
    assert code == 0, recorder.text()
    assert "stopped with work in hand" not in recorder.text(), recorder.text()
