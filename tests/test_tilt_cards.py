"""A card delivered while the table is tilted: journaled, refused, logged at WARNING and shown with the
tilt (status, snapshot, heartbeat) until the tilt ends; the dealer then keys it as the due card."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import zmq
from test_identity import fast_config

from controller.daemon.client import CommandClient, local_key, request_snapshot
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

pytestmark = pytest.mark.timeout(60)

LID_OPEN = {"input": "device", "device": "shoe lid", "online": False, "detail": "lid open"}
LID_CLOSED = {"input": "device", "device": "shoe lid", "online": True, "detail": "lid closed"}


def test_a_card_refused_during_a_tilt_stays_in_view(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = fast_config(tmp_path)
    z = config.spec.zeromq
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1.heartbeat")
    caplog.set_level(logging.WARNING, logger="croupier.daemon")
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(z.command, timeout=10, key=local_key(config))
        sub.connect(z.pub)
        try:
            for call in ({"cmd": "credit_in", "seat": 1, "amount": 10_000}, {"cmd": "new_shoe"},
                         {"cmd": "open"}, {"cmd": "bet", "seat": 1, "spot": "player", "amount": 500},
                         {"cmd": "close"}, {"cmd": "input", "input": LID_OPEN}):
                assert client.call(**call)["ok"]
            refused = client.call("card", card="5C")
            assert refused["refused"] and "tilted" in refused["error"]
            status = client.call("status")
            assert status["tilt"]["reason"] == "device_offline" and status["tilt"]["refused_cards"] == ["5C"]
            assert request_snapshot(z.snapshot)["refused_cards"] == ["5C"]
            while True:
                assert sub.poll(5000)
                beat = json.loads(sub.recv_multipart()[1])
                if beat["last_seq"] == status["seq"]:
                    break
            assert beat["tilt"]["refused_cards"] == ["5C"]
            assert client.call("input", input=LID_CLOSED)["ok"]  # the tilt ends: the dealer keys it
            assert client.call("status")["tilt"] is None
            assert request_snapshot(z.snapshot)["refused_cards"] == []
            dealt = client.call("card", card="5C")["events"]
            assert dealt[0]["event"] == "card_dealt" and dealt[0]["card"] == "5C"
        finally:
            client.close()
            sub.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("TILT device_offline" in w for w in warnings), warnings
    assert any("card 5C refused" in w and "tilted" in w for w in warnings), warnings
