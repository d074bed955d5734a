"""The signage display inside ``croupier demo``: started beside the daemon, its address printed.

Kept out of controller/tools/demo.py so the demo only calls two functions:
:func:`add_arguments` and :func:`start_display`. The display is the real
``croupier display`` process (a subprocess that dies with the demo), fed by
the demo's daemon over ZeroMQ like any screen on the floor.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from controller.digits import whole_number
from controller.tools.children import start_child

DEFAULT = "127.0.0.1:8080"


class DisplayStartError(RuntimeError):
    """The display process did not come up (the message has its output)."""


def add_arguments(parser: argparse.ArgumentParser, address: Callable[[str], str]) -> None:
    """``--display`` (checked by ``address``, which raises argparse.ArgumentTypeError), ``--no-display``."""
    parser.add_argument(
        "--display",
        default=DEFAULT,
        type=address,
        metavar="HOST:PORT",
        help=f"serve the signage page there (default {DEFAULT}, or any free port with --ports; if the "
        "port is taken, a free one; the address is printed)",
    )
    parser.add_argument("--no-display", action="store_true", help="do not start the signage display")


def listen_for(args: argparse.Namespace) -> str:
    """Where the demo's display listens: ``--display``; with ``--ports`` and no ``--display``, a free port
    (``--ports`` asks for a demo that keeps off the default ports)."""
    if args.ports and args.display == DEFAULT:
        return "127.0.0.1:0"
    return str(args.display)


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def start_display(
    table: Path, pub: str, snapshot: str, listen: str, work: Path
) -> tuple[subprocess.Popen[bytes], str, str | None]:
    """Start ``croupier display``; (process, its URL, a note if the asked port was taken).

    The default port may be held by another demo or display on the machine:
    then a free port is used, and the note says so (the address is printed).
    """
    host, _, port_text = listen.rpartition(":")
    port = whole_number(port_text, 5)
    taken = (f"{host or '127.0.0.1'}:{port_text} is in use by another program; the display uses a free "
             "port instead (--display HOST:PORT chooses one)")
    if port and not _port_free(host or "127.0.0.1", port):
        return (*_launch(table, pub, snapshot, f"{host}:0", work), taken)
    try:
        return (*_launch(table, pub, snapshot, listen, work), None)
    except DisplayStartError as exc:
        if "address already in use" not in str(exc) or not port:
            raise
        return (*_launch(table, pub, snapshot, f"{host}:0", work), taken)  # taken since we looked


def _launch(
    table: Path, pub: str, snapshot: str, listen: str, work: Path
) -> tuple[subprocess.Popen[bytes], str]:
    log_path = work / "display.log"
    proc = start_child(
        ["display", str(table), "--pub", pub, "--snapshot", snapshot, "--listen", listen], log_path
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log_path.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            if line.startswith("display: http"):
                return proc, line.split()[1]
        if proc.poll() is not None:
            raise DisplayStartError(f"the display exited ({proc.returncode}):\n{text}")
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise DisplayStartError("the display did not print its address within 30 s")
