"""The shoe reader's delivery rules: bytes to frames, each new frame delivered once, then ACKed or NAKed.

Protocol v1's host rules (docs/shoe-protocol.md) without a port or a loop:
ACK what the consumer accepted, deliver a sequence number once, recognise a
resend and a late copy, ask for a resend with NAK when bytes were damaged
(rate-limited), and report what the line and the device say
(:mod:`drivers.shoe.linehealth`). :class:`FrameReader` is the base of
:class:`drivers.shoe.transport.ShoeReader`; the sessions that feed it bytes are
:mod:`drivers.shoe.reconnect`.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, NamedTuple

import serial  # type: ignore[import-untyped]  # no stubs in the dev deps (types-pyserial)

from drivers.shoe.codec import Frame, FrameDecoder, FramingError, LineDecoder, UndecodableFrame, encode_frame
from drivers.shoe.events import ShoeEvent, ShoeStatus, event_for
from drivers.shoe.linehealth import DeviceFlags, ErrorBursts
from drivers.shoe.messages import (
    PROTOCOL_VERSION,
    T_HELLO,
    Ack,
    CardMsg,
    Heartbeat,
    Hello,
    Message,
    Nak,
    StatusRequest,
    UnknownMessage,
    is_host_to_shoe,
)
from drivers.shoe.profile import ShoeProfile

log = logging.getLogger("croupier.shoe")

#: After a RESET, how long frames other than HELLO are held back (neither delivered nor acknowledged)
#: waiting for the HELLO that answers it. A conforming shoe answers within 2 s (drivers.shoe.conformance);
#: the hold is well past that, so a slow but conforming shoe's resend of a card sent before the RESET
#: is never taken as a new card. A RESET lost on the line holds the frames no longer than this (they
#: are resent, unacknowledged, and delivered after it).
RESET_HOLD: Final = 5.0
#: Before a RESET, how long the host waits for the shoe to show that it got the ACK of the last card
#: (its next frame: a conforming shoe sends a HEARTBEAT within 1 s when idle, and resends an
#: unacknowledged frame within 200 ms, which is acknowledged again).
RESET_CONFIRM_WAIT: Final = 2.5


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


def resend_from(last: int) -> int:
    """The SEQ a NAK asks for after frame ``last``: the next one, but never 1.

    NAK n also acknowledges frame n - 1 (shoe rule 4), so NAK 1 would acknowledge a HELLO 0 the
    host has not seen: the HELLO of a shoe power-cycled while the port was closed or the daemon
    down, or one that arrived damaged. The shoe would go on with frame 1, and that HELLO (a new
    session, the check of its protocol version, the end of a fault) would never reach the
    consumer. NAK 0 instead resends frame 0 if it is in flight (a HELLO is then delivered, the
    frame already accepted is acknowledged again) and is ignored otherwise: a frame 1 in flight
    comes back with the shoe's own resend (docs/shoe-protocol.md, "Delivery", host rule 3).
    """
    after = (last + 1) & 0xFF
    return 0 if after == 1 else after


class LineState:
    """One session's reading state: its decoder, when the last good frame came, whether any did."""

    def __init__(self, profile: ShoeProfile, now: float) -> None:
        self.decoder: FrameDecoder | LineDecoder = (
            FrameDecoder() if profile.protocol == "v1" else LineDecoder(profile.line_end))
        self.last_rx = now
        self.healthy = False


class ShoeError(RuntimeError):
    """A command could not be sent to the shoe (not connected, or the write failed)."""


