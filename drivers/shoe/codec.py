"""Pure, incremental codecs for the shoe's serial line: protocol v1 frames and plain lines.

"Pure codec, thin transport": nothing here touches a port, a clock or a
thread. Bytes go in through ``feed`` in whatever chunks the port returned,
messages and :class:`FramingError` values come out. A codec never raises on
bad input, because a serial line *will* deliver noise, a half frame after a
replug, or a reader that prints garbage at power-up, and the only useful
reaction is to report it and keep looking for the next good frame.

Wire format of v1 (docs/shoe-protocol.md has the full reference)::

    SOF | stuffed( SEQ TYPE LEN PAYLOAD[LEN] CRC_HI CRC_LO ) | EOF

SOF 0x7E, EOF 0x7F; any 0x7E, 0x7F or 0x7D inside is sent as 0x7D then the
byte XOR 0x20 (as in HDLC, whose 0x7E/0x7D firmware authors already know).
CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over SEQ..PAYLOAD.
The length byte is redundant with the markers on purpose: a bit flip that
creates or eats a marker or an escape changes the length and is caught even
before the CRC.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Final

from controller.cards import CardError, parse_card
from drivers.shoe.messages import (
    MAX_PAYLOAD,
    TYPE_NAMES,
    CardMsg,
    Message,
    PayloadError,
    decode_payload,
    encode_payload,
)

SOF: Final = 0x7E
EOF: Final = 0x7F
ESC: Final = 0x7D
ESC_XOR: Final = 0x20
#: SEQ, TYPE, LEN, payload, two CRC bytes, before stuffing.
MAX_BODY: Final = 3 + MAX_PAYLOAD + 2
#: Worst case on the wire: both markers and every body byte escaped.
MAX_FRAME: Final = 2 + 2 * MAX_BODY
#: Longest raw excerpt quoted in a FramingError.
QUOTE_LIMIT: Final = 48

_SPECIAL = re.compile(b"[\x7d-\x7f]")
_STUFF = {byte: bytes((ESC, byte ^ ESC_XOR)) for byte in (SOF, EOF, ESC)}


def crc16_ccitt(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR); check 0x29B1."""
    return binascii.crc_hqx(data, crc)


