"""The messages of shoe protocol v1 and their payloads (docs/shoe-protocol.md).

Messages are plain immutable values, apart from framing: this module turns a
message into its type byte and payload and back, and knows nothing of start
markers, escaping, sequence numbers or CRCs (see :mod:`drivers.shoe.codec`).
Keeping the payload rules here, in one table per direction, is what lets the
protocol document and the code be checked against each other line by line.

The sequence number lives in the frame, not in the message: ``Ack`` and
``Nak`` carry theirs there too (an ACK's frame sequence *is* the sequence it
acknowledges), which keeps every payload fixed-size or self-describing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from controller.cards import DECK, Card, CardError, parse_card

#: Protocol version announced in HELLO. It is the *major* version: a host refuses any other (a
#: shoe speaking another major version is a fault naming it). Additions an older peer can ignore
#: (messages in the vendor ranges, new fault codes) do not change it.
PROTOCOL_VERSION: Final = 1
#: Largest payload a frame may carry; HELLO's three strings are the only long one.
MAX_PAYLOAD: Final = 96

#: Fault codes 1..127 are defined by the protocol; 128..255 are the vendor's own.
FAULT_NAMES: Final[dict[int, str]] = {
    1: "jam",
    2: "misread",
    3: "double_feed",
    4: "sensor",
    5: "motor",
}
FAULT_CODES: Final[dict[str, int]] = {name: code for code, name in FAULT_NAMES.items()}


class PayloadError(ValueError):
    """A payload that does not match its message type; the message says which rule it breaks."""


# --- shoe to host -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """Sent first after power-up or RESET, with sequence 0; tells the host who is on the line."""

    model: str
    firmware: str
    serial: str
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Sent when the shoe has been idle for a second, and as the answer to STATUS_REQUEST."""

    lid_open: bool = False
    empty: bool = False
    faulted: bool = False
    #: Cards read since the last shuffle (mod 65536).
    dealt: int = 0


@dataclass(frozen=True, slots=True)
class CardMsg:
    """A card read by the shoe; ``burn`` selects the BURN type on the wire."""

    card: Card
    burn: bool = False


@dataclass(frozen=True, slots=True)
class ShoeEmpty:
    """The shoe has no card left to read."""


@dataclass(frozen=True, slots=True)
class Lid:
    """The lid (or door) of the shoe opened or closed."""

    open: bool


@dataclass(frozen=True, slots=True)
class ShuffleStarted:
    """A shuffler started a shuffle: the host must not expect cards until SHUFFLE_COMPLETE."""


@dataclass(frozen=True, slots=True)
class ShuffleComplete:
    """A shuffle finished; ``decks`` is the number of decks now in the shoe."""

    decks: int


@dataclass(frozen=True, slots=True)
class Fault:
    """The device stopped: jam, misread... ``code`` per :data:`FAULT_NAMES`; ``text`` is free ASCII."""

    code: int
    text: str = ""

    @property
    def name(self) -> str:
        default = f"vendor_{self.code}" if self.code >= 128 else f"unknown_{self.code}"
        return FAULT_NAMES.get(self.code, default)


# --- host to shoe -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack:
    """Acknowledges the shoe frame whose sequence is this frame's sequence."""


@dataclass(frozen=True, slots=True)
class Nak:
    """"Resend from here": this frame's sequence is the next one the host expects.

    It also acknowledges everything before that sequence.
    """


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """Asks the shoe to send a HEARTBEAT now (its answer carries the status)."""


@dataclass(frozen=True, slots=True)
class Dispense:
    """Asks a dealing shuffler to deliver (and so read and report) the next card."""


@dataclass(frozen=True, slots=True)
class Reset:
    """Asks the shoe to restart its protocol state: HELLO with sequence 0 follows."""


@dataclass(frozen=True, slots=True)
class UnknownMessage:
    """A frame with a good CRC whose TYPE this side does not know: a newer or a vendor's message.

    The host acknowledges and ignores one from the shoe-to-host range (counted, logged once per
    type), so a vendor can add messages in :data:`VENDOR_SHOE_TYPES` without breaking any host.
    """

    type_byte: int
    payload: bytes = b""


Message = (
    Hello | Heartbeat | CardMsg | ShoeEmpty | Lid | ShuffleStarted | ShuffleComplete | Fault
    | Ack | Nak | StatusRequest | Dispense | Reset | UnknownMessage
)

