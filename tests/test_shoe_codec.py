"""Protocol v1 codec and plain-line decoder: round trips, the documented bytes, and fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cards import DECK, parse_card
from drivers.shoe.codec import (
    MAX_BODY,
    MAX_FRAME,
    SOF,
    Frame,
    FrameDecoder,
    FramingError,
    LineDecoder,
    UndecodableFrame,
    crc16_ccitt,
    encode_frame,
    encode_line,
    parse_body,
    stuff,
)
from drivers.shoe.messages import (
    Ack,
    CardMsg,
    Dispense,
    Fault,
    Heartbeat,
    Hello,
    Lid,
    Message,
    Nak,
    PayloadError,
    Reset,
    ShoeEmpty,
    ShuffleComplete,
    ShuffleStarted,
    StatusRequest,
    UnknownMessage,
    is_host_to_shoe,
)
from drivers.shoe.sim import SimulatedShoe

pytestmark = pytest.mark.timeout(120)

ALL_MESSAGES: list[Message] = [
    Hello("SimShoe", "1.0.0", "SIM-0001"),
    Hello("", "", ""),
    Hello("m~}", "fw}", "~"),
    Heartbeat(), Heartbeat(True, True, True, 65535),
    CardMsg(parse_card("AS")), CardMsg(parse_card("10h"), burn=True),
    ShoeEmpty(), Lid(True), Lid(False), ShuffleStarted(), ShuffleComplete(8),
    Fault(1), Fault(2, "card face unreadable"), Fault(200, "vendor"),
    Ack(), Nak(), StatusRequest(), Dispense(), Reset(),
]


def reference_crc(data: bytes) -> int:
    """Bit-by-bit CRC-16/CCITT-FALSE, written from the definition, to check the fast one."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def test_crc_check_value() -> None:
    assert crc16_ccitt(b"123456789") == 0x29B1
    assert reference_crc(b"123456789") == 0x29B1


@given(st.binary(max_size=200))
def test_crc_matches_reference(data: bytes) -> None:
    assert crc16_ccitt(data) == reference_crc(data)


def test_documented_worked_example() -> None:
    # docs/shoe-protocol.md, "Worked example": CARD AS with sequence 5.
    crc, steps = 0xFFFF, []
    for byte in bytes.fromhex("05 03 02 41 53"):
        crc = crc16_ccitt(bytes((byte,)), crc)
        steps.append(crc)
    assert steps == [0xB155, 0xD299, 0x527D, 0x5F52, 0x938C]  # the step-by-step table
    assert crc16_ccitt(bytes.fromhex("05 03 02 41 53")) == 0x938C
    assert encode_frame(5, Ack()) == bytes.fromhex("7e 05 81 00 0f c5 7f")
    hello = "7e 00 01 18 01 07 53 69 6d 53 68 6f 65 05 31 2e 30 2e 30 08 53 49 4d 2d 30 30 30 31 bc 9a 7f"
    assert encode_frame(0, Hello("SimShoe", "1.0.0", "SIM-0001")) == bytes.fromhex(hello)
    assert encode_frame(5, CardMsg(parse_card("AS"))) == bytes.fromhex("7e 05 03 02 41 53 93 8c 7f")
    # and the escaping example: NAK with sequence 0x7E.
    assert encode_frame(0x7E, Nak()) == bytes.fromhex("7e 7d 5e 82 00 72 6f 7f")


@pytest.mark.parametrize("message", ALL_MESSAGES, ids=repr)
@pytest.mark.parametrize("seq", [0, 1, 0x7D, 0x7E, 0x7F, 255])
def test_round_trip_every_message(message: Message, seq: int) -> None:
    wire = encode_frame(seq, message)
    assert len(wire) <= MAX_FRAME
    assert wire[0] == 0x7E and wire[-1] == 0x7F
    assert 0x7E not in wire[1:-1] and 0x7F not in wire[1:-1]
    assert FrameDecoder().feed(wire) == [Frame(seq, message)]


def test_every_card_round_trips_and_plain_line_too() -> None:
    dec, lines = FrameDecoder(), LineDecoder()
    for i, card in enumerate(DECK):
        assert dec.feed(encode_frame(i, CardMsg(card))) == [Frame(i, CardMsg(card))]
        assert lines.feed(encode_line(CardMsg(card))) == [CardMsg(card)]


