"""Start-up: the self-test before any socket, systemd's READY after it, the watchdog from the loop.

systemd is played by a unix datagram socket in tmp_path named by
``$NOTIFY_SOCKET`` (what systemd itself does for a Type=notify unit); the
daemon is the real ``croupier run`` process or the real Daemon on a thread,
the shoe the simulator on a real pty.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_daemon_support import config_for, write_table

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.sdnotify import notify, watchdog_interval
from controller.daemon.server import SHOE_HELLO, Daemon
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[socket.socket]:
    """A fake systemd notify socket (SOCK_DGRAM, as systemd makes it)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(30)
    yield sock
    sock.close()


def messages(sock: socket.socket) -> Iterator[dict[str, str]]:
    while True:
        data = sock.recv(4096).decode()
        yield dict(line.split("=", 1) for line in data.splitlines())


def shoe_profile(tmp_path: Path, link: Path) -> Path:
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {link}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 5.0\n"
                       "reconnect: {initial: 0.05, max: 0.2}\n")
    return profile


def test_notify_outside_systemd_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert notify("READY=1") is False
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # meant for another process
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 2.0


def test_ready_after_the_self_test_then_watchdog_pings_then_stopping(
    tmp_path: Path, systemd: socket.socket
) -> None:
    link = tmp_path / "shoe-pty"
    shoe = SimulatedShoe("v1", seed=3)
    shoe.open_pty(link)
    table = write_table(tmp_path, shoe=str(shoe_profile(tmp_path, link)))
    config = load_table(table)
    key = local_key(config)
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "200000"}
    env.pop("WATCHDOG_PID", None)
    argv = [sys.executable, "-m", "controller.cli", "run", str(table), "--log-level", "ERROR"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=subprocess.PIPE)
    try:
        got = messages(systemd)
        first = next(got)
        assert first["READY"] == "1", first
        assert first["STATUS"].startswith("table t1: self-test passed: config, journal, keys, shoe")
        # READY means it answers: the sockets were bound before it was sent.
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=key)
        status = client.call("status")
        client.close()
        assert status["selftest"]["passed"] is True
        assert status["selftest"]["checks"]["shoe"].startswith("ok: hello protocol 1 model Croupier SimShoe")
        pings = [next(got) for _ in range(3)]
        assert all(m == {"WATCHDOG": "1"} for m in pings), pings
        proc.send_signal(signal.SIGTERM)
        while (m := next(got)) == {"WATCHDOG": "1"}:
            pass
        assert m == {"STOPPING": "1"}
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        shoe.close()


def test_no_request_is_answered_before_the_self_test_and_a_silent_shoe_is_a_visible_fault(
        tmp_path: Path) -> None:
    link = tmp_path / "shoe-pty"  # nothing there yet: the shoe is unplugged at start
    config = config_for(tmp_path, shoe=str(shoe_profile(tmp_path, link)))
    key = local_key(config)
    # The self-test's wait is the test's window to see it still running (below): 3 s, not 1 s, which a
    # loaded machine could spend between the command socket's appearing and the test's look.
    daemon = Daemon(config, hello_timeout=3.0)
    runner = DaemonThread(daemon)
    started = threading.Thread(target=runner.start)
    started.start()
    command_path = Path(config.spec.zeromq.command.removeprefix("ipc://"))
    pub_path = Path(config.spec.zeromq.pub.removeprefix("ipc://"))
    while not command_path.exists():  # bound first (so start-up statuses are published) ...
        time.sleep(0.01)
    assert pub_path.exists() and not daemon.ready.is_set()
    shoe = SimulatedShoe("v1", seed=3)
    try:
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=key)
        status = client.call("status")  # ... but a request sent during the self-test waits for its end
        assert daemon.ready.is_set() and status["selftest"]["passed"] is False
        started.join(30)
        assert status["selftest"]["checks"]["shoe"].startswith(f"FAULT: no HELLO from {link} within 3 s")
        assert SHOE_HELLO in status["offline"]
        assert client.call("credit_in", seat=1, amount=1000)["ok"]
        assert client.call("new_shoe")["ok"]
        assert client.call("open")["ok"]
        assert client.call("bet", seat=1, spot="player", amount=100)["ok"]
        refused = client.call("close")
        assert refused["ok"] is False and "offline" in refused["error"], refused
        shoe.open_pty(link)  # the shoe is plugged in: its HELLO clears the fault
        deadline = time.monotonic() + 20
        while SHOE_HELLO in (status := client.call("status"))["offline"]:
            assert time.monotonic() < deadline, status
            time.sleep(0.05)
        assert status["selftest"]["passed"] is True
        assert client.call("close")["ok"]
        client.close()
    finally:
        runner.stop()
        shoe.close()
