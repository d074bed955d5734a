"""Which of a demo's 127.0.0.1 ports another program holds, said with the setting that moves each.

A second demo, or a demo beside ``croupier run`` on the same table, used to end in "Address already
in use" with neither the address nor the way out. The demo looks before it starts anything: a taken
port is named with its address and the table file key (or ``--ports``) that moves it, and
``demo --game all`` moves only the table that collides to ports that are free (:func:`free_span`).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

#: Sockets one table's demo takes from ``--ports N``: PUB, snapshot, command, panel control. Here, in a
#: module of the standard library's imports alone: the floor's command line names it in its help, and took
#: it from :mod:`controller.tools.demo_setup` with the daemon's table-file reading, about 0.25 s of every
#: ``croupier floor`` start (``recall`` among them) for one integer.
PORTS_PER_TABLE = 4

#: The table file key of each of a demo's sockets (``demo_endpoints`` names them so).
SETTING = {"pub": "zeromq.pub", "snapshot": "zeromq.snapshot", "command": "zeromq.command",
           "control": "gpio.control"}


def tcp_port(endpoint: str) -> tuple[str, int] | None:
    """(host, port) of a ``tcp://HOST:PORT`` endpoint with a fixed port; None for ipc:// or port 0/*."""
    parts = urlsplit(endpoint)
    try:
        port = parts.port
    except ValueError:  # tcp://...:* (any port)
        return None
    if parts.scheme != "tcp" or not port or parts.hostname is None:
        return None
    return ("0.0.0.0" if parts.hostname == "*" else parts.hostname), port


def in_use(host: str, port: int) -> bool:
    """Whether another socket listens at host:port (bound as ZeroMQ binds: SO_REUSEADDR, so a port a
    stopped demo left in TIME_WAIT is free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError:
            return True
    return False


def taken(endpoints: dict[str, str]) -> list[tuple[str, str]]:
    """(socket name, endpoint) of each of ``endpoints`` whose port another program holds."""
    found = []
    for name, endpoint in endpoints.items():
        where = tcp_port(endpoint)
        if where is not None and in_use(*where):
            found.append((name, endpoint))
    return found


def taken_text(held: list[tuple[str, str]], table: Path, ported: bool) -> str:
    """``tcp://127.0.0.1:5558 (zeromq.command in FILE) is in use by another program``."""
    where = ", ".join(
        f"{endpoint} ({'--ports' if ported else f'{SETTING[name]} in {table}'})" for name, endpoint in held)
    return f"{where} {'is' if len(held) == 1 else 'are'} in use by another program"


def taken_message(held: list[tuple[str, str]], table: Path, ported: bool) -> str:
    """What a demo that cannot start says: what is taken, and how to move the demo (or free the port)."""
    return (f"{taken_text(held, table, ported)} (a second demo, or croupier run on this table?): stop it, "
            "or move this demo with --ports N (127.0.0.1 ports N..N+3, all free)")


def free_span(count: int, start: int, avoid: Iterable[int] = ()) -> int:
    """The first N >= ``start`` with 127.0.0.1 ports N..N+count-1 all free and none in ``avoid``."""
    avoided = set(avoid)
    for first in range(max(start, 1024), 65536 - count + 1, count):
        span = range(first, first + count)
        if not avoided.intersection(span) and not any(in_use("127.0.0.1", p) for p in span):
            return first
    raise RuntimeError(f"no {count} free consecutive 127.0.0.1 ports from {start}")
