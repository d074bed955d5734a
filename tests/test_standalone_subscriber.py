"""Acceptance: a subscriber written only from the docs (examples/follow_table.py: pyzmq and json, no
Croupier import; examples/node-follower/follow.js: JavaScript, validating every message against
docs/schema/) follows a real daemon across kill -9 with no further input, and redraws when the state
dir is replaced."""

from __future__ import annotations

import ast
import json
import os
import queue
import re
import shutil
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
NODE_FOLLOWER = ROOT / "examples" / "node-follower"

pytestmark = pytest.mark.timeout(120)


def top_modules(script: Path) -> set[str]:
    """The top-level packages a Python file imports (an example must import nothing of ours)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    return imported


def test_the_example_imports_nothing_of_the_project() -> None:
    imported = top_modules(SCRIPT)
    assert imported <= {"__future__", "argparse", "json", "sys", "time", "typing", "zmq"}, imported


def test_the_node_follower_requires_nothing_of_the_project() -> None:
    source = (NODE_FOLLOWER / "follow.js").read_text(encoding="utf-8")
    required = set(re.findall(r"require\(\"([^\"]+)\"\)", source))
    assert required == {"fs", "path", "zeromq", "ajv/dist/2020"}, required
    dependencies = json.loads((NODE_FOLLOWER / "package.json").read_text(encoding="utf-8"))["dependencies"]
    assert set(dependencies) == {"zeromq", "ajv"}


def follower_command(language: str) -> list[str]:
    """How to start the follower in ``language``; skipped, saying why, when Node or its packages are
    missing (``make test`` installs them: its ``node`` target runs ``npm ci`` there)."""
    if language == "python":
        return [sys.executable, str(SCRIPT)]
    node = shutil.which("node")
    if node is None:
        pytest.skip("NOT TESTED: no `node` on PATH for examples/node-follower (make node installs "
                    "Debian's nodejs when root)")
    if not (NODE_FOLLOWER / "node_modules" / "zeromq").is_dir():
        pytest.skip("NOT TESTED: examples/node-follower has no node_modules (run `make node`: npm ci)")
    return [node, str(NODE_FOLLOWER / "follow.js")]


class Lines(threading.Thread):
    """The follower's JSON lines, as they come."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.every: list[dict[str, Any]] = []  # every line, with the Node follower's "valid" count
        self.valid = 0

    def run(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:
            line = json.loads(text)
            self.every.append(dict(line))
            self.valid = line.pop("valid", self.valid)
            self.lines.put(line)

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


@pytest.mark.parametrize("language", ["python", "node"])
def test_a_docs_only_subscriber_follows_kill_9_and_a_new_state_dir(language: str, tmp_path: Path) -> None:
    start = follower_command(language)
    table = write_table(tmp_path, name="shown")
    config = load_table(table)
    z = config.spec.zeromq
    state = config.state_dir
    local_key(config)  # the operator key, before the daemon starts
    proc = daemon(table)
    follower = subprocess.Popen([*start, "--pub", z.pub, "--snapshot", z.snapshot,
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
        assert {"what": "behind", "seq": seq, "table_seq": behind} in seen  # refilled: a plain restart
        assert seen[-1]["credits"] == {"1": 1000, "2": 700, "3": 300}
        kill9(proc)
        proc = daemon(table, "--state-dir", str(tmp_path / "replaced"))  # a new journal
        seen = lines.until(lambda x: x["what"] == "redraw", "redraw from the new journal")
        assert any(x["what"] == "new_journal" and x["old"] == journal for x in seen), seen
        assert seen[-1]["seq"] == 0 and seen[-1]["credits"] == {} and seen[-1]["journal_id"] != journal
        assert not [x for x in lines.every if x["what"] == "invalid"], lines.every
        if language == "node":  # every message it acted on was validated against docs/schema/ first
            acted = [x for x in lines.every if x["what"] in ("redraw", "event", "behind", "new_journal")]
            assert all("valid" in x for x in lines.every) and lines.valid >= len(acted), lines.every
    finally:
        follower.terminate()
        follower.wait()
        for p in (proc, aside):
            if p is not None and p.poll() is None:
                kill9(p)


def test_the_node_follower_refuses_a_message_the_schema_does_not_allow(tmp_path: Path) -> None:
    """The validation can fail: against a schema where a credit's ``amount`` must be a string, the
    daemon's real ``credit`` event is reported invalid (and not applied), the rest still validates."""
    start = follower_command("node")
    schema_dir = tmp_path / "schema"
    schema_dir.mkdir()
    bundle = json.loads((ROOT / "docs/schema/croupier.schema.json").read_text(encoding="utf-8"))
    bundle["$defs"]["event.credit"]["properties"]["amount"] = {"type": "string"}
    (schema_dir / "croupier.schema.json").write_text(json.dumps(bundle), encoding="utf-8")
    shutil.copy(ROOT / "docs/schema/asyncapi.json", schema_dir / "asyncapi.json")
    table = write_table(tmp_path, name="shown")
    config = load_table(table)
    z = config.spec.zeromq
    local_key(config)
    proc = daemon(table)
    follower = subprocess.Popen([*start, "--pub", z.pub, "--snapshot", z.snapshot, "--table", "shown",
                                 "--schema-dir", str(schema_dir)], stdout=subprocess.PIPE, text=True)
    lines = Lines(follower)
    lines.start()
    try:
        lines.until(lambda x: x["what"] == "redraw", "first redraw")
        seq = command(config, z.command, config.state_dir, {"cmd": "credit_in", "seat": 1, "amount": 1000})
        seen = lines.until(lambda x: x["what"] == "invalid", "the credit event reported invalid")
        invalid = seen[-1]
        assert "amount" in invalid["error"], seen
        if invalid["schema"] == "croupier.schema.json#/$defs/SnapshotReply":
            # The event went out before the follower's subscription reached the PUB socket (ZeroMQ's
            # slow joiner): the heartbeat said it was behind, and the re-sync's reply carried the event.
            assert seen[0]["what"] == "behind", seen
            carried = [e for e in invalid["message"]["events"] if e["seq"] == seq]
            assert [e["event"] for e in carried] == ["credit"], seen
        else:
            assert invalid["schema"] == "croupier.schema.json#/$defs/event.credit", seen
            assert invalid["message"]["seq"] == seq, seen
        assert not any(x["what"] == "event" for x in seen), seen  # not applied
    finally:
        follower.terminate()
        follower.wait()
        kill9(proc)


def test_the_node_follower_follows_a_curve_events_table_with_the_key_files(tmp_path: Path) -> None:
    """Issue 24 item 12: the key files as docs/security.md describes them are all another language needs.
    Without them the follower hears nothing; with an observer's secret file and the table's public key
    it redraws and follows, every message validated."""
    start = follower_command("node")
    table = write_table(tmp_path, name="shown", security={"curve_events": True})
    config = load_table(table)
    z = config.spec.zeromq
    display_key = local_key(config, "observer", "screen")  # clients/screen.key_secret, server.key beside it
    proc = daemon(table)
    keyless = subprocess.Popen([*start, "--pub", z.pub, "--snapshot", z.snapshot, "--table", "shown"],
                               stdout=subprocess.PIPE, text=True)
    follower = subprocess.Popen([*start, "--pub", z.pub, "--snapshot", z.snapshot, "--table", "shown",
                                 "--key", str(display_key.path),
                                 "--server-key", str(display_key.path.parent / "server.key")],
                                stdout=subprocess.PIPE, text=True)
    lines, unheard = Lines(follower), Lines(keyless)
    lines.start()
    unheard.start()
    try:
        lines.until(lambda x: x["what"] == "redraw", "first redraw")
        seq = command(config, z.command, config.state_dir, {"cmd": "credit_in", "seat": 1, "amount": 1000})
        seen = lines.until(lambda x: x.get("seq") == seq, f"event seq {seq}")
        assert seen[-1]["credits"] == {"1": 1000} and not [x for x in seen if x["what"] == "invalid"]
        assert unheard.every == []  # no key: the table's CURVE sockets give it nothing at all
    finally:
        for p in (follower, keyless):
            p.terminate()
            p.wait()
        kill9(proc)