class FrameReader:
    """What a shoe's frames mean to the host: delivered once, acknowledged when the consumer says so."""

    #: Set up by :class:`drivers.shoe.transport.ShoeReader`, where each is explained.
    profile: ShoeProfile
    last_heartbeat: Heartbeat | None
    bursts: ErrorBursts
    flags: DeviceFlags
    unknown_types: dict[int, int]
    _on_event: Callable[[ShoeEvent], None]
    _on_frame: FrameHandler | None
    _on_acked: Callable[[FrameId], None] | None
    _session: str
    _resuming: bool
    _reset_at: float | None
    _reset_written: bool
    _unconfirmed_card: bool
    _held_cards: set[int]
    _stale_beat: bool
    _reset_lock: threading.Lock
    _lock: threading.Lock
    _port: serial.SerialBase | None
    _last_seq: int | None
    _last_frame: Frame | UndecodableFrame | None
    _resume_no_card: bool
    _cmd_seq: int

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

    def _status(self, status: str, **detail: Any) -> None:
        self._emit(self._said(status, **detail))

    def _said(self, status: str, **detail: Any) -> ShoeStatus:
        """A status of this shoe, naming its port."""
        return ShoeStatus(status, {"port": self.profile.port, **detail})

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

    def _begin(self, line: LineState) -> None:
        """A session starts: on v1, ask for a heartbeat, and for a resend of anything the shoe holds."""
        if self.profile.protocol != "v1":
            line.healthy = True
            return
        self._write(self._command_frame(StatusRequest()))
        if self._last_seq is not None:
            # Not rate-limited: one per session (the reconnect backoff bounds it), and it is what
            # gets the shoe's held frame back before its 1 s resend, so a short heartbeat_timeout
            # cannot end session after session.
            self._nak(resend_from(self._last_seq), limited=False)

    def _feed(self, line: LineState, data: bytes) -> None:
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
            self._nak(resend_from(self._last_seq))

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
        # A HELLO no decoder reads (a serial cut short, a NUL in a text) is still a HELLO: the shoe
        # restarted its numbering. Taken for a late copy by its SEQ, it was acknowledged and dropped, and
        # every card after it, numbered from 1 again, was acknowledged and dropped as older still: cards
        # lost, no halt (a helper's review, 2026-12-07).
        undecoded_hello = isinstance(frame, UndecodableFrame) and frame.type_byte == T_HELLO
        hello = isinstance(message, Hello) or undecoded_hello
        if self._reset_check(frame.seq, message, hello):
            return True  # not acknowledged: the shoe sends it again after its HELLO
        last = self._last_seq
        behind = None if last is None else (last - frame.seq) & 0xFF
        if hello:
            self._reset_at, self._reset_written = None, False
            # HELLO always resets the expectation, whatever its SEQ: after a wrap, a power-cycle
            # HELLO 0 may carry the SEQ last delivered. Delivering a resent HELLO again is harmless;
            # it starts a new session (the consumer records it before it is acknowledged). One that
            # cannot be decoded starts it too, handed over as the protocol error that halts the table.
            undecodable = self._undecodable(frame) if isinstance(frame, UndecodableFrame) else None
            if not self._take(FrameId(new_session(), frame.seq), frame, undecodable):
                return True
        elif behind == 0 and (self._last_frame not in (None, frame) or self._last_frame is None
                              and self._resume_no_card and isinstance(message, CardMsg)):
            # Its SEQ, another message: no resend (a resend is the same bytes) but a shoe that restarted
            # its numbering without a HELLO, its first frame numbered as the last one taken. Acknowledged
            # as one would have been and dropped, a card was lost unseen, play going on: halt the table
            # as for a stale frame (a protocol error, until the shoe says HELLO).
            if not self._dropped(f"frame seq {frame.seq} again with another message", frame.seq):
                return True
        elif behind == 0:
            pass  # a resend of the frame last accepted (its ACK was lost, or we restarted before it)
        elif behind is not None and 0 < behind < 128 and not self._resuming:
            # Older than the last delivered frame: a serial line cannot reorder, so this is a late copy
            # or a shoe that restarted its numbering without a HELLO. Never deliver it twice, and halt the
            # table (a protocol error, until the shoe says HELLO): the second kind is a new card dropped,
            # which only reported it was lost unseen, play going on (a helper's review, 2026-12-07).
            if not self._dropped(f"stale frame seq {frame.seq} after seq {last}", frame.seq):
                return True
        else:
            # After a resume the journal's cursor may lag the shoe by the heartbeats acknowledged
            # since: any SEQ but the cursor's own is new, and no gap is reported.
            if last is not None and not self._resuming and frame.seq != (last + 1) & 0xFF:
                self._framing_error(FramingError(f"sequence gap: expected {(last + 1) & 0xFF}, "
                                                 f"got {frame.seq} (shoe reset without HELLO?)"))
            if isinstance(frame, UndecodableFrame):
                # A good CRC: the line is fine, the shoe sent something wrong. A NAK would only
                # bring it back; acknowledge it and report it once, as a fault the operator sees. It is
                # handed over with its frame id as any frame is: emitted without one, a run of them never
                # moved the journal's shoe cursor, and past 128 (a bad heartbeat each second for two
                # minutes) a restart took the shoe's next card for the resend of the cursor's frame,
                # acknowledged and lost (a helper's review, 2026-12-07).
                if not self._take(FrameId(self._session, frame.seq), frame, self._undecodable(frame)):
                    return True
            elif not self._take(FrameId(self._session, frame.seq), frame):
                return True  # not acknowledged: the shoe sends it again
        if behind == 0 and self._last_frame is None:
            self._last_frame = frame  # after a resume: the journal's last frame, as the shoe sends it again
        self._write(encode_frame(frame.seq, Ack()))
        if self._on_acked is not None:
            self._on_acked(FrameId(self._session, frame.seq))
        return True

    def _dropped(self, what: str, seq: int) -> bool:
        """A frame dropped as a protocol error: its halt goes to the consumer as a frame's event (no frame id:
        nothing was taken), and the frame is acknowledged only once that is durable (False: the shoe sends it
        again). Acknowledged when the halt could not be journaled (a journal fault, the daemon stopping), a
        dropped card was lost and its halt with it: the restarted daemon played on."""
        reason = f"{what}: dropped (did the shoe restart its numbering without a HELLO? reset it)"
        return self._hand_over(None, self._said("protocol_error", reason=reason, frame_seq=seq), None)

    def _undecodable(self, frame: UndecodableFrame) -> ShoeStatus:
        """The protocol error a frame no decoder reads is reported as (halting the table)."""
        return self._said("protocol_error", reason=str(frame), frame_seq=frame.seq,
                          type=f"0x{frame.type_byte:02X}", raw=frame.raw.hex(" "))

    def _reset_check(self, seq: int, message: Message | None, hello: bool) -> bool:
        """Under the RESET lock: note whether the shoe may hold a card this host takes, and whether a
        RESET holds this frame back (True: neither delivered nor acknowledged).

        Stop and wait: a frame other than a resend of the last one (or a late copy) shows that the
        shoe got the ACK of the last one. A new card taken now stays *unconfirmed* until such a
        frame: its ACK may be lost on the line, and a RESET reaching the shoe meanwhile would make
        it send the card again under a new number (ShoeReader.reset waits for the proof). Marked
        before the card is handed over, in one step with the hold check, so a RESET asked for at any
        instant either holds the card back or waits for its proof.
        """
        last = self._last_seq
        behind = None if last is None else (last - seq) & 0xFF
        late = behind is not None and 0 < behind < 128 and not self._resuming and not hello
        with self._reset_lock:
            if hello or (behind != 0 and not late):
                self._unconfirmed_card = False
            if not hello and self._held_by_reset(seq, message):
                if isinstance(message, CardMsg):
                    self._held_cards.add(seq)
                self._stale_beat = isinstance(message, Heartbeat)  # stop and wait: the one frame it holds
                return True
            if isinstance(message, CardMsg) and behind != 0 and not late:
                self._unconfirmed_card = True
            return False

    def _held_by_reset(self, seq: int, message: Message | None) -> bool:
        """True while a RESET is unanswered: a frame arriving now left the shoe before it took the
        RESET (it answers RESET with HELLO before anything else), so the shoe holds it unacknowledged
        and sends it again after its HELLO, with a new number (docs/shoe-protocol.md, RESET). Delivered
        or acknowledged now, it would be delivered twice: a card dealt twice."""
        if self._reset_at is None:
            return False
        if not self._reset_written and (seq == self._last_seq or not isinstance(message, CardMsg)):
            # Before the RESET goes out: the last frame again (its ACK lost) is acknowledged again,
            # and a status or HEARTBEAT taken as usual (sent after the HELLO it would carry stale
            # flags); only a new card is held, to come again after the HELLO.
            return False
        if time.monotonic() - self._reset_at < RESET_HOLD:
            log.info("shoe frame %d held back: sent before the shoe took the RESET; it comes again "
                     "after the HELLO", seq)
            return True
        log.warning("no HELLO %.0f s after RESET: was the RESET lost? the shoe's frames are taken again",
                    RESET_HOLD)
        self._reset_at, self._reset_written, self._stale_beat = None, False, False
        return False

    def _take(self, frame: FrameId, came: Frame | UndecodableFrame, undecodable: ShoeStatus | None = None
              ) -> bool:
        """Deliver a new frame (``came``: as it came); once accepted it is the last one (False: not
        accepted, no ACK). A frame no decoder reads is handed over as its ``undecodable`` protocol error."""
        message = came.message if isinstance(came, Frame) else None
        if not (self._deliver(frame, message) if message is not None
                else self._hand_over(frame, undecodable, message)):
            return False
        self._session, self._last_seq, self._resuming = frame.session, frame.seq, False
        self._last_frame = came
        return True

    def _deliver(self, frame: FrameId | None, message: Message) -> bool:
        """Hand a new (not duplicate) shoe message over as events; True when it may be acknowledged.

        The message's own event (a card, a lid, HELLO, a HELLO of another protocol version as a
        ``protocol_error``; None for a HEARTBEAT) goes to ``on_frame``, whose answer decides the ACK; the
        statuses derived from it (HEARTBEAT flags, an unknown type) are reported through ``on_event``.
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
            # The frame's own event: a HELLO that is no hello (the self-test must not take it for one).
            event = self._said("protocol_error", protocol=message.protocol, model=message.model,
                               firmware=message.firmware, serial=message.serial,
                               reason=f"the shoe speaks protocol version {message.protocol}; this host "
                                      f"speaks version {PROTOCOL_VERSION} only")
        else:
            stale = self._stale_beat and isinstance(message, Heartbeat)  # the frame held back by the RESET
            self._stale_beat = self._stale_beat and isinstance(message, Hello)  # kept for the frame after it
            if isinstance(message, Heartbeat) and not stale:
                self.last_heartbeat = message
            for status in [] if stale else self.flags.on_message(message):
                self._emit(status)
            event = event_for(message)
        return self._hand_over(frame, event, message)

    def _hand_over(self, frame: FrameId | None, event: ShoeEvent | None, message: Message | None) -> bool:
        """A frame's own event to ``on_frame``, whose answer decides the ACK (or emitted, without one)."""
        if self._on_frame is None:
            return event is None or self._emit(event)
        try:
            return self._on_frame(frame, event)
        except Exception:
            log.exception("shoe frame handler failed on %r (frame %s): not acknowledged", message, frame)
            return False
