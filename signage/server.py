"""The display's web side: the static page and one Server-Sent Events stream per table (aiohttp).

Why aiohttp: one well-kept asyncio library that is both the HTTP server and
the streaming response, with no ASGI server to add, wheels for the Pi's
64-bit ARM, and pyzmq's asyncio sockets run in the same loop. Why SSE and not
WebSocket: the screen only listens; EventSource reconnects by itself (a
browser that comes back gets the whole screen in its first message) and it is
plain HTTP through any kiosk or proxy.

Routes: ``/`` the page (``?table=ID``; with one table it is that table),
``/tables`` the tables as JSON, ``/feed/ID`` the stream (each message is the
whole screen as JSON, see docs/display.md), ``/static/...`` the page's files
(fonts included: the page needs no network beyond this server). Its bounds
(header timeout, streams at once, bad-request log lines) are :mod:`signage.limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Protocol

from aiohttp import web

from signage.feed import TableFeed
from signage.limits import StreamSlots, WebLimits, host_check

STATIC = Path(__file__).resolve().parent / "static"
#: A comment line every so often keeps idle connections open through proxies and shows a dead browser.
KEEPALIVE = 15.0

FEEDS: web.AppKey[dict[str, TableFeed]] = web.AppKey("feeds", dict)
STREAMS: web.AppKey[StreamSlots] = web.AppKey("streams", StreamSlots)


class Followed(Protocol):
    """What a stream follows: a JSON text, its version, and a wake-up at each change (a table's
    :class:`TableFeed`, or the pit board's whole floor)."""

    @property
    def version(self) -> int: ...
    @property
    def payload(self) -> str: ...
    def watch(self) -> asyncio.Event: ...
    def unwatch(self, waiter: asyncio.Event) -> None: ...


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def tables(request: web.Request) -> web.Response:
    feeds = request.app[FEEDS]
    return web.json_response(
        [
            {"table": f.table, "journal_id": f.view.journal, "game": f.view.game,
             "title": f.view.settings.get("title"), "stale": f.stale}
            for f in feeds.values()
        ]
    )


async def feed(request: web.Request) -> web.StreamResponse:
    table = request.match_info["table"]
    feeds: dict[str, TableFeed] = request.app[FEEDS]
    follow = feeds.get(table)
    if follow is None:
        raise web.HTTPNotFound(text=f"no table {table!r} on this display; tables: {', '.join(feeds)}")
    slots = request.app[STREAMS]
    if not slots.take():
        raise web.HTTPServiceUnavailable(
            text=f"this display already serves {slots.limit} live streams (its limit): close a screen "
                 "and reconnect", headers={"Retry-After": "5"})
    try:
        return await stream(request, follow)
    finally:
        slots.give_back()


async def stream(request: web.Request, follow: Followed) -> web.StreamResponse:
    """The SSE stream itself: the whole screen at once, then at every change, keepalives between."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    waiter = follow.watch()
    try:
        sent = -1
        while True:
            # Cleared before the version is read, never after the write: a change that comes while a
            # write waits on a slow browser sets it again, and is sent as soon as that write ends.
            waiter.clear()
            if sent != follow.version:
                sent = follow.version
                await response.write(f"data: {follow.payload}\n\n".encode())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), KEEPALIVE)
                continue
            await response.write(b": keepalive\n\n")
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        follow.unwatch(waiter)
    return response


async def health(request: web.Request) -> web.Response:
    feeds = request.app[FEEDS]
    # The journal with the seq: a new journal starts at seq 1 again, so a seq alone says not which it is.
    body = {f.table: {"journal_id": f.view.journal, "seq": f.view.seq, "stale": f.stale,
                      "browsers": f.watchers} for f in feeds.values()}
    return web.Response(text=json.dumps(body), content_type="application/json")


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)  # kiosks ask for one; an empty answer keeps the log clean


def make_app(feeds: dict[str, TableFeed], limits: WebLimits | None = None) -> web.Application:
    """The app; run it with ``AppRunner(app, **limits.runner_options())`` so its timeouts hold."""
    limits = limits or WebLimits()
    app = web.Application(middlewares=[host_check(limits.hosts)])
    app[FEEDS] = feeds
    app[STREAMS] = StreamSlots(limits.max_streams)
    app.router.add_get("/", index)
    app.router.add_get("/tables", tables)
    app.router.add_get("/health", health)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/feed/{table}", feed)
    app.router.add_static("/static/", STATIC)
    return app
