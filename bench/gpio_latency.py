"""GPIO panel latency: a button's edge on a mock pin to the ``Decision`` the panel posts,
and to the ``decision`` event a ZeroMQ subscriber receives from the daemon.

    .venv/bin/python bench/gpio_latency.py [--presses 300] [--debounce-ms 20] [--daemon-presses 200]

Simulated backend (gpiozero MockFactory), the panel's own worker thread, the
real clock. Each press drives the pin low (t0) and waits for the posted input
(t1); the figure is t1 - t0. The same button is measured on the header and on
a simulated MCP23017 expander, side by side (the full-size tables' seats are
on expanders); the simulation has no I2C bus, so the interrupt path's cost on
a Pi (the kernel reading INTF, INTCAP and GPIO at 400 kHz) is printed as an
estimate from the bus's bit times (docs/wiring.md). With settle-time debounce, every press is
reported ``debounce_ms`` after its edge by design, so the run is repeated at
0 ms to show the driver's own cost. This measures to the posted input, not to
the ``decision`` event on ZeroMQ; the daemon run does: a real daemon on a
thread (journal with fsync in a temporary dir, ipc:// sockets), Swap-Hand
rounds played on seat 1's panel (the dealer panel opens and closes, chips on
the sensor, cards keyed by command), and every ``hit`` pressed is measured:
t0 is the edge on the mock pin, t1 the arrival of the ``decision`` event at a
SUB socket (so the figure includes the debounce, the hop into the loop, the
journal's fsync, the engine and the PUB).
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
from controller.panels.link import PanelLink  # noqa: E402
from controller.panels.pinmaps import parse_pin_map  # noqa: E402
from drivers.gpio import GpioZeroBackend, SimulatedPins, make_factory  # noqa: E402

#: One I2C register read on an MCP23017 (16-bit register pair, sequential mode): START, address+W,
#: register, repeated START, address+R, two data bytes, STOP: 5 bytes of 9 clocks and ~2 for the conditions.
I2C_READ_CLOCKS = 5 * 9 + 2
#: Reads the kernel's mcp23s08 driver makes per interrupt: INTF (which line), INTCAP (its level), GPIO.
READS_PER_INTERRUPT = 3


def i2c_interrupt_ms(bus_hz: int = 400_000) -> float:
    """The bus time of one expander interrupt on a Pi (what the simulated expander cannot show)."""
    return READS_PER_INTERRUPT * I2C_READ_CLOCKS / bus_hz * 1000


def measure(presses: int, debounce_ms: int, chip: str = "header") -> list[float]:
    """Press-to-posted-input latencies of a button on ``chip`` (``header``, or a simulated expander)."""
    pin_map = parse_pin_map({"game": "swap_hand", "debounce_ms": debounce_ms, "chip": chip,
                             "seats": {1: {"buttons": {"hit": {"pin": 5, "lamp": 6}}}}})
    factory = make_factory("mock")
    chips = {} if chip == "header" else {chip: make_factory("mock")}
    pins = SimulatedPins(factory, chips)
    got: queue.SimpleQueue[tuple[I.Input, float]] = queue.SimpleQueue()
    panel = PanelLink(pin_map, GpioZeroBackend(factory, "mock", chips),
                      lambda inp, src: got.put((inp, time.monotonic())), TableLimits())
    panel.start()
    out: list[float] = []
    try:
        for _ in range(presses):
            t0 = time.monotonic()
            pins.drive(5, False, chip)
            inp, t1 = got.get(timeout=5)
            assert inp == I.Decision(1, "hit"), inp
            out.append(t1 - t0)
            pins.drive(5, True, chip)
            time.sleep(debounce_ms / 1000 + 0.005)  # let the release settle before the next press
    finally:
        panel.stop()
    return out


def measure_daemon(presses: int, debounce_ms: int) -> list[float]:
    """Edge on the mock pin -> ``decision`` at a SUB, through the whole daemon (journal, fsync, PUB)."""
    import tempfile

    import zmq

    from controller.daemon.client import CommandClient, local_key
    from controller.daemon.config import parse_table
    from controller.daemon.runner import DaemonThread
    from controller.daemon.server import Daemon
    from controller.simulation.shoe_shuffle import ShuffledShoe

    out: list[float] = []
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as tmp:
        work = Path(tmp)
        (work / "seat.yaml").write_text(
            f"game: swap_hand\ndebounce_ms: {debounce_ms}\n"
            "seats: {1: {buttons: {hit: {pin: 5}, stand: {pin: 13}, keep: {pin: 27}, swap: {pin: 4}},\n"
            "            spots: {main: {sensor: 18}}}}\n"
            "dealer: {buttons: {open_betting: {pin: 12}, close_betting: {pin: 7}, new_shoe: {pin: 23}}}\n")
        config = parse_table({
            "table": "bench", "game": "swap_hand", "limits": {"unit": 100, "min_bet": 200, "max_bet": 10_000},
            "panels": ["seat.yaml"], "gpio": {"backend": "mock"}, "state_dir": str(work / "state"),
            "zeromq": {k: f"ipc://{work}/{k}" for k in ("pub", "snapshot", "command")},
        }, work / "bench.yaml")
        daemon = Daemon(config, use_shoe=False)
        with DaemonThread(daemon):
            cmd = CommandClient(config.spec.zeromq.command, key=local_key(config))
            sub = zmq.Context.instance().socket(zmq.SUB)
            sub.setsockopt(zmq.SUBSCRIBE, b"bench.decision")
            sub.connect(config.spec.zeromq.pub)
            time.sleep(0.3)  # the SUB's subscription reaches the PUB (slow joiner); not a measurement
            assert daemon.gpio is not None
            panel, pins = daemon.gpio.panels[0], daemon.gpio.pins[0]

            def press(pin: int) -> float:
                while sub.poll(0):  # earlier decision_due events (the topic is a prefix): not this press
                    sub.recv_multipart()
                t0 = time.monotonic()
                pins.drive(pin, False)
                while sub.recv_multipart()[0] != b"bench.decision":
                    pass
                t1 = time.monotonic()
                pins.drive(pin, True)
                assert panel.flush()
                return t1 - t0

            def tap(pin: int) -> None:
                pins.drive(pin, False)
                assert panel.flush()
                pins.drive(pin, True)
                assert panel.flush()

            cmd.call("credit_in", seat=1, amount=10_000_000)
            shoe = ShuffledShoe(6, 1, 30)
            tap(23)
            while len(out) < presses:
                if shoe.needs_shuffle():
                    shoe.shuffle()
                    tap(23)
                tap(12)
                pins.drive(18, False)  # chips on the spot
                assert panel.flush()
                tap(7)
                while len(out) < presses:
                    due = cmd.call("status")["due"] or {}
                    if "card" in due:
                        cmd.call("card", card=str(shoe.draw()))
                    elif "decision" in due:
                        legal = due["decision"]["1"]
                        word = next(w for w in ("hit", "keep", "stand", "swap") if w in legal)
                        lat = press({"hit": 5, "stand": 13, "keep": 27, "swap": 4}[word])
                        if word == "hit":
                            out.append(lat)
                    else:
                        break
                pins.drive(18, True)  # chips off before the next round
                assert panel.flush()
            sub.close(linger=0)
            cmd.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--debounce-ms", type=int, default=20)
    parser.add_argument("--daemon-presses", type=int, default=200)
    args = parser.parse_args()
    print("command: .venv/bin/python bench/gpio_latency.py " + " ".join(sys.argv[1:]))
    for ms in dict.fromkeys((args.debounce_ms, 0)):
        for chip, where in (("header", "header BCM 5    "), ("0x20", "expander 0x20 #5")):
            lat = sorted(measure(args.presses, ms, chip))
            p50 = statistics.median(lat) * 1000
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
            print(f"debounce {ms:>3} ms, {where}: {len(lat)} presses, edge -> posted Decision "
                  f"p50 {p50:.2f} ms  p99 {p99:.2f} ms  max {lat[-1] * 1000:.2f} ms")
    print(f"on a Pi, an expander line adds its interrupt's I2C reads (estimate, not measured): "
          f"{READS_PER_INTERRUPT} x {I2C_READ_CLOCKS} clocks = {i2c_interrupt_ms():.2f} ms at 400 kHz, "
          f"{i2c_interrupt_ms(100_000):.2f} ms at 100 kHz, plus the kernel's threaded-IRQ wake-up")
    for ms in dict.fromkeys((args.debounce_ms, 0)):
        lat = sorted(measure_daemon(args.daemon_presses, ms))
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        print(f"debounce {ms:>3} ms: {len(lat)} presses, edge -> 'decision' at a ZeroMQ SUB via the daemon "
              f"(fsync) p50 {p50:.2f} ms  p99 {p99:.2f} ms  max {lat[-1] * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
