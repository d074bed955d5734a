"""The demo's simulated dealer after a pulled shoe: the card drawn while it was out tilts, and is burned.

A shoe pulled mid-deal (``croupier shoe sim-control PORT disconnect S``, docs/shoe-simulator.md)
halts the round (a ``device_offline`` tilt, which the dealer voids); the card the dealer drew
meanwhile reaches the table when the shoe is plugged in again, when no card is due: a
``card_not_due`` tilt, said in status, the events and the daemon's log. The simulated dealer
then burns that card as a dealer would, so the demo plays on instead of tilting for good.

Everything is real: the daemon on a thread with its journal, the simulated shoe over a pty read
by the daemon's shoe reader, and the demo's own :class:`Dealer` on the command socket. The pull
mid-deal itself (its ``device_offline`` tilt) is tests/test_daemon_shoe.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import journal_inputs, write_table

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.tools.demo_dealer import Dealer
from drivers.shoe.sim import SimulatedShoe

PLAYERS = [{"seat": 1, "credits": 100_000, "bets": {"player": [500]}},
           {"seat": 2, "credits": 100_000, "bets": {"banker": [500]}}]


def wait_for(what: str, check: Callable[[], dict[str, Any] | None], timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (found := check()) is None:
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.02)
    return found


@pytest.mark.timeout(90)
def test_the_card_drawn_while_the_shoe_was_pulled_is_burned_and_the_demo_plays_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shoe = SimulatedShoe("v1", seed=5)
    link = tmp_path / "shoe-pty"
    shoe.open_pty(link)
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {link}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 3.0\n"
                       "reconnect: {initial: 0.05, max: 0.2}\n")
    config = load_table(write_table(tmp_path, shoe=str(profile), simulation={"players": PLAYERS}))
    assert config.spec.simulation is not None
    try:
        with DaemonThread(Daemon(config)):
            client = CommandClient(config.spec.zeromq.command, timeout=15, key=local_key(config))

            def status_if(test: Callable[[dict[str, Any]], bool]) -> Callable[[], dict[str, Any] | None]:
                def check() -> dict[str, Any] | None:
                    status = client.call("status")
                    return status if test(status) else None
                return check

            wait_for("connected shoe", status_if(lambda s: bool(s["shoe_device"]["connected"])))
            dealer = Dealer(config, config.spec.simulation, shoe, client, seed=5, rounds=None, delay=0.0)
            dealer.setup()
            dealer.play_round()
            assert client.call("meters")["totals"]["rounds_settled"] == 1
            # The shoe pulled; the card the dealer drew meanwhile comes when it is plugged in again.
            shoe.inject("disconnect", 0.3)
            stray = shoe.deal()
            tilted = wait_for("card_not_due tilt", status_if(lambda s: s["tilt"] is not None))
            assert tilted["tilt"]["reason"] == "card_not_due" and tilted["tilt"]["card"] == stray.code
            assert "shoe" not in tilted["offline"]
            logged = f"TILT card_not_due card {stray.code}: {stray.code} arrived when no card was due"
            assert logged in caplog.text  # the daemon's WARNING (controller.daemon.alerts), from the shoe
            dealer.play_round()  # the dealer burns the stray card, then deals the next round
            after = client.call("status")
            assert after["tilt"] is None and after["phase"] == "idle", after
            totals = client.call("meters")["totals"]
            assert (totals["rounds_settled"], totals["rounds_voided"]) == (2, 0)
            inputs = [inp["input"] for _, inp in journal_inputs(config.state_dir)]
            stray_at = next(i for i, (_, inp) in enumerate(journal_inputs(config.state_dir))
                            if inp.get("card") == stray.code and inp["input"] == "card")
            assert inputs[stray_at + 1:stray_at + 3] == ["declare_burn", "open_betting"], inputs[stray_at:]
            client.close()
    finally:
        shoe.close()
