"""``croupier scenario FILE``: run a scenario through the engine, one JSON line per event."""

from __future__ import annotations

import argparse
import json
import sys

from controller.scenario import ScenarioError, load_scenario, run_scenario


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="scenario file (YAML, see docs/scenarios.md)")
    parser.add_argument(
        "--settled-only", action="store_true", help="print only the round_settled lines"
    )


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        scenario = load_scenario(args.file)
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
