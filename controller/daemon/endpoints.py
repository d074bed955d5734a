"""ZeroMQ endpoints: one check for every endpoint a user types, and IPv6 on every socket.

Why one module: a table file's ``zeromq:`` keys, ``croupier run --pub``,
``croupier ctl --endpoint`` and ``croupier watch --pub`` all take endpoints,
and a bad one must be the same one-line error everywhere (never a ZeroMQ
``Invalid argument`` traceback). ZeroMQ leaves IPv6 off by default, so
``tcp://[::1]:5556`` fails with "No such device" unless every socket turns it
on; :func:`enable_ipv6` does (IPv4 addresses keep working on such sockets).
"""

from __future__ import annotations

import re
from typing import Any, Final

import zmq

#: tcp://HOST:PORT (HOST a name, an IPv4 address, ``*`` or ``[IPv6]``), ipc://PATH, inproc://NAME.
_TCP: Final = re.compile(r"^tcp://(\[[0-9A-Fa-f:.]+\]|\*|[A-Za-z0-9.-]+(?:;[A-Za-z0-9.*-]+)?):(\d{1,5}|\*)$")
_OTHER: Final = re.compile(r"^(ipc|inproc)://\S+$")


class EndpointError(ValueError):
    """An endpoint ZeroMQ cannot use; the message quotes it and shows the forms that work."""


def check_endpoint(value: str) -> str:
    """``value`` if it is a usable ZeroMQ endpoint, else :class:`EndpointError` saying why."""
    match = _TCP.match(value)
    if match is not None:
        port = match.group(2)
        if port != "*" and not 0 <= int(port) <= 65535:
            raise EndpointError(f"endpoint {value!r}: port {port} is not 0..65535")
        return value
    if _OTHER.match(value):
        return value
    raise EndpointError(
        f"endpoint {value!r} is not a ZeroMQ endpoint: use tcp://127.0.0.1:5556, "
        "tcp://[::1]:5556 (IPv6), tcp://*:5556 (every interface) or ipc:///path"
    )


def enable_ipv6(sock: zmq.Socket[Any]) -> zmq.Socket[Any]:
    """Turn IPv6 on (``[::1]``, ``[::]``); the socket still takes IPv4 addresses."""
    sock.setsockopt(zmq.IPV6, 1)
    return sock
