"""Command line: ``croupier sim panel`` - a simulated seat/dealer panel with a table behind it.

``register`` only adds a parser to the ``sim`` group that the top-level CLI
owns. The simulated panel runs the real panel driver and its logic (a
:class:`~controller.panels.link.PanelLink`) over gpiozero's mock pins, a
control socket on loopback to press its buttons and put chips on its spots,
and (so that the lamps have something true to show) an in-process table of
the map's game that applies every posted input and prints each event as a
JSON line, as the daemon would publish it. The daemon hosts the same links
itself (:mod:`controller.daemon.panels`); this command is for desks and tests.
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller import inputs as I
from controller.games import GAMES
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.pinmaps import load_pin_map
from controller.panels.view import LampView
from controller.table import Table
from drivers.gpio.backend import FACTORIES, BackendError, GpioZeroBackend, SimulatedPins, make_factory
from drivers.gpio.control import ControlError, ControlServer, PanelControl
from drivers.gpio.pinmap import HEADER, PinMapError

Subparsers = argparse._SubParsersAction  # the type argparse gives add_subparsers() results


def register(sim_sub: Subparsers[argparse.ArgumentParser]) -> None:
    """Add ``panel`` under ``sim_sub`` (the ``sim`` command's group)."""
    p = sim_sub.add_parser(
        "panel", help="a simulated seat/dealer panel (mock pins, control socket, a table behind it)",
        description="A simulated seat/dealer panel: the real panel driver over gpiozero's mock pins,\n"
        "a control socket on loopback to press its buttons and put chips on its spots, and an\n"
        "in-process table of the map's game that prints each event as a JSON line.\n"
        "See docs/panel-simulator.md.")
    p.add_argument("--map", required=True, type=Path, help="firmware_configs/panels/*.yaml")
    p.add_argument("--control", default="tcp://127.0.0.1:0",
                   help="control socket endpoint (loopback only; port 0 picks one and prints it)")
    p.add_argument("--game", help="the table's game (default: the map's)")
    p.add_argument("--seats", type=int, default=None, help="seats at the table (default: the game's)")
    p.add_argument("--credits", type=int, default=100_000,
                   help="credits given to each seat, in minor units (default 100000, 1,000.00)")
    p.add_argument("--dp", type=int, default=None, help="One Card Poker: the Designated Player seat")
    p.add_argument("--pins", choices=FACTORIES, default="mock",
                   help="pin factory (the control socket needs 'mock'; rpigpio/lgpio drive a real header)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        pin_map = load_pin_map(args.map, args.game)
    except PinMapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    game_name = args.game or pin_map.game
    if game_name is None:
        print(f"error: {args.map}: the map names no game; pass --game", file=sys.stderr)
        return 2
    game_cls = GAMES[game_name]
    seats = args.seats or max([game_cls.default_seats, *pin_map.seats])
    table = Table(game_cls(game_cls.options_model.model_validate({})), TableLimits(seats=seats))
    try:
        factory = make_factory(args.pins)
    except BackendError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    # A map on expanders (docs/wiring.md) gets its chips simulated beside the header; a real one needs
    # the table file's expander list (`croupier run`).
    names = sorted({chip for _, chip, _ in pin_map.lines()} - {HEADER})
    if names and args.pins != "mock":
        print(f"error: {args.map} is on expanders {', '.join(names)}: run it from a table file that lists "
              "them (gpio.expanders), or with --pins mock", file=sys.stderr)
        return 2
    chips = {name: make_factory("mock") for name in names}
    inbox: queue.SimpleQueue[tuple[I.Input, str] | None] = queue.SimpleQueue()
    panel = PanelLink(pin_map, GpioZeroBackend(factory, args.pins, chips),
                      lambda inp, src: inbox.put((inp, src)), table.limits)
    server: ControlServer | None = None
    control: PanelControl | None = None

    def stop(*_: Any) -> None:  # Ctrl-C, SIGTERM, or `quit` on the control socket or stdin
        inbox.put(None)

    if args.pins == "mock":
        control = PanelControl(panel, SimulatedPins(factory, chips))
        try:
            server = ControlServer(control, args.control, on_quit=stop)
        except (ControlError, OSError) as exc:
            print(f"error: control socket {args.control}: {exc}", file=sys.stderr)
            panel.stop()
            return 2
    setup: list[I.Input] = [I.CreditIn(seat, args.credits) for seat in sorted(pin_map.seats)]
    if args.dp is not None:
        setup.append(I.CreditIn(args.dp, args.credits))
        setup.append(I.SetDesignatedPlayer(args.dp))
    for inp in setup:
        _apply(table, inp, "sim setup")
    panel.update(LampView.from_table(table))
    panel.start()
    if server is not None:
        server.start()
        print(json.dumps({"control": server.endpoint, "map": str(args.map), "game": game_name}), flush=True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if control is not None:
        threading.Thread(target=_stdin, args=(control, stop), daemon=True).start()
    try:
        while (item := inbox.get()) is not None:
            _apply(table, *item)
            panel.update(LampView.from_table(table))
    finally:
        if server is not None:
            server.stop()
        panel.stop()
    return 0


def _apply(table: Table, inp: I.Input, source: str) -> None:
    for event in table.apply(inp):
        print(json.dumps({"source": source, **event.to_dict()}), flush=True)


def _stdin(control: PanelControl, stop: Callable[[], None]) -> None:
    """The same commands typed on stdin, ``quit`` stopping the simulator as on the socket; answers go to
    stderr so stdout stays one event per line."""
    for line in sys.stdin:
        if line.strip().lower() == "quit":
            print("ok bye", file=sys.stderr, flush=True)
            stop()
            return
        print(control.run(line), file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m controller.panels.cli panel ...``: the same command without the top-level CLI."""
    parser = argparse.ArgumentParser(prog="python -m controller.panels.cli")
    register(parser.add_subparsers(dest="sim_command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
