"""``croupier scenario FILE``: run a scenario through the engine: events in words and a verdict, or JSON.

``--through-daemon`` plays it through the whole daemon instead (journal,
ZeroMQ, the shoe reader over a pty with the simulated shoe): the lines are
the same, byte for byte, which is the point. A person reads each event as a
line of words with amounts in the table's currency (the scenario's
``table.minor_units``) and a last line saying whether it played to the end;
``--json`` prints one JSON object per event (minor units) for machines.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from controller.money import Currency
from controller.scenario import Scenario, ScenarioError, load_scenario, run_scenario
from controller.tools.event_text import format_event

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
    parser.add_argument(
        "--json", action="store_true",
        help="one JSON object per event (amounts in minor units), and an error as a JSON line",
    )


def _table(args: argparse.Namespace) -> TableConfig | None:
    """The ``--table`` file, validated (its problems become the run's round-0 error)."""
    if args.table is None:
        return None
    if not args.through_daemon:
        raise ScenarioError(0, "--table goes with --through-daemon (the engine-only run has no panels)")
    from controller.daemon.config import TableFileError, load_table

    try:
        return load_table(args.table)
    except TableFileError as exc:
        raise ScenarioError(0, str(exc).replace("\n", "; ")) from None


def verdict(events: list[dict[str, Any]], cur: Currency, error: ScenarioError | None) -> str:
    """The last line a person reads: played to the end (rounds, house result, money balanced) or not."""
    settled = [e for e in events if e["event"] == "round_settled"]
    voided = sum(e["event"] == "round_voided" for e in events)
    unbalanced = [e["round"] for e in settled if sum(s["net"] for s in e["settlements"]) + e["house_net"]]
    rounds = f"{len(settled)} round{'' if len(settled) == 1 else 's'} settled"
    if error is not None:
        where = "the file" if error.round == 0 else f"round {error.round}"
        return f"FAILED at {where}: {error.reason} ({rounds} before it)"
    if unbalanced:
        return f"FAILED: money does not balance in rounds {', '.join(map(str, unbalanced))}"
    house = cur.signed(sum(e["house_net"] for e in settled))
    return (f"OK: played to the end, {rounds}"
            + (f", {voided} voided" if voided else "")
            + f"; every round's nets and the house's sum to zero; house {house}")


def played(
    scenario: Scenario, through_daemon: bool, source: str, table: TableConfig | None = None
) -> tuple[list[dict[str, Any]], ScenarioError | None]:
    """Every event of the run as its JSON object, and the error that stopped it (None: played to the end)."""
    if through_daemon:
        from controller.tools.daemon_scenario import run_through_daemon

        lines, error = io.StringIO(), None
        try:
            run_through_daemon(scenario, source, lines, False, table)
        except ScenarioError as err:
            error = err
        return [json.loads(line) for line in lines.getvalue().splitlines()], error
    events: list[dict[str, Any]] = []
    try:
        events.extend(event.to_dict() for event in run_scenario(scenario))
    except ScenarioError as err:
        return events, err
    return events, None


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.json:
        return _run_json(args, out)
    try:
        scenario = load_scenario(args.file)
        table = _table(args)
    except ScenarioError as err:
        out.write(verdict([], Currency(), err) + "\n")
        return 1
    cur = scenario.limits.money
    events, error = played(scenario, args.through_daemon, args.file, table)
    for event in events:
        if not args.settled_only or event["event"] == "round_settled":
            out.write(format_event(event, cur) + "\n")
    return finish(out, events, cur, error)


def finish(out: TextIO, events: list[dict[str, Any]], cur: Currency, error: ScenarioError | None) -> int:
    """Write the verdict; the exit status is 0 only when it says OK (money that does not balance fails)."""
    line = verdict(events, cur, error)
    out.write(line + "\n")
    return 0 if line.startswith("OK:") else 1


def _run_json(args: argparse.Namespace, out: TextIO) -> int:
    try:
        scenario = load_scenario(args.file)
        table = _table(args)
        if args.through_daemon:
            from controller.tools.daemon_scenario import run_through_daemon

            run_through_daemon(scenario, args.file, out, args.settled_only, table)
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
