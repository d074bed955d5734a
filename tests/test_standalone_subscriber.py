"""Acceptance: a subscriber written only from the docs (examples/follow_table.py: pyzmq and json, no
Croupier import) follows a real daemon across kill -9 with no further input, and redraws when the state
dir is replaced."""

from __future__ import annotations

import ast
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import write_table

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key
from controller.daemon.config import TableConfig, load_table

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "follow_table.py"

pytestmark = pytest.mark.timeout(120)


def test_the_example_imports_nothing_of_the_project() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "argparse", "json", "sys", "time", "typing", "zmq"}, imported


class Lines(threading.Thread):
    """The follower's JSON lines, as they come."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()

    def run(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def until(self, test: Any, what: str, timeout: float = 30) -> list[dict[str, Any]]:
        """Lines up to and including the first that passes ``test``."""
        seen = []
        deadline = time.monotonic() + timeout  # a bound for a broken follower, not a measurement
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {what}; saw {seen}") from None
            seen.append(line)
            if test(line):
                return seen


def daemon(table: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "controller.cli", "run", str(table), "--no-shoe",
                             "--log-level", "ERROR", *extra], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def command(config: TableConfig, endpoint: str, state_dir: Path, *calls: dict[str, Any]) -> int:
    """Send ``calls`` once the daemon answers; the seq after the last."""
    client = CommandClient(endpoint, timeout=0.5, key=local_key(config, state_dir=state_dir))
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                seq: int = client.call("ping")["seq"]
                break
            except DaemonUnavailable:
                assert time.monotonic() < deadline, "daemon not up"
        for call in calls:
            reply = client.call(**call)
            assert reply["ok"], reply
            seq = reply["seq"]
        return seq
    finally:
        client.close()


def kill9(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_docs_only_subscriber_follows_kill_9_and_a_new_state_dir(tmp_path: Path) -> None:
    table = write_table(tmp_path, name="shown")
    config = load_table(table)
    z = config.spec.zeromq
    state = config.state_dir
    local_key(config)  # the operator key, before the daemon starts
    proc = daemon(table)
    follower = subprocess.Popen([sys.executable, str(SCRIPT), "--pub", z.pub, "--snapshot", z.snapshot,
                                 "--table", "shown", "--stale-after", "2"],
                                stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ""})
    lines = Lines(follower)
    lines.start()
    aside = None
    try:
        first = lines.until(lambda x: x["what"] == "redraw", "first redraw")[-1]
        journal = first["journal_id"]
        seq = command(config, z.command, state, {"cmd": "credit_in", "seat": 1, "amount": 1000})
        lines.until(lambda x: x.get("seq") == seq, f"event seq {seq}")
        kill9(proc)
        # While it is down, the journal moves on (another daemon on the same state dir, other sockets).
        alt = {k: f"ipc://{tmp_path}/alt.{k}" for k in ("pub", "snapshot", "command")}
        aside = daemon(table, "--pub", alt["pub"], "--snapshot", alt["snapshot"], "--command", alt["command"])
        behind = command(config, alt["command"], state, {"cmd": "credit_in", "seat": 2, "amount": 700},
                         {"cmd": "credit_in", "seat": 3, "amount": 300})
        kill9(aside)
        aside = None
        lines.until(lambda x: x["what"] == "stale", "stale feed")
        proc = daemon(table)  # back, and nobody sends anything
        seen = lines.until(lambda x: x.get("seq") == behind, f"caught up at seq {behind}")
        assert {"what": "behind", "seq": seq, "table_seq": behind} in seen
        assert seen[-1]["credits"] == {"1": 1000, "2": 700, "3": 300}
        kill9(proc)
        proc = daemon(table, "--state-dir", str(tmp_path / "replaced"))  # a new journal
        seen = lines.until(lambda x: x["what"] == "redraw", "redraw from the new journal")
        assert any(x["what"] == "new_journal" and x["old"] == journal for x in seen), seen
        assert seen[-1]["seq"] == 0 and seen[-1]["credits"] == {} and seen[-1]["journal_id"] != journal
    finally:
        follower.terminate()
        follower.wait()
        for p in (proc, aside):
            if p is not None and p.poll() is None:
                kill9(p)
