"""``croupier scenario FILE``: run a scenario through the engine, one JSON line per event.

``--through-daemon`` plays it through the whole daemon instead (journal,
ZeroMQ, the shoe reader over a pty with the simulated shoe): the lines are
the same, byte for byte, which is the point.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from controller.scenario import ScenarioError, load_scenario, run_scenario

if TYPE_CHECKING:
    from controller.daemon.config import TableConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="scenario file (YAML, see docs/scenarios.md)")
    parser.add_argument("--settled-only", action="store_true", help="print only the round_settled lines")
    parser.add_argument(
        "--through-daemon",
        action="store_true",
        help="play it through a daemon (temp state dir, simulated shoe on a pty, ZeroMQ on ipc://)",
    )
    parser.add_argument(
        "--table", metavar="TABLE_FILE",
        help="with --through-daemon: press the buttons of this table file's own pin maps and expanders "
             "(same game), simulated, instead of generated panels",
    )


def _table(path: str | None) -> TableConfig | None:
    """The ``--table`` file, validated (its problems become the run's round-0 error)."""
    if path is None:
        return None
    from controller.daemon.config import TableFileError, load_table

    try:
        return load_table(path)
    except TableFileError as exc:
        raise ScenarioError(0, str(exc).replace("\n", "; ")) from None


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        scenario = load_scenario(args.file)
        if args.table is not None and not args.through_daemon:
            raise ScenarioError(0, "--table goes with --through-daemon (the engine-only run has no panels)")
        if args.through_daemon:
            from controller.tools.daemon_scenario import run_through_daemon

            run_through_daemon(scenario, args.file, out, args.settled_only, _table(args.table))
            return 0
        for event in run_scenario(scenario):
            if args.settled_only and event.event != "round_settled":
                continue
            out.write(json.dumps(event.to_dict()) + "\n")
    except ScenarioError as err:
        out.write(json.dumps(err.to_dict()) + "\n")
        out.flush()
        print(f"croupier scenario: round {err.round}: {err.reason}", file=sys.stderr)
        return 1
    return 0