# Type bytes: shoe-to-host below 0x80, host-to-shoe from 0x80, so a stray echo is recognisable.
T_HELLO: Final = 0x01
T_HEARTBEAT: Final = 0x02
T_CARD: Final = 0x03
T_BURN: Final = 0x04
T_SHOE_EMPTY: Final = 0x05
T_LID: Final = 0x06
T_SHUFFLE_STARTED: Final = 0x07
T_SHUFFLE_COMPLETE: Final = 0x08
T_FAULT: Final = 0x09
T_ACK: Final = 0x81
T_NAK: Final = 0x82
T_STATUS_REQUEST: Final = 0x83
T_DISPENSE: Final = 0x84
T_RESET: Final = 0x85

#: TYPE values reserved for vendors' own messages: shoe to host, and host to shoe. The protocol
#: will never define a message there; a peer that does not know one ignores it.
VENDOR_SHOE_TYPES: Final = range(0x60, 0x80)
VENDOR_HOST_TYPES: Final = range(0xE0, 0x100)

TYPE_NAMES: Final[dict[int, str]] = {
    T_HELLO: "HELLO", T_HEARTBEAT: "HEARTBEAT", T_CARD: "CARD", T_BURN: "BURN",
    T_SHOE_EMPTY: "SHOE_EMPTY", T_LID: "LID", T_SHUFFLE_STARTED: "SHUFFLE_STARTED",
    T_SHUFFLE_COMPLETE: "SHUFFLE_COMPLETE", T_FAULT: "FAULT", T_ACK: "ACK", T_NAK: "NAK",
    T_STATUS_REQUEST: "STATUS_REQUEST", T_DISPENSE: "DISPENSE", T_RESET: "RESET",
}

_EMPTY_TYPES: Final[dict[type, int]] = {
    ShoeEmpty: T_SHOE_EMPTY, ShuffleStarted: T_SHUFFLE_STARTED, Ack: T_ACK, Nak: T_NAK,
    StatusRequest: T_STATUS_REQUEST, Dispense: T_DISPENSE, Reset: T_RESET,
}
_EMPTY_BY_TYPE: Final[dict[int, Message]] = {t: cls() for cls, t in _EMPTY_TYPES.items()}


_HOST_TYPES: Final = frozenset({Ack, Nak, StatusRequest, Dispense, Reset})


def is_host_to_shoe(message: Message) -> bool:
    """True for the messages only the host sends (an unknown type from the host's range included)."""
    if isinstance(message, UnknownMessage):
        return message.type_byte >= 0x80
    return type(message) in _HOST_TYPES


def _text(value: str, what: str) -> bytes:
    if not value.isascii() or not value.isprintable():
        raise PayloadError(f"{what} must be printable ASCII, got {value!r}")
    raw = value.encode("ascii")
    if len(raw) > 255:
        raise PayloadError(f"{what} is longer than 255 bytes")
    return raw


def encode_payload(message: Message) -> tuple[int, bytes]:
    """Return ``(type byte, payload)``; :class:`PayloadError` if a field cannot be represented."""
    empty = _EMPTY_TYPES.get(type(message))
    if empty is not None:
        return empty, b""
    if isinstance(message, UnknownMessage):
        if not 0 < message.type_byte <= 0xFF or message.type_byte in TYPE_NAMES:
            raise PayloadError(f"0x{message.type_byte:02X} is not a free message type")
        return message.type_byte, message.payload
    if isinstance(message, CardMsg):
        return (T_BURN if message.burn else T_CARD), message.card.code.encode("ascii")
    if isinstance(message, Heartbeat):
        if not 0 <= message.dealt <= 0xFFFF:
            raise PayloadError(f"heartbeat dealt must be 0..65535, got {message.dealt}")
        flags = (message.lid_open * 1) | (message.empty * 2) | (message.faulted * 4)
        return T_HEARTBEAT, bytes((flags,)) + message.dealt.to_bytes(2, "big")
    if isinstance(message, Lid):
        return T_LID, b"\x01" if message.open else b"\x00"
    if isinstance(message, ShuffleComplete):
        if not 1 <= message.decks <= 255:
            raise PayloadError(f"shuffle decks must be 1..255, got {message.decks}")
        return T_SHUFFLE_COMPLETE, bytes((message.decks,))
    if isinstance(message, Fault):
        if not 1 <= message.code <= 255:
            raise PayloadError(f"fault code must be 1..255, got {message.code}")
        return T_FAULT, bytes((message.code,)) + _text(message.text, "fault text")
    if isinstance(message, Hello):
        if not 1 <= message.protocol <= 255:
            raise PayloadError(f"protocol version must be 1..255, got {message.protocol}")
        out = bytearray((message.protocol,))
        for value, what in ((message.model, "model"), (message.firmware, "firmware"),
                            (message.serial, "serial")):
            raw = _text(value, what)
            out += bytes((len(raw),)) + raw
        return T_HELLO, bytes(out)
    raise PayloadError(f"not a protocol message: {message!r}")  # pragma: no cover - typing guards this


