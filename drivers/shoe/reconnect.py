"""The shoe reader's sessions: open the port, feed its bytes on the loop, and reconnect with a backoff.

A shoe gets unplugged, a USB hub browns out, a pty's other end goes away, a
firmware hangs while the port stays open. All of these end a *session*: the
port is closed, ``disconnected`` is reported with the reason, and the port is
reopened after a backoff that doubles up to the profile's maximum.
:class:`SessionLoop` runs them on an asyncio loop for
:class:`drivers.shoe.transport.ShoeReader`; what the bytes mean is
:class:`drivers.shoe.delivery.FrameReader`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, Final

import serial  # type: ignore[import-untyped]  # no stubs in the dev deps (types-pyserial)

from drivers.shoe.delivery import FrameReader, LineState

log = logging.getLogger("croupier.shoe")

#: How often a session checks the heartbeat and reports error bursts; how long a pump thread's read waits.
READ_TIMEOUT: Final = 0.1
#: The most bytes taken from a readable fd at once (a v1 frame is at most a few hundred).
READ_CHUNK: Final = 4096
#: A write that cannot complete in this time means the port is wedged: end the session.
WRITE_TIMEOUT: Final = 1.0
#: URL schemes whose pyserial handler refuses ``write_timeout`` (NotImplementedError at open):
#: their writes go to a TCP socket and are bounded by the heartbeat timeout instead.
NO_WRITE_TIMEOUT: Final = ("rfc2217://",)


def _fileno(port: serial.SerialBase) -> int | None:
    """The port's file descriptor for the loop to watch, or None (a URL handler without one)."""
    if os.name != "posix":
        return None  # Windows' proactor loop cannot watch a serial handle
    try:
        fd = port.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def _fail(ended: asyncio.Future[None], exc: BaseException) -> None:
    """End the session with ``exc`` (the first cause wins)."""
    if not ended.done():
        ended.set_exception(exc)


class _SessionEnded(Exception):
    """Internal: the session is over for the reason given (heartbeat lost)."""


