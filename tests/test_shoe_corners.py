"""Every corner of protocol v1 that docs/shoe-protocol.md defines, one test each, over a real pty.

The test plays a shoe written from the document alone (tests.shoe_support.RawShoe writes the
bytes); the host under test is the real ShoeReader on the pty's other end.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from controller.cards import parse_card
from drivers.shoe.codec import crc16_ccitt, encode_frame, stuff
from drivers.shoe.events import ShoeCard, ShoeEvent
from drivers.shoe.messages import (
    Ack,
    CardMsg,
    Fault,
    Heartbeat,
    Hello,
    Nak,
    Reset,
    StatusRequest,
    UnknownMessage,
)
from drivers.shoe.transport import ShoeError, ShoeReader
from tests.shoe_support import RawShoe, ShoeEvents, is_ack, profile

pytestmark = pytest.mark.timeout(60)

HELLO = Hello("Doc", "1", "D-1")


def raw_frame(seq: int, type_byte: int, payload: bytes) -> bytes:
    head = bytes((seq, type_byte, len(payload) & 0xFF)) + payload
    return b"\x7e" + stuff(head + crc16_ccitt(head).to_bytes(2, "big")) + b"\x7f"


def test_hello_resets_whatever_its_seq_after_the_sequence_wrapped(shoe: RawShoe, run_reader: Any) -> None:
    """Issue reproduction: HELLO 0, heartbeats 1..255, FAULT at 0, then the power-cycle HELLO 0."""
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    for seq in range(1, 256):
        shoe.send(seq, Heartbeat())
    shoe.expect(is_ack(255))
    shoe.send(0, Fault(1, "jam"))
    shoe.expect(is_ack(0))
    events.wait(lambda: bool(events.status("fault")))
    shoe.send(0, HELLO)  # same SEQ as the FAULT: still a HELLO, still delivered
    shoe.expect(is_ack(0))
    events.wait(lambda: len(events.status("hello")) == 2)
    shoe.send(1, CardMsg(parse_card("AS")))
    shoe.expect(is_ack(1))
    events.wait(lambda: events.codes() == ["AS"])


def test_oversized_frame_in_one_write_is_refused_not_acked(shoe: RawShoe, run_reader: Any) -> None:
    """Issue reproduction: a 210-byte FAULT written in one piece used to be ACKed and acted on."""
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.send(1, Heartbeat())
    shoe.expect(is_ack(1))
    big = raw_frame(2, 0x09, b"\x01" + b"jam!" * 50 + b"ja")
    assert len(big) == 210
    shoe.write(big)
    got = shoe.expect(lambda f: isinstance(f.message, Nak))
    assert not any(isinstance(f.message, Ack) and f.seq == 2 for f in got)
    assert [f.seq for f in got if isinstance(f.message, Nak)] == [2]
    time.sleep(0.2)
    assert not events.status("fault")
    assert "longer than 101" in events.status("framing_error")[0].detail["reason"]


def test_unknown_shoe_type_is_acked_ignored_counted_and_logged_once(
        shoe: RawShoe, run_reader: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Issue reproduction: TYPE 0x0A used to be NAKed, and the shoe's resend made a NAK storm."""
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    with caplog.at_level("INFO", logger="croupier.shoe"):
        for seq in range(1, 41):
            shoe.send(seq, UnknownMessage(0x0A if seq % 2 else 0x61, b"\x01\x02"))
            shoe.send(seq, UnknownMessage(0x0A if seq % 2 else 0x61, b"\x01\x02"))  # a resend too
        got = shoe.expect(is_ack(40))
        shoe.send(41, CardMsg(parse_card("7H")))
        shoe.expect(is_ack(41))
    assert not any(isinstance(f.message, Nak) for f in got)
    events.wait(lambda: events.codes() == ["7H"])
    assert reader.unknown_types == {0x0A: 20, 0x61: 20}
    assert [e.detail["type"] for e in events.status("unknown_message")] == ["0x0A", "0x61"]
    assert sum("unknown message type" in r.getMessage() for r in caplog.records) == 2
    assert not events.status("framing_error")


