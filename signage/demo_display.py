"""The signage display inside ``croupier demo``: started beside the daemon, its address printed.

Kept out of controller/tools/demo.py so the demo only calls two functions:
:func:`add_arguments` and :func:`start_display`. The display is the real
``croupier display`` process (a subprocess that dies with the demo), fed by
the demo's daemon over ZeroMQ like any screen on the floor.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

DEFAULT = "127.0.0.1:8080"


class DisplayStartError(RuntimeError):
    """The display process did not come up (the message has its output)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--display",
        default=DEFAULT,
        metavar="HOST:PORT",
        help=f"serve the signage page there (default {DEFAULT}; if that port is taken, a free one, "
        "and the address is printed)",
    )
    parser.add_argument("--no-display", action="store_true", help="do not start the signage display")


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
    """Start ``croupier display``; (process, its URL, a note if the asked port was taken)."""
    host, _, port_text = listen.rpartition(":")
    note = None
    if port_text.isdigit() and int(port_text) and not _port_free(host or "127.0.0.1", int(port_text)):
        note = f"port {port_text} is taken; the display uses a free port instead"
        listen = f"{host}:0"
    log_path = work / "display.log"
    cmd = [
        sys.executable,
        "-m",
        "controller.cli",
        "display",
        str(table),
        "--pub",
        pub,
        "--snapshot",
        snapshot,
        "--listen",
        listen,
        "--exit-with-parent",
        str(os.getpid()),
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[1],
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log_path.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            if line.startswith("display: http"):
                return proc, line.split()[1], note
        if proc.poll() is not None:
            raise DisplayStartError(f"the display exited ({proc.returncode}):\n{text}")
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise DisplayStartError("the display did not print its address within 30 s")
