"""The ``croupier`` command line: every subcommand, its tool module and its arguments."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
from collections.abc import Callable
from pathlib import Path

from controller.cli_help import polish
from controller.floor import cli as floor_cli
from controller.games import GAMES, game_tool
from controller.panels import cli as gpio_cli
from controller.tools import ctl, daemon_run, demo, demo_setup, journal_cmd, keys_cmd, scenario_cmd, watch
from controller.tools import gpio_check as gpio_check_cmd
from drivers.shoe import cli as shoe_cli
from signage import display_cmd, roads_cmd
from vision import cli as vision_cli

#: ``croupier math GAME``: par sheets, and ``croupier simulate GAME``: many rounds through the
#: real engine. Each is a module of the game's package (``par_sheet``, ``simulation``) with
#: ``add_arguments(parser)`` and ``run(args) -> int``.
MATH_TOOLS: dict[str, str] = {g: m for g in GAMES if (m := game_tool(g, "par_sheet"))}
SIMULATE_TOOLS: dict[str, str] = {g: m for g in GAMES if (m := game_tool(g, "simulation"))}


def _add_tools(sub: argparse._SubParsersAction[argparse.ArgumentParser], tools: dict[str, str]) -> None:
    for game, module_name in tools.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip().splitlines()
        p = sub.add_parser(game, help=doc[0] if doc else game, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(func=_to_output(module.run))


def _to_output(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A game tool whose ``--output FILE`` (where it has one) gets what it prints, written here.

    The tools live in the games, which write no file; the shell writes the file as every file we make
    is written: atomically, private (0600) from its first byte, and only when the tool succeeded. It
    also gives the tool ``args.croupier``, how the person types the command, for the "command:" line
    that says how its figures were made (runnable as printed, also from a clone whose venv is not on
    PATH): found when the tool runs, not for every command line the parser builds."""
    def with_output(args: argparse.Namespace) -> int:
        from controller.tools.children import croupier_command

        args.croupier = croupier_command()
        output = getattr(args, "output", None)
        if not output:
            return run(args)
        from controller.daemon.private import write_atomic

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = run(args)
        if code == 0:
            try:
                write_atomic(Path(output), printed.getvalue())
            except OSError as exc:
                print(f"croupier: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
                return 1
        else:
            print(printed.getvalue(), end="")
        return code

    return with_output


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier", description="Controller for automated physical card tables."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("scenario", help="run a scenario file through the rules engine")
    scenario_cmd.add_arguments(p)
    p.set_defaults(func=scenario_cmd.run)

    p = sub.add_parser("run", help="the table daemon: journal, engine, ZeroMQ (docs/daemon.md)")
    daemon_run.add_arguments(p)
    p.set_defaults(func=daemon_run.run)

    p = sub.add_parser("ctl", help="operator commands to a running table daemon (docs/commands.md)")
    ctl.add_arguments(p)
    p.set_defaults(func=ctl.run)

    p = sub.add_parser("keys", help="CurveZMQ keys: make, authorise and list a table's keys")
    keys_cmd.add_arguments(p)
    p.set_defaults(func=keys_cmd.run)

    p = sub.add_parser("journal", help="a table's journal: export, archive, verify (docs/daemon.md)",
                       description=journal_cmd.__doc__)
    journal_cmd.add_arguments(p)

    p = sub.add_parser("watch", help="follow a table's events live (snapshot, then newer events)")
    watch.add_arguments(p)
    p.set_defaults(func=watch.run)

    p = sub.add_parser("demo", help="a simulated table: daemon, shoe, players and watch, on loopback")
    demo_setup.add_arguments(p)
    p.set_defaults(func=demo.run)

    p = sub.add_parser("roads", help="the Baccarat scoreboard's five roads from a scenario file or a journal")
    roads_cmd.add_arguments(p)
    p.set_defaults(func=roads_cmd.run)

    p = sub.add_parser("display", help="the signage display: tables' results and scoreboard in a browser")
    display_cmd.add_arguments(p)
    p.set_defaults(func=display_cmd.run)

    p = sub.add_parser("gpio", help="the table's GPIO lines: a wiring check for the technician")
    gpio_sub = p.add_subparsers(dest="gpio_command", required=True, metavar="COMMAND")
    p = gpio_sub.add_parser("check", help="light each lamp, press each button and sensor: the miswired lines",
                            description=gpio_check_cmd.__doc__)
    gpio_check_cmd.add_arguments(p)
    p.set_defaults(func=gpio_check_cmd.run)

    p = sub.add_parser("sim", help="simulated hardware: a shoe on a pty, a seat panel on mock pins")
    sim_sub = p.add_subparsers(dest="device", required=True, metavar="DEVICE")
    shoe_cli.register(sub, sim_sub)  # also adds `croupier shoe read`
    gpio_cli.register(sim_sub)
    vision_cli.register(sub)

    floor_cli.register(sub)  # `croupier uplink` and `croupier floor ...` (docs/floor.md)

    p = sub.add_parser("math", help="exact probabilities and house edges (par sheets)")
    _add_tools(p.add_subparsers(dest="game", required=True, metavar="GAME"), MATH_TOOLS)

    p = sub.add_parser("simulate", help="play many rounds through the real engine and report returns")
    _add_tools(p.add_subparsers(dest="game", required=True, metavar="GAME"), SIMULATE_TOOLS)
    polish(parser)
    return parser
