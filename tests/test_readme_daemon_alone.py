"""The README's "daemon alone" commands run as printed: a simulated shoe on the line the table names,
the daemon, a key, and ctl, each a process of its own in a new user's shell.

The one change to the printed lines is the table they name: a copy of the shipped
``baccarat_sim.yaml`` on free ports with its shoe line and state dir in tmp_path (so the test runs
beside a demo or another test), and those two paths put where the printed lines name the shipped ones.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from shipped_support import ROOT, shipped_table
from terminal_support import as_from_a_terminal
from test_demo import path_without_this_venv, run_as_printed

pytestmark = pytest.mark.timeout(90)
SHIPPED = "firmware_configs/tables/baccarat_sim.yaml"


def printed_lines() -> list[str]:
    """The README's block under "The daemon alone", line by line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("The daemon alone", 1)[1].split("\n\n", 2)[1]
    return [line.strip() for line in block.splitlines()]


def test_the_daemon_alone_commands_run_as_printed(tmp_path: Path) -> None:
    shipped = yaml.safe_load((ROOT / SHIPPED).read_text(encoding="utf-8"))
    copy = shipped_table(tmp_path, "baccarat")
    ours = yaml.safe_load(copy.read_text(encoding="utf-8"))
    swaps = {SHIPPED: str(copy), shipped["shoe"]["port"]: ours["shoe"]["port"],
             shipped["state_dir"]: ours["state_dir"]}
    lines = printed_lines()
    assert [line.split()[1] for line in lines] == ["sim", "run", "keys", "ctl"], lines
    for printed in swaps:
        assert any(printed in line for line in lines), printed  # what the lines name is what we replace
    commands = []
    for line in lines:
        for printed, here in swaps.items():
            line = line.replace(printed, here)
        commands.append(line)
    env = {"PATH": path_without_this_venv(), "HOME": str(tmp_path)}
    running: list[subprocess.Popen[str]] = []
    try:
        for command, ready in zip(commands[:2], ("# simulated shoe", "shoe hello"), strict=True):
            # the shoe, then the daemon, each running until stopped; each waited for until it says so
            proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=ROOT, text=True, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    preexec_fn=as_from_a_terminal)  # it is stopped by Ctrl-C
            running.append(proc)
            assert proc.stdout is not None
            seen = [proc.stdout.readline()]
            while ready not in seen[-1]:
                assert seen[-1], (command, seen)  # it ended before it was ready
                seen.append(proc.stdout.readline())
        keyed = run_as_printed(commands[2], timeout=60)
        assert keyed.returncode == 0, keyed.stderr
        status = run_as_printed(commands[3], timeout=60)
        assert status.returncode == 0, (commands[3], status.stdout, status.stderr)
        shoe_line = next(line for line in status.stdout.splitlines() if line.strip().startswith("shoe:"))
        assert shoe_line.rstrip().endswith("connected"), status.stdout  # its HELLO came: the table deals
    finally:
        for proc in reversed(running):
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=30)
            assert proc.returncode in (0, 130), out
