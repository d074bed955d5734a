"""Shared set-up for the tests that SIGKILL a real daemon (no tests here): the process, shuffler, panels.

The daemon is ``croupier run`` in a subprocess with its real journal; a kill at a
named instant is ``CROUPIER_FAULT`` (controller.daemon.faults), read only at the
daemon's start, so the restarted daemon runs without it. The dealing shuffler is
the simulator on a real pty in the test's process: it outlives every daemon, as
a real one does. The panels are the daemon's mock pins, driven on its control
socket.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_daemon_support import free_port_base, journal_inputs, write_table

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key
from controller.daemon.config import load_table
from drivers.gpio.control import ControlClient
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]
#: The shipped one-seat Baccarat panel (seat 1, the dealer's buttons, the tower).
BACCARAT_PANEL = str(ROOT / "firmware_configs/panels/baccarat.yaml")


def shuffler(tmp: Path, timeout: float = 1.0, seed: int = 3) -> tuple[SimulatedShoe, Path]:
    """A simulated dealing shuffler on a pty, and its profile (``dispense_timeout`` seconds)."""
    sim = SimulatedShoe("v1", seed=seed, decks=8, mode="dealing_shuffler")
    link = tmp / "shuffler"
    sim.open_pty(link)
    profile = tmp / "shuffler.yaml"
    profile.write_text(f"port: {link}\nprotocol: v1\nmode: dealing_shuffler\ndispense_timeout: {timeout}\n"
                       "baud: 115200\nheartbeat_timeout: 5.0\nreconnect: {initial: 0.05, max: 0.2}\n")
    return sim, profile


class Croupier:
    """One table's daemon as a process: started, SIGKILLed and started again on the same state dir."""

    def __init__(self, tmp: Path, panels: list[Any] | None = None, shoe: Path | None = None) -> None:
        self.tmp = tmp
        extra: dict[str, Any] = {}
        if panels:
            extra = {"panels": panels, "gpio": {"backend": "mock"}}
        self.path = write_table(tmp, shoe=str(shoe) if shoe else None, **extra)
        self.config = load_table(self.path)
        self.key = local_key(self.config)
        self.control = f"tcp://127.0.0.1:{free_port_base(1)}" if panels else None
        self.proc: subprocess.Popen[bytes] | None = None
        self.cmd: CommandClient | None = None
        self.ctl: ControlClient | None = None
        self.starts = 0

    @property
    def log(self) -> str:
        """Every start's log so far."""
        return "".join((self.tmp / f"daemon-{n}.log").read_text() for n in range(1, self.starts + 1))

    def start(self, fault: str | None = None) -> Croupier:
        self.starts += 1
        env = {k: v for k, v in os.environ.items() if k != "CROUPIER_FAULT"}
        if fault:
            env["CROUPIER_FAULT"] = fault
        args = [sys.executable, "-m", "controller.cli", "run", str(self.path), "--log-level", "INFO"]
        if self.control:
            args += ["--gpio-control", self.control]
        with open(self.tmp / f"daemon-{self.starts}.log", "wb") as err:
            self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, f"daemon exited {self.proc.returncode}: {self.log[-3000:]}"
            assert time.monotonic() < deadline, "daemon not ready within 60 s"
            client = CommandClient(self.config.spec.zeromq.command, timeout=0.5, key=self.key)
            try:
                if client.call("ping")["ok"]:
                    break
            except DaemonUnavailable:
                client.close()
                continue
            client.close()
            break
        self.cmd = CommandClient(self.config.spec.zeromq.command, timeout=10, key=self.key)
        self.ctl = ControlClient(self.control) if self.control else None
        return self

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        assert self.cmd is not None
        return self.cmd.call(cmd, **fields)

    def ok(self, cmd: str, **fields: Any) -> dict[str, Any]:
        reply = self.call(cmd, **fields)
        assert reply["ok"], (cmd, fields, reply)
        return reply

    def press(self, line: str) -> str:
        assert self.ctl is not None
        return self.ctl.call(line)

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def died(self, timeout: float = 15) -> int:
        """Wait for the process to end by itself (a fault point killed it); its exit status."""
        assert self.proc is not None
        code = self.proc.wait(timeout)
        self._disconnect()
        return code

    def kill(self) -> None:
        """SIGKILL, now: nothing after this instant runs."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(15)
        self._disconnect()

    def stop(self) -> None:
        self._disconnect()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)

    def _disconnect(self) -> None:
        for client in (self.cmd, self.ctl):
            if client is not None:
                client.close()
        self.cmd = self.ctl = None

    def inputs(self) -> list[tuple[str, dict[str, Any]]]:
        """The journal's inputs, (source, input), read as a tool reads them."""
        return journal_inputs(self.config.state_dir)
