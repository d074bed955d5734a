"""Benchmark: a card frame's last byte on the pty to its event at a SUB subscriber, p50/p99.

Three runs over the same path, each ``--cards`` cards, one at a time:
the daemon with the journal's fsync (as in production), the daemon with
``--no-fsync`` (benchmarking only), and the bare relay (bench/relay_serial_zmq.py:
pyserial in, pyzmq out, nothing else), the anchor. ``--repeat N`` runs the three
N times, interleaved (the machine is shared and noisy: a neighbour's burst then
hits all three alike), and prints each run's figures and the medians of their
p50 and p99 with both ratios to the relay. This process plays the shoe: it
writes protocol v1 CARD frames (reported as burns, so every card makes
exactly one ``card_burned`` event and the table never tilts) on the master
side of a real pty, timestamps the write of the last byte, and times the
arrival at its own SUB socket. It also reports the daemon's peak RSS
(VmHWM). Not a test: it prints figures and the command that produced them.

    python bench/daemon_latency.py [--cards 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

import zmq

from controller.cards import DECK
from controller.daemon.client import local_key
from controller.daemon.config import load_table
from drivers.shoe.codec import encode_frame
from drivers.shoe.messages import CardMsg, Hello

ROOT = Path(__file__).resolve().parents[1]


class Pty:
    """The shoe's end: a pty master we write frames to (ACKs read and thrown away)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.seq = 1  # after the HELLO, sequence 0
        self.seq_total = 0
        self._stop = False
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        """Read (and drop) what the host sends; its first bytes (it asks for a RESET when the line
        comes up) are answered with HELLO, sequence 0, as a v1 shoe does: the self-test waits for it."""
        said_hello = False
        while not self._stop:
            try:
                if os.read(self.master, 4096) and not said_hello:
                    os.write(self.master, encode_frame(0, Hello("bench shoe", "1.0", "BENCH-1")))
                    said_hello = True
            except OSError:
                return

    def send_card(self, i: int) -> float:
        frame = encode_frame(self.seq, CardMsg(DECK[i % 52], True))
        self.seq = (self.seq + 1) & 0xFF
        self.seq_total += 1
        os.write(self.master, frame)
        return time.perf_counter()

    def close(self) -> None:
        self._stop = True
        os.close(self.master)
        os.close(self.slave)


def free_port() -> int:
    """A TCP port nobody listens on now (other benchmarks and tests may run beside this one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(pty: Pty, sub: zmq.Socket[bytes], cards: int, reshuffle: object = None) -> list[float]:
    lat = []
    for i in range(cards):
        if reshuffle is not None and pty.seq_total and pty.seq_total % 400 == 0:
            reshuffle()  # type: ignore[operator]  # 8 decks: a new shoe before any card is impossible
        t0 = pty.send_card(i)
        sub.recv_multipart()
        lat.append((time.perf_counter() - t0) * 1000)
    return lat


def run_daemon(cards: int, fsync: bool, work: Path) -> tuple[list[float], float]:
    pty = Pty()
    profile = work / "shoe.yaml"
    profile.write_text(
        f"port: {pty.path}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 600\n"
        "reconnect: {initial: 0.05, max: 0.5}\n"
    )
    state = work / ("state-fsync" if fsync else "state-nofsync")
    shutil.rmtree(state, ignore_errors=True)  # each repeat starts from an empty journal
    table = work / "table.yaml"
    pub, snapshot, command = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
    table.write_text(
        f"table: bench\ngame: baccarat\nshoe: {{profile: {profile}}}\nstate_dir: {state}\n"
        f"zeromq: {{pub: '{pub}', snapshot: '{snapshot}', command: '{command}'}}\n"
    )
    cmd = [sys.executable, "-m", "controller.cli", "run", str(table), "--log-level", "WARNING"]
    if not fsync:
        cmd.append("--no-fsync")
    key = local_key(load_table(table))  # the command socket takes authorised CURVE keys only
    proc = subprocess.Popen(cmd, cwd=ROOT)
    ctx = zmq.Context.instance()
    req = key.secure(ctx.socket(zmq.REQ))
    req.setsockopt(zmq.LINGER, 0)
    req.connect(command)

    def call(cmd: str) -> dict[str, object]:
        req.send(json.dumps({"cmd": cmd}).encode())
        reply: dict[str, object] = json.loads(req.recv())
        return reply

    try:
        while True:
            status = call("status")
            if (status.get("shoe_device") or {}).get("connected"):  # type: ignore[union-attr]
                break
            time.sleep(0.1)
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"bench.card_burned")
        sub.connect(pub)
        call("new_shoe")
        time.sleep(0.5)  # the subscription reaches the PUB
        measure(pty, sub, 200, lambda: call("new_shoe"))  # warm-up
        lat = measure(pty, sub, cards, lambda: call("new_shoe"))
        rss = peak_rss_mb(proc.pid)
        sub.close(linger=0)
    finally:
        req.close(linger=0)
        proc.terminate()
        proc.wait(30)
        pty.close()
    return lat, rss


def run_relay(cards: int) -> list[float]:
    pty = Pty()
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "relay_serial_zmq.py"), pty.path, endpoint],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        sub = zmq.Context.instance().socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(endpoint)
        time.sleep(0.5)
        measure(pty, sub, 200)
        lat = measure(pty, sub, cards)
        sub.close(linger=0)
    finally:
        proc.terminate()
        proc.wait(30)
        pty.close()
    return lat


def figures(name: str, lat: list[float]) -> str:
    q = statistics.quantiles(lat, n=100)
    return f"{name:<26} p50 {q[49]:7.3f} ms   p99 {q[98]:7.3f} ms   max {max(lat):7.3f} ms"


def p50_p99(lat: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(lat, n=100)
    return q[49], q[98]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of the three (medians)")
    args = parser.parse_args()
    print(f"$ python bench/daemon_latency.py --cards {args.cards} --repeat {args.repeat}")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    names = {"relay": "bare relay (anchor)", "fsync": "daemon (fsync)", "nofsync": "daemon (--no-fsync)"}
    runs: dict[str, list[tuple[float, float]]] = {key: [] for key in names}
    rss: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in range(1, args.repeat + 1):
            relay = run_relay(args.cards)
            fs, rss_fs = run_daemon(args.cards, True, work)
            nofs, rss_nofs = run_daemon(args.cards, False, work)
            rss += [rss_fs, rss_nofs]
            print(f"run {n}:")
            for key, lat in (("relay", relay), ("fsync", fs), ("nofsync", nofs)):
                print("  " + figures(names[key], lat))
                runs[key].append(p50_p99(lat))
    med = {key: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
           for key, v in runs.items()}
    print(f"medians of {args.repeat} interleaved run(s), {args.cards} cards each:")
    for key, name in names.items():
        print(f"  {name:<24} p50 {med[key][0]:7.3f} ms   p99 {med[key][1]:7.3f} ms")
    relay_p50, relay_p99 = med["relay"]
    print(f"daemon --no-fsync / relay: p99 {med['nofsync'][1] / relay_p99:.2f}x (aim: <= 1.5x), "
          f"p50 {med['nofsync'][0] / relay_p50:.2f}x")
    print(f"daemon (fsync) / relay:    p99 {med['fsync'][1] / relay_p99:.2f}x (aim: <= 3x), "
          f"p50 {med['fsync'][0] / relay_p50:.2f}x")
    print(f"daemon peak RSS: {max(rss):.1f} MB, the largest of the runs (aim: < 60 MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