@pytest.mark.parametrize("bad", [
    lambda: encode_frame(256, Ack()),
    lambda: encode_frame(0, Hello("x" * 93, "y", "z")),
    lambda: encode_frame(0, Hello("é", "y", "z")),
    lambda: encode_frame(0, Fault(1, "tab\there")),
    lambda: encode_frame(0, ShuffleComplete(0)),
    lambda: encode_frame(0, Fault(0)),
    lambda: encode_frame(0, Heartbeat(dealt=70000)),
    lambda: encode_line(CardMsg(parse_card("AS"), burn=True)),
])
def test_unrepresentable_messages_are_refused(bad: object) -> None:
    with pytest.raises((PayloadError, ValueError)):
        bad()  # type: ignore[operator]


def _body(seq: int, type_byte: int, payload: bytes, length: int | None = None) -> bytes:
    head = bytes((seq, type_byte, len(payload) if length is None else length)) + payload
    return head + crc16_ccitt(head).to_bytes(2, "big")


@pytest.mark.parametrize(("body", "reason"), [
    (b"\x01\x02", "shorter than the minimum"),
    (_body(1, 0x03, b"AS")[:-1] + b"\x00", "CRC mismatch"),
    (_body(1, 0x03, b"AS", length=3), "length byte says 3"),
    (_body(1, 0x09, b"\x01" + b"x" * 200), "longer than 101"),
])
def test_damaged_bodies_are_framing_errors(body: bytes, reason: str) -> None:
    result = parse_body(body)
    assert isinstance(result, FramingError)
    assert reason in result.reason
    assert result.raw == body[:MAX_BODY + 1]
    assert result.bad_crc is (reason == "CRC mismatch")  # what decides, not the words


def test_the_sims_accept_bad_crc_quirk_follows_the_errors_kind_not_its_words() -> None:
    """The simulated shoe's ``accept_bad_crc`` quirk takes a host frame failing only its CRC as good: it
    decided so on the words "CRC mismatch" in the error's reason, so rewording the codec's message
    silently turned the quirk off (and only the conformance kit's own test would notice)."""
    body = _body(4, 0x81, b"")[:-1] + b"\x00"  # an ACK 4 whose CRC's last byte is wrong
    sim = SimulatedShoe("v1", mode="dealing_shuffler", misbehave=["accept_bad_crc"])
    try:
        taken = sim._bad_crc_taken(FramingError("the frame's check does not match its bytes", body, True))
        assert taken == Frame(4, Ack()), taken
        worded = FramingError("CRC mismatch, yet cut short by a new start marker", body)
        assert sim._bad_crc_taken(worded) is None
    finally:
        sim.close()


def test_unknown_types_decode_as_unknown_messages_in_both_ranges() -> None:
    assert parse_body(_body(1, 0x42, b"")) == Frame(1, UnknownMessage(0x42, b""))
    assert parse_body(_body(7, 0x6A, b"\x01\x02")) == Frame(7, UnknownMessage(0x6A, b"\x01\x02"))
    assert is_host_to_shoe(UnknownMessage(0xE1)) and not is_host_to_shoe(UnknownMessage(0x61))
    wire = encode_frame(3, UnknownMessage(0x61, b"v"))
    assert FrameDecoder().feed(wire) == [Frame(3, UnknownMessage(0x61, b"v"))]
    with pytest.raises(PayloadError, match="not a free message type"):
        encode_frame(3, UnknownMessage(0x03, b"AS"))


@pytest.mark.parametrize(("body", "reason"), [
    (_body(1, 0x03, b"XX"), "not a card"),
    (_body(1, 0x03, b"as"), "upper case"),
    (_body(1, 0x06, b"\x02"), "LID state"),
    (_body(1, 0x02, b"\x08\x00\x00"), "reserved bits"),
    (_body(1, 0x01, b"\x01\x05ab"), "cut short"),
    (_body(1, 0x81, b"\x00"), "ACK payload must be 0 bytes"),
])
def test_good_crc_with_bad_payload_is_an_undecodable_frame(body: bytes, reason: str) -> None:
    result = parse_body(body)
    assert isinstance(result, UndecodableFrame)
    assert reason in result.reason and result.seq == 1 and result.type_byte == body[1]
    assert result.raw == body


