"""A live page's stream sends a change that arrives while it is still writing the one before.

Until 2026-12-04 :func:`signage.server.stream` cleared its wake-up after writing: a change that came
while a write waited on a slow browser (a large payload, a 60-round shoe's history) set the wake-up,
the clear then erased it, and the page stayed one change behind until the next keepalive, 15 s later.
The server here is the real aiohttp app code on 127.0.0.1 in a thread's own loop; the browser is a
plain socket that reads nothing at first, so the first write waits on it. The keepalive is set to an
hour, so a change missed that way never arrives and the test fails at its deadline.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from aiohttp import web

import signage.server
from signage.server import stream
from signage.watchers import Watched

pytestmark = pytest.mark.timeout(120)

#: Larger than loopback's socket buffers on both sides, so the write waits on the browser.
BIG = 16 * 1024 * 1024


class Page(Watched):
    """A followed page: its text, its version, its wake-ups (the :class:`signage.server.Followed` shape)."""

    def __init__(self, payload: str) -> None:
        super().__init__()
        self.payload = payload

    def change(self, payload: str) -> None:
        self.payload = payload
        self.wake()


class Server:
    """``stream`` of one :class:`Page` at ``/feed``, on an ephemeral port, in a thread's event loop."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _start(self) -> None:
        async def feed(request: web.Request) -> web.StreamResponse:
            return await stream(request, self.page)

        app = web.Application()
        app.router.add_get("/feed", feed)
        self.runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port: int = self.runner.addresses[0][1]

    def change(self, payload: str) -> None:
        self.loop.call_soon_threadsafe(self.page.change, payload)

    async def _stop(self) -> None:
        """The app's cleanup, then the streams still waiting for a change (an hour's keepalive) ended."""
        await self.runner.cleanup()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setattr(signage.server, "KEEPALIVE", 3600.0)
    running = Server(Page('"' + "x" * BIG + '"'))
    yield running
    running.close()


def test_a_change_during_a_slow_write_is_sent_when_the_write_ends(server: Server) -> None:
    browser = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    browser.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    browser.sendall(b"GET /feed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    time.sleep(0.5)  # the first payload's write now waits on this browser, which has read nothing
    server.change('"second"')
    seen = b""
    deadline = time.monotonic() + 30
    while b'data: "second"' not in seen:
        assert time.monotonic() < deadline, f"the change never came ({len(seen)} bytes read)"
        browser.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = browser.recv(1 << 20)
        except TimeoutError:
            continue
        assert chunk, "the display closed the stream"
        seen += chunk
        seen = seen[-64:] if b'data: "second"' not in seen else seen
    browser.close()