def test_good_crc_undecodable_payload_is_acked_and_reported_once(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    bad = raw_frame(1, 0x03, b"ZZ")  # a CARD that is no card
    for _ in range(5):  # the shoe resends it (an ACK lost, say): acknowledged each time, reported once
        shoe.write(bad)
    got = shoe.expect(lambda f: len([g for g in [f] if isinstance(g.message, Ack) and g.seq == 1]) > 0)
    got += shoe.drain(0.3)
    assert [f.seq for f in got if isinstance(f.message, Ack)] == [1] * 5
    assert not any(isinstance(f.message, Nak) for f in got)
    errors = events.status("protocol_error")
    assert len(errors) == 1 and "CARD payload is not a card" in errors[0].detail["reason"]
    assert errors[0].detail["frame_seq"] == 1 and errors[0].detail["type"] == "0x03"
    assert "seq" not in errors[0].detail  # a side topic's field: readers would take it for an event


@pytest.mark.parametrize("before", [["KD", "5C", "7H"], []])
def test_a_hello_no_decoder_reads_starts_a_new_numbering_and_halts_no_card_lost(
        shoe: RawShoe, run_reader: Any, before: list[str]) -> None:
    """The shoe power-cycles mid-shoe (or right after its HELLO) and its HELLO 0 breaks its payload's rules
    (a NUL in the serial): taken for a late copy by its SEQ, it was acknowledged and dropped, and the cards
    numbered from 1 after it were acknowledged and dropped as older still: lost, and no halt (a helper's
    review, 2026-12-07). It is a HELLO: a protocol error (the table halts), and every card after it read."""
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    for seq, code in enumerate(before, start=1):
        shoe.send(seq, CardMsg(parse_card(code)))
        shoe.expect(is_ack(seq))
    shoe.write(raw_frame(0, 0x01, bytes([1, 3]) + b"Doc" + bytes([1]) + b"1" + bytes([3]) + b"D-\x00"))
    shoe.expect(is_ack(0))
    for seq, code in enumerate(["9S", "QH", "3C"], start=1):
        shoe.send(seq, CardMsg(parse_card(code)))
        shoe.expect(is_ack(seq))
    events.wait(lambda: events.codes() == [*before, "9S", "QH", "3C"])
    errors = events.status("protocol_error")
    assert len(errors) == 1 and "undecodable HELLO frame seq 0" in errors[0].detail["reason"], errors
    assert not [e for e in events.status("framing_error") if "stale" in str(e.detail)]


def test_damage_storm_is_naked_and_reported_at_a_bounded_rate(shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    good = encode_frame(1, CardMsg(parse_card("QC")))
    damaged = good[:4] + bytes((good[4] ^ 0x10,)) + good[5:]
    naks = written = 0
    start = time.monotonic()
    # A shoe resending a frame the line keeps damaging: for 1.5 s and at least 150 frames (a loaded
    # machine may run the loop fewer times in 1.5 s; the count below must not depend on it).
    while time.monotonic() - start < 1.5 or written < 150:
        shoe.write(damaged)
        written += 1
        naks += sum(isinstance(f.message, Nak) for f in shoe.drain(0.005))
    naks += sum(isinstance(f.message, Nak) for f in shoe.drain(0.3))
    elapsed = time.monotonic() - start
    assert 1 <= naks <= elapsed / 0.1 + 2  # at most one NAK per 100 ms
    events.wait(lambda: any(e.detail["burst"] == "end" for e in events.status("framing_error")))
    assert reader.bursts.total_errors > 100  # every damaged frame read by now: the burst is over
    reports = events.status("framing_error")
    assert len(reports) <= 2 + elapsed / 1.0 + 1  # start, one per interval, end
    assert reports[0].detail["burst"] == "start" and reports[-1].detail["burst"] == "end"
    assert reports[-1].detail["count"] == reader.bursts.total_errors


def test_hello_with_another_major_version_is_a_fault_naming_it(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, Hello("Next", "2.0", "N-1", protocol=2))
    shoe.expect(is_ack(0))
    events.wait(lambda: bool(events.status("protocol_error")))
    error = events.status("protocol_error")[0].detail
    assert error["protocol"] == 2 and "protocol version 2" in error["reason"]
    assert not events.status("hello")


def test_heartbeat_flags_raise_the_statuses_of_their_messages_once(shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    beats = [Heartbeat(lid_open=True), Heartbeat(lid_open=True), Heartbeat(), Heartbeat(empty=True),
             Heartbeat(empty=True, faulted=True), Heartbeat(empty=True, faulted=True)]
    for seq, beat in enumerate(beats, 1):
        shoe.send(seq, beat)
    shoe.expect(is_ack(len(beats)))
    events.wait(lambda: bool(events.status("fault")))
    time.sleep(0.1)
    names = [e.status for e in events.events if getattr(e, "status", "") in
             ("lid_open", "lid_closed", "shoe_empty", "fault")]
    assert names == ["lid_open", "lid_closed", "shoe_empty", "fault"]
    assert events.status("fault")[0].detail["source"] == "heartbeat"
    assert reader.last_heartbeat == beats[-1]
    shoe.send(7, HELLO)  # a RESET's HELLO clears the fault; a later faulted beat raises it again
    shoe.send(8, Heartbeat(faulted=True))
    shoe.expect(is_ack(8))
    events.wait(lambda: len(events.status("fault")) == 2)


def test_host_command_seq_restarts_at_zero_every_session(shoe: RawShoe, run_reader: Any) -> None:
    # The silent shoe's session ends after heartbeat_timeout: long enough that a loaded machine still
    # sends the second request within the first session (0.4 s was not always).
    reader, events = run_reader(profile(shoe.path, heartbeat_timeout=2.0))
    first = shoe.expect(lambda f: isinstance(f.message, StatusRequest))
    reader.request_status()
    got = first + shoe.expect(lambda f: isinstance(f.message, StatusRequest) and f.seq == 1)
    assert [f.seq for f in got if isinstance(f.message, StatusRequest)] == [0, 1]
    events.wait(lambda: len(events.status("connected")) >= 2)  # silent shoe: the session is reopened
    again = shoe.expect(lambda f: isinstance(f.message, StatusRequest))
    assert [f.seq for f in again if isinstance(f.message, StatusRequest)][0] == 0


def test_no_nak_before_the_first_good_frame(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path))
    shoe.expect(lambda f: isinstance(f.message, StatusRequest))
    shoe.write(b"\x7e\x00\x01garbage\x7f")
    got = shoe.drain(0.4)
    assert not any(isinstance(f.message, Nak) for f in got)
    assert events.status("framing_error")


@pytest.mark.parametrize(("line_end", "stream", "codes", "errors"), [
    ("any", b"AS\r10h\nqd\r\n7c\r", ["AS", "TH", "QD", "7C"], 0),
    ("crlf", b"AS\r\nKD\nQS\r\n", ["AS", "QS"], 1),
    ("cr", b"AS\rKD\r\n5H\r", ["AS", "KD"], 1),  # strict: "\\n5H" has a stray LF
])
def test_plain_profile_line_ends(shoe: RawShoe, run_reader: Any, line_end: str, stream: bytes,
                                 codes: list[str], errors: int) -> None:
    _, events = run_reader(profile(shoe.path, "plain", line_end=line_end))
    for i in range(len(stream)):  # a byte at a time: a CR LF split across reads is still one end
        shoe.write(stream[i:i + 1])
    # The cards and the errors: in "cr" the stray LF is found at the last byte, after the last card.
    events.wait(lambda: len(events.cards()) == len(codes) and len(events.status("framing_error")) >= errors)
    time.sleep(0.2)  # anything more (a card or an error too many) would show up now
    assert events.codes() == codes and all(isinstance(c, ShoeCard) for c in events.cards())
    assert len(events.status("framing_error")) == errors


def test_a_card_crossing_a_reset_on_the_wire_is_dealt_once(shoe: RawShoe, run_reader: Any) -> None:
    """The host's RESET and the shoe's CARD cross on the line: the shoe takes the RESET before the
    host's ACK of the card, so (as RESET says) it sends the card again after its HELLO, with a new
    number. The host used to deliver and acknowledge the first copy too: one card, dealt twice."""
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.send(1, CardMsg(parse_card("9D")))
    shoe.expect(is_ack(1))
    resetting = threading.Thread(target=reader.reset)  # it waits for the shoe's next frame (below)
    resetting.start()
    shoe.send(2, CardMsg(parse_card("7S")))  # left the shoe before the RESET arrived
    got = shoe.expect(lambda f: isinstance(f.message, Reset))
    resetting.join()
    assert not any(isinstance(f.message, Ack) for f in got), got  # held back, not acknowledged
    shoe.send(0, HELLO)  # the shoe took the RESET: HELLO 0, then the unacknowledged card as 1
    shoe.expect(is_ack(0))
    shoe.send(1, CardMsg(parse_card("7S")))
    shoe.expect(is_ack(1))
    time.sleep(0.2)
    assert events.codes() == ["9D", "7S"]


def test_a_reset_lost_on_the_line_holds_the_shoes_frames_only_a_moment(
        shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    reader.reset()  # never reaches the shoe: no HELLO comes, the shoe resends its card every second
    shoe.send(1, CardMsg(parse_card("QH")))
    assert not any(isinstance(f.message, Ack) for f in shoe.drain(0.3))
    deadline = time.monotonic() + 30  # the hold is 5 s; the rest bounds a broken reader on a loaded CI
    while not events.codes():
        assert time.monotonic() < deadline, "the card was held for good"
        shoe.send(1, CardMsg(parse_card("QH")))
        time.sleep(0.5)
    time.sleep(0.6)
    assert events.codes() == ["QH"]


def test_reset_on_a_plain_profile_shoe_is_refused_not_reported_as_sent(
        shoe: RawShoe, run_reader: Any) -> None:
    reader, _ = run_reader(profile(shoe.path, "plain"))
    with pytest.raises(ShoeError, match=r"speaks the plain profile: it has no RESET"):
        reader.reset()
    assert shoe.drain(0.2) == []  # nothing was written to the line


def test_a_reset_waits_until_the_shoe_got_the_last_cards_ack(shoe: RawShoe, run_reader: Any) -> None:
    """The host's ACK of a card is damaged on the line, and a RESET follows at once: a shoe obeying
    RESET sends the card it still holds again after its HELLO, under a new number, and the host
    dealt it twice. Now the RESET waits until the shoe shows it got the ACK (its next frame)."""
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.expect(is_ack(0))
    shoe.send(1, CardMsg(parse_card("9D")))
    shoe.expect(is_ack(1))  # ... which the shoe never receives (damaged on the line)
    resetting = threading.Thread(target=reader.reset)
    resetting.start()
    got = shoe.drain(0.2)
    if any(isinstance(f.message, Reset) for f in got):  # RESET before the shoe had the ACK: obeyed
        shoe.send(0, HELLO)
        shoe.send(1, CardMsg(parse_card("9D")))  # the card it still held, sent again
    else:
        shoe.send(1, CardMsg(parse_card("9D")))  # its 200 ms resend: acknowledged again, not dealt
        shoe.expect(is_ack(1))
        assert not any(isinstance(f.message, Reset) for f in shoe.drain(0.2))
        shoe.send(2, Heartbeat())  # the shoe got the ACK and moved on: now the RESET may go
        got = shoe.expect(lambda f: isinstance(f.message, Reset))
        assert any(is_ack(2)(f) for f in got)  # a HEARTBEAT is taken as usual (only cards are held)
        shoe.send(0, HELLO)
        shoe.send(1, Heartbeat())
    resetting.join()
    shoe.expect(is_ack(1))
    time.sleep(0.2)
    assert events.codes() == ["9D"]


def test_a_reset_the_silent_shoe_cannot_confirm_is_refused_and_frames_flow_again(
        shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    shoe.send(0, HELLO)
    shoe.send(1, CardMsg(parse_card("4C")))
    shoe.expect(is_ack(1))
    with pytest.raises(ShoeError, match=r"RESET not sent: .* has not shown that it received the ACK"):
        reader.prepare_reset(wait=0.3)
    assert not any(isinstance(f.message, Reset) for f in shoe.drain(0.2))  # nothing went out
    shoe.send(2, CardMsg(parse_card("5C")))  # no hold is left behind: taken and acknowledged
    shoe.expect(is_ack(2))
    time.sleep(0.1)
    assert events.codes() == ["4C", "5C"]


def test_a_reset_asked_while_a_card_is_being_handed_over_goes_out_after_that_cards_ack(
        shoe: RawShoe) -> None:
    """Review hR: the card's frame passed the RESET hold check and is being handed over (its consumer
    journals it) when a RESET is asked for. prepare_reset sees no unconfirmed card (the flag is set
    only after the handler returns), so the RESET went out before the card's ACK: a conforming shoe
    takes the RESET while it still holds the card and sends it again after its HELLO under a new
    number, and the host deals it twice."""
    events = ShoeEvents()
    handing_over, release = threading.Event(), threading.Event()

    def slow_consumer(event: ShoeEvent) -> None:
        if isinstance(event, ShoeCard):
            handing_over.set()
            release.wait(5)  # e.g. the journal's commit
        events(event)

    reader = ShoeReader(profile(shoe.path), slow_consumer)
    reader.start()
    try:
        events.wait(lambda: bool(events.status("connected")))
        shoe.send(0, HELLO)
        shoe.expect(is_ack(0))
        shoe.send(1, CardMsg(parse_card("9D")))
        assert handing_over.wait(5)
        resetting = threading.Thread(target=reader.reset)
        resetting.start()
        early = shoe.drain(0.3)  # nothing may go out while the card is not yet acknowledged
        release.set()
        got = early + shoe.expect(is_ack(1))
        order = [type(f.message).__name__ for f in got]
        if "Reset" in order and order.index("Reset") < order.index("Ack"):  # the shoe obeys it now
            shoe.send(0, HELLO)
            shoe.expect(is_ack(0))
            shoe.send(1, CardMsg(parse_card("9D")))  # the card it still held, under a new number
            shoe.expect(is_ack(1))
        else:
            shoe.send(2, Heartbeat())  # the shoe got the ACK and moved on: the RESET may go now
            shoe.expect(lambda f: isinstance(f.message, Reset))
            shoe.send(0, HELLO)
            shoe.expect(is_ack(0))
        resetting.join(5)
        time.sleep(0.2)
        assert events.codes() == ["9D"], order
    finally:
        release.set()
        reader.stop()
