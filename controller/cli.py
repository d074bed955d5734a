"""The ``croupier`` command: one entry point for the table, its tools and its simulators.

This module imports nothing heavy at its top: the parser and the command's own tools (only its own:
:func:`controller.cli_parser.build_parser`) are loaded inside ``main``, so a Ctrl-C while they load (most
of a second on a Pi) ends in one "interrupted" line, not a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line (:mod:`controller.cli_parser`): the whole, or only what parsing ``argv`` needs."""
    from controller.cli_parser import build_parser as build

    return build(argv)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(words).parse_args(words)
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`croupier ctl recall 50 | head`): not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return code


if __name__ == "__main__":
    raise SystemExit(main())
