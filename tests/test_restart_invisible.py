"""A restart is invisible to the round: kill -9 mid-round on each shipped simulated table, with wagers
keyed by command and placed by chip sensors, then the round goes on (no tilt, no fault) and settles once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from shipped_support import shipped_table

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key
from controller.daemon.config import TableConfig, load_table
from controller.simulation.shoe_shuffle import ShuffledShoe
from drivers.gpio.control import ControlClient

ROOT = Path(__file__).resolve().parents[1]

#: game -> (seat with chips on its sensors and the spots, seat keyed by command and its wagers, DP seat)
PLAN: dict[str, tuple[int, tuple[str, ...], int, dict[str, int], int | None]] = {
    "baccarat": (1, ("banker",), 2, {"player": 500}, None),
    "one_card_poker": (1, ("primary",), 2, {"primary": 300}, 4),
    "swap_hand": (1, ("main",), 2, {"main": 400}, None),
    "two_way_winner": (1, ("bj_ante", "poker_ante"), 2, {"bj_ante": 100, "poker_ante": 100}, None),
}

pytestmark = pytest.mark.timeout(180)


class Running:
    """``croupier run`` of a table file (no shoe: cards by command), killed with SIGKILL at will."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.key = local_key(config)
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: CommandClient | None = None

    def start(self) -> Running:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", str(self.config.path), "--no-shoe",
             "--log-level", "ERROR"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = CommandClient(self.config.spec.zeromq.command, timeout=0.5, key=self.key)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.client.call("ping")
                break
            except DaemonUnavailable:
                assert self.proc.poll() is None, "the daemon exited"
                assert time.monotonic() < deadline, "daemon not up"
        self.client.close()
        self.client = CommandClient(self.config.spec.zeromq.command, timeout=10, key=self.key)
        return self

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        assert self.client is not None
        reply = self.client.call(cmd, **fields)
        assert reply["ok"], (cmd, fields, reply)
        return reply

    def panel(self, line: str) -> str:
        gpio = self.config.spec.gpio
        assert gpio is not None and gpio.control is not None
        control = ControlClient(gpio.control)
        try:
            answer: str = control.call(line)  # an error answer raises ControlError
        finally:
            control.close()
        return answer

    def kill9(self) -> None:
        assert self.proc is not None and self.client is not None
        self.client.close()
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def quiet(status: dict[str, Any]) -> None:
    assert status["tilt"] is None and status["offline"] == {}, (status["tilt"], status["offline"])


@pytest.mark.parametrize("game", sorted(PLAN))
def test_kill_9_mid_round_is_invisible(game: str, tmp_path: Path) -> None:
    config = load_table(shipped_table(tmp_path, game))
    sensor_seat, sensor_spots, keyed_seat, keyed, dp = PLAN[game]
    table = Running(config).start()
    try:
        for seat in (sensor_seat, keyed_seat):
            table.call("credit_in", seat=seat, amount=100_000)
        if dp is not None:
            table.call("credit_in", seat=dp, amount=100_000)
            table.call("set_dp", seat=dp)
        table.call("new_shoe")
        table.call("open")
        for spot, amount in keyed.items():
            table.call("bet", seat=keyed_seat, spot=spot, amount=amount)
        for spot in sensor_spots:
            table.panel(f"chips {sensor_seat} {spot} on")
        wagers = table.call("status")["wagers"]
        assert {(w["seat"], w["spot"]) for w in wagers} >= {  # plus a game's derived wagers
            *((keyed_seat, s) for s in keyed), *((sensor_seat, s) for s in sensor_spots)}
        table.kill9()  # betting open
        table.start()
        status = table.call("status")
        quiet(status)
        assert status["wagers"] == wagers
        table.call("close")
        table.kill9()  # dealing
        table.start()
        quiet(table.call("status"))
        shoe = ShuffledShoe(config.new_game().decks, seed=3, cut_card=0)
        deals = 0
        while (status := table.call("status"))["phase"] == "dealing":
            quiet(status)
            due = status["due"]
            if "card" in due:
                table.call("card", card=shoe.draw().code)
                deals += 1
                if deals == 2:  # and once more with cards out
                    table.kill9()
                    table.start()
            else:
                seat, actions = next(iter(due["decision"].items()))
                action = next((a for a in ("stand", "pass", "fold", "check") if a in actions), actions[0])
                table.call("decide", seat=int(seat), action=action)
        recall = table.call("recall", round=1)["rounds"]
        assert [r["status"] for r in recall] == ["settled"]
        meters = table.call("meters")["totals"]
        assert meters["rounds_settled"] == 1 and meters["rounds_voided"] == 0
        credits = table.call("status")["credits"]
        assert sum(credits.values()) + meters["house_net"] == 100_000 * len(credits)
    finally:
        if table.proc is not None and table.proc.poll() is None:
            table.kill9()
