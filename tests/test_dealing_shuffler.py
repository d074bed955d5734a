"""A dealing shuffler driven by the daemon: DISPENSE exactly when a card is due, never twice for one.

The shuffler is the simulator in ``dealing_shuffler`` mode on a real pty; the daemon is the real
one with its journal and sockets. Every game of the demo plays rounds through it (``croupier demo``
with a table whose shoe profile is a dealing shuffler).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_daemon_support import free_port_base, write_table
from wait_support import wait_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.tools.demo_ports import PORTS_PER_TABLE
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "firmware_configs" / "tables"
SHUFFLER = ROOT / "firmware_configs" / "shoes" / "sim_shuffler.yaml"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("game", ["baccarat", "one_card_poker", "swap_hand", "two_way_winner"])
def test_every_demo_game_plays_rounds_through_dispense(tmp_path: Path, game: str) -> None:
    table = yaml.safe_load((TABLES / f"{game}_sim.yaml").read_text())
    for key in ("panels", "gpio", "display"):  # the shuffler deals; no pins, no screen port to share
        table.pop(key, None)
    table["shoe"] = {"profile": str(SHUFFLER)}
    path = tmp_path / f"{game}_shuffler.yaml"
    path.write_text(yaml.safe_dump(table))
    base = free_port_base(PORTS_PER_TABLE)
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo", "--table", str(path), "--rounds", "3",
         "--delay", "0", "--seed", "5", "--ports", str(base)],
        cwd=ROOT, capture_output=True, text=True, timeout=110, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("round_settled") == 3 and "3 rounds played" in out
    dealt = out.count("card_dealt") + out.count("card_burned")
    assert f"dealing shuffler: {dealt} cards dealt on DISPENSE" in out  # every card came from a DISPENSE
    assert dealt >= 3 and "TILT" not in out


@contextlib.contextmanager
def dealt_by(tmp_path: Path, sim: SimulatedShoe, profile: Path) -> Iterator[tuple[Daemon, CommandClient]]:
    """A daemon whose shoe is ``profile``'s (``sim``, connected and greeted), seat 1 credited, a new shoe."""
    config = load_table(write_table(tmp_path, shoe=str(profile)))
    daemon = Daemon(config)
    with DaemonThread(daemon):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader")
        assert sim.wait_idle(30)  # the power-up HELLO is through
        for request in ({"cmd": "credit_in", "seat": 1, "amount": 10_000}, {"cmd": "new_shoe"}):
            assert client.call(**request)["ok"]
        yield daemon, client
        client.close()


@pytest.fixture
def shuffler(tmp_path: Path) -> Iterator[tuple[SimulatedShoe, Daemon, CommandClient]]:
    sim = SimulatedShoe("v1", seed=3, decks=8, mode="dealing_shuffler")
    link = tmp_path / "shuffler"
    sim.open_pty(link)
    profile = tmp_path / "shuffler.yaml"
    profile.write_text(f"port: {link}\nprotocol: v1\nmode: dealing_shuffler\ndispense_timeout: 0.5\n"
                       "baud: 115200\nheartbeat_timeout: 5.0\nreconnect: {initial: 0.05, max: 0.2}\n")
    try:
        with dealt_by(tmp_path, sim, profile) as (daemon, client):
            yield sim, daemon, client
    finally:
        sim.close()


def play_to_close(client: CommandClient) -> None:
    for request in ({"cmd": "open"}, {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000},
                    {"cmd": "close"}):
        assert client.call(**request)["ok"], request


def status(client: CommandClient) -> dict[str, Any]:
    reply: dict[str, Any] = client.call("status")
    return reply


def test_one_dispense_per_card_and_none_between_rounds(shuffler: Any) -> None:
    sim, _, client = shuffler
    for number in (1, 2, 3):
        play_to_close(client)
        wait_for(lambda: status(client)["phase"] == "idle", f"round {number} to settle")
        rounds = client.call("recall", n=1)["rounds"]
        assert rounds[0]["status"] == "settled"
    time.sleep(0.7)  # longer than the timeout: nothing more is asked for, nothing tilts
    cards = sum(len(r["cards"]) for r in client.call("recall", n=3)["rounds"])
    assert sim.stats.dispense_requests == sim.stats.dispensed == cards
    device = status(client)["shoe_device"]
    assert device["mode"] == "dealing_shuffler" and device["dispensed"] == cards
    assert not device["dispense_outstanding"] and status(client)["tilt"] is None


