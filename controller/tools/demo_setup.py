"""What ``croupier demo`` and ``croupier demo --game all`` share: the command line, checked before anything
starts, the table's endpoints as a demo runs them, and the signals that stop a demo as Ctrl-C does.

Every option is checked by argparse (one usage line, exit 2) before the demo makes a temporary folder,
a key or a process, so a mistyped option leaves nothing behind and prints no traceback.
"""

from __future__ import annotations

import argparse
import math
import signal
from pathlib import Path
from typing import Any

from controller.daemon.config import FIRMWARE_CONFIGS, TableConfig
from controller.digits import whole_number
from controller.games import GAMES
from controller.quote import quote
from controller.tools.children import croupier_command
from controller.tools.demo_ports import PORTS_PER_TABLE
from signage import demo_display
from signage.display_cmd import parse_listen

#: Signals that stop the demo as Ctrl-C does (the daemon, the shoe and the temporary files with it).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def game_name(text: str) -> str:
    """``--game``: a registered game or ``all``; anything else lists what there is."""
    if text == "all" or text in GAMES:
        return text
    raise argparse.ArgumentTypeError(
        f"no game {quote(text)}; choose one of: {', '.join(sorted(GAMES))}, "
        "or all (every shipped table at once)")


def rounds_count(text: str) -> int:
    """``--rounds``: a whole number of at least 1 (leave the option out to play until Ctrl-C)."""
    try:
        value = int(text)
    except ValueError:  # not a number, or past int()'s 4,300 digits (no demo plays that many rounds)
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"{quote(text)} is not a number of rounds (1 or more; leave --rounds out to play until Ctrl-C)")
    return value


def seconds(text: str) -> float:
    """``--delay``: seconds, 0 or more (0: as fast as the table takes them)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{quote(text)} is not a number of seconds (0 or more)")
    return value


def first_port(text: str) -> int:
    """``--ports N``: ports N..N+3 must all be TCP ports (1..65535); ``--game all`` checks its wider span.

    ASCII digits only, at most five of them, counted before int() (which took ``²`` oddly and raised its
    own ValueError past 4,300 digits)."""
    port = whole_number(text, 5)
    if port is None or not 1 <= port <= 65536 - PORTS_PER_TABLE:
        raise argparse.ArgumentTypeError(
            f"{quote(text)}: the demo takes ports N..N+{PORTS_PER_TABLE - 1}, "
            f"so N must be 1..{65536 - PORTS_PER_TABLE}")
    return port


def listen_address(text: str) -> str:
    """``--display HOST:PORT``: checked as ``croupier display --listen`` checks it (port 0: any free one)."""
    try:
        parse_listen(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{quote(text)}: expected HOST:PORT with a port 0..65535, such as {demo_display.DEFAULT}"
        ) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game", default="baccarat", type=game_name,
        help=f"play GAME's <game>_sim.yaml table (default baccarat; one of {', '.join(sorted(GAMES))}); "
        "`all`: every shipped simulated table at once (the full-size ones aside), each with its "
        "simulators and display",
    )
    parser.add_argument("--table", help="a table file with a simulation section (overrides --game)")
    parser.add_argument("--rounds", type=rounds_count, default=None, metavar="N",
                        help="stop after N rounds the table settled or voided, N at least 1 "
                        "(default: play until Ctrl-C)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the shoe and the players")
    parser.add_argument("--delay", type=seconds, default=None, metavar="SECONDS",
                        help="seconds between cards, 0 or more (default: the table file's)")
    parser.add_argument(
        "--ports", type=first_port, default=None, metavar="N",
        help="use 127.0.0.1 ports N..N+3 (PUB, snapshot, command, panel control) instead of the file's",
    )
    parser.add_argument(
        "--hold-betting", action="store_true",
        help="keep betting open until a person closes it (c in the live view, or the printed ctl line with "
        "close instead of status), so bets typed by hand with ctl make it in time",
    )
    parser.add_argument(
        "--shoe-control", type=int, default=None, metavar="PORT",
        help="open the simulated shoe's control socket on 127.0.0.1:PORT (0: any free port; printed with "
        "the daemon's pid), to pull the shoe or open its lid with `croupier shoe sim-control`",
    )
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")
    parser.add_argument("--no-lamps", action="store_true", help="do not print the panels' lamp lines")
    parser.add_argument("--camera-sim", action="store_true",
                        help="deal through the simulated camera (<game>_sim_camera.yaml): each card is "
                             "drawn, photographed and read by the daemon's card recognition (docs/vision.md)")
    parser.add_argument(
        "--plain", action="store_true",
        help="one line per event instead of the live view (automatic when stdout is not a terminal)",
    )
    # Internal: `demo --game all` starts one demo per table with it; not a user's option.
    parser.add_argument("--exit-with-parent", type=int, metavar="PID", help=argparse.SUPPRESS)
    # Internal: `croupier floor demo` keeps each table's journal where that table's uplink reads it.
    parser.add_argument("--state-dir", type=Path, help=argparse.SUPPRESS)
    demo_display.add_arguments(parser, listen_address)


def demo_endpoints(config: TableConfig, ports: int | None) -> dict[str, str]:
    """The table's sockets as the demo runs them: the file's, or 127.0.0.1 ports N..N+3 (``--ports``)."""
    z = config.spec.zeromq
    endpoints = {"pub": z.pub, "snapshot": z.snapshot, "command": z.command}
    gpio = config.spec.gpio
    if gpio is not None and gpio.control is not None:
        endpoints["control"] = gpio.control
    if ports:
        names = ("pub", "snapshot", "command", "control")
        endpoints = {k: f"tcp://127.0.0.1:{ports + i}" for i, k in enumerate(names) if k in endpoints}
    return endpoints


def ctl_command(
    key: str | Path, config: TableConfig, path: Path, endpoints: dict[str, str], ported: bool
) -> str:
    """The ``ctl status`` line a person can paste while the demo runs: this table's key, the command as
    it runs from here, and the table (its file, or the ``--ports`` endpoint the file does not name)."""
    target = (f"--endpoint {endpoints['command']} --expect-table {config.table_id}" if ported
              else f"--table {path}")
    return f"CROUPIER_KEY={key} {croupier_command()} ctl {target} status"


def table_file(args: argparse.Namespace) -> Path:
    if args.table:
        return Path(args.table)
    kind = "sim_camera" if args.camera_sim else "sim"
    return FIRMWARE_CONFIGS / "tables" / f"{args.game}_{kind}.yaml"
