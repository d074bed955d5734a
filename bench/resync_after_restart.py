"""How soon a display knows it is behind after a daemon restart, with no further input (target: 2 s).

    .venv/bin/python bench/resync_after_restart.py [--runs 5] [--heartbeat 1.0] [--follower node]

Each run: a real daemon (``croupier run``, no shoe, ipc:// sockets, journal
with fsync in a temporary dir) and the docs-only follower
(``examples/follow_table.py``, its own process; ``--follower node``: the
JavaScript one, ``examples/node-follower/follow.js``, which also validates
every message against docs/schema/). The follower has drawn seq
N; the daemon is killed with SIGKILL; a second daemon on the same journal
(other sockets) takes two inputs and is killed too; once the follower says
the feed is stale (``--stale-after 1``), the table's daemon is
started again and nobody sends anything. t0 is the restart's ``Popen``; the
figures are t(behind) - t0 (the follower printed that a heartbeat's
``last_seq`` is ahead of its own) and t(caught up) - t0 (it printed the
last missed event). They include the daemon's start (Python, imports,
replay, self-test), so the first message the follower gets after the
restart is timed too, and the anchor compares what the feed adds after the
daemon is up: the 2 s the issue asks for; ratio = worst / 2 s (below 1 is
within).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key  # noqa: E402
from controller.daemon.config import TableConfig, load_table  # noqa: E402

TARGET_S = 2.0


def daemon(table: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "controller.cli", "run", str(table), "--no-shoe",
                             "--log-level", "ERROR", *extra], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def commands(config: TableConfig, endpoint: str, *calls: dict[str, Any]) -> int:
    client = CommandClient(endpoint, timeout=0.5, key=local_key(config))
    try:
        while True:
            try:
                seq: int = client.call("ping")["seq"]
                break
            except DaemonUnavailable:
                continue
        for call in calls:
            seq = client.call(**call)["seq"]
        return seq
    finally:
        client.close()


def kill9(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def until(follower: subprocess.Popen[str], test: Any) -> tuple[float, dict[str, Any]]:
    assert follower.stdout is not None
    for text in follower.stdout:
        line = json.loads(text)
        if test(line):
            return time.monotonic(), line
    raise RuntimeError("the follower stopped")


FOLLOWERS = {"python": [sys.executable, str(ROOT / "examples" / "follow_table.py")],
             "node": ["node", str(ROOT / "examples" / "node-follower" / "follow.js")]}


def one_run(tmp: Path, heartbeat: float, run: int, follower_cmd: list[str]) -> tuple[float, float, float]:
    zeromq = {k: f"ipc://{tmp}/t.{k}" for k in ("pub", "snapshot", "command")}
    table = tmp / "t.yaml"
    table.write_text(yaml.safe_dump({
        "table": "bench", "game": "baccarat", "seats": 7, "state_dir": str(tmp / f"state{run}"),
        "zeromq": {**zeromq, "heartbeat": heartbeat}}), encoding="utf-8")
    config = load_table(table)
    local_key(config)
    proc = daemon(table)
    follow = [*follower_cmd, "--stale-after", "1", "--pub", zeromq["pub"], "--snapshot", zeromq["snapshot"],
              "--table", "bench"]
    follower = subprocess.Popen(follow, stdout=subprocess.PIPE, text=True)
    try:
        until(follower, lambda x: x["what"] == "redraw")
        seq = commands(config, zeromq["command"], {"cmd": "credit_in", "seat": 1, "amount": 100})
        until(follower, lambda x: x.get("seq") == seq)
        kill9(proc)
        alt = {k: f"ipc://{tmp}/alt.{k}" for k in ("pub", "snapshot", "command")}
        aside = daemon(table, "--pub", alt["pub"], "--snapshot", alt["snapshot"], "--command", alt["command"])
        last = commands(config, alt["command"], {"cmd": "credit_in", "seat": 2, "amount": 100},
                        {"cmd": "credit_in", "seat": 3, "amount": 100})
        kill9(aside)
        until(follower, lambda x: x["what"] == "stale")  # so its first message after the restart says "live"
        t0 = time.monotonic()
        proc = daemon(table)
        t_live, _ = until(follower, lambda x: x["what"] == "live")  # its first message after the restart
        t_behind, _ = until(follower, lambda x: x["what"] == "behind")
        t_caught, _ = until(follower, lambda x: x.get("seq") == last)
        return t_live - t0, t_behind - t0, t_caught - t0
    finally:
        follower.terminate()
        follower.wait()
        if proc.poll() is None:
            kill9(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--heartbeat", type=float, default=1.0, help="zeromq.heartbeat (default 1 s)")
    parser.add_argument("--follower", choices=sorted(FOLLOWERS), default="python",
                        help="the docs-only follower: Python (default) or JavaScript (make node first)")
    args = parser.parse_args()
    node_modules = ROOT / "examples" / "node-follower" / "node_modules"
    if args.follower == "node" and not (shutil.which("node") and (node_modules / "zeromq").is_dir()):
        parser.error(f"--follower node needs Node and the follower's packages in {node_modules}: "
                     "run `make node` first")
    live, behind, caught = [], [], []
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as tmp:
        for run in range(args.runs):
            first, b, c = one_run(Path(tmp), args.heartbeat, run, FOLLOWERS[args.follower])
            live.append(first)
            behind.append(b)
            caught.append(c)
    worst = max(b - f for b, f in zip(caught, live, strict=True))
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"runs {args.runs}, heartbeat {args.heartbeat:g} s, follower {args.follower}, "
          "restart by kill -9 then croupier run")
    print(f"daemon up (first message at the follower): median {statistics.median(live):.2f} s, "
          f"max {max(live):.2f} s")
    lag = [b - f for b, f in zip(behind, live, strict=True)]
    print(f"behind after the daemon is up: median {statistics.median(lag):.2f} s, max {max(lag):.2f} s")
    print(f"knows it is behind: median {statistics.median(behind):.2f} s, max {max(behind):.2f} s")
    print(f"caught up:          median {statistics.median(caught):.2f} s, max {max(caught):.2f} s")
    print(f"anchor: {TARGET_S:g} s (issue 12) from the daemon being up to caught up: worst {worst:.2f} s, "
          f"ratio {worst / TARGET_S:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
