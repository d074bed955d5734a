"""The conformance kit's end of the line: a host that sends exactly what a check says, and times replies.

Unlike :class:`drivers.shoe.transport.ShoeReader`, which does the right thing automatically, a
probe does nothing by itself: no ACK unless asked, no NAK, no STATUS_REQUEST on open. That is what
lets a check withhold an ACK to time the shoe's resends, or send a damaged frame on purpose.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import serial  # type: ignore[import-untyped]  # no stubs in the dev deps (types-pyserial)

from drivers.shoe.codec import Frame, FrameDecoder, FramingError, UndecodableFrame, encode_frame
from drivers.shoe.messages import Ack, Message
from drivers.shoe.profile import ShoeProfile

#: How long one read waits: the resolution of every time a check measures.
TICK: Final = 0.005


@dataclass(frozen=True, slots=True)
class Seen:
    """A good frame from the shoe and when it arrived (monotonic seconds)."""

    at: float
    frame: Frame

    def __str__(self) -> str:
        return f"{type(self.frame.message).__name__} seq {self.frame.seq}"


class Probe:
    """A raw host on ``url``: send frames, receive the shoe's frames with their arrival times."""

    def __init__(self, url: str, profile: ShoeProfile | None = None) -> None:
        self.url = url
        self.profile = profile
        self.port: Any = None
        self._decoder = FrameDecoder()
        self._pending: deque[Seen] = deque()
        #: Framing errors and undecodable frames seen since open (none on a clean line).
        self.errors: list[str] = []
        self.sent: list[tuple[float, bytes]] = []
        self._cmd_seq = 0
        self.open()

    def open(self) -> None:
        kwargs: dict[str, Any] = {"timeout": TICK, "write_timeout": 1.0}
        if self.profile is not None:
            p = self.profile
            kwargs.update(baudrate=p.baud, bytesize=p.bytesize, parity=p.parity, stopbits=p.stopbits)
        self.port = serial.serial_for_url(self.url, **kwargs)
        self._decoder = FrameDecoder()
        self._cmd_seq = 0

    def close(self) -> None:
        if self.port is not None:
            with contextlib.suppress(OSError, serial.SerialException):
                self.port.close()
            self.port = None

    # --- sending ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        self.sent.append((time.monotonic(), data))
        self.port.write(data)

    def send(self, seq: int, message: Message) -> None:
        self.write(encode_frame(seq, message))

    def command(self, message: Message, seq: int | None = None) -> int:
        """A host command with the session's counter (or ``seq``); returns the SEQ used."""
        if seq is None:
            seq, self._cmd_seq = self._cmd_seq, (self._cmd_seq + 1) & 0xFF
        self.send(seq, message)
        return seq

    def ack(self, seen: Seen) -> None:
        self.send(seen.frame.seq, Ack())

    # --- receiving -------------------------------------------------------------------------------

    def _pump(self, wait: float) -> None:
        """Read what the port has (waiting up to ``wait``), decode, queue the good frames."""
        self.port.timeout = max(wait, 0.0)
        data = self.port.read(1)
        if data:
            waiting = self.port.in_waiting
            if waiting:
                data += self.port.read(waiting)
        now = time.monotonic()
        for item in self._decoder.feed(data):
            if isinstance(item, Frame):
                self._pending.append(Seen(now, item))
            elif isinstance(item, UndecodableFrame | FramingError):
                self.errors.append(str(item))

    def next(self, timeout: float, want: Callable[[Seen], bool] | None = None) -> Seen | None:
        """The next frame within ``timeout``; with ``want``, the next one it accepts: the others are
        ACKed and dropped (a host acknowledges every good frame, or the shoe would resend it forever)."""
        deadline = time.monotonic() + timeout
        while True:
            while self._pending:
                seen = self._pending.popleft()
                if want is None or want(seen):
                    return seen
                self.ack(seen)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pump(min(left, TICK))

    def collect(self, duration: float, ack: bool = True) -> list[Seen]:
        """Every frame for ``duration`` seconds, each ACKed at once if ``ack``."""
        got: list[Seen] = []
        deadline = time.monotonic() + duration
        while (left := deadline - time.monotonic()) > 0:
            seen = self.next(left)
            if seen is None:
                break
            got.append(seen)
            if ack:
                self.ack(seen)
        return got
