"""The ``croupier`` command: one entry point for the table, its tools and its simulators."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from controller.tools import scenario_cmd


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier", description="Controller for automated physical card tables."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("scenario", help="run a scenario file through the rules engine")
    scenario_cmd.add_arguments(p)
    p.set_defaults(func=scenario_cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
