"""``croupier gpio check TABLE_FILE [--sim] [--report FILE]``: the technician's wiring test (docs/wiring.md).

On the Pi it lights each lamp of the table file's pin maps in turn and asks
whether it lit, then asks for each button to be pressed, each spot's sensor to
be covered and each panel to be unplugged, and says which line changed; the
report names every miswired line (:mod:`controller.tools.wiring_check`).
``--sim`` checks the simulated world instead: mock pins and the table's
expanders simulated, laid out as the daemon has them (one world for a table
that lists expanders, else one header per map), wired as the maps say (or with
``--sim-swap`` pairs the other way round) and worked by simulated hands that
answer every prompt, so the check runs unattended in tests and shows what a
mistake looks like. Every line is addressed by its chip and pin.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from controller.daemon import private
from controller.daemon.config import TableConfig, TableFileError, load_table
from controller.tools.wiring_check import Line, WiringCheck, lines_of, report
from drivers.gpio.backend import BackendError, PinBackend, SimulatedPins
from drivers.gpio.expanders import map_backends

Wiring = dict[Line, Line]


class CheckError(ValueError):
    """A check that cannot start: a table with no panels, mock pins without --sim, a bad --sim-swap."""


class Person:
    """A technician at this terminal: each prompt printed, the answer read."""

    def __init__(self, ask: Callable[[str], str] = input) -> None:
        self.ask = ask

    def lamp_lit(self, line: Line, prompt: str) -> str:
        return self.ask(f"{prompt} ")

    def actuate(self, line: Line, prompt: str) -> str:
        return self.ask(f"{prompt} ")


class SimulatedHands:
    """The simulated world's technician: it works each device on the line (chip and pin) the simulated
    wiring puts it on (``wiring``: the device the map names -> the line it is really wired to), and sees
    a lamp lit when that line is driven to the lamp's active level. Every prompt and answer is printed."""

    def __init__(self, pins: Sequence[SimulatedPins], wiring: Wiring,
                 say: Callable[[str], None] = print) -> None:
        self.pins, self.wiring, self.say = pins, wiring, say

    def _drive(self, device: Line, active: bool) -> None:
        wire = self.wiring[device]
        self.pins[wire.map].drive(wire.spec.pin, active == (device.spec.active == "high"), wire.chip)

    def plug_in(self) -> None:
        """Every panel plugged in, as a wired table stands before the check (its presence loops closed)."""
        for device in self.wiring:
            if device.role == "presence":
                self._drive(device, True)

    def lamp_lit(self, line: Line, prompt: str) -> str:
        wire = self.wiring[line]
        lit = self.pins[wire.map].level(wire.spec.pin, wire.chip) == (line.spec.active == "high")
        self.say(f"{prompt} {'y' if lit else 'n'}")
        return "y" if lit else "n"

    def actuate(self, line: Line, prompt: str) -> str:
        plugged = line.role == "presence"
        self._drive(line, not plugged)
        self._drive(line, plugged)
        self.say(prompt)
        return ""


def simulated_wiring(lines: Sequence[Line], swaps: Sequence[str]) -> Wiring:
    """Each device on its own line, but for ``swaps`` (``M:KEY,M:KEY``: two lines of the same kind,
    by map and key as the report names them, on one chip or two), whose devices are on each other's
    line."""
    by_key = {f"{line.map}:{line.key}": line for line in lines}
    wiring = {line: line for line in lines}
    for swap in swaps:
        keys = swap.split(",")
        found = [by_key.get(key.strip()) for key in keys]
        if len(keys) != 2 or None in found:
            raise CheckError(f"--sim-swap {swap!r}: two lines, MAP:KEY,MAP:KEY as the report names "
                             f"them (e.g. 0:{lines[0].key},0:{lines[-1].key})")
        a, b = (line for line in found if line is not None)
        if (a.role == "lamp") != (b.role == "lamp"):
            raise CheckError(f"--sim-swap {swap!r}: a lamp and an input cannot swap wires")
        wiring[a], wiring[b] = wiring[b], wiring[a]
    return wiring


def open_backends(config: TableConfig, sim: bool) -> tuple[list[PinBackend], list[SimulatedPins]]:
    """One backend per map, with the table's expanders, laid out as the daemon has them
    (:func:`map_backends`); with ``sim`` on mock pins, and the simulated pins that work them."""
    gpio = config.spec.gpio
    if gpio is None or not config.panels:
        raise CheckError(f"{config.path}: no panels to check (a panels list and a gpio section)")
    if gpio.backend == "mock" and not sim:
        raise CheckError(f"{config.path}: gpio.backend is mock: simulated pins have no one to press them; "
                         "give --sim, or check a table file with rpigpio or lgpio on its Pi")
    backends = map_backends("mock" if sim else gpio.backend, gpio.expanders, len(config.panels))
    return list(backends), [SimulatedPins(b.factory, b.chips) for b in backends] if sim else []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", type=Path, metavar="TABLE_FILE", help="the table whose pin maps to check")
    parser.add_argument("--sim", action="store_true",
                        help="check the simulated world (mock pins wired as the maps say, simulated hands)")
    parser.add_argument("--sim-swap", action="append", default=[], metavar="M:KEY,M:KEY",
                        help="with --sim: two lines wired the other way round, to see the check find them")
    parser.add_argument("--report", type=Path, help="also write the report to this file (0600)")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_table(args.table)
        lines = lines_of(config.panels)
        if args.sim_swap and not args.sim:
            raise CheckError("--sim-swap needs --sim")
        wiring = simulated_wiring(lines, args.sim_swap)
        backends, pins = open_backends(config, args.sim)
    except (TableFileError, CheckError) as exc:
        print(f"croupier gpio check: {exc}", file=sys.stderr)
        return 2
    except BackendError as exc:
        print(f"croupier gpio check: cannot open the pins: {exc}", file=sys.stderr)
        return 4
    check = WiringCheck(lines, backends)
    try:
        check.open()
        technician = SimulatedHands(pins, wiring) if args.sim else Person()
        if isinstance(technician, SimulatedHands):
            technician.plug_in()
        lamps = sum(line.role == "lamp" for line in lines)
        canaries = sum(line.role == "canary" for line in lines)
        chips = ", ".join(dict.fromkeys(line.chip for line in lines))
        first = f"{canaries} canaries read, " if canaries else ""
        inputs = len(lines) - lamps - canaries
        print(f"# {config.table_id}: {len(lines)} lines on {backends[0].name} ({chips}): {first}{lamps} "
              f"lamps one by one, then {inputs} buttons, sensors and presence loops", flush=True)
        findings = check.run(technician)
    except (BackendError, OSError) as exc:
        print(f"croupier gpio check: cannot open the pins: {exc}", file=sys.stderr)
        return 4
    finally:
        check.close()
    text = report(f"{config.table_id} ({config.path}){' on simulated pins' if args.sim else ''}", findings)
    print(text, end="")
    if args.report is not None:
        private.write_atomic(args.report, text)
    return 0 if all(f.verdict == "ok" for f in findings) else 1
