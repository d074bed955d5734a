"""The real shoe reader over a real pty with the simulated shoe: unplug mid-round tilts, replug resumes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import write_table

from controller.daemon.client import CommandClient, Subscriber
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.shoe.sim import SimulatedShoe

pytestmark = pytest.mark.timeout(90)


def next_event(events: Iterator[tuple[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    for kind, payload in events:
        if kind == "event" and payload["event"] == name:
            return payload
    raise AssertionError(f"no {name} event")


def test_shoe_unplugged_mid_round_tilts_and_resumes(tmp_path: Path) -> None:
    shoe = SimulatedShoe("v1", seed=1)
    link = tmp_path / "shoe-pty"
    shoe.open_pty(link)
    profile = tmp_path / "shoe.yaml"
    profile.write_text(
        f"port: {link}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 1.0\n"
        "reconnect: {initial: 0.05, max: 0.2}\n"
    )
    config = load_table(write_table(tmp_path, shoe=str(profile)))
    z = config.spec.zeromq
    try:
        with DaemonThread(Daemon(config)):
            client = CommandClient(z.command)
            deadline = time.monotonic() + 20
            while not client.call("status")["shoe_device"]["connected"]:
                assert time.monotonic() < deadline, "the reader never connected"
                time.sleep(0.02)
            sub = Subscriber(z.pub, z.snapshot, config.table_id)
            events = sub.events(timeout=15)
            for request in (
                {"cmd": "credit_in", "seat": 1, "amount": 10_000},
                {"cmd": "new_shoe"},
                {"cmd": "open"},
                {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000},
                {"cmd": "close"},
            ):
                assert client.call(**request)["ok"]
            for card in ("5C", "3D"):
                shoe.deal(card)
                assert next_event(events, "card_dealt")["card"] == card
            shoe.inject("disconnect", 1.5)
            tilt = next_event(events, "tilt")
            assert tilt["reason"] == "device_offline" and tilt["detail"] == "shoe offline"
            status = client.call("status")
            assert status["tilt"]["reason"] == "device_offline" and "shoe" in status["offline"]
            refused = client.call("decide", seat=1, action="hit")
            assert refused["refused"] and "tilted" in refused["error"]
            assert next_event(events, "tilt_cleared")["how"] == "device_back"
            for card in ("2H", "AS"):
                shoe.deal(card)
            settled = next_event(events, "round_settled")
            assert settled["settlements"] == [{"seat": 1, "spot": "player", "stake": 1000, "net": 1000}]
            rounds = client.call("recall", n=1)["rounds"]
            assert [t["event"] for t in rounds[0]["tilts"]] == ["device", "tilt", "device", "tilt_cleared"]
            sub.close()
            client.close()
    finally:
        shoe.close()