def test_resynchronises_after_garbage_and_broken_frames() -> None:
    good = [encode_frame(i, CardMsg(DECK[i])) for i in range(4)]
    stream = (b"\x00\xffnoise" + good[0] + good[1][:5] + good[2] + b"\x7e\x7d\x41\x7f" + good[3])
    out = FrameDecoder().feed(stream)
    frames = [x for x in out if isinstance(x, Frame)]
    errors = [x for x in out if isinstance(x, FramingError)]
    assert frames == [Frame(0, CardMsg(DECK[0])), Frame(2, CardMsg(DECK[2])), Frame(3, CardMsg(DECK[3]))]
    assert [e.reason for e in errors] == [
        "7 bytes outside any frame", "frame cut short by a new start marker", "invalid escape 7d 41"]
    assert "6e 6f 69 73 65" in str(errors[0])  # the garbage is quoted


def test_oversized_frame_is_dropped_and_next_frame_decodes() -> None:
    after = encode_frame(9, CardMsg(parse_card("KD")))
    out = FrameDecoder().feed(b"\x7e" + b"A" * (MAX_BODY + 50) + b"\x7f" + after)
    assert [type(x) for x in out] == [FramingError, Frame]
    assert isinstance(out[0], FramingError) and "longer than" in out[0].reason
    assert out[1] == Frame(9, CardMsg(parse_card("KD")))


messages = st.sampled_from(ALL_MESSAGES) | st.builds(CardMsg, st.sampled_from(DECK), st.booleans())
frames = st.lists(st.tuples(st.integers(0, 255), messages), min_size=1, max_size=20)


@given(st.binary(max_size=2000))
def test_random_bytes_never_raise_and_never_make_frames(data: bytes) -> None:
    out = FrameDecoder().feed(data)
    assert not any(isinstance(x, Frame) for x in out)
    assert all(isinstance(x, FramingError) for x in LineDecoder().feed(data) if not isinstance(x, CardMsg))


@given(frames, st.lists(st.integers(1, 40), max_size=30))
def test_chunking_does_not_change_the_result(sent: list[tuple[int, Message]], cuts: list[int]) -> None:
    wire = b"".join(encode_frame(s, m) for s, m in sent)
    dec, out, pos = FrameDecoder(), [], 0
    for size in cuts:
        out += dec.feed(wire[pos:pos + size])
        pos += size
    out += dec.feed(wire[pos:])
    assert out == [Frame(s, m) for s, m in sent]


