"""``croupier demo --game all``: every shipped simulated table at once, each answering as itself, and one
Ctrl-C stops them all (no process, no port left)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_daemon_support import free_port_base
from test_demo import ports_free, processes_with, run_as_printed

from controller.tools.demo_all import shipped_tables
from controller.tools.demo_ports import PORTS_PER_TABLE

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(180)
def test_every_shipped_table_runs_at_once_and_answers_as_itself() -> None:
    tables = shipped_tables()
    assert len(tables) >= 4
    base = free_port_base(PORTS_PER_TABLE * len(tables))
    # Another program holds the second table's command port: that table alone moves (issue 31, 2).
    holder = socket.socket()
    holder.bind(("127.0.0.1", base + PORTS_PER_TABLE + 2))
    holder.listen()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--game", "all", "--ports",
                             str(base), "--delay", "0.05", "--seed", "3"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        lines = []
        for line in proc.stdout:  # bounded by the test's timeout
            lines.append(line.rstrip("\n"))
            if line.startswith("all tables running"):
                break
        text = "\n".join(lines)
        held = base + PORTS_PER_TABLE + 2
        move = re.search(rf"^table (\S+): tcp://127.0.0.1:{held} \(--ports\) is in use by "
                         r"another program; it moves to 127.0.0.1 ports (\d+)\.\.\d+ \(the other tables keep "
                         r"theirs\)$", text, re.M)
        assert move is not None, text
        moved, moved_to = move.group(1), int(move.group(2))
        blocks = re.findall(r"^table (\S+) \((\w+)\): (\S+)\n  pub (\S+) .*\n  display: (\S+)\n"
                            r"  ctl: (CROUPIER_KEY=\S+ \S+ ctl .* status)$", text, re.M)
        assert sorted(b[2] for b in blocks) == sorted(t.name for t in tables), text
        for table_id, _game, _file, pub, display, command in blocks:
            first = moved_to if table_id == moved else base
            assert pub.startswith("tcp://127.0.0.1:") and first <= int(pub.rsplit(":", 1)[1]) < first + 40
            # Exactly as printed, in a shell whose PATH lacks the clone's .venv/bin (as after make demo).
            ctl = run_as_printed(command, timeout=60)
            assert ctl.returncode == 0, ctl.stderr
            assert ctl.stdout.startswith(f"[table {table_id}, journal "), ctl.stdout
            with urllib.request.urlopen(display, timeout=10) as page:  # its signage display serves
                assert page.status == 200 and b"<html" in page.read()
        firsts = [base + PORTS_PER_TABLE * i for i in range(len(tables)) if i != 1] + [moved_to]
        for port in firsts:
            assert processes_with(f"--ports {port} ") and processes_with(f"tcp://127.0.0.1:{port} ")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "stopping" in out
        for table_id, *_ in blocks:
            assert re.search(rf"^{table_id}: summary: \d+ rounds? played", out, re.M), out
    finally:
        holder.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    deadline = time.monotonic() + 30  # waits for the children's exit; it measures nothing
    marks = [f"tcp://127.0.0.1:{port} " for port in firsts] + [f"--ports {port} " for port in firsts]
    while left := [pid for mark in marks for pid in processes_with(mark)]:
        assert time.monotonic() < deadline, f"processes {left} outlived the demo"
        time.sleep(0.1)
    assert all(ports_free(port) for port in firsts)