def _need(payload: bytes, size: int, name: str) -> None:
    if len(payload) != size:
        raise PayloadError(f"{name} payload must be {size} bytes, got {len(payload)}")


def _ascii(raw: bytes, what: str) -> str:
    if any(b < 0x20 or b > 0x7E for b in raw):
        raise PayloadError(f"{what} must be printable ASCII, got {raw!r}")
    return raw.decode("ascii")


_CARD_BY_BYTES: Final[dict[bytes, Card]] = {card.code.encode("ascii"): card for card in DECK}


def decode_payload(type_byte: int, payload: bytes) -> Message:
    """Inverse of :func:`encode_payload`; :class:`PayloadError` names the rule that failed.

    An unknown type is not an error here: it decodes to :class:`UnknownMessage`, and the
    transport decides what to do with it (docs/shoe-protocol.md, "Unknown and vendor messages").
    """
    if type_byte in (T_CARD, T_BURN):  # the hot path: one dict look-up per card
        card = _CARD_BY_BYTES.get(payload)
        if card is not None:
            return CardMsg(card, type_byte == T_BURN)
    name = TYPE_NAMES.get(type_byte)
    if name is None:
        return UnknownMessage(type_byte, payload)
    empty = _EMPTY_BY_TYPE.get(type_byte)
    if empty is not None:
        _need(payload, 0, name)
        return empty
    if type_byte in (T_CARD, T_BURN):
        _need(payload, 2, name)
        try:
            card = parse_card(payload.decode("ascii"))
        except (UnicodeDecodeError, CardError):
            raise PayloadError(f"{name} payload is not a card: {payload!r}") from None
        if payload.decode("ascii") != card.code:
            raise PayloadError(f"{name} payload must be upper case rank then suit, got {payload!r}")
        return CardMsg(card, burn=type_byte == T_BURN)
    if type_byte == T_HEARTBEAT:
        _need(payload, 3, name)
        flags = payload[0]
        if flags & 0xF8:
            raise PayloadError(f"HEARTBEAT flags 0x{flags:02X} set reserved bits")
        dealt = int.from_bytes(payload[1:], "big")
        return Heartbeat(bool(flags & 1), bool(flags & 2), bool(flags & 4), dealt)
    if type_byte == T_LID:
        _need(payload, 1, name)
        if payload[0] > 1:
            raise PayloadError(f"LID state must be 0 or 1, got {payload[0]}")
        return Lid(open=payload[0] == 1)
    if type_byte == T_SHUFFLE_COMPLETE:
        _need(payload, 1, name)
        if payload[0] == 0:
            raise PayloadError("SHUFFLE_COMPLETE decks must be 1..255, got 0")
        return ShuffleComplete(payload[0])
    if type_byte == T_FAULT:
        if not payload or payload[0] == 0:
            raise PayloadError("FAULT payload must start with a code 1..255")
        return Fault(payload[0], _ascii(payload[1:], "FAULT text"))
    # HELLO: version, then three length-prefixed ASCII strings, nothing after.
    if not payload:
        raise PayloadError("HELLO payload is empty")
    strings: list[str] = []
    pos = 1
    for what in ("model", "firmware", "serial"):
        if pos >= len(payload):
            raise PayloadError(f"HELLO payload ends before the {what} length")
        size = payload[pos]
        raw = payload[pos + 1:pos + 1 + size]
        if len(raw) != size:
            raise PayloadError(f"HELLO {what} is cut short ({len(raw)} of {size} bytes)")
        strings.append(_ascii(raw, f"HELLO {what}"))
        pos += 1 + size
    if pos != len(payload):
        raise PayloadError(f"HELLO payload has {len(payload) - pos} bytes after the serial number")
    if payload[0] == 0:
        raise PayloadError("HELLO protocol version must be 1..255, got 0")
    return Hello(strings[0], strings[1], strings[2], protocol=payload[0])
