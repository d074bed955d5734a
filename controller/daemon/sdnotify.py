"""systemd's notify protocol (sd_notify(3)): READY, STATUS, STOPPING and the watchdog's pings.

The whole protocol is one datagram of ``KEY=VALUE`` lines to the unix
socket named by ``$NOTIFY_SOCKET`` (``@`` at its start means Linux's abstract
namespace), so it is these few lines rather than a dependency. Outside
systemd (no ``$NOTIFY_SOCKET``) every call does nothing and returns False.

The unit (systemd/croupier@.service) is ``Type=notify`` with
``WatchdogSec``: the daemon says READY only after its self-test and its
sockets are up, and pings the watchdog from a task on the table's own event
loop, so a loop that stops turning (a deadlock, a blocking call gone wrong)
stops the pings and systemd restarts the table.
"""

from __future__ import annotations

import os
import socket


def _address() -> str | None:
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return None
    return "\0" + path[1:] if path.startswith("@") else path


def notify(*lines: str) -> bool:
    """Send ``lines`` (``READY=1``, ``STATUS=...``) to systemd; False when not under systemd or it fails."""
    address = _address()
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall("\n".join(lines).encode())
    except OSError:
        return False
    return True


def watchdog_interval() -> float | None:
    """Seconds between pings (half of ``$WATCHDOG_USEC``), or None when systemd set no watchdog for us."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        value = int(usec)
    except ValueError:
        return None
    return value / 2_000_000 if value > 0 else None
