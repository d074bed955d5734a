"""Benchmark: card-to-subscriber latency with and without a 20-peer snapshot flood, as a ratio, in one run.

One daemon (journal fsynced, as in production) with its shoe on a real pty. This process plays
the shoe and times each card frame's last byte to its ``card_burned`` event at a SUB (as
bench/daemon_latency.py does). First ``--cards`` cards on a quiet table, then ``--cards`` more
while a second process floods the snapshot socket from ``--peers`` DEALER sockets, each keeping
``--window`` requests in flight for as long as the measurement lasts. The p99 under the flood
divided by the quiet p99 is the figure docs/daemon.md quotes. Not a test: it prints figures and the
command that produced them.

    python bench/flood_latency.py [--cards 2000] [--peers 20] [--window 50]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq
from daemon_latency import Pty, figures, measure

from controller.daemon.client import local_key
from controller.daemon.config import load_table

ROOT = Path(__file__).resolve().parents[1]


def flood(endpoint: str, peers: int, window: int) -> int:
    """The flooding process: until stdin closes, keep ``window`` snapshot requests in flight per peer."""
    ctx = zmq.Context()
    socks = []
    poller = zmq.Poller()
    for _ in range(peers):
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint)
        for _ in range(window):
            sock.send_multipart([b"", b"{}"])
        poller.register(sock, zmq.POLLIN)
        socks.append(sock)
    poller.register(sys.stdin, zmq.POLLIN)
    print("flooding", flush=True)
    answered = 0
    while True:
        ready = dict(poller.poll(1000))
        if sys.stdin.fileno() in ready or sys.stdin in ready:
            break
        for sock in socks:
            if sock in ready:
                while True:
                    try:
                        sock.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    answered += 1
                    sock.send_multipart([b"", b"{}"])  # one answered, one more: the window stays full
    print(answered, flush=True)
    ctx.destroy(linger=0)
    return 0


def run(cards: int, peers: int, window: int, work: Path) -> tuple[list[float], list[float], int, float]:
    pty = Pty()
    profile = work / "shoe.yaml"
    profile.write_text(
        f"port: {pty.path}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 600\n"
        "reconnect: {initial: 0.05, max: 0.5}\n"
    )
    pub, snap, command = (f"ipc://{work}/{name}" for name in ("pub", "snap", "cmd"))
    table = work / "table.yaml"
    table.write_text(
        f"table: bench\ngame: baccarat\nshoe: {{profile: {profile}}}\nstate_dir: {work / 'state'}\n"
        f"zeromq: {{pub: '{pub}', snapshot: '{snap}', command: '{command}'}}\n"
    )
    key = local_key(load_table(table))
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", str(table), "--log-level", "WARNING"],
        cwd=ROOT,
    )
    ctx = zmq.Context.instance()
    req = key.secure(ctx.socket(zmq.REQ))
    req.setsockopt(zmq.LINGER, 0)
    req.connect(command)

    def call(cmd: str) -> dict[str, object]:
        req.send(json.dumps({"cmd": cmd}).encode())
        reply: dict[str, object] = json.loads(req.recv())
        return reply

    flooder = None
    try:
        while not (call("status").get("shoe_device") or {}).get("connected"):  # type: ignore[union-attr]
            time.sleep(0.1)
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"bench.card_burned")
        sub.connect(pub)
        call("new_shoe")
        time.sleep(0.5)  # the subscription reaches the PUB

        def reshuffle() -> None:
            call("new_shoe")

        measure(pty, sub, 200, reshuffle)  # warm-up
        quiet = measure(pty, sub, cards, reshuffle)
        flooder = subprocess.Popen(
            [sys.executable, __file__, "--flood", snap, "--peers", str(peers), "--window", str(window)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert flooder.stdout is not None and flooder.stdin is not None
        assert flooder.stdout.readline().strip() == "flooding"
        time.sleep(1.0)  # the flood is at full strength
        started = time.perf_counter()
        flooded = measure(pty, sub, cards, reshuffle)
        seconds = time.perf_counter() - started
        flooder.stdin.close()
        answered = int(flooder.stdout.readline())
        flooder.wait(30)
        sub.close(linger=0)
    finally:
        if flooder is not None and flooder.poll() is None:
            flooder.kill()
        req.close(linger=0)
        proc.terminate()
        proc.wait(30)
        pty.close()
    return quiet, flooded, answered, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--peers", type=int, default=20)
    parser.add_argument("--window", type=int, default=50, help="requests in flight per peer")
    parser.add_argument("--flood", metavar="ENDPOINT", help=argparse.SUPPRESS)  # the flooding process
    args = parser.parse_args()
    if args.flood:
        return flood(args.flood, args.peers, args.window)
    print(f"$ python bench/flood_latency.py --cards {args.cards} --peers {args.peers} --window {args.window}")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        quiet, flooded, answered, seconds = run(args.cards, args.peers, args.window, Path(tmp))
    print(figures("no flood", quiet))
    print(figures(f"{args.peers}-peer snapshot flood", flooded))
    print(f"snapshot requests answered during the flood: {answered} ({answered / seconds:,.0f}/s)")
    ratio = statistics.quantiles(flooded, n=100)[98] / statistics.quantiles(quiet, n=100)[98]
    print(f"p99 under flood / p99 without = {ratio:.2f}x (anchor: the same daemon, same run, no flood)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
