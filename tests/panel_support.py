"""Shared set-up for the daemon-with-GPIO-panels tests (no tests here): a daemon on a thread and its panels.

Everything is real: the table file in tmp_path, the daemon on a thread with its journal and ipc://
sockets, the panel driver over gpiozero's MockFactory (the simulated hardware), driven over the
daemon's control socket the way ``croupier sim panel`` and the demo drive it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_daemon_support import journal_inputs, write_table

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.gpio.control import ControlClient

MOCK = {"backend": "mock", "control": "tcp://127.0.0.1:0"}


class Table:
    """A daemon on a thread with its command client and a control client on its panels."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = load_table(path)
        self.daemon = Daemon(self.config, use_shoe=False)
        self.thread = DaemonThread(self.daemon).start()
        self.cmd = CommandClient(self.config.spec.zeromq.command, timeout=15, key=local_key(self.config))
        assert self.daemon.gpio is not None
        endpoint = self.daemon.gpio.control_endpoint
        assert endpoint is not None
        self.ctl = ControlClient(endpoint)

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return self.cmd.call(cmd, **fields)

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def until(self, what: str, check: Callable[[dict[str, Any]], bool],
              timeout: float = 15.0) -> dict[str, Any]:
        """The first status for which ``check`` holds, asked again until ``timeout`` seconds have passed.

        A press on the control socket answers once the panel has posted its input, not once the loop
        has applied it; and the panel reads chips by the table state it was last shown (chips put down
        before betting is open place nothing until it opens), so a test waits for that state first.
        """
        deadline = time.monotonic() + timeout
        while not check(status := self.status()):
            assert time.monotonic() < deadline, f"no {what} within {timeout} s: {status}"
            time.sleep(0.01)
        return status

    def lamps(self) -> dict[str, dict[str, Any]]:
        answer: dict[str, dict[str, Any]] = json.loads(self.ctl.call("lamps"))
        return answer

    def sources(self) -> list[tuple[str, dict[str, Any]]]:
        return journal_inputs(self.config.state_dir)

    def close(self) -> None:
        self.ctl.close()
        self.cmd.close()
        self.thread.stop()


def stable(status: dict[str, Any]) -> dict[str, Any]:
    """The table's state in a status reply, without what changes with every input (seq, rows, time)."""
    moving = ("seq", "journal", "uptime", "gpio", "shoe_device", "selftest")
    return {k: v for k, v in status.items() if k not in moving}


def swap_hand_table(tmp_path: Path) -> Table:
    """A swap_hand table: a dealer panel, two seat panels, both seats credited and plugged in, a new shoe."""
    path = write_table(tmp_path, game="swap_hand", limits={"unit": 100, "min_bet": 200, "max_bet": 100_000},
                       panels=["dealer.yaml", "swap_hand.yaml", {"map": "swap_hand.yaml", "seats": {1: 2}}],
                       gpio=MOCK)
    t = Table(path)
    for seat in (1, 2):
        assert t.call("credit_in", seat=seat, amount=100_000)["ok"]
        t.ctl.call(f"plug {seat}")  # the mock presence loops start open: the panels "plugged in"
    t.ctl.call("press dealer new_shoe")
    return t


def banker_bet_on_seat_1(t: Table, seats: tuple[int, ...]) -> None:
    """Baccarat panels: ``seats`` credited, a new shoe, betting open, seat 1 keys one bet_up (200) and
    puts chips on its banker spot; returns once the table holds that wager."""
    for seat in seats:
        t.call("credit_in", seat=seat, amount=100_000)
    for line in ("press dealer new_shoe", "press dealer open_betting"):
        t.ctl.call(line)
    t.until("betting open", lambda status: status["phase"] == "betting")
    for line in ("press 1 bet_up", "chips 1 banker on"):
        t.ctl.call(line)
    banker = {"seat": 1, "spot": "banker", "amount": 200}
    t.until("banker wager on seat 1", lambda status: status["wagers"] == [banker])
