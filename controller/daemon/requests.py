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
import math
import re
import time
from itertools import accumulate
from typing import Any, Final

import zmq

from controller.quote import quote

#: Largest inbound frame on the command and snapshot sockets (``ZMQ_MAXMSGSIZE``), in bytes.
MAX_FRAME: Final = 64 * 1024
#: Deepest nesting of arrays and objects a request may have (a command needs 3).
MAX_DEPTH: Final = 16

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
    """``payload`` as JSON text in UTF-8, or :class:`RequestError` worded for the client.

    Stricter than ``json.loads``, which guesses UTF-16 and UTF-32, skips a byte order mark, takes
    ``NaN``, lets a repeated field win silently and reads a 4,000-digit number: a request is UTF-8
    without a BOM (docs/commands.md), every number fits in 64 bits, every field appears once.
    """
    if len(payload) > MAX_FRAME:  # ZeroMQ drops these already; a second line for other callers
        raise RequestError(f"request of {len(payload)} bytes: the limit is {MAX_FRAME}")
    if payload.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        raise RequestError("the request starts with a byte order mark: send JSON as UTF-8 text without one")
    if b"\x00" in payload:
        raise RequestError("the request has NUL bytes (UTF-16 or UTF-32 text?): send JSON as UTF-8 text")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"the request is not UTF-8 text (byte 0x{payload[exc.start]:02x} at position "
                           f"{exc.start}): send JSON as UTF-8 text") from None
    depth = nesting(payload)
    if depth > MAX_DEPTH:
        raise RequestError(f"JSON nested {depth} levels deep: the limit is {MAX_DEPTH}")
    try:
        return json.loads(text, parse_int=_integer, parse_float=_number, parse_constant=_constant,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise RequestError(f"malformed JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:  # nesting() counted every bracket: only an unforeseen case gets here
        raise RequestError(f"JSON nested too deep: the limit is {MAX_DEPTH}") from None


#: The largest integer a request may hold (a signed 64-bit integer: any seq, row or amount fits).
MAX_INT: Final = 2**63 - 1


def _integer(text: str) -> int:
    # Counted before converting: Python refuses (slowly) past 4,300 digits, in words for programmers.
    if len(text.lstrip("-")) > len(str(MAX_INT)) or abs(value := int(text)) > MAX_INT:
        raise RequestError(f"the number {quote(text, 24)} is too large: the limit is {MAX_INT}")
    return value


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or len(text) > 64:
        raise RequestError(f"the number {quote(text, 24)} is out of range")
    return value


def _constant(text: str) -> Any:
    raise RequestError(f"{text} is not a JSON value (use a number, or null)")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RequestError(f"field {quote(key)} is given twice")
            seen.add(key)
    return data


def parse_snapshot_request(payload: bytes) -> tuple[int | None, str | None]:
    """The snapshot socket's request: ``(since, journal_id)``; :class:`RequestError` says what is wrong.

    ``{}``, ``{"since": SEQ}`` or ``{"since": SEQ, "journal_id": ID}`` (docs/zeromq.md): an empty
    frame is refused too, since a client sending one has a bug it should hear about.
    """
    if not payload.strip():
        raise RequestError('an empty request: send {} or {"since": SEQ, "journal_id": ID}')
    request = loads_request(payload)
    if not isinstance(request, dict) or set(request) - {"since", "journal_id"}:
        raise RequestError('send {} or {"since": SEQ, "journal_id": ID}')
    since, journal_id = request.get("since"), request.get("journal_id")
    if since is not None and (not isinstance(since, int) or isinstance(since, bool) or since < 0):
        raise RequestError(f"'since' must be a seq (an integer, 0 or more), not {quote(since)}")
    if journal_id is not None and (not isinstance(journal_id, str) or not 1 <= len(journal_id) <= 64):
        raise RequestError(f"'journal_id' must be the journal's id (a string of 1..64 characters), "
                           f"not {quote(journal_id)}")
    return since, journal_id