@dataclass(frozen=True, slots=True)
class FramingError:
    """Bytes that did not make a valid frame or line. A value, not an exception: the stream goes on."""

    reason: str
    raw: bytes = b""
    #: A whole frame's bytes whose CRC is not theirs (the only fault a simulated shoe's ``accept_bad_crc``
    #: quirk overlooks): what follows decides on this, never on ``reason``'s words, which are for people.
    bad_crc: bool = False

    def __str__(self) -> str:
        if not self.raw:
            return self.reason
        shown = self.raw[:QUOTE_LIMIT]
        more = f" ... ({len(self.raw)} bytes)" if len(self.raw) > QUOTE_LIMIT else ""
        return f"{self.reason}: {shown.hex(' ')}{more}"


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded v1 frame: its sequence number (0..255) and its message."""

    seq: int
    message: Message


@dataclass(frozen=True, slots=True)
class UndecodableFrame:
    """A frame whose CRC and length are good but whose payload breaks its type's rules.

    The line is fine (the CRC says so): the *shoe* sent something wrong, and sending it again will
    not help. So the host acknowledges it (no NAK loop) and reports it once as a protocol error.
    """

    seq: int
    type_byte: int
    reason: str
    raw: bytes = b""

    def __str__(self) -> str:
        name = TYPE_NAMES.get(self.type_byte, f"0x{self.type_byte:02X}")
        return f"undecodable {name} frame seq {self.seq}: {self.reason}"


#: What a decoder hands back per frame: a frame, a frame it cannot decode, or damaged bytes.
Decoded = Frame | UndecodableFrame | FramingError


def stuff(body: bytes) -> bytes:
    """Escape the three special bytes of a frame body."""
    if _SPECIAL.search(body) is None:
        return body
    return _SPECIAL.sub(lambda m: _STUFF[m.group()[0]], body)


def unstuff(stuffed: bytes) -> bytes:
    """Inverse of :func:`stuff` for a well-formed body (an escape before each special byte)."""
    out = bytearray()
    escaped = False
    for byte in stuffed:
        if escaped:
            out.append(byte ^ ESC_XOR)
            escaped = False
        elif byte == ESC:
            escaped = True
        else:
            out.append(byte)
    return bytes(out)


def encode_frame(seq: int, message: Message) -> bytes:
    """Encode one message as a complete v1 frame, markers included."""
    if not 0 <= seq <= 255:
        raise ValueError(f"sequence must be 0..255, got {seq}")
    type_byte, payload = encode_payload(message)
    if len(payload) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(payload)} bytes exceeds the maximum of {MAX_PAYLOAD}")
    head = bytes((seq, type_byte, len(payload))) + payload
    crc = crc16_ccitt(head)
    return bytes((SOF,)) + stuff(head + crc.to_bytes(2, "big")) + bytes((EOF,))


def parse_body(body: bytes) -> Decoded:
    """Check and decode an unstuffed body (SEQ..CRC). Pure; used by the decoder and by tests."""
    if len(body) > MAX_BODY:
        return FramingError(f"frame longer than {MAX_BODY} bytes", body[:MAX_BODY + 1])
    if len(body) < 5:
        return FramingError(f"frame of {len(body)} bytes is shorter than the minimum of 5", body)
    got = int.from_bytes(body[-2:], "big")
    want = crc16_ccitt(body[:-2])
    if got != want:
        return FramingError(f"CRC mismatch (frame says 0x{got:04X}, bytes give 0x{want:04X})", body, True)
    if body[2] != len(body) - 5:
        return FramingError(f"length byte says {body[2]} but the payload has {len(body) - 5} bytes", body)
    try:
        message = decode_payload(body[1], body[3:-2])
    except PayloadError as exc:
        return UndecodableFrame(body[0], body[1], str(exc), body)
    return Frame(body[0], message)


class FrameDecoder:
    """Incremental v1 decoder: ``feed`` any chunks, get frames and errors in stream order.

    State survives between calls, so a frame split across two reads decodes
    as one. After any error the decoder hunts for the next start marker: a
    start marker always begins a new frame, which is what resynchronises it.
    """

    _HUNT, _FRAME, _DISCARD = range(3)

    def __init__(self) -> None:
        self._state = self._HUNT
        self._body = bytearray()
        self._escaped = False
        self._garbage = bytearray()
        self._garbage_count = 0

    def _flush_garbage(self, out: list[Decoded]) -> None:
        if self._garbage_count:
            out.append(FramingError(f"{self._garbage_count} bytes outside any frame", bytes(self._garbage)))
            self._garbage.clear()
            self._garbage_count = 0

    def _start(self) -> None:
        self._state = self._FRAME
        self._body.clear()
        self._escaped = False

    def _check_size(self, out: list[Decoded]) -> bool:
        if len(self._body) <= MAX_BODY:
            return True
        out.append(FramingError(f"frame longer than {MAX_BODY} bytes", bytes(self._body[:MAX_BODY + 1])))
        self._state = self._DISCARD
        return False

    def feed(self, data: bytes) -> list[Decoded]:
        """Consume ``data``; return what it completed. Never raises on any byte sequence.

        The result does not depend on how the stream was cut into calls (one read, a byte at a
        time, any split): the size limit in particular is checked on every path.
        """
        n = len(data)
        if (self._state == self._HUNT and n > 6 and data[0] == SOF and data[-1] == EOF
                and not self._garbage_count and _SPECIAL.search(data, 1, n - 1) is None):
            return [parse_body(data[1:-1])]  # the usual read: one frame, nothing escaped (size checked)
        out: list[Decoded] = []
        i = 0
        while i < n:
            if self._state != self._FRAME:
                j = data.find(SOF, i)
                end = n if j < 0 else j
                if self._state == self._DISCARD:
                    k = data.find(EOF, i, end)
                    if k >= 0:  # the oversized frame ended; anything after it is garbage
                        self._state = self._HUNT
                        i = k + 1
                        continue
                elif end > i:
                    room = QUOTE_LIMIT + 1 - len(self._garbage)
                    if room > 0:
                        self._garbage += data[i:min(end, i + room)]
                    self._garbage_count += end - i
                if j < 0:
                    break
                self._flush_garbage(out)
                self._start()
                i = j + 1
                continue
            if self._escaped:
                # The byte after ESC must be one of the three specials XOR 0x20.
                byte = data[i]
                i += 1
                self._escaped = False
                if byte == SOF:
                    out.append(FramingError("frame cut short by a new start marker", bytes(self._body)))
                    self._start()
                elif byte ^ ESC_XOR in _STUFF:
                    self._body.append(byte ^ ESC_XOR)
                    self._check_size(out)
                else:
                    out.append(FramingError(f"invalid escape 7d {byte:02x}", bytes(self._body)))
                    self._state = self._HUNT if byte == EOF else self._DISCARD
                continue
            m = _SPECIAL.search(data, i)
            end = n if m is None else m.start()
            if end > i:
                self._body += data[i:end]
                if not self._check_size(out):
                    i = end
                    continue
            if m is None:
                break
            byte = data[end]
            i = end + 1
            if byte == SOF:
                out.append(FramingError("frame cut short by a new start marker", bytes(self._body)))
                self._start()
            elif byte == EOF:
                self._state = self._HUNT
                out.append(parse_body(bytes(self._body)))
            else:
                self._escaped = True
        if self._state == self._HUNT:
            self._flush_garbage(out)
        return out


def encode_line(message: CardMsg) -> bytes:
    """The plain-line profile's only message: the card's code and CR LF (burns are not representable)."""
    if message.burn:
        raise PayloadError("the plain-line profile cannot report a burn")
    return message.card.code.encode("ascii") + b"\r\n"


#: Line ends the plain-line profile can be told to accept (``line_end`` in the profile).
LINE_ENDS: Final = ("any", "lf", "cr", "crlf")
_TERMINATOR: Final = {"any": re.compile(b"[\r\n]"), "lf": re.compile(b"\n"), "crlf": re.compile(b"\n"),
                      "cr": re.compile(b"\r")}


class LineDecoder:
    """Incremental decoder for readers that print one card per line (``AS``, ``10h``, ``qd``).

    There is no integrity check on this profile: a misread that prints a valid
    card is indistinguishable from the truth. What it can do is refuse every
    line that is not a card and quote it, so that noise is seen, not guessed at.
    Blank lines are skipped (readers print them at power-up).

    ``line_end``: ``any`` (default) ends a line at CR, LF or CR LF, since readers differ;
    ``lf``, ``cr`` or ``crlf`` accept only that ending, and a line with the other control
    byte in it is an error that says so (for a profile that must notice a misconfigured reader).
    """

    MAX_LINE: Final = 32

    def __init__(self, line_end: str = "any") -> None:
        if line_end not in LINE_ENDS:
            raise ValueError(f"line_end must be one of {', '.join(LINE_ENDS)}, got {line_end!r}")
        self.line_end = line_end
        self._terminator = _TERMINATOR[line_end]
        self._line = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list[CardMsg | FramingError]:
        """Consume ``data``; return a card or an error per completed line. Never raises."""
        out: list[CardMsg | FramingError] = []
        start = 0
        while True:
            m = self._terminator.search(data, start)
            j = -1 if m is None else m.start()
            piece = data[start:] if j < 0 else data[start:j]
            if not self._overflow:
                self._line += piece
                if len(self._line) > self.MAX_LINE:
                    out.append(FramingError(f"line longer than {self.MAX_LINE} bytes",
                                            bytes(self._line[:QUOTE_LIMIT])))
                    self._overflow = True
            if j < 0:
                return out
            start = j + 1
            if not self._overflow:
                result = self._parse(bytes(self._line))
                if result is not None:
                    out.append(result)
            self._line.clear()
            self._overflow = False

    def _parse(self, line: bytes) -> CardMsg | FramingError | None:
        mode = self.line_end
        if mode == "crlf":
            if line.strip(b" \t") and not line.endswith(b"\r"):
                return FramingError(f"line {line!r} ends with LF alone; this profile needs CR LF", line)
            line = line[:-1] if line.endswith(b"\r") else line
        stray = {"lf": (b"\r", "CR"), "cr": (b"\n", "LF"), "crlf": (b"\r", "CR")}.get(mode)
        if stray is not None and stray[0] in line:
            return FramingError(f"line {line!r} has a stray {stray[1]}; "
                                f"this profile ends lines with {mode.upper()} only", line)
        text = line.strip(b" \t")
        if not text:
            return None
        try:
            return CardMsg(parse_card(text.decode("ascii")))
        except (UnicodeDecodeError, CardError):
            return FramingError(f"line is not a card: {text!r}", line)
