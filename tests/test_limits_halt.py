"""A table file's limits change that the round's end can no longer make halts the daemon, and says so.

The daemon's own sockets on ipc:// paths, its real journal; the table file of
fewer seats and a lower maximum is found mid-round: the round's commands are
still taken under its old limits, a seat the new ones drop buys in during the
round, and the round's end must neither drop that money nor carry on silently
under the old limits (docs/daemon.md, "Limits").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zmq
from test_daemon_support import wait_subscribed
from test_limits_journal import ROUND, play_to

from controller import inputs as I
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import parse_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.money import Currency
from controller.tools.ctl import format_reply

pytestmark = pytest.mark.timeout(60)


def test_the_daemon_halts_when_the_rounds_end_cannot_make_the_limits_change(tmp_path: Path) -> None:
    play_to(tmp_path, 2)  # betting open, 1000 on the Player, under 3 seats
    zmq_spec = {k: f"ipc://{tmp_path}/{k}" for k in ("pub", "snapshot", "command")}
    raw = {"table": "t", "game": "baccarat", "seats": 2, "state_dir": str(tmp_path / "state"),
           "limits": {"unit": 100, "min_bet": 100, "max_bet": 500}, "currency": {"minor_units": 2},
           "zeromq": zmq_spec}
    config = parse_table(raw, tmp_path / "t.yaml")
    daemon = Daemon(config, use_shoe=False)
    daemon.open()
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"t.")
    sub.setsockopt(zmq.RCVTIMEO, 10_000)
    with DaemonThread(daemon):
        sub.connect(zmq_spec["pub"])
        client = CommandClient(zmq_spec["command"], timeout=10, key=local_key(config))
        try:
            wait_subscribed(sub)
            status = client.call("status")
            assert status["limits_pending"]["seats"] == 2 and status["journal_fault"] is None
            assert "LIMITS PENDING (the table file's, once this round ends): 2 seats, bets 1.00..5.00" in (
                format_reply({"cmd": "status"}, status, Currency(minor_units=2)))
            assert client.call("credit_in", seat=3, amount=700)["ok"], "the round in play keeps 3 seats"
            bet = client.call("bet", seat=2, spot="banker", amount=1000)  # and its maximum: 1000, not 500
            assert bet["ok"], bet
            closed = client.call("close")
            assert closed["ok"], closed
            for seen in ROUND[4:]:
                assert isinstance(seen, I.CardSeen) and client.call("card", card=seen.card.code)["ok"]
            topics = []
            while not topics or topics[-1] != "t.journal_fault":
                topic, body = sub.recv_multipart()
                topics.append(topic.decode())
            assert "t.round_settled" in topics, "the round's end is published before the halt"
            assert "seat 3 holds credits" in json.loads(body)["error"]
            status = client.call("status")
            assert status["limits_pending"]["seats"] == 2
            assert "end of round 1" in status["journal_fault"]["error"]
            refused = client.call("open")
            assert not refused.get("ok") and refused.get("journal_fault") is True
        finally:
            client.close()
            sub.close(linger=0)
    assert daemon.service is not None and daemon.service.table.limits.seats == 3  # no change made
