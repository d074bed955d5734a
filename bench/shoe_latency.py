"""Benchmark (not a test): what the shoe driver adds to reading a card off a pty.

Measures, over N cards, the time from just before the last byte of a CARD
frame is written to the pty master to the moment the consumer has it:

* ``decoded``: the real :class:`ShoeReader` (pyserial read, v1 decoding,
  duplicate check, event, and the ACK it writes after the callback);
* ``bare``: the same bytes read with bare pyserial and the same read pattern,
  no decoding: "the frame's bytes have all arrived" is the consumer event.

One card is in flight at a time (the protocol is stop and wait), so this is
latency, not throughput. The wire time of the frame at 9600 and 115200 baud
is printed beside it: on a real UART it dwarfs both.

    .venv/bin/python bench/shoe_latency.py --cards 10000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path

import serial  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.cards import DECK  # noqa: E402
from drivers.shoe.codec import encode_frame  # noqa: E402
from drivers.shoe.events import ShoeCard, ShoeEvent  # noqa: E402
from drivers.shoe.messages import CardMsg  # noqa: E402
from drivers.shoe.profile import parse_profile  # noqa: E402
from drivers.shoe.transport import ShoeReader  # noqa: E402

WARMUP = 200
ACK_TYPE = b"\x81"  # an ACK frame's type byte; never escaped, and no other host frame has it


def open_pty() -> tuple[int, int, str]:
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave, os.ttyname(slave)


def drain(master: int, stop: threading.Event, acked: threading.Event) -> None:
    """Read the host's ACKs, as a shoe does: it sends the next card only once the last is acked."""
    import select

    while not stop.is_set():
        if select.select([master], [], [], 0.05)[0]:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if ACK_TYPE in data:
                acked.set()


def drive(master: int, frames: list[bytes], arrived: threading.Event,
          stamp: list[int], acked: threading.Event | None = None) -> list[float]:
    """Write each frame, wait for the consumer (and the ACK), return latencies in microseconds."""
    out: list[float] = []
    for i, frame in enumerate(frames):
        arrived.clear()
        if acked is not None:
            acked.clear()
        t0 = time.perf_counter_ns()
        os.write(master, frame)
        if not arrived.wait(5) or (acked is not None and not acked.wait(5)):
            raise SystemExit(f"frame {i} never reached the consumer (or was never acknowledged)")
        if i >= WARMUP:
            out.append((stamp[0] - t0) / 1000)
    return out


def run_decoded(frames: list[bytes]) -> list[float]:
    master, slave, path = open_pty()
    arrived, stamp, stop, acked = threading.Event(), [0], threading.Event(), threading.Event()

    def on_event(event: ShoeEvent) -> None:
        if isinstance(event, ShoeCard):
            stamp[0] = time.perf_counter_ns()
            arrived.set()

    profile = parse_profile({"port": path, "protocol": "v1", "baud": 115200, "heartbeat_timeout": 600,
                             "reconnect": {"initial": 0.05, "max": 0.1}}, "bench")
    reader = ShoeReader(profile, on_event)
    drainer = threading.Thread(target=drain, args=(master, stop, acked), daemon=True)
    drainer.start()
    reader.start()
    while not reader.connected:
        time.sleep(0.01)
    time.sleep(0.1)
    try:
        return drive(master, frames, arrived, stamp, acked)
    finally:
        reader.stop()
        stop.set()
        drainer.join()
        os.close(master)
        os.close(slave)


def run_bare(frames: list[bytes]) -> list[float]:
    master, slave, path = open_pty()
    arrived, stamp, stop = threading.Event(), [0], threading.Event()
    sizes = [len(f) for f in frames]
    port = serial.Serial(path, 115200, timeout=0.1)

    def reader() -> None:
        have, index = 0, 0
        while not stop.is_set():
            data = port.read(1)  # the same read pattern as ShoeReader._read
            if data:
                waiting = port.in_waiting
                if waiting:
                    data += port.read(waiting)
            have += len(data)
            while index < len(sizes) and have >= sizes[index]:  # frame i has all its bytes
                have -= sizes[index]
                index += 1
                stamp[0] = time.perf_counter_ns()
                arrived.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        return drive(master, frames, arrived, stamp)
    finally:
        stop.set()
        thread.join()
        port.close()
        os.close(master)
        os.close(slave)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternate bare/decoded this many times")
    args = parser.parse_args()
    # Consecutive sequence numbers, as a shoe sends them; a few frames carry escapes (10-11 bytes).
    frames = [encode_frame(i & 0xFF, CardMsg(DECK[i % 52])) for i in range(args.cards + WARMUP)]
    results: dict[str, list[float]] = {"bare": [], "decoded": []}
    runs: dict[str, Callable[[list[bytes]], list[float]]] = {"bare": run_bare, "decoded": run_decoded}
    for _ in range(args.rounds):
        for name, run in runs.items():
            results[name] += run(frames)
    print(f"command: {' '.join(sys.orig_argv)}")
    print(f"cards per run: {len(frames) - WARMUP} (after {WARMUP} warm-up), runs per path: {args.rounds}, "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print(f"{'path':<10}{'p50 us':>10}{'p99 us':>10}{'mean us':>10}")
    for name, values in results.items():
        print(f"{name:<10}{pct(values, 50):>10.1f}{pct(values, 99):>10.1f}{statistics.fmean(values):>10.1f}")
    b50, d50 = pct(results["bare"], 50), pct(results["decoded"], 50)
    b99, d99 = pct(results["bare"], 99), pct(results["decoded"], 99)
    print(f"decoding adds: p50 {d50 - b50:+.1f} us ({(d50 / b50 - 1) * 100:+.1f} %), "
          f"p99 {d99 - b99:+.1f} us ({(d99 / b99 - 1) * 100:+.1f} %)")
    size = min(len(f) for f in frames)
    for baud in (9600, 115200):
        wire = size * 10 / baud * 1e6  # 8N1: ten bit times per byte
        print(f"wire time of a {size}-byte CARD frame at {baud} baud (8N1): {wire:,.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
