"""GPIO panel latency: a button's edge on a mock pin to the ``Decision`` the panel posts.

    .venv/bin/python bench/gpio_latency.py [--presses 300] [--debounce-ms 20]

Simulated backend (gpiozero MockFactory), the panel's own worker thread, the
real clock. Each press drives the pin low (t0) and waits for the posted input
(t1); the figure is t1 - t0. With settle-time debounce, every press is
reported ``debounce_ms`` after its edge by design, so the run is repeated at
0 ms to show the driver's own cost. This measures to the posted input, not to
the ``decision`` event on ZeroMQ (that path goes through the daemon).
"""

from __future__ import annotations

import argparse
import queue
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller import inputs as I  # noqa: E402
from controller.limits import TableLimits  # noqa: E402
from drivers.gpio import GpioZeroBackend, Panel, SimulatedPins, make_factory, parse_pin_map  # noqa: E402


def measure(presses: int, debounce_ms: int) -> list[float]:
    pin_map = parse_pin_map({"game": "swap_hand", "debounce_ms": debounce_ms,
                             "seats": {1: {"buttons": {"hit": {"pin": 5, "lamp": 6}}}}})
    factory = make_factory("mock")
    pins = SimulatedPins(factory)
    got: queue.SimpleQueue[tuple[I.Input, float]] = queue.SimpleQueue()
    panel = Panel(pin_map, GpioZeroBackend(factory), lambda inp, src: got.put((inp, time.monotonic())),
                  TableLimits())
    panel.start()
    out: list[float] = []
    try:
        for _ in range(presses):
            t0 = time.monotonic()
            pins.drive(5, False)
            inp, t1 = got.get(timeout=5)
            assert inp == I.Decision(1, "hit"), inp
            out.append(t1 - t0)
            pins.drive(5, True)
            time.sleep(debounce_ms / 1000 + 0.005)  # let the release settle before the next press
    finally:
        panel.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--debounce-ms", type=int, default=20)
    args = parser.parse_args()
    print("command: .venv/bin/python bench/gpio_latency.py " + " ".join(sys.argv[1:]))
    for ms in dict.fromkeys((args.debounce_ms, 0)):
        lat = sorted(measure(args.presses, ms))
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        print(f"debounce {ms:>3} ms: {len(lat)} presses, edge -> posted Decision "
              f"p50 {p50:.2f} ms  p99 {p99:.2f} ms  max {lat[-1] * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
