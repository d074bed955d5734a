"""``croupier demo``: runs to completion, and Ctrl-C leaves no process and no port behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_daemon_support import free_port_base

ROOT = Path(__file__).resolve().parents[1]


def demo(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "demo", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def processes_with(text: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline:
                found.append(int(pid))
    return found


def ports_free(base: int) -> bool:
    for port in range(base, base + 3):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


@pytest.mark.timeout(120)
@pytest.mark.parametrize("game", ["baccarat", "one_card_poker"])
def test_demo_runs_n_rounds(game: str) -> None:
    base = free_port_base()
    proc = demo("--game", game, "--rounds", "3", "--delay", "0", "--seed", "4", "--ports", str(base))
    out, err = proc.communicate(timeout=100)
    assert proc.returncode == 0, err
    assert out.count("round_settled") == 3
    assert "3 rounds played" in out
    assert not processes_with(f"tcp://127.0.0.1:{base}")
    assert ports_free(base)


@pytest.mark.timeout(120)
def test_ctrl_c_stops_everything() -> None:
    base = free_port_base()
    proc = demo("--delay", "0.02", "--ports", str(base))
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:
        if "round_settled" in line:
            break
        assert time.monotonic() < deadline
    daemons = processes_with(f"tcp://127.0.0.1:{base}")
    assert len(daemons) == 1  # the daemon (the demo itself is given --ports, not endpoints)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopping" in out
    assert not processes_with(f"tcp://127.0.0.1:{base}")
    assert ports_free(base)
