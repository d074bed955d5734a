"""Thin transport: a serial port (any pyserial URL) read on an event loop, ACKs, duplicates, reconnects.

This module knows the port and the delivery rules of protocol v1 (ACK what
you accepted, deliver a sequence number once, ask for a resend with NAK when
bytes were damaged) but nothing of how a frame is laid out: that is
:mod:`drivers.shoe.codec`, fed with whatever bytes the port returned.

A shoe gets unplugged, a USB hub browns out, a pty's other end goes away, a
firmware hangs while the port stays open. All of these end a *session*: the
port is closed, ``disconnected`` is reported with the reason, and the port is
reopened after a backoff that doubles up to the profile's maximum. The last
accepted sequence number is kept across sessions, so the frame the shoe
resends after a replug is recognised as a duplicate if it was already
delivered, and nothing is lost or doubled.

One thread: the reader runs on an asyncio loop, the daemon's own
(:meth:`ShoeReader.start_on`) or, for a program without one, a loop on a thread
of the reader's (:meth:`ShoeReader.start`). The loop watches the port's file
descriptor (``add_reader``), so the bytes are read, decoded, handed to the
consumer (which journals a card) and the ACK written on that one thread, with
no hop between threads on the card's path. Only a pyserial URL handler that
has no file descriptor (``rfc2217://``, ``loop://``) gets a pump thread that
reads and posts the bytes to the loop; all the rest still runs on the loop.

Exactly once across a host restart: a frame is acknowledged only once its
consumer says it is safe (``on_frame`` returned True: the daemon has
journaled it), never when the consumer refused it, raised, or the reader is
stopping. The consumer records each accepted frame's :class:`FrameId` (a
session per HELLO, and the sequence number), and a restarted reader is
given the last one (``resume``): the shoe's resend of that frame is then
acknowledged and not delivered again.

Any exception in the reader (opening, reading, writing, a bug) ends the
session like an unplugged shoe: ``disconnected`` with the cause, logged once
per outage (WARNING for a port that cannot be opened, ERROR for anything
else), and the port is retried with the backoff. The reader never dies while
it is running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, Final, NamedTuple

import serial  # type: ignore[import-untyped]  # no stubs in the dev deps (types-pyserial)

from drivers.shoe.codec import Frame, FrameDecoder, FramingError, LineDecoder, UndecodableFrame, encode_frame
from drivers.shoe.events import ShoeEvent, ShoeStatus, event_for
from drivers.shoe.linehealth import DeviceFlags, ErrorBursts
from drivers.shoe.messages import (
    PROTOCOL_VERSION,
    Ack,
    CardMsg,
    Dispense,
    Heartbeat,
    Hello,
    Message,
    Nak,
    Reset,
    StatusRequest,
    UnknownMessage,
    is_host_to_shoe,
)
from drivers.shoe.profile import ShoeProfile

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


class FrameId(NamedTuple):
    """A shoe frame's identity: the session it belongs to (a new one per HELLO) and its sequence."""

    session: str
    seq: int


#: ``on_frame(frame, event)``: deliver a frame's event (None for a HEARTBEAT; ``frame`` None on the
#: plain profile); True when the frame may be acknowledged (its event is durable).
FrameHandler = Callable[[FrameId | None, ShoeEvent | None], bool]


def new_session() -> str:
    """A fresh session id: the host's name for one run of the shoe's numbering (HELLO to HELLO)."""
    return uuid.uuid4().hex[:16]


class _Line:
    """One session's reading state: its decoder, when the last good frame came, whether any did."""

    def __init__(self, profile: ShoeProfile, now: float) -> None:
        self.decoder: FrameDecoder | LineDecoder = (
            FrameDecoder() if profile.protocol == "v1" else LineDecoder(profile.line_end))
        self.last_rx = now
        self.healthy = False


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


class ShoeError(RuntimeError):
    """A command could not be sent to the shoe (not connected, or the write failed)."""


class _SessionEnded(Exception):
    """Internal: the session is over for the reason given (heartbeat lost)."""


