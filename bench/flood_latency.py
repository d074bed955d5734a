"""Benchmark: card-to-subscriber latency with and without a 20-peer snapshot flood, as a ratio, in one run.

One daemon (journal fsynced, as in production) with its shoe on a real pty. This process plays
the shoe and times each card frame's last byte to its ``card_burned`` event at a SUB (as
bench/daemon_latency.py does). First ``--cards`` cards on a quiet table, then ``--cards`` more
while a second process floods the snapshot socket from ``--peers`` DEALER sockets, each keeping
``--window`` requests in flight for as long as the measurement lasts. The p99 under the flood
divided by the quiet p99 is the figure docs/daemon.md quotes. Not a test: it prints figures and the
command that produced them.

    python bench/flood_latency.py [--cards 2000] [--peers 20] [--window 50]
                                   [--against snapshot|command|strangers]

``--against command`` floods the command socket with an observer key's forbidden ``credit_in``
(each refused by its role, none journaled); ``--against strangers`` with peers whose CURVE keys the
table does not know (their handshakes fail in the ZAP thread; they get nothing).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq
from daemon_latency import START_TIMEOUT, Pty, figures, measure

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.keys import ClientCredentials, client_credentials

ROOT = Path(__file__).resolve().parents[1]


#: What each flood sends: a snapshot request; an observer's forbidden credit_in (refused by role).
REQUESTS = {"snapshot": b"{}", "command": b'{"cmd": "credit_in", "seat": 1, "amount": 100}',
            "strangers": b'{"cmd": "void"}'}


def flood(endpoint: str, peers: int, window: int, against: str = "snapshot", key: str | None = None) -> int:
    """The flooding process: until stdin closes, keep ``window`` requests in flight per peer.

    ``against`` command: with the observer key ``key`` (every request refused by its role);
    strangers: each peer with a key of its own that the table does not know (no handshake completes).
    """
    ctx = zmq.Context()
    socks = []
    poller = zmq.Poller()
    request = REQUESTS[against]
    server = client_credentials(Path(key)).server_public if key else b""
    for _ in range(peers):
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if against == "command":
            client_credentials(Path(str(key))).secure(sock)
        elif against == "strangers":
            public, secret = zmq.curve_keypair()
            ClientCredentials(public, secret, server, Path("-")).secure(sock)
        sock.connect(endpoint)
        for _ in range(window):
            sock.send_multipart([b"", request])
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
                    sock.send_multipart([b"", request])  # one answered, one more: the window stays full
    print(answered, flush=True)
    ctx.destroy(linger=0)
    return 0


def run(cards: int, peers: int, window: int, work: Path, against: str = "snapshot"
        ) -> tuple[list[float], list[float], int, float, dict[str, object]]:
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
    config = load_table(table)
    key = local_key(config)
    observer = local_key(config, "observer", "flood")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", str(table), "--log-level", "WARNING"],
        cwd=ROOT,
    )
    ctx = zmq.Context.instance()
    client = CommandClient(command, timeout=START_TIMEOUT, key=key)
    call = client.call
    flooder = None
    try:
        while not (call("status").get("shoe_device") or {}).get("connected"):
            time.sleep(0.1)
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"bench.card_burned")
        sub.connect(pub)
        call("new_shoe")
        time.sleep(0.5)  # the subscription reaches the PUB

        def reshuffle() -> None:
            call("new_shoe")

        measure(pty, sub, 200, reshuffle)  # warm-up
        pty.stop_and_wait()  # every measured card must be acknowledged
        quiet = measure(pty, sub, cards, reshuffle)
        flooder = subprocess.Popen(
            [sys.executable, __file__, "--flood", snap if against == "snapshot" else command, "--peers",
             str(peers), "--window", str(window), "--against", against, "--flood-key", str(observer.path)],
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
        after = call("status")
    finally:
        if flooder is not None and flooder.poll() is None:
            flooder.kill()
        client.close()
        proc.terminate()
        proc.wait(30)
        pty.close()
    return quiet, flooded, answered, seconds, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--peers", type=int, default=20)
    parser.add_argument("--window", type=int, default=50, help="requests in flight per peer")
    parser.add_argument("--against", choices=sorted(REQUESTS), default="snapshot",
                        help="snapshot requests (default); command: an observer key's forbidden credit_in; "
                        "strangers: peers with unknown CURVE keys")
    parser.add_argument("--flood", metavar="ENDPOINT", help=argparse.SUPPRESS)  # the flooding process
    parser.add_argument("--flood-key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        return flood(args.flood, args.peers, args.window, args.against, args.flood_key)
    print(f"$ python bench/flood_latency.py --cards {args.cards} --peers {args.peers} --window {args.window} "
          f"--against {args.against}")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        quiet, flooded, answered, seconds, after = run(args.cards, args.peers, args.window, Path(tmp),
                                                       args.against)
    print(figures("no flood", quiet))
    print(figures(f"{args.peers}-peer {args.against} flood", flooded))
    print(f"{args.against} requests answered during the flood: {answered} ({answered / seconds:,.0f}/s)")
    if args.against != "snapshot":  # nothing the flood sent may have been accepted
        print(f"credits after the flood: {after['credits']} (none expected); offline: {after['offline']}")
    ratio = statistics.quantiles(flooded, n=100)[98] / statistics.quantiles(quiet, n=100)[98]
    print(f"p99 under flood / p99 without = {ratio:.2f}x (anchor: the same daemon, same run, no flood)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
