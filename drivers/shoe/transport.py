"""Thin transport: a serial port (any pyserial URL), a reader thread, ACKs, duplicates, reconnects.

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
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Final

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

#: How long one read waits; bounds how late a heartbeat timeout or a stop is noticed.
READ_TIMEOUT: Final = 0.1
#: A write that cannot complete in this time means the port is wedged: end the session.
WRITE_TIMEOUT: Final = 1.0


class ShoeError(RuntimeError):
    """A command could not be sent to the shoe (not connected, or the write failed)."""


class _SessionEnded(Exception):
    """Internal: the session is over for the reason given (heartbeat lost)."""


class ShoeReader:
    """Reads a shoe described by a profile and calls ``on_event`` (from its own thread) per event.

    ``on_event`` must be quick and must not block on the shoe: it runs on the
    reader thread, and a frame is acknowledged only after it returns, so the
    shoe does not send the next card until the previous one was handed over.
    An exception from ``on_event`` is logged and the reader goes on.
    """

    def __init__(self, profile: ShoeProfile, on_event: Callable[[ShoeEvent], None]) -> None:
        self.profile = profile
        self._on_event = on_event
        self._lock = threading.Lock()
        self._port: serial.SerialBase | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: Sequence of the last frame delivered; kept across reconnects for duplicate suppression.
        self._last_seq: int | None = None
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
        """Spawn the reader thread; it opens the port and keeps it open until :meth:`stop`."""
        if self._thread is not None:
            raise RuntimeError("ShoeReader.start() called twice (a stopped reader cannot restart)")
        name = f"shoe-reader {self.profile.port}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Close the port and join the reader thread. Idempotent; a no-op before :meth:`start`."""
        if self._thread is None:
            return
        self._stopping.set()
        with self._lock:
            port = self._port
        if port is not None and hasattr(port, "cancel_read"):
            with contextlib.suppress(OSError, serial.SerialException):  # it is going away anyway
                port.cancel_read()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

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

    def _emit(self, event: ShoeEvent) -> None:
        try:
            self._on_event(event)
        except Exception:
            log.exception("shoe event handler failed on %r", event)

    # --- reader thread -------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = self.profile.reconnect.initial
        down_reported = False
        while not self._stopping.is_set():
            try:
                port = self._open()
            except (OSError, ValueError, serial.SerialException) as exc:
                if not down_reported:
                    self._status("disconnected", reason=f"cannot open {self.profile.port}: {exc}")
                    down_reported = True
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, self.profile.reconnect.max)
                continue
            with self._lock:
                self._port = port
                self._cmd_seq = 0  # host command numbering is per session
            self._status("connected", protocol=self.profile.protocol)
            healthy = [False]
            try:
                if self.profile.protocol == "v1":
                    self._session_v1(port, healthy)
                else:
                    self._session_plain(port, healthy)
                reason = "stopped"
            except _SessionEnded as exc:
                reason = str(exc)
            except (OSError, serial.SerialException) as exc:
                reason = f"port error: {exc}"
            finally:
                with self._lock:
                    self._port = None
                with contextlib.suppress(OSError, serial.SerialException):
                    port.close()
            self._status("disconnected", reason=reason)
            down_reported = True
            if healthy[0]:
                backoff = self.profile.reconnect.initial
            if not self._stopping.is_set():
                self._stopping.wait(backoff)
                backoff = min(backoff * 2, self.profile.reconnect.max)

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

    def _nak(self, seq: int) -> None:
        """Ask for ``seq`` again, unless a NAK went out moments ago (no NAK storms)."""
        if self.bursts.may_nak(time.monotonic()):
            self._write(encode_frame(seq, Nak()))

    def _session_plain(self, port: serial.SerialBase, healthy: list[bool]) -> None:
        decoder = LineDecoder(self.profile.line_end)
        healthy[0] = True
        while not self._stopping.is_set():
            self._tick()
            for item in decoder.feed(self._read(port)):
                if isinstance(item, CardMsg):
                    event = event_for(item)
                    assert event is not None
                    self._emit(event)
                else:
                    self._framing_error(item)

    def _session_v1(self, port: serial.SerialBase, healthy: list[bool]) -> None:
        decoder = FrameDecoder()
        timeout = self.profile.heartbeat_timeout
        assert timeout is not None  # the profile requires it for v1
        last_rx = time.monotonic()
        # Ask for a heartbeat, and for a resend of anything the shoe still holds for us.
        self._write(self._command_frame(StatusRequest()))
        if self._last_seq is not None:
            self._nak((self._last_seq + 1) & 0xFF)
        while not self._stopping.is_set():
            self._tick()
            data = self._read(port)
            now = time.monotonic()
            if data:
                items = decoder.feed(data)
                for item in items:
                    if isinstance(item, FramingError):
                        self._framing_error(item)
                    elif self._accept(item):
                        last_rx = now
                        healthy[0] = True
                # Damage after the last good frame: ask for the frame we expect now instead of
                # waiting for the shoe's ACK timeout (rate-limited). Before the first good frame
                # there is no SEQ to ask for: the shoe's resend timer recovers.
                if items and isinstance(items[-1], FramingError) and self._last_seq is not None:
                    self._nak((self._last_seq + 1) & 0xFF)
            if now - last_rx > timeout:
                raise _SessionEnded(f"no frame from the shoe for {timeout} s (heartbeat lost)")

    def _accept(self, frame: Frame | UndecodableFrame) -> bool:
        """Deliver a frame once and acknowledge it; False if it is not something a shoe sends."""
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
            # HELLO 0 may carry the SEQ last delivered. Delivering a resent HELLO again is harmless.
            self._last_seq = frame.seq
            self._deliver(message)
        elif behind is not None and 0 < behind < 128:
            # Older than the last delivered frame: a serial line cannot reorder, so this is a
            # late copy. Never deliver it twice; say so, since a sane shoe never causes it.
            self._framing_error(FramingError(f"stale frame seq {frame.seq} after seq {last}: dropped"))
        elif behind != 0:
            if last is not None and frame.seq != (last + 1) & 0xFF:
                self._framing_error(FramingError(f"sequence gap: expected {(last + 1) & 0xFF}, "
                                                 f"got {frame.seq} (shoe reset without HELLO?)"))
            self._last_seq = frame.seq
            if message is None:
                assert isinstance(frame, UndecodableFrame)
                # A good CRC: the line is fine, the shoe sent something wrong. A NAK would only
                # bring it back; acknowledge it and report it once, as a fault the operator sees.
                self._status("protocol_error", reason=str(frame), seq=frame.seq,
                             type=f"0x{frame.type_byte:02X}", raw=frame.raw.hex(" "))
            else:
                self._deliver(message)
        self._write(encode_frame(frame.seq, Ack()))
        return True

    def _deliver(self, message: Message) -> None:
        """Hand a new (not duplicate) shoe message over as events."""
        if isinstance(message, UnknownMessage):
            count = self.unknown_types.get(message.type_byte, 0) + 1
            self.unknown_types[message.type_byte] = count
            if count == 1:  # once per type: a vendor's message sent every second must not flood
                log.info("shoe sent unknown message type 0x%02X: acknowledged and ignored", message.type_byte)
                self._status("unknown_message", type=f"0x{message.type_byte:02X}",
                             payload=message.payload.hex(" "))
            return
        if isinstance(message, Hello) and message.protocol != PROTOCOL_VERSION:
            self._status("protocol_error", protocol=message.protocol, model=message.model,
                         firmware=message.firmware, serial=message.serial,
                         reason=f"the shoe speaks protocol version {message.protocol}; this host speaks "
                                f"version {PROTOCOL_VERSION} only")
            return
        if isinstance(message, Heartbeat):
            self.last_heartbeat = message
        for status in self.flags.on_message(message):
            self._emit(status)
        event = event_for(message)
        if event is not None:
            self._emit(event)
