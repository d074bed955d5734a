"""``croupier demo --hold-betting``: betting stays open until a person closes it, by the printed ctl line
or by ``c`` in the live view, so bets typed by hand make it in time."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_daemon_support import free_port_base
from test_demo import run_as_printed

from controller.tools.demo_ports import PORTS_PER_TABLE

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(150)
def test_betting_stays_open_until_the_printed_close_line_is_run() -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--hold-betting",
                             "--rounds", "1", "--delay", "0.02", "--seed", "3", "--ports", str(base),
                             "--no-display"],
                            cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        status_line = close_line = ""
        for line in proc.stdout:
            if line.startswith("Commands while it runs: "):
                status_line = line.split(": ", 1)[1].strip()
            if line.startswith("Betting stays open until you close it: "):
                close_line = line.split(": ", 1)[1].strip()
                break
        assert status_line.endswith(" status")
        assert close_line == status_line.removesuffix(" status") + " close"
        deadline = time.monotonic() + 60
        while "betting" not in (status := run_as_printed(status_line)).stdout:  # the dealer opens betting
            assert time.monotonic() < deadline, status.stdout + status.stderr
            time.sleep(0.2)
        time.sleep(2.0)  # twenty times the betting window --delay 0.02 gives: nobody closed it
        assert "betting" in run_as_printed(status_line).stdout
        closed = run_as_printed(close_line)
        assert closed.returncode == 0, closed.stderr
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "summary: 1 round played: 1 settled" in out, out


@pytest.mark.timeout(150)
def test_c_in_the_live_view_closes_betting() -> None:
    base = free_port_base(PORTS_PER_TABLE)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a demo on a terminal, as a person runs it
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "controller.cli", "demo", "--hold-betting",
                                  "--rounds", "1", "--delay", "0.02", "--seed", "3", "--ports", str(base),
                                  "--no-display"])
    seen = b""

    def read_until(pattern: bytes, timeout: float) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while not re.search(pattern, seen):
            assert time.monotonic() < deadline, f"never saw {pattern!r}: {seen[-2000:]!r}"
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:  # the child ended and closed the terminal
                    break

    try:
        read_until(rb"press c to close it", 60)
        # The view's list of events: the table has opened betting, so ``c`` now closes it (the view's
        # own note above, "betting stays open...", is drawn before the dealer opens it; a ``c`` then is
        # refused and the demo waits for ever).
        read_until(rb"R1 betting_opened", 30)
        assert b"summary:" not in seen
        os.write(fd, b"c")
        read_until(rb"summary: 1 round played: 1 settled", 90)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
