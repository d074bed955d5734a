"""The display's web server under abuse (issue 24 item 10): half-sent requests time out, SSE streams are
capped with a clear 503, and junk requests are one WARNING line per kind, never an ERROR traceback.

The server is the real aiohttp app on 127.0.0.1, run as ``croupier display`` runs it (an ``AppRunner``
with :meth:`WebLimits.runner_options`), on a loop of its own thread; the clients are plain sockets.
Memory figures are bench/display_limits.py's job; here only the bounds themselves are asserted.
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import zmq.asyncio
from aiohttp import web

from signage.feed import TableFeed
from signage.limits import WebLimits
from signage.server import STREAMS, make_app

pytestmark = pytest.mark.timeout(120)

LIMITS = WebLimits(header_timeout=0.5, max_streams=20, log_interval=60.0)


class Display:
    """The display's app served on an ephemeral port by a thread's own event loop."""

    def __init__(self, limits: WebLimits) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        self.app: web.Application | None = None
        self.limits = limits
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _start(self) -> None:
        feed = TableFeed("t1", "baccarat", "ipc:///nonexistent/pub", "ipc:///nonexistent/snap", {},
                         zmq.asyncio.Context.instance())
        state = {"game": "baccarat", "phase": "idle"}
        feed.view.load_snapshot({"seq": 10, "journal_id": "j1", "state": state})
        self.app = make_app({"t1": feed}, self.limits)
        self.runner = web.AppRunner(self.app, handle_signals=False, shutdown_timeout=0.5,
                                    **self.limits.runner_options())
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    def open_streams(self) -> int:
        assert self.app is not None
        return self.app[STREAMS].open

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def display() -> Iterator[Display]:
    server = Display(LIMITS)
    yield server
    server.close()


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def readable(socks: list[socket.socket], timeout: float) -> list[socket.socket]:
    """The sockets with something to read (or closed) within ``timeout`` (poll: fds past 1024 too)."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    return [by_fd[fd] for fd, _ in poller.poll(int(timeout * 1000))]


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (EOF, or a reset); ``sock`` is readable."""
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


def test_a_thousand_half_sent_requests_are_closed_by_the_header_timeout(display: Display) -> None:
    half_open = []
    for n in range(1000):
        sock = connect(display.port)
        if n % 2:
            sock.sendall(b"GET /feed/t1 HTTP/1.1\r\nHost: display\r\nX-Slow: ")  # headers never finished
        half_open.append(sock)
    try:
        pending, give_up = list(half_open), time.monotonic() + 30  # the server's timer is 0.5 s
        while pending and time.monotonic() < give_up:
            ready = set(readable(pending, 0.2))
            for sock in ready:
                assert closed_by_server(sock), "an answer to a request that never ended"
            pending = [s for s in pending if s not in ready]
        assert not pending, f"{len(pending)} of 1000 half-open connections still open"
        fresh = connect(display.port)  # and the server still answers
        fresh.sendall(b"GET /tables HTTP/1.1\r\nHost: display\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := fresh.recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200") and b'"t1"' in answer
        fresh.close()
    finally:
        for sock in half_open:
            sock.close()


def read_head(sock: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, f"closed before the headers: {head!r}"
        head += chunk
    return head


def test_streams_past_the_cap_are_refused_with_a_503_that_says_why(display: Display) -> None:
    streams = [connect(display.port) for _ in range(LIMITS.max_streams)]
    for sock in streams:
        sock.sendall(b"GET /feed/t1 HTTP/1.1\r\nHost: display\r\n\r\n")
        head = read_head(sock)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    assert display.open_streams() == LIMITS.max_streams
    # 20,000 more attempts, pipelined 1,000 to a connection (20 connections): every one a 503.
    request = b"GET /feed/t1 HTTP/1.1\r\nHost: display\r\n\r\n"
    refused = 0
    for _ in range(20):
        sock = connect(display.port)
        sock.sendall(request * 1000)
        answers = b""
        while answers.count(b"HTTP/1.1 ") < 1000 or not answers.endswith(b"reconnect"):
            chunk = sock.recv(1 << 20)
            assert chunk, f"closed after {answers.count(b'HTTP/1.1 ')} answers"
            answers += chunk
        assert answers.count(b"HTTP/1.1 503 Service Unavailable") == 1000
        refused += 1000
        sock.close()
    assert refused == 20_000 and b"already serves 20 live streams" in answers
    assert display.open_streams() == LIMITS.max_streams
    for sock in streams[:5]:  # streams that end give their place back
        sock.close()
    for _ in range(100):
        if display.open_streams() == LIMITS.max_streams - 5:
            break
        readable([], 0.05)
    assert display.open_streams() == LIMITS.max_streams - 5
    again = connect(display.port)
    again.sendall(request)
    assert read_head(again).startswith(b"HTTP/1.1 200")
    again.close()
    for sock in streams[5:]:
        sock.close()


def test_junk_requests_are_one_warning_per_kind_and_no_traceback(
        display: Display, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="croupier.display")
    junk = {"bad version": b"GET / HTTP/9.9\r\nHost: x\r\n\r\n",
            "bad header": b"GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n"}
    for _ in range(100):
        for request in junk.values():
            sock = connect(display.port)
            sock.sendall(request)
            answer = sock.recv(65536)
            assert answer.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), answer[:80]
            sock.close()
    records: list[Any] = [r for r in caplog.records if r.name.startswith("croupier.display")]
    assert not [r for r in records if r.levelno >= logging.ERROR or r.exc_info]
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert len(warnings) == len(junk), warnings
    assert all(w.startswith("bad HTTP request from 127.0.0.1 (") and "answered 400" in w for w in warnings)
