"""The ``croupier`` command line: every subcommand, its tool module and its arguments (each imported only
for its own command: :func:`build_parser`)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from controller.cli_help import polish

Subparsers = argparse._SubParsersAction  # the type add_subparsers() gives, generic for mypy only


def _add_tools(sub: Subparsers[argparse.ArgumentParser], tool: str) -> None:
    """``croupier math GAME`` (``tool`` "par_sheet": par sheets) or ``croupier simulate GAME``
    ("simulation": many rounds through the real engine): each a module of the game's package with
    ``add_arguments(parser)`` and ``run(args) -> int``."""
    from controller.games import GAMES, game_tool

    for game in GAMES:
        module_name = game_tool(game, tool)
        if module_name is None:
            continue
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


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line. With ``argv`` naming a command, only that command is added, so only its modules
    are imported: ``croupier run``, which a table restarting after a power cut waits for, imported every
    tool of every command (0.87 s of CPU here, 0.45 for its own; seconds on a Pi). Without (None, no
    command, ``--help``, a mistyped name), every command: the list, and the error naming the choices."""
    parser = argparse.ArgumentParser(
        prog="croupier", description="Controller for automated physical card tables."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = _command(argv)
    for names, add in COMMANDS:
        if wanted is None or wanted in names:
            add(sub)
    polish(parser)
    return parser


def _command(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` names (its first word, when it is one of ours), or None."""
    if not argv or argv[0].startswith("-"):
        return None
    return argv[0] if any(argv[0] in names for names, _ in COMMANDS) else None


def _scenario(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import scenario_cmd

    p = sub.add_parser("scenario", help="run a scenario file through the rules engine")
    scenario_cmd.add_arguments(p)
    p.set_defaults(func=scenario_cmd.run)


def _run(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import daemon_run

    p = sub.add_parser("run", help="the table daemon: journal, engine, ZeroMQ (docs/daemon.md)")
    daemon_run.add_arguments(p)
    p.set_defaults(func=daemon_run.run)


def _ctl(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import ctl

    p = sub.add_parser("ctl", help="operator commands to a running table daemon (docs/commands.md)")
    ctl.add_arguments(p)
    p.set_defaults(func=ctl.run)


def _keys(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import keys_cmd

    p = sub.add_parser("keys", help="CurveZMQ keys: make, authorise and list a table's keys")
    keys_cmd.add_arguments(p)
    p.set_defaults(func=keys_cmd.run)


def _journal(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import journal_cmd

    p = sub.add_parser("journal", help="a table's journal: export, archive, verify (docs/daemon.md)",
                       description=journal_cmd.__doc__)
    journal_cmd.add_arguments(p)


def _watch(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import watch

    p = sub.add_parser("watch", help="follow a table's events live (snapshot, then newer events)")
    watch.add_arguments(p)
    p.set_defaults(func=watch.run)


def _demo(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import demo, demo_setup

    p = sub.add_parser("demo", help="a simulated table: daemon, shoe, players and watch, on loopback")
    demo_setup.add_arguments(p)
    p.set_defaults(func=demo.run)


def _roads(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from signage import roads_cmd

    p = sub.add_parser("roads", help="the Baccarat scoreboard's five roads from a scenario file or a journal")
    roads_cmd.add_arguments(p)
    p.set_defaults(func=roads_cmd.run)


def _display(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from signage import display_cmd

    p = sub.add_parser("display", help="the signage display: tables' results and scoreboard in a browser")
    display_cmd.add_arguments(p)
    p.set_defaults(func=display_cmd.run)


def _gpio(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.tools import gpio_check as gpio_check_cmd

    p = sub.add_parser("gpio", help="the table's GPIO lines: a wiring check for the technician")
    gpio_sub = p.add_subparsers(dest="gpio_command", required=True, metavar="COMMAND")
    p = gpio_sub.add_parser("check", help="light each lamp, press each button and sensor: the miswired lines",
                            description=gpio_check_cmd.__doc__)
    gpio_check_cmd.add_arguments(p)
    p.set_defaults(func=gpio_check_cmd.run)


def _sim_and_shoe(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.panels import cli as gpio_cli
    from drivers.shoe import cli as shoe_cli

    p = sub.add_parser("sim", help="simulated hardware: a shoe on a pty, a seat panel on mock pins")
    sim_sub = p.add_subparsers(dest="device", required=True, metavar="DEVICE")
    shoe_cli.register(sub, sim_sub)  # also adds `croupier shoe read`
    gpio_cli.register(sim_sub)


def _vision(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from vision import cli as vision_cli

    vision_cli.register(sub)


def _floor(sub: Subparsers[argparse.ArgumentParser]) -> None:
    from controller.floor import cli as floor_cli

    floor_cli.register(sub)  # `croupier uplink` and `croupier floor ...` (docs/floor.md)


def _math(sub: Subparsers[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("math", help="exact probabilities and house edges (par sheets)")
    _add_tools(p.add_subparsers(dest="game", required=True, metavar="GAME"), "par_sheet")


def _simulate(sub: Subparsers[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("simulate", help="play many rounds through the real engine and report returns")
    _add_tools(p.add_subparsers(dest="game", required=True, metavar="GAME"), "simulation")


#: Every command, in the order ``croupier --help`` lists them: the names each adds at the top and the
#: function adding them with their arguments (importing their modules only then).
COMMANDS: tuple[tuple[tuple[str, ...], Callable[[Subparsers[argparse.ArgumentParser]], None]], ...] = (
    (("scenario",), _scenario), (("run",), _run), (("ctl",), _ctl), (("keys",), _keys),
    (("journal",), _journal), (("watch",), _watch), (("demo",), _demo), (("roads",), _roads),
    (("display",), _display), (("gpio",), _gpio), (("sim", "shoe"), _sim_and_shoe), (("vision",), _vision),
    (("uplink", "floor"), _floor), (("math",), _math), (("simulate",), _simulate),
)