@st.composite
def damaged_streams(draw: st.DrawFn) -> tuple[list[Frame], bytes]:
    sent = draw(frames)
    wire = bytearray(b"".join(encode_frame(s, m) for s, m in sent))
    for _ in range(draw(st.integers(1, 6))):
        if not wire:
            break
        pos = draw(st.integers(0, len(wire) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert", "delete", "replace"]))
        if action == "flip":
            wire[pos] ^= 1 << draw(st.integers(0, 7))
        elif action == "cut":
            del wire[pos:]
        elif action == "insert":
            wire[pos:pos] = draw(st.binary(min_size=1, max_size=300))
        elif action == "delete":
            del wire[pos:pos + draw(st.integers(1, 12))]
        else:
            wire[pos] = draw(st.integers(0, 255))
    return [Frame(s, m) for s, m in sent], bytes(wire)


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=300)
@given(damaged_streams(), st.integers(1, 64))
def test_damaged_streams_never_raise_and_never_invent_a_frame(
        case: tuple[list[Frame], bytes], chunk: int) -> None:
    sent, wire = case
    dec = FrameDecoder()
    out: list[Frame | FramingError] = []
    for i in range(0, len(wire), chunk):
        out += dec.feed(wire[i:i + chunk])
    for item in out:
        if isinstance(item, Frame):
            assert item in sent
            if isinstance(item.message, CardMsg):
                assert any(f.message == item.message for f in sent)
        else:
            assert isinstance(item, FramingError) and item.reason


def test_plain_lines_accept_common_spellings_split_anywhere() -> None:
    dec = LineDecoder()
    stream = b"AS\r\n10h\r\nqd\n\r\n  7c \r\n"
    out = [x for i in range(len(stream)) for x in dec.feed(stream[i:i + 1])]
    assert out == [CardMsg(parse_card(c)) for c in ("AS", "TH", "QD", "7C")]


def test_plain_lines_reject_non_cards_and_quote_them() -> None:
    out = LineDecoder().feed(b"AS\r\nhello\r\n1S\r\n\xff\xfe\r\nKD\r\n")
    assert out[0] == CardMsg(parse_card("AS")) and out[-1] == CardMsg(parse_card("KD"))
    errors = out[1:-1]
    assert [str(e).split(":")[0] for e in errors] == ["line is not a card"] * 3
    assert "'hello'" in str(errors[0]) and "'1S'" in str(errors[1]) and "\\xff\\xfe" in str(errors[2])


def test_plain_overlong_line_is_one_error_then_decoding_goes_on() -> None:
    dec = LineDecoder()
    out = dec.feed(b"X" * 100) + dec.feed(b"Y" * 100 + b"\r\nJH\r\n")
    assert len(out) == 2
    assert isinstance(out[0], FramingError) and "longer than" in out[0].reason
    assert out[1] == CardMsg(parse_card("JH"))


def _feed_in(wire: bytes, cuts: list[int]) -> list[object]:
    dec, out, pos = FrameDecoder(), [], 0
    for cut in sorted(set(cuts)):
        out += dec.feed(wire[pos:cut])
        pos = cut
    out += dec.feed(wire[pos:])
    return out


def _frames(out: list[object]) -> list[object]:
    return [x for x in out if isinstance(x, Frame | UndecodableFrame)]


def _oversize(out: list[object]) -> int:
    return sum(isinstance(x, FramingError) and "longer than" in x.reason for x in out)


def test_oversized_fault_is_refused_whole_byte_by_byte_and_at_every_split() -> None:
    """Issue reproduction: a 210-byte FAULT frame written in one piece used to be acted on."""
    body = _body(4, 0x09, b"\x01" + b"jam!" * 50 + b"ja")  # 208 bytes, nothing to stuff
    wire = bytes((SOF,)) + stuff(body) + b"\x7f"
    assert len(wire) == 210
    alone = FrameDecoder().feed(wire)  # the one-read path
    assert len(alone) == 1 and isinstance(alone[0], FramingError) and "longer than 101" in alone[0].reason
    after = encode_frame(5, CardMsg(parse_card("KD")))
    for cuts in ([], list(range(1, len(wire))), *([c] for c in range(1, len(wire)))):
        out = _feed_in(wire + after, cuts)
        assert _frames(out) == [Frame(5, CardMsg(parse_card("KD")))], cuts
        assert _oversize(out) == 1, cuts


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=200)
@given(damaged_streams(), st.lists(st.integers(1, 3000), max_size=12))
def test_any_split_of_any_stream_decodes_the_same_frames(
        case: tuple[list[Frame], bytes], cuts: list[int]) -> None:
    """One read, a byte at a time, or any split in between: same frames, same size refusals."""
    _, wire = case
    whole = FrameDecoder().feed(wire)
    split = _feed_in(wire, [c for c in cuts if c < len(wire)])
    bytewise = _feed_in(wire, list(range(1, len(wire))))
    assert _frames(split) == _frames(whole) == _frames(bytewise)
    assert _oversize(split) == _oversize(whole) == _oversize(bytewise)


@settings(max_examples=200)
@given(st.binary(min_size=MAX_BODY + 1, max_size=400).filter(lambda b: not set(b) & {0x7D, 0x7E, 0x7F}))
def test_no_body_over_the_limit_is_ever_decoded(body: bytes) -> None:
    wire = b"\x7e" + body + b"\x7f"
    for out in (FrameDecoder().feed(wire), _feed_in(wire, list(range(1, len(wire))))):
        assert not _frames(out) and _oversize(out) == 1
