"""ShoeReader over a real pty, with the test playing the shoe byte by byte (as pyserial's test_pty does).

The test holds the pty master and writes frames made with the codec; the
reader under test opens the slave through pyserial. No simulator here, so
every byte the reader sees or sends is under the test's control.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

import pytest

from controller.cards import parse_card
from drivers.shoe.codec import encode_frame
from drivers.shoe.events import ShoeCard
from drivers.shoe.messages import Ack, CardMsg, Dispense, Heartbeat, Hello, Lid, Nak, StatusRequest
from drivers.shoe.transport import ShoeError, ShoeReader
from tests.shoe_support import RawShoe, ShoeEvents, is_ack, profile

pytestmark = pytest.mark.timeout(60)


def test_frames_are_acked_and_duplicates_delivered_once(shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    first = shoe.expect(lambda f: isinstance(f.message, StatusRequest))  # asks for a status on connect
    assert not any(isinstance(f.message, Nak) for f in first)  # nothing to resend yet
    shoe.send(0, Hello("Test", "0.1", "T-1"))
    shoe.expect(is_ack(0))
    shoe.send(1, CardMsg(parse_card("AS")))
    shoe.send(1, CardMsg(parse_card("AS")))  # the ACK was "lost": the shoe resends
    shoe.send(2, CardMsg(parse_card("9D"), burn=True))
    acks = shoe.expect(is_ack(2))
    assert [f.seq for f in acks if isinstance(f.message, Ack)] == [1, 1, 2]
    events.wait(lambda: len(events.cards()) == 2)
    time.sleep(0.2)
    cards = events.cards()
    assert cards == [ShoeCard(parse_card("AS")), ShoeCard(parse_card("9D"), burn=True)]
    assert cards[1].to_dict() == {"event": "shoe_card", "card": "9D", "burn": True}
    hello = events.status("hello")
    assert [h.to_dict() for h in hello] == [{"event": "shoe_hello", "protocol": 1, "model": "Test",
                                              "firmware": "0.1", "serial": "T-1"}]


def test_damage_is_reported_and_naked_with_expected_seq(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path))
    shoe.send(7, Lid(True))
    shoe.expect(is_ack(7))
    good = encode_frame(8, CardMsg(parse_card("QC")))
    shoe.write(good[:4] + bytes((good[4] ^ 0x10,)) + good[5:])  # one damaged byte
    got = shoe.expect(lambda f: isinstance(f.message, Nak))
    assert [f.seq for f in got if isinstance(f.message, Nak)] == [8]  # "send 8 again"
    shoe.write(good)
    shoe.expect(is_ack(8))
    events.wait(lambda: bool(events.cards()))
    errors = events.status("framing_error")
    assert len(errors) == 1 and "CRC mismatch" in errors[0].detail["reason"]
    assert events.status("lid_open") and events.codes() == ["QC"]


def test_stale_and_echoed_frames_are_not_delivered(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path))
    for seq, card in ((10, "2C"), (11, "3C")):
        shoe.send(seq, CardMsg(parse_card(card)))
    shoe.send(10, CardMsg(parse_card("2C")))  # a late copy, or a new card of a shoe restarted without HELLO
    shoe.send(3, Ack())  # a host frame coming back: an echoing line
    shoe.send(4, Ack())
    shoe.send(12, CardMsg(parse_card("4C")))
    shoe.expect(is_ack(12))
    events.wait(lambda: len(events.cards()) == 3)
    assert events.codes() == ["2C", "3C", "4C"]
    # The frame older than the last is a protocol error (the daemon halts the table on it: it may be a
    # card dropped); the echoes are damage: the first reported at once, the second in the burst's count.
    stale = events.status("protocol_error")
    assert len(stale) == 1 and "stale frame seq 10 after seq 11" in stale[0].detail["reason"]
    assert stale[0].detail["frame_seq"] == 10
    events.wait(lambda: len(events.status("framing_error")) >= 2)
    first, more = events.status("framing_error")[:2]
    assert "is the line echoing" in first.detail["reason"] and first.detail["burst"] == "start"
    assert more.detail["count"] == 1 and "is the line echoing" in more.detail["reason"]


def test_the_last_seq_again_with_another_card_is_no_resend_but_a_protocol_error(
        shoe: RawShoe, run_reader: Any) -> None:
    """A resend is the same bytes: a shoe that restarted its numbering without a HELLO and numbered its
    first card as the last one taken sent a new card, which was acknowledged as a resend and lost unseen,
    play going on. It halts the table now; the true resend around it is still acknowledged silently."""
    _, events = run_reader(profile(shoe.path))
    shoe.send(10, CardMsg(parse_card("2C")))
    shoe.expect(is_ack(10))
    shoe.send(10, CardMsg(parse_card("2C")))  # its ACK lost: the same frame again
    shoe.expect(is_ack(10))
    shoe.send(10, CardMsg(parse_card("9H")))  # the restarted shoe's first card
    shoe.expect(is_ack(10))
    shoe.send(11, CardMsg(parse_card("4C")))
    shoe.expect(is_ack(11))
    events.wait(lambda: len(events.cards()) == 2)
    assert events.codes() == ["2C", "4C"]
    error = events.status("protocol_error")
    assert len(error) == 1 and "frame seq 10 again with another message" in error[0].detail["reason"]
    assert error[0].detail["frame_seq"] == 10


def test_a_hello_numbered_as_the_last_frame_is_the_one_its_resend_is_compared_with(
        shoe: RawShoe, run_reader: Any) -> None:
    """After a wrap a power-cycle HELLO may carry the SEQ last taken: it starts the numbering again, and
    its own resend (an ACK lost) is a resend, not a changed frame."""
    _, events = run_reader(profile(shoe.path))
    shoe.send(0, CardMsg(parse_card("2C")))
    shoe.expect(is_ack(0))
    hello = Hello("Test", "0.1", "T-1")
    shoe.send(0, hello)
    shoe.expect(is_ack(0))
    shoe.send(0, hello)
    shoe.expect(is_ack(0))
    shoe.send(1, CardMsg(parse_card("5D")))
    shoe.expect(is_ack(1))
    events.wait(lambda: len(events.cards()) == 2)
    assert events.codes() == ["2C", "5D"] and not events.status("protocol_error")


def test_unplug_is_reported_by_the_port_error_and_reading_resumes(tmp_path: Any, run_reader: Any) -> None:
    link = tmp_path / "shoe"
    first = RawShoe()
    os.symlink(first.path, link)
    reader, events = run_reader(profile(str(link)))
    first.send(0, CardMsg(parse_card("AH")))
    first.expect(is_ack(0))
    # Seq 1 goes out but the cable is pulled before its ACK comes back.
    first.send(1, CardMsg(parse_card("KH")))
    events.wait(lambda: len(events.cards()) == 2)
    first.close()
    events.wait(lambda: bool(events.status("disconnected")))
    # Seen at once, by the port's error, not seconds later by the heartbeat timeout (5 s here): said by
    # the reason, not measured (a loaded machine may take any time).
    reason = events.status("disconnected")[0].detail["reason"]
    assert reason.startswith("port error:") and "heartbeat" not in reason, reason
    second = RawShoe()  # plugged in again: the same name, a new device node
    try:
        os.replace(link, tmp_path / "old")
        os.symlink(second.path, link)
        # On reconnect the host asks for seq 2 (it has 1), which tells the shoe its seq 1 arrived.
        got = second.expect(lambda f: isinstance(f.message, Nak), timeout=10)
        assert [f.seq for f in got if isinstance(f.message, Nak)] == [2]
        second.send(1, CardMsg(parse_card("KH")))  # a shoe that resends anyway
        second.send(2, CardMsg(parse_card("QH")))
        second.expect(is_ack(2))
        events.wait(lambda: len(events.cards()) == 3)
        time.sleep(0.2)
        assert events.codes() == ["AH", "KH", "QH"]
        assert len(events.status("connected")) == 2
    finally:
        second.close()


def test_heartbeat_timeout_reconnects(shoe: RawShoe, run_reader: Any) -> None:
    _, events = run_reader(profile(shoe.path, heartbeat_timeout=0.3))
    shoe.send(0, Hello("Mute", "1", "M"))
    shoe.send(1, Heartbeat())
    shoe.expect(is_ack(1))
    events.wait(lambda: len(events.status("connected")) >= 2, timeout=10)
    reasons = [e.detail["reason"] for e in events.status("disconnected")]
    assert reasons and "heartbeat lost" in reasons[0]
    # The new session asks the shoe to resend from seq 2 and for a status.
    got = shoe.expect(lambda f: isinstance(f.message, Nak) and f.seq == 2)
    assert any(isinstance(f.message, StatusRequest) for f in got)


def test_plain_profile_reads_lines_and_quotes_bad_ones(shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path, "plain", baud=9600))
    shoe.write(b"AS\r\n10h\r\ngarbage\r\nqd\n")
    events.wait(lambda: len(events.cards()) == 3)
    assert events.codes() == ["AS", "TH", "QD"]
    errors = events.status("framing_error")
    assert len(errors) == 1 and "'garbage'" in errors[0].detail["reason"]
    reader.request_card()  # no-op: a plain reader has no commands
    time.sleep(0.1)
    assert not select.select([shoe.master], [], [], 0)[0]  # nothing was written to the shoe


def test_request_card_sends_dispense_and_fails_clearly_when_disconnected(
        shoe: RawShoe, run_reader: Any) -> None:
    reader, events = run_reader(profile(shoe.path))
    reader.request_card()
    shoe.expect(lambda f: isinstance(f.message, Dispense))
    shoe.close()
    events.wait(lambda: bool(events.status("disconnected")))
    with pytest.raises(ShoeError, match="not connected"):
        reader.request_card()


def test_second_reader_cannot_open_a_port_in_use(shoe: RawShoe, run_reader: Any) -> None:
    run_reader(profile(shoe.path))
    events = ShoeEvents()
    other = ShoeReader(profile(shoe.path), events)
    other.start()
    try:
        events.wait(lambda: bool(events.status("disconnected")))
        reason = events.status("disconnected")[0].detail["reason"]
        assert "cannot open" in reason and "exclusively lock" in reason
        assert not events.status("connected")
    finally:
        other.stop()


def test_stop_is_idempotent_and_reports_disconnect(shoe: RawShoe) -> None:
    events = ShoeEvents()
    reader = ShoeReader(profile(shoe.path), events)
    reader.stop()  # before start: nothing to do
    reader.start()
    events.wait(lambda: bool(events.status("connected")))
    reader.stop()
    reader.stop()
    assert events.status("disconnected")[-1].detail["reason"] == "stopped"
    assert not reader.connected
    with pytest.raises(RuntimeError):
        reader.start()


def test_missing_port_is_reported_once_while_retrying(tmp_path: Any) -> None:
    events = ShoeEvents()
    reader = ShoeReader(profile(str(tmp_path / "no-such-tty")), events)
    reader.start()
    try:
        events.wait(lambda: bool(events.status("disconnected")))
        time.sleep(0.5)  # several retries at 0.05..0.2 s
        assert len(events.status("disconnected")) == 1
        assert "no-such-tty" in events.status("disconnected")[0].detail["reason"]
    finally:
        reader.stop()