class SessionLoop(FrameReader):
    """Sessions until stopped, on the reader's loop; nothing that goes wrong in one ends the reader."""

    #: Set up by :class:`drivers.shoe.transport.ShoeReader`, where each is explained.
    _stopping: threading.Event
    _thread: threading.Thread | None
    _task: asyncio.Task[None] | None
    _loop: asyncio.AbstractEventLoop | None
    _stop_event: asyncio.Event | None
    _ended: asyncio.Future[None] | None

    def _open(self) -> serial.SerialBase:
        p = self.profile
        kwargs: dict[str, Any] = {
            "baudrate": p.baud, "bytesize": p.bytesize, "parity": p.parity, "stopbits": p.stopbits,
            "timeout": READ_TIMEOUT, "write_timeout": WRITE_TIMEOUT,
        }
        if os.name == "posix" and "://" not in p.port:
            kwargs["exclusive"] = True  # a second reader on the same shoe would steal bytes
        if p.port.startswith(NO_WRITE_TIMEOUT):
            del kwargs["write_timeout"]
        port: serial.SerialBase = serial.serial_for_url(p.port, **kwargs)
        return port

    def _wake(self) -> None:
        """On the loop: a stop was asked for; end the session or the backoff now."""
        if self._stop_event is not None:
            self._stop_event.set()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    async def _serve(self) -> None:
        """Sessions until stopped; nothing that goes wrong in one ends the reader."""
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        backoff = self.profile.reconnect.initial
        down = False  # "disconnected" already reported and the cause logged for this outage
        while not self._stopping.is_set():
            try:
                opened, healthy, reason, error = await self._one_session()
            except Exception as exc:  # a bug in a status handler: still never a silent death
                opened, healthy, error = True, False, exc
                reason = f"reader error: {type(exc).__name__}: {exc}"
            if healthy:
                down = False
                backoff = self.profile.reconnect.initial
            if opened or not down:
                self._safe_status("disconnected", reason=reason)
            if error is not None and not down:
                level = logging.WARNING if not opened and isinstance(error, OSError) else logging.ERROR
                log.log(level, "shoe on %s: %s (retried every %.2f..%.2f s; logged once until it is back)",
                        self.profile.port, reason, self.profile.reconnect.initial,
                        self.profile.reconnect.max, exc_info=error if _is_bug(error) else None)
            down = down or error is not None or not opened
            if not self._stopping.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop_event.wait(), backoff)
                backoff = min(backoff * 2, self.profile.reconnect.max)

    async def _one_session(self) -> tuple[bool, bool, str, BaseException | None]:
        """Open the port and run one session: (opened, was it healthy, why it ended, the exception)."""
        loop = asyncio.get_running_loop()
        try:  # off the loop: a socket:// connect may take seconds
            port = await loop.run_in_executor(None, self._open)
        except Exception as exc:  # OSError, SerialException, ValueError, NotImplementedError, ...
            return False, False, f"cannot open {self.profile.port}: {type(exc).__name__}: {exc}", exc
        with self._lock:
            self._port = port
            self._cmd_seq = 0  # host command numbering is per session
        line = LineState(self.profile, time.monotonic())
        self._ended = ended = loop.create_future()
        if self._stopping.is_set():
            ended.set_result(None)
        error: BaseException | None = None
        try:
            self._status("connected", protocol=self.profile.protocol)
            self._begin(line)
            async with self._bytes_from(port, line, ended):
                await self._watch(line, ended)
            reason = "stopped"
        except _SessionEnded as exc:
            reason = str(exc)
        except (OSError, serial.SerialException) as exc:
            reason, error = f"port error: {exc}", exc
        except Exception as exc:
            reason, error = f"reader error: {type(exc).__name__}: {exc}", exc
        finally:
            self._ended = None
            with self._lock:
                self._port = None
            with contextlib.suppress(Exception):  # off the loop: a tty's close may wait for its output
                await loop.run_in_executor(None, port.close)
        return True, line.healthy, reason, error

    @contextlib.asynccontextmanager
    async def _bytes_from(
        self, port: serial.SerialBase, line: LineState, ended: asyncio.Future[None]
    ) -> AsyncIterator[None]:
        """While inside, the port's bytes are fed to ``line`` on the loop.

        One way per kind of port: a port with a file descriptor (a tty, a pty, ``socket://``) is
        watched by the loop itself (``add_reader``), so a frame is read, decoded, journaled by the
        consumer and acknowledged on the loop's thread with no hop between threads. A pyserial URL
        handler without one (``rfc2217://``, ``loop://``) is read by a small pump thread that posts
        the bytes to the loop: the decoding, the consumer and the ACK still run on the loop.
        """
        loop = asyncio.get_running_loop()
        fd = _fileno(port)
        if fd is not None:
            port.timeout = 0  # read what the fd has, never wait: the loop said it is readable
            loop.add_reader(fd, self._readable, port, line, ended)
            try:
                yield
            finally:
                loop.remove_reader(fd)
            return
        over = threading.Event()
        pump = threading.Thread(target=self._pump, args=(port, line, ended, loop, over),
                                name=f"shoe-pump {self.profile.port}", daemon=True)
        pump.start()
        try:
            yield
        finally:
            over.set()
            if hasattr(port, "cancel_read"):
                with contextlib.suppress(Exception):  # it is going away anyway
                    port.cancel_read()
            await loop.run_in_executor(None, pump.join)

    def _readable(self, port: serial.SerialBase, line: LineState, ended: asyncio.Future[None]) -> None:
        """The loop saw the port's fd readable: take what is there (never blocks: timeout 0)."""
        if ended.done():
            return
        try:
            data: bytes = port.read(READ_CHUNK)
        except Exception as exc:
            _fail(ended, exc)
            return
        if data:
            self._take_bytes(line, ended, data)

    def _pump(self, port: serial.SerialBase, line: LineState, ended: asyncio.Future[None],
              loop: asyncio.AbstractEventLoop, over: threading.Event) -> None:
        """Pump thread (ports without an fd): blocking reads, bytes posted to the loop in order."""
        try:
            while not over.is_set():
                data = self._read(port)
                if data and not over.is_set():
                    loop.call_soon_threadsafe(self._take_bytes, line, ended, data)
        except Exception as exc:
            if not over.is_set():
                with contextlib.suppress(RuntimeError):  # the loop is closed: we are shutting down
                    loop.call_soon_threadsafe(_fail, ended, exc)

    def _take_bytes(self, line: LineState, ended: asyncio.Future[None], data: bytes) -> None:
        if ended.done():
            return  # the session is over: these bytes belong to no one (the shoe resends)
        try:
            self._feed(line, data)
        except Exception as exc:
            _fail(ended, exc)

    async def _watch(self, line: LineState, ended: asyncio.Future[None]) -> None:
        """Until the session ends: every READ_TIMEOUT, report error bursts and check the heartbeat."""
        while True:
            done, _ = await asyncio.wait({ended}, timeout=READ_TIMEOUT)
            if done:
                ended.result()  # raises what ended it (a read error), if anything
                return
            self._tick()
            timeout = self.profile.heartbeat_timeout
            if timeout is not None and time.monotonic() - line.last_rx > timeout:
                raise _SessionEnded(f"no frame from the shoe for {timeout} s (heartbeat lost)")

    def _safe_status(self, status: str, **detail: Any) -> None:
        try:
            self._status(status, **detail)
        except Exception:
            log.exception("shoe status %s could not be reported", status)

    def _read(self, port: serial.SerialBase) -> bytes:
        data: bytes = port.read(1)
        if data:
            waiting = port.in_waiting
            if waiting:
                data += port.read(waiting)
        return data


def _is_bug(error: BaseException) -> bool:
    """Not a port going away but something the reader did not expect: log its traceback."""
    return not isinstance(error, OSError | serial.SerialException | ValueError | NotImplementedError)