class ShoeReader:
    """Reads a shoe described by a profile and calls ``on_event`` (on the reader's loop) per event.

    ``on_event`` must be quick and must not block on the shoe: it runs on the
    reader's loop, and a frame is acknowledged only after it returns, so the
    shoe does not send the next card until the previous one was handed over.
    An exception from it is logged and the frame is not acknowledged (the shoe
    sends it again). ``on_frame``, if given, takes the shoe's frames instead
    (``on_event`` then gets only the line's statuses) and decides whether each
    is acknowledged; ``resume`` is the last frame it accepted in an earlier
    run; ``on_acked`` is called after each ACK went out (fault injection).
    """

    def __init__(
        self,
        profile: ShoeProfile,
        on_event: Callable[[ShoeEvent], None],
        *,
        on_frame: FrameHandler | None = None,
        resume: FrameId | None = None,
        on_acked: Callable[[FrameId], None] | None = None,
    ) -> None:
        self.profile = profile
        self._on_event = on_event
        self._on_frame = on_frame
        self._on_acked = on_acked
        #: The session of the frames now arriving: the journal's on a resume, new at each HELLO.
        self._session = resume.session if resume is not None else new_session()
        #: True until the first frame after a resume: only an exact resend of ``resume`` is old.
        self._resuming = resume is not None
        self._lock = threading.Lock()
        self._port: serial.SerialBase | None = None
        self._stopping = threading.Event()
        #: Who runs the sessions: a thread of its own (:meth:`start`) or a task on the daemon's loop.
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Set on the loop when a stop is asked for (ends the backoff); the running session's end.
        self._stop_event: asyncio.Event | None = None
        self._ended: asyncio.Future[None] | None = None
        #: Sequence of the last frame delivered; kept across reconnects for duplicate suppression.
        self._last_seq: int | None = resume.seq if resume is not None else None
        #: SEQ of the next host command; restarts at 0 with every session (docs/shoe-protocol.md).
        self._cmd_seq = 0
        #: The shoe's status from its latest HEARTBEAT (answer to :meth:`request_status`).
        self.last_heartbeat: Heartbeat | None = None
        #: Framing errors and NAKs, reported and sent at a bounded rate.
        self.bursts = ErrorBursts()
        #: What the shoe has told us of its lid, contents and faults (HEARTBEAT flags add to it).
        self.flags = DeviceFlags()
        #: Frames of unknown shoe-to-host TYPEs, acknowledged and ignored, counted per type.
        self.unknown_types: dict[int, int] = {}

    # --- public API --------------------------------------------------------------------------

    def start(self) -> None:
        """Run the reader on a thread of its own (with its own event loop) until :meth:`stop`.

        For a program without an event loop (``croupier sim watch``, the tests of the driver);
        the daemon runs it on its loop instead (:meth:`start_on`). Both run the same code.
        """
        self._claim()
        name = f"shoe-reader {self.profile.port}"
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name=name, daemon=True)
        self._thread.start()

    def start_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the reader on ``loop`` (call it on the loop's thread): every callback runs there, and
        :meth:`aclose` stops it. No thread of its own for a port with a file descriptor."""
        self._claim()
        self._task = loop.create_task(self._serve(), name=f"shoe-reader {self.profile.port}")

    def stop(self) -> None:
        """Close the port and join the reader thread. Idempotent; a no-op before :meth:`start`."""
        if self._thread is None:
            return
        self._stopping.set()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(self._wake)
        if self._thread is not threading.current_thread():
            self._thread.join()

    async def aclose(self) -> None:
        """Stop a reader started with :meth:`start_on` (on its loop): the port is closed on return."""
        self._stopping.set()
        if self._task is None:
            return
        self._wake()
        await self._task

    def _claim(self) -> None:
        if self._thread is not None or self._task is not None:
            raise RuntimeError("ShoeReader started twice (a stopped reader cannot restart)")

    def request_card(self) -> None:
        """Ask a dealing shuffler to dispense the next card. No-op on the plain profile.

        Not retried: a repeated request could dispense two cards, so the
        caller decides what to do if no card comes. :class:`ShoeError` if the
        shoe is not connected.
        """
        if self.profile.protocol == "v1":
            self._send_command(Dispense())

    def request_status(self) -> None:
        """Ask the shoe for a HEARTBEAT now; its status lands in :attr:`last_heartbeat`."""
        if self.profile.protocol == "v1":
            self._send_command(StatusRequest())

    def reset(self) -> None:
        """Ask the shoe to restart its protocol state (it answers with HELLO, sequence 0)."""
        if self.profile.protocol == "v1":
            self._send_command(Reset())

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._port is not None

    # --- port ----------------------------------------------------------------------------------

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

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._port is None:
                raise ShoeError(f"shoe on {self.profile.port} is not connected")
            self._port.write(data)

    def _command_frame(self, message: Message) -> bytes:
        """Host commands carry their own counter; the shoe may log it, it does not acknowledge it."""
        with self._lock:
            seq, self._cmd_seq = self._cmd_seq, (self._cmd_seq + 1) & 0xFF
            return encode_frame(seq, message)

    def _send_command(self, message: Message) -> None:
        try:
            self._write(self._command_frame(message))
        except (OSError, serial.SerialException) as exc:
            raise ShoeError(f"cannot send {type(message).__name__} to {self.profile.port}: {exc}") from exc

    def _emit(self, event: ShoeEvent) -> bool:
        """Hand a status (or, without ``on_frame``, a frame's event) to ``on_event``; False if it raised."""
        try:
            self._on_event(event)
        except Exception:
            log.exception("shoe event handler failed on %r", event)
            return False
        return True

    # --- sessions, on the reader's event loop ---------------------------------------------------

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
        line = _Line(self.profile, time.monotonic())
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
        self, port: serial.SerialBase, line: _Line, ended: asyncio.Future[None]
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

    def _readable(self, port: serial.SerialBase, line: _Line, ended: asyncio.Future[None]) -> None:
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

    def _pump(self, port: serial.SerialBase, line: _Line, ended: asyncio.Future[None],
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

    def _take_bytes(self, line: _Line, ended: asyncio.Future[None], data: bytes) -> None:
        if ended.done():
            return  # the session is over: these bytes belong to no one (the shoe resends)
        try:
            self._feed(line, data)
        except Exception as exc:
            _fail(ended, exc)

    async def _watch(self, line: _Line, ended: asyncio.Future[None]) -> None:
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

    def _status(self, status: str, **detail: Any) -> None:
        self._emit(ShoeStatus(status, {"port": self.profile.port, **detail}))

    def _read(self, port: serial.SerialBase) -> bytes:
        data: bytes = port.read(1)
        if data:
            waiting = port.in_waiting
            if waiting:
                data += port.read(waiting)
        return data

    def _framing_error(self, error: FramingError) -> None:
        """Report damage: the first of a burst now, the rest counted (see :class:`ErrorBursts`)."""
        status = self.bursts.error(error.reason, error.raw, time.monotonic())
        if status is not None:
            self._emit(status)

    def _tick(self) -> None:
        status = self.bursts.tick(time.monotonic())
        if status is not None:
            self._emit(status)

    def _nak(self, seq: int, limited: bool = True) -> None:
        """Ask for ``seq`` again, unless a NAK went out moments ago (no NAK storms)."""
        if self.bursts.may_nak(time.monotonic()) or not limited:
            self._write(encode_frame(seq, Nak()))

    def _begin(self, line: _Line) -> None:
        """A session starts: on v1, ask for a heartbeat, and for a resend of anything the shoe holds."""
        if self.profile.protocol != "v1":
            line.healthy = True
            return
        self._write(self._command_frame(StatusRequest()))
        if self._last_seq is not None:
            # Not rate-limited: one per session (the reconnect backoff bounds it), and it is what
            # gets the shoe's held frame back before its 1 s resend, so a short heartbeat_timeout
            # cannot end session after session.
            self._nak((self._last_seq + 1) & 0xFF, limited=False)

    def _feed(self, line: _Line, data: bytes) -> None:
        """Bytes from the port: decode, deliver and acknowledge what they complete."""
        if isinstance(line.decoder, LineDecoder):
            for item in line.decoder.feed(data):
                if isinstance(item, CardMsg):
                    self._deliver(None, item)  # nothing to acknowledge on this profile
                else:
                    self._framing_error(item)
            return
        now = time.monotonic()
        items = line.decoder.feed(data)
        for frame in items:
            if isinstance(frame, FramingError):
                self._framing_error(frame)
            elif self._accept(frame):
                line.last_rx = now
                line.healthy = True
        # Damage after the last good frame: ask for the frame we expect now instead of waiting for
        # the shoe's ACK timeout (rate-limited). Before the first good frame there is no SEQ to ask
        # for: the shoe's resend timer recovers.
        if items and isinstance(items[-1], FramingError) and self._last_seq is not None:
            self._nak((self._last_seq + 1) & 0xFF)

    def _accept(self, frame: Frame | UndecodableFrame) -> bool:
        """Deliver a frame once and acknowledge it; False if it is not something a shoe sends.

        Acknowledged: a resend of the last accepted frame, a late copy, and a new frame the consumer
        accepted. A new frame the consumer did not accept is not acknowledged, so the shoe sends it
        again; it still counts as a sign of life.
        """
        message = frame.message if isinstance(frame, Frame) else None
        if message is not None and is_host_to_shoe(message):
            name = type(message).__name__
            if isinstance(message, UnknownMessage):
                name = f"type 0x{message.type_byte:02X}"
            self._framing_error(FramingError(
                f"received host-to-shoe {name} (seq {frame.seq}): is the line echoing?"))
            return False
        last = self._last_seq
        behind = None if last is None else (last - frame.seq) & 0xFF
        if isinstance(message, Hello):
            # HELLO always resets the expectation, whatever its SEQ: after a wrap, a power-cycle
            # HELLO 0 may carry the SEQ last delivered. Delivering a resent HELLO again is harmless;
            # it starts a new session (the consumer records it before it is acknowledged).
            if not self._take(FrameId(new_session(), frame.seq), message):
                return True
        elif behind == 0:
            pass  # a resend of the frame last accepted (its ACK was lost, or we restarted before it)
        elif behind is not None and 0 < behind < 128 and not self._resuming:
            # Older than the last delivered frame: a serial line cannot reorder, so this is a
            # late copy. Never deliver it twice; say so, since a sane shoe never causes it.
            self._framing_error(FramingError(f"stale frame seq {frame.seq} after seq {last}: dropped"))
        else:
            # After a resume the journal's cursor may lag the shoe by the heartbeats acknowledged
            # since: any SEQ but the cursor's own is new, and no gap is reported.
            if last is not None and not self._resuming and frame.seq != (last + 1) & 0xFF:
                self._framing_error(FramingError(f"sequence gap: expected {(last + 1) & 0xFF}, "
                                                 f"got {frame.seq} (shoe reset without HELLO?)"))
            if message is None:
                assert isinstance(frame, UndecodableFrame)
                # A good CRC: the line is fine, the shoe sent something wrong. A NAK would only
                # bring it back; acknowledge it and report it once, as a fault the operator sees.
                self._status("protocol_error", reason=str(frame), frame_seq=frame.seq,
                             type=f"0x{frame.type_byte:02X}", raw=frame.raw.hex(" "))
                self._last_seq, self._resuming = frame.seq, False
            elif not self._take(FrameId(self._session, frame.seq), message):
                return True  # not acknowledged: the shoe sends it again
        self._write(encode_frame(frame.seq, Ack()))
        if self._on_acked is not None:
            self._on_acked(FrameId(self._session, frame.seq))
        return True

    def _take(self, frame: FrameId, message: Message) -> bool:
        """Deliver a new frame; once accepted it is the last one (False: not accepted, no ACK)."""
        if not self._deliver(frame, message):
            return False
        self._session, self._last_seq, self._resuming = frame.session, frame.seq, False
        return True

    def _deliver(self, frame: FrameId | None, message: Message) -> bool:
        """Hand a new (not duplicate) shoe message over as events; True when it may be acknowledged.

        The message's own event (a card, a lid, HELLO, ...; None for a HEARTBEAT) goes to
        ``on_frame``, whose answer decides the ACK; the statuses derived from it (HEARTBEAT flags,
        an unknown type, a wrong protocol version) are reported through ``on_event``.
        """
        event: ShoeEvent | None = None
        if isinstance(message, UnknownMessage):
            count = self.unknown_types.get(message.type_byte, 0) + 1
            self.unknown_types[message.type_byte] = count
            if count == 1:  # once per type: a vendor's message sent every second must not flood
                log.info("shoe sent unknown message type 0x%02X: acknowledged and ignored", message.type_byte)
                self._status("unknown_message", type=f"0x{message.type_byte:02X}",
                             payload=message.payload.hex(" "))
        elif isinstance(message, Hello) and message.protocol != PROTOCOL_VERSION:
            self._status("protocol_error", protocol=message.protocol, model=message.model,
                         firmware=message.firmware, serial=message.serial,
                         reason=f"the shoe speaks protocol version {message.protocol}; this host speaks "
                                f"version {PROTOCOL_VERSION} only")
        else:
            if isinstance(message, Heartbeat):
                self.last_heartbeat = message
            for status in self.flags.on_message(message):
                self._emit(status)
            event = event_for(message)
        if self._on_frame is None:
            return event is None or self._emit(event)
        try:
            return self._on_frame(frame, event)
        except Exception:
            log.exception("shoe frame handler failed on %r (frame %s): not acknowledged", message, frame)
            return False


def _is_bug(error: BaseException) -> bool:
    """Not a port going away but something the reader did not expect: log its traceback."""
    return not isinstance(error, OSError | serial.SerialException | ValueError | NotImplementedError)