def test_lost_dispense_tilts_never_repeats_and_reset_asks_again(shuffler: Any) -> None:
    sim, _, client = shuffler
    sim.feed("lose")
    play_to_close(client)
    wait_for(lambda: "shoe feed" in status(client)["offline"], "the feed tilt")
    assert status(client)["tilt"]["reason"] == "device_offline"
    time.sleep(0.6)
    assert sim.stats.dispense_requests == 1 and sim.stats.dispensed == 0  # a tilt, not a repeat
    reply = client.call("shoe", action="reset")
    assert {k: reply[k] for k in ("ok", "cmd", "action", "sent")} == {
        "ok": True, "cmd": "shoe", "action": "reset", "sent": "RESET"}
    wait_for(lambda: status(client)["phase"] == "idle", "the round to finish after the reset")
    assert sim.stats.dispense_requests == sim.stats.dispensed + 1
    assert status(client)["offline"] == {}


def test_jam_is_a_fault_until_the_dealer_resets_the_shoe(shuffler: Any) -> None:
    sim, _, client = shuffler
    sim.feed("jam")  # the first DISPENSE of the round jams
    play_to_close(client)
    wait_for(lambda: "shoe fault" in status(client)["offline"], "the jam")
    assert "jam" in status(client)["offline"]["shoe fault"]
    requests = sim.stats.dispense_requests
    time.sleep(0.7)
    assert sim.stats.dispense_requests == requests  # jammed: nothing more is asked
    assert client.call("shoe", action="reset")["ok"]
    wait_for(lambda: status(client)["phase"] == "idle", "the round to finish after the reset")
    assert status(client)["offline"] == {} and status(client)["tilt"] is None


def test_empty_shuffler_tilts_until_the_shuffle_completes(shuffler: Any) -> None:
    sim, _, client = shuffler
    sim.feed("empty")
    play_to_close(client)
    wait_for(lambda: "shoe feed" in status(client)["offline"], "the empty shoe")
    assert "shoe empty" in status(client)["offline"]["shoe feed"]
    sim.shuffle()
    wait_for(lambda: status(client)["phase"] == "idle", "the round to finish after the shuffle")
    assert status(client)["offline"] == {}
    assert sim.stats.dispense_requests == sim.stats.dispensed + 1  # the one answered by SHOE_EMPTY


def test_slow_card_after_the_timeout_clears_the_tilt_and_is_dealt_once(shuffler: Any) -> None:
    sim, _, client = shuffler
    sim.feed("slow", 900)  # longer than the 0.5 s dispense_timeout
    play_to_close(client)
    wait_for(lambda: "shoe feed" in status(client)["offline"], "the feed tilt")
    wait_for(lambda: "shoe feed" not in status(client)["offline"], "the late card")
    sim.feed("normal")
    wait_for(lambda: status(client)["phase"] == "idle", "the round", timeout=30)
    assert sim.stats.dispense_requests == sim.stats.dispensed
    rounds = client.call("recall", n=1)["rounds"]
    assert len(rounds[0]["cards"]) == sim.stats.dispensed


@pytest.mark.timeout(120)
def test_the_shipped_shuffler_demo_table_plays() -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo",
         "--table", str(TABLES / "baccarat_shuffler_sim.yaml"),
         "--rounds", "2", "--delay", "0", "--ports", str(base)],
        cwd=ROOT, capture_output=True, text=True, timeout=110, check=False)
    assert proc.returncode == 0, proc.stderr
    dealt = proc.stdout.count("card_dealt")
    assert "2 rounds played" in proc.stdout
    assert f"dealing shuffler: {dealt} cards dealt on DISPENSE" in proc.stdout
