"""What every request socket does with bytes from outside before anything else looks at them.

The command and snapshot sockets answer anyone who can reach them, so one request must not be
able to break them: a frame larger than :data:`MAX_FRAME` is dropped by ZeroMQ itself
(``MAXMSGSIZE``: the peer is disconnected, nothing is buffered); JSON nested deeper than
:data:`MAX_DEPTH` is refused before it is parsed (Python's parser recurses, and a 1,000-deep
array would raise RecursionError); and an error quotes at most a short, escaped prefix of a bad
value (:func:`quote`), so a reply is never larger than a few hundred bytes whatever was sent.

And a flood must not stall the table: the request loops share a :class:`Pacer` that yields to
the loop after every request and, once they have worked :data:`BURST` seconds back to back, idles
as long, so requests get at most about half of the daemon's time and the shoe reader, the panels
and the journal the rest, however many peers send.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from itertools import accumulate
from typing import Any, Final

import zmq

#: Largest inbound frame on the command and snapshot sockets (``ZMQ_MAXMSGSIZE``), in bytes.
MAX_FRAME: Final = 64 * 1024
#: Deepest nesting of arrays and objects a request may have (a command needs 3).
MAX_DEPTH: Final = 16
#: Characters of a bad value quoted in an error reply.
QUOTE_LIMIT: Final = 40

_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_KEEP: Final = b"[]{}"
_DROP: Final = bytes(b for b in range(256) if b not in _KEEP)
_STEP: Final = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


#: Seconds of back-to-back request handling after which the request loops idle as long.
BURST: Final = 0.001


class Pacer:
    """Shared by the request loops: at most about half the loop's time for requests under a flood."""

    def __init__(self, burst: float = BURST) -> None:
        self.burst = burst
        self._busy = 0.0
        self._last = 0.0

    async def pace(self, started: float) -> None:
        """After a request that began at ``started`` (``time.perf_counter()``): yield, or idle."""
        now = time.perf_counter()
        if started - self._last > self.burst:  # the loop was idle since the last request: a new burst
            self._busy = 0.0
        self._last = now
        self._busy += now - started
        if self._busy >= self.burst:
            self._busy = 0.0
            await asyncio.sleep(self.burst)
        else:
            await asyncio.sleep(0)  # a recv that finds a request waiting does not give the loop a turn


class RequestError(ValueError):
    """Bytes that are not a request we will parse; the message says why (never quoting much)."""


def limit_inbound(sock: zmq.Socket[Any]) -> None:
    """Have ZeroMQ drop any inbound frame over :data:`MAX_FRAME` (and the peer that sent it)."""
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME)


def nesting(payload: bytes) -> int:
    """How deep arrays and objects nest in ``payload``, not counting brackets inside strings."""
    brackets = _STRING.sub(b"", payload).translate(None, _DROP)
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def loads_request(payload: bytes) -> Any:
    """``payload`` as JSON, or :class:`RequestError` (malformed, or nested too deep)."""
    if len(payload) > MAX_FRAME:  # ZeroMQ drops these already; a second line for other callers
        raise RequestError(f"request of {len(payload)} bytes: the limit is {MAX_FRAME}")
    depth = nesting(payload)
    if depth > MAX_DEPTH:
        raise RequestError(f"JSON nested {depth} levels deep: the limit is {MAX_DEPTH}")
    try:
        return json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise RequestError(f"malformed JSON: {exc}") from None


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A bad value for an error message: its ``repr``, cut to ``limit`` characters and said so."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str | bytes) else len(text)
    return f"{text[:limit]}... ({size} characters)"
