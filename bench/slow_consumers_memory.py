"""The daemon's RSS before, during and after 50 slow subscribers and a snapshot flood.

    .venv/bin/python bench/slow_consumers_memory.py [--subscribers 50] [--flooders 20] [--events 3000]

A real daemon (``croupier run --no-shoe``, TCP on 127.0.0.1) gets ``--events``
credit commands (each published as a ``credit`` event, a few hundred bytes)
while ``--subscribers`` SUB sockets are connected and never read (receive
high-water mark 1, a 4 KB kernel buffer: everything waits in the daemon) and
``--flooders`` DEALER sockets send ``{"since": 0}`` snapshot requests (each
reply is the state and up to 2,000 events) and never read their replies. Then
every peer goes away. It prints the daemon's VmRSS (``/proc/PID/status``) at
rest (after 2,500 events: the 2,000 kept for snapshots are all there), at
the peak while the peers are there (during the events and ``--hold`` seconds
after them), and 3 s after they left, and the command. ``BENCH_DAEMON_ENV``
adds environment variables to the daemon's (``MALLOC_ARENA_MAX=2``...). Not a test
(tests/test_zmq_snapshot.py checks the bound itself).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import zmq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key  # noqa: E402
from controller.daemon.config import load_table  # noqa: E402

EXTRA_ENV = dict(kv.split("=", 1) for kv in os.environ.get("BENCH_DAEMON_ENV", "").split() if "=" in kv)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_ports(count: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(count)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def slow_peer(ctx: zmq.Context[Any], kind: int, endpoint: str) -> zmq.Socket[bytes]:
    sock: zmq.Socket[bytes] = ctx.socket(kind)
    sock.setsockopt(zmq.RCVHWM, 1)
    sock.setsockopt(zmq.RCVBUF, 4096)
    sock.setsockopt(zmq.LINGER, 0)
    if kind == zmq.SUB:
        sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.connect(endpoint)
    return sock


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--flooders", type=int, default=20)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the peers stay after the events")
    args = parser.parse_args()
    print("command:", " ".join(["bench/slow_consumers_memory.py", *sys.argv[1:]]))
    with tempfile.TemporaryDirectory() as tmp:
        pub, snap, cmd = (f"tcp://127.0.0.1:{p}" for p in free_ports(3))
        table = Path(tmp) / "mem.yaml"
        table.write_text(json.dumps({
            "table": "mem", "game": "baccarat", "seats": 7,
            "limits": {"unit": 100, "min_bet": 100, "max_bet": 1_000_000},
            "zeromq": {"pub": pub, "snapshot": snap, "command": cmd}, "state_dir": f"{tmp}/state"}))
        config = load_table(table)
        key = local_key(config)
        daemon = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", str(table), "--no-shoe",
                                   "--no-fsync", "--log-level", "ERROR"], cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT), **EXTRA_ENV})
        client = CommandClient(cmd, timeout=0.5, key=key)
        try:
            for _ in range(100):
                try:
                    client.call("ping")
                    break
                except DaemonUnavailable:
                    pass
            client.close()
            client = CommandClient(cmd, timeout=10, key=key)
            for n in range(2500):  # warm: every code path, and the events kept for snapshots (2,000) full
                client.call("credit_in", seat=1 + n % 7, amount=100)
            time.sleep(1.0)
            rest = rss_mib(daemon.pid)
            print(f"at rest: {rest:.1f} MiB")
            ctx: zmq.Context[Any] = zmq.Context()
            peers = [slow_peer(ctx, zmq.SUB, pub) for _ in range(args.subscribers)]
            flooders = [slow_peer(ctx, zmq.DEALER, snap) for _ in range(args.flooders)]
            time.sleep(0.5)
            peak = rest
            request = json.dumps({"since": 0}).encode()
            for n in range(args.events):
                client.call("credit_in", seat=1 + n % 7, amount=100)
                for flooder in flooders:
                    flooder.send_multipart([b"", request], flags=zmq.NOBLOCK)
                if n % 100 == 0:
                    peak = max(peak, rss_mib(daemon.pid))
            hold = time.monotonic() + args.hold  # the daemon still answers what is queued: watch it
            while time.monotonic() < hold:
                peak = max(peak, rss_mib(daemon.pid))
                time.sleep(0.25)
            print(f"{args.subscribers} slow subscribers, {args.flooders} snapshot flooders, {args.events} "
                  f"events: peak {peak:.1f} MiB (+{peak - rest:.1f})")
            for sock in peers + flooders:
                sock.close()
            ctx.term()
            time.sleep(3.0)
            after = rss_mib(daemon.pid)
            print(f"3 s after they left: {after:.1f} MiB (+{after - rest:.1f} over rest)")
        finally:
            client.close()
            daemon.terminate()
            daemon.wait(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
