"""What the display's web server refuses to hold: half-sent requests, idle connections, too many streams.

Why: the display runs on the table's own Pi beside the daemon, under the same
memory limit. A browser that opens a connection and never finishes its request,
a kiosk that reconnects in a loop, or a scanner sending junk must cost a bounded
amount of memory and log lines, never the table (docs/display.md, "Limits").

* ``header_timeout``: a connection that has not completed a request's headers
  within it (a new connection, or one idle after its last answer) is closed.
  aiohttp's ``keepalive_timeout`` is exactly that timer (it starts when the
  connection is made and again after each answer, and fires only while no
  request is being handled), so it is the one way we set it.
* ``max_streams``: at most that many SSE streams at once (each holds about
  13 KB); one more is answered ``503`` with a sentence saying why.
* A malformed request is answered ``400`` by aiohttp as before, but logged as
  one WARNING line per kind of error per ``log_interval`` (and how many more
  came since), never as an ERROR with a traceback.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Final

from aiohttp.http_exceptions import HttpProcessingError

log = logging.getLogger("croupier.display")


@dataclass(frozen=True)
class WebLimits:
    """The display server's bounds (defaults for a table's Pi; tests shorten them)."""

    header_timeout: float = 10.0
    max_streams: int = 100
    log_interval: float = 60.0
    #: The host names a request's ``Host`` may give (None: any): :func:`host_names` of the listen address.
    hosts: frozenset[str] | None = None

    def runner_options(self) -> dict[str, Any]:
        """Keyword arguments for aiohttp's ``AppRunner`` (they reach every connection's handler)."""
        return {"keepalive_timeout": self.header_timeout, "logger": BadRequestLog(self.log_interval),
                "handler_cancellation": True}  # a stream whose browser left ends now, not at its next write


@dataclass
class StreamSlots:
    """How many SSE streams are open, against the limit."""

    limit: int
    open: int = 0
    refused: int = 0

    def take(self) -> bool:
        """One more stream, if there is room (False: answer 503)."""
        if self.open >= self.limit:
            self.refused += 1
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open -= 1


class BadRequestLog(logging.Logger):
    """aiohttp's server logger: a bad request is a WARNING once per kind and interval, not a traceback.

    Anything that is not a malformed request (an exception in one of our handlers) is still logged
    with its traceback: that is a bug to see.
    """

    def __init__(self, interval: float) -> None:
        super().__init__("croupier.display.http")
        self.parent = log
        self.interval = interval
        self._last: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        if not isinstance(error, HttpProcessingError):
            super().exception(msg, *args, exc_info=exc_info, **kwargs)
            return
        kind = type(error).__name__
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self.interval:
            self._since[kind] = self._since.get(kind, 0) + 1
            return
        more = self._since.pop(kind, 0)
        self._last[kind] = now
        remote = args[0] if args else "?"
        detail = " ".join(str(error.message or error).split())[:160]
        self.warning("bad HTTP request from %s (%s: %s): answered %s%s; more of this kind within %g s are "
                     "counted, not logged", remote, kind, detail, error.code,
                     f" ({more} more since the last line)" if more else "", self.interval)


#: The names of the loopback interface a browser on this machine uses.
LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1"})


def host_names(listen_host: str) -> frozenset[str] | None:
    """What a request's ``Host`` may name on a server listening on ``listen_host``: on loopback, only the
    loopback names (None elsewhere: any, the name a LAN reaches it by is not known here).

    Why: a page from anywhere, open in a browser on this machine, can have its own host name resolve to
    127.0.0.1 (DNS rebinding) and then read the server as if it were its own site: the pit board's
    recall, credits and reports, a display's feed. Such a request names the attacker's host; a browser of
    the house names ``localhost`` or the address (a review, 2026-12-07)."""
    return LOOPBACK | {listen_host} if listen_host in LOOPBACK else None


def host_check(hosts: frozenset[str] | None) -> Any:
    """An aiohttp middleware answering ``421`` to a request whose ``Host`` is not in ``hosts``."""
    from aiohttp import web

    @web.middleware
    async def check(request: web.Request, handler: Any) -> Any:
        if hosts is not None and _name(request.host or "") not in hosts:
            raise web.HTTPMisdirectedRequest(text=f"Host {request.host!r:.80} is not this server's name "
                                                  "(it listens on loopback: use localhost)")
        return await handler(request)

    return check


def _name(host: str) -> str:
    """The host name of a ``Host`` header: ``[::1]:8080`` -> ``::1``, ``localhost:8080`` -> ``localhost``."""
    if host.startswith("["):
        return host[1:].partition("]")[0].lower()
    return (host.rpartition(":")[0] if ":" in host else host).lower()
