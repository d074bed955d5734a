"""Benchmark: a card frame's last byte on the pty to its event at a SUB subscriber, p50/p99.

Two pairs, ``--cards`` cards each path, one card in flight at a time: the
bare relay (bench/relay_serial_zmq.py: pyserial in, pyzmq out, nothing else),
the anchor, beside the daemon with ``--no-fsync`` (benchmarking only); then
the relay beside the daemon with the journal's fsync (as in production). The
two of a pair run at once and take their cards in turn (the first of each
turn alternating), so a neighbour's burst on a shared machine hits both
alike. One daemon at a time: the fsync daemon's flushes slow the other's
writes to the same filesystem (by about 0.1x of the relay) and the relay's
not at all. ``--repeat N`` does that N times and prints each run's figures
and the medians of their p50 and p99, with each daemon's ratios to the relay
beside it. This process plays the shoe: it
writes protocol v1 CARD frames (reported as burns, so every card makes
exactly one ``card_burned`` event and the table never tilts) on the master
side of a real pty, timestamps the write of the last byte, and times the
arrival at its own SUB socket; then, as a v1 shoe waits for it, it reads the
ACK (outside the timed span). It also reports the daemon's peak RSS
(VmHWM). Not a test: it prints figures and the command that produced them.

    python bench/daemon_latency.py [--cards 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path

import zmq

from controller.cards import DECK
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from drivers.shoe.codec import Frame, FrameDecoder, encode_frame
from drivers.shoe.messages import Ack, CardMsg, Hello

ROOT = Path(__file__).resolve().parents[1]
#: Cards through each path before the measured ones (imports, caches, the first pages of the journal).
WARMUP = 200
#: Seconds a command may wait for its reply: the first waits for the daemon to start.
START_TIMEOUT = 60.0


class Pty:
    """The shoe's end: a pty master we write CARD frames to, stop and wait, as a v1 shoe is.

    Until the measured cards, a thread answers the host's first bytes with HELLO (the self-test
    waits for it) and drops what else the host sends. From :meth:`stop_and_wait` on, the caller
    reads each card's ACK itself (:meth:`take_ack`), after the card's event has arrived: a real
    shoe is a device of its own, and a thread of this process woken by every ACK would compete
    with the subscriber being timed (and load only the daemons' figures: the relay sends no ACK).
    """

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.seq = 1  # after the HELLO, sequence 0
        self.seq_total = 0
        self._stop = False
        self._waiting = False
        self._acks = FrameDecoder()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        """Read (and drop) what the host sends; its first bytes (it asks for a RESET when the line
        comes up) are answered with HELLO, sequence 0, as a v1 shoe does: the self-test waits for it."""
        said_hello = False
        while not self._stop:
            try:
                readable, _, _ = select.select([self.master], [], [], 0.05)
                if readable and os.read(self.master, 4096) and not said_hello:
                    os.write(self.master, encode_frame(0, Hello("bench shoe", "1.0", "BENCH-1")))
                    said_hello = True
            except (OSError, ValueError):  # closed under us: the bench is over
                return

    def stop_and_wait(self) -> None:
        """From now on every card must be acknowledged: :meth:`take_ack` reads the ACK after each."""
        self._stop = True
        self._drainer.join()
        while select.select([self.master], [], [], 0)[0]:  # what came before is not ours to check
            os.read(self.master, 4096)
        self._waiting = True

    def take_ack(self, timeout: float = 5.0) -> None:
        """Read the host's bytes until the ACK of the last card sent (stop and wait); no-op before
        :meth:`stop_and_wait`. A card the host does not acknowledge stops the bench, naming it."""
        if not self._waiting:
            return
        seq = (self.seq - 1) & 0xFF
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.master], [], [], left)[0]:
                raise RuntimeError(f"{self.path}: card {self.seq_total} (seq {seq}) not acknowledged "
                                   f"within {timeout} s")
            for item in self._acks.feed(os.read(self.master, 4096)):
                if isinstance(item, Frame) and isinstance(item.message, Ack) and item.seq == seq:
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


def one_card(pty: Pty, sub: zmq.Socket[bytes], i: int,
             reshuffle: Callable[[], object] | None = None) -> float:
    """One card, frame to event, in ms; then its ACK (once :meth:`Pty.stop_and_wait` was called)."""
    if reshuffle is not None and pty.seq_total and pty.seq_total % 400 == 0:
        reshuffle()  # 8 decks: a new shoe before any card is impossible
    t0 = pty.send_card(i)
    sub.recv_multipart()
    took = (time.perf_counter() - t0) * 1000
    pty.take_ack()
    return took


def measure(pty: Pty, sub: zmq.Socket[bytes], cards: int,
            reshuffle: Callable[[], object] | None = None) -> list[float]:
    return [one_card(pty, sub, i, reshuffle) for i in range(cards)]


class Target:
    """One measured path: a pty we play the shoe on, a SUB socket where its event arrives."""

    def __init__(self, name: str, proc: subprocess.Popen[bytes], pty: Pty, sub: zmq.Socket[bytes],
                 reshuffle: Callable[[], object] | None = None,
                 close: Callable[[], None] | None = None) -> None:
        self.name, self.proc, self.pty, self.sub = name, proc, pty, sub
        self._reshuffle, self._close = reshuffle, close

    def card(self, i: int) -> float:
        """One card, frame to event, in ms."""
        return one_card(self.pty, self.sub, i, self._reshuffle)

    def close(self) -> None:
        self.sub.close(linger=0)
        if self._close is not None:
            self._close()
        self.proc.terminate()
        self.proc.wait(30)
        self.pty.close()


def start_daemon(fsync: bool, work: Path) -> Target:
    """``croupier run`` on a table whose shoe is a pty of ours, up and subscribed to."""
    pty = Pty()
    name = "fsync" if fsync else "nofsync"
    profile = work / f"shoe-{name}.yaml"
    profile.write_text(
        f"port: {pty.path}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 600\n"
        "reconnect: {initial: 0.05, max: 0.5}\n"
    )
    state = work / f"state-{name}"
    shutil.rmtree(state, ignore_errors=True)  # each run starts from an empty journal
    table = work / f"table-{name}.yaml"
    pub, snapshot, command = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
    table.write_text(
        f"table: bench\ngame: baccarat\nshoe: {{profile: {profile}}}\nstate_dir: {state}\n"
        f"zeromq: {{pub: '{pub}', snapshot: '{snapshot}', command: '{command}'}}\n"
    )
    cmd = [sys.executable, "-m", "controller.cli", "run", str(table), "--log-level", "ERROR"]
    if not fsync:
        cmd.append("--no-fsync")
    key = local_key(load_table(table))  # the command socket takes authorised CURVE keys only
    proc = subprocess.Popen(cmd, cwd=ROOT)
    client = CommandClient(command, timeout=START_TIMEOUT, key=key)
    while not (client.call("status").get("shoe_device") or {}).get("connected"):
        time.sleep(0.1)
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"bench.card_burned")
    sub.connect(pub)
    client.call("new_shoe")
    return Target(name, proc, pty, sub, lambda: client.call("new_shoe"), client.close)


def start_relay() -> Target:
    """bench/relay_serial_zmq.py on a pty of ours, up and subscribed to."""
    pty = Pty()
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "relay_serial_zmq.py"), pty.path, endpoint],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    sub: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(endpoint)
    return Target("relay", proc, pty, sub)


def side_by_side(cards: int, work: Path, fsync: bool) -> tuple[list[float], list[float], float]:
    """The relay and one daemon up at once, card by card in turn (who goes first alternating), so a
    neighbour's burst on this shared machine hits both alike: the relay's and the daemon's
    latencies, and the daemon's peak RSS. One daemon at a time: the fsync daemon's flushes would
    slow the other's writes to the same filesystem, and the relay's not at all."""
    with contextlib.ExitStack() as stack:
        targets = []
        for start in (start_relay, lambda: start_daemon(fsync, work)):
            target = start()
            stack.callback(target.close)
            targets.append(target)
        time.sleep(0.5)  # the subscriptions reach the PUBs
        for i in range(WARMUP):
            for target in targets:
                target.card(i)
        targets[1].pty.stop_and_wait()  # the daemon acknowledges every card from now on
        lat: dict[str, list[float]] = {t.name: [] for t in targets}
        for i in range(cards):
            for k in range(len(targets)):
                target = targets[(i + k) % len(targets)]
                lat[target.name].append(target.card(i))
        rss = peak_rss_mb(targets[1].proc.pid)
    return lat["relay"], lat[targets[1].name], rss


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
    pairs = {"nofsync": ("daemon (--no-fsync)", 1.5), "fsync": ("daemon (fsync)", 3.0)}
    runs: dict[str, list[tuple[float, float]]] = {}
    rss: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in range(1, args.repeat + 1):
            print(f"run {n}:")
            for key, (name, _) in pairs.items():
                relay, daemon, peak = side_by_side(args.cards, work, fsync=key == "fsync")
                rss.append(peak)
                print("  " + figures(f"bare relay (beside {key})", relay))
                print("  " + figures(name, daemon))
                runs.setdefault(f"relay {key}", []).append(p50_p99(relay))
                runs.setdefault(key, []).append(p50_p99(daemon))
    med = {key: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
           for key, v in runs.items()}
    print(f"medians of {args.repeat} run(s) of each pair, {args.cards} cards each path:")
    for key, (name, aim) in pairs.items():
        relay_p50, relay_p99 = med[f"relay {key}"]
        p50, p99 = med[key]
        print(f"  {'bare relay (anchor)':<24} p50 {relay_p50:7.3f} ms   p99 {relay_p99:7.3f} ms")
        print(f"  {name:<24} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        print(f"  {name} / relay: p99 {p99 / relay_p99:.2f}x (aim: <= {aim:g}x), p50 {p50 / relay_p50:.2f}x")
    print(f"daemon peak RSS: {max(rss):.1f} MB, the largest of the runs (aim: < 60 MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
