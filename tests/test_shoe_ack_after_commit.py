"""The reader acknowledges a frame only once its consumer made it durable, and resumes from a frame id.

Over a real pty, the test playing the shoe byte by byte (tests/test_shoe_transport.py's RawShoe).
"""

from __future__ import annotations

import os
import select
import threading
import time
from typing import Any

import pytest
from test_shoe_transport import RawShoe, is_ack, profile

from controller.cards import parse_card
from drivers.shoe.codec import Frame, encode_frame
from drivers.shoe.events import ShoeCard, ShoeEvent
from drivers.shoe.messages import Ack, CardMsg, Heartbeat, Hello, Nak, StatusRequest
from drivers.shoe.transport import FrameId, ShoeReader
from tests.shoe_support import ShoeEvents

pytestmark = pytest.mark.timeout(60)


class Consumer:
    """An ``on_frame`` that records what it was given and answers as told (True: durable)."""

    def __init__(self) -> None:
        self.frames: list[tuple[FrameId | None, ShoeEvent | None]] = []
        self.accept = True
        self.raise_error = False
        self._cond = threading.Condition()

    def __call__(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        with self._cond:
            self.frames.append((frame, event))
            self._cond.notify_all()
        if self.raise_error:
            raise RuntimeError("consumer bug")
        return self.accept

    def cards(self) -> list[tuple[FrameId | None, ShoeEvent | None]]:
        with self._cond:
            return [(f, e) for f, e in self.frames if isinstance(e, ShoeCard)]

    def wait(self, n_cards: int, timeout: float = 30.0) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.cards()) >= n_cards, timeout), self.frames


def acks(frames: list[Frame]) -> list[int]:
    return [f.seq for f in frames if isinstance(f.message, Ack)]


def drain(raw: RawShoe, seconds: float) -> list[Frame]:
    """Every frame the host sends within ``seconds``."""
    got: list[Frame] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if select.select([raw.master], [], [], left)[0]:
            try:
                data = os.read(raw.master, 4096)
            except BlockingIOError:  # the fd is non-blocking: select's "ready" may be spurious
                continue
            except OSError:
                break
            got += [f for f in raw._decoder.feed(data) if isinstance(f, Frame)]
    return got


def start(raw: RawShoe, consumer: Consumer, resume: FrameId | None = None) -> tuple[ShoeReader, ShoeEvents]:
    events = ShoeEvents()
    reader = ShoeReader(profile(raw.path), events, on_frame=consumer, resume=resume)
    reader.start()
    events.wait(lambda: bool(events.status("connected")))
    return reader, events


def test_a_frame_the_consumer_did_not_make_durable_is_not_acknowledged_and_is_delivered_again() -> None:
    raw, consumer = RawShoe(), Consumer()
    reader, _ = start(raw, consumer)
    try:
        raw.send(0, Hello("Test", "0.1", "T-1"))
        raw.expect(is_ack(0))
        consumer.accept = False
        raw.send(1, CardMsg(parse_card("AS")))
        consumer.wait(1)
        got = drain(raw, 0.3)
        consumer.raise_error = True
        raw.send(1, CardMsg(parse_card("AS")))  # the shoe's resend: offered again (not a duplicate)
        consumer.wait(2)
        got += drain(raw, 0.3)
        consumer.raise_error, consumer.accept = False, True
        raw.send(1, CardMsg(parse_card("AS")))
        consumer.wait(3)
        seen = raw.expect(is_ack(1))
        assert acks(got + seen) == [1]  # the refused and the failed offer were never acknowledged
        raw.send(1, CardMsg(parse_card("AS")))  # its ACK was lost: acknowledged, not offered again
        raw.expect(is_ack(1))
        time.sleep(0.2)
        cards = consumer.cards()
        assert len(cards) == 3 and {f for f, _ in cards} == {cards[0][0]}
        hello_frame = consumer.frames[0][0]
        assert hello_frame is not None and cards[0][0] == FrameId(hello_frame.session, 1)
    finally:
        reader.stop()
        raw.close()


def test_a_restarted_reader_acknowledges_the_resend_of_its_last_frame_without_delivering_it() -> None:
    raw, consumer = RawShoe(), Consumer()
    reader, _ = start(raw, consumer, resume=FrameId("s1", 41))
    try:
        hello = raw.expect(lambda f: isinstance(f.message, Nak))
        assert any(isinstance(f.message, StatusRequest) for f in hello)
        assert [f.seq for f in hello if isinstance(f.message, Nak)] == [42]  # "resend from 42"
        raw.send(41, CardMsg(parse_card("KD")))  # committed by the dead daemon, never acknowledged
        raw.expect(is_ack(41))
        raw.send(42, CardMsg(parse_card("2C")))
        raw.expect(is_ack(42))
        consumer.wait(1)
        assert consumer.cards() == [(FrameId("s1", 42), ShoeCard(parse_card("2C")))]
    finally:
        reader.stop()
        raw.close()


@pytest.mark.parametrize("first_seq", [43, 100, 200, 13])
def test_after_a_resume_any_other_sequence_is_new(first_seq: int) -> None:
    """The cursor may lag the shoe by the heartbeats acknowledged after it: no 'stale' drop then."""
    raw, consumer = RawShoe(), Consumer()
    reader, events = start(raw, consumer, resume=FrameId("s1", 41))
    try:
        raw.send(first_seq, CardMsg(parse_card("7H")))
        raw.expect(is_ack(first_seq))
        consumer.wait(1)
        assert consumer.cards() == [(FrameId("s1", first_seq), ShoeCard(parse_card("7H")))]
        assert not events.status("framing_error")
    finally:
        reader.stop()
        raw.close()


def test_hello_after_a_resume_starts_a_new_session_and_heartbeats_are_offered() -> None:
    raw, consumer = RawShoe(), Consumer()
    reader, _ = start(raw, consumer, resume=FrameId("s1", 5))
    try:
        raw.send(0, Hello("Test", "0.1", "T-1"))  # the shoe was power-cycled while we were down
        raw.expect(is_ack(0))
        raw.send(1, Heartbeat())
        raw.expect(is_ack(1))
        raw.send(2, CardMsg(parse_card("5S")))
        raw.expect(is_ack(2))
        consumer.wait(1)
        frames: list[Any] = [f for f, _ in consumer.frames]
        assert [f.seq for f in frames] == [0, 1, 2]
        assert len({f.session for f in frames}) == 1 and frames[0].session != "s1"
        assert consumer.frames[1][1] is None  # a heartbeat: offered with no event
        assert reader.last_heartbeat == Heartbeat()
    finally:
        reader.stop()
        raw.close()


def test_a_resume_from_frame_0_never_acknowledges_a_hello_it_has_not_seen() -> None:
    """The journal's cursor is frame 0 and the shoe was power-cycled while the daemon was down: its
    HELLO 0 is in flight. NAK 1 ("resend from 1") would also acknowledge that HELLO (shoe rule 4), so
    the shoe would go on with frame 1 and the HELLO would never be delivered: the greeting asks for 0."""
    raw, consumer = RawShoe(), Consumer()
    reader, _ = start(raw, consumer, resume=FrameId("s1", 0))
    try:
        greeting = raw.expect(lambda f: isinstance(f.message, Nak))
        assert [f.seq for f in greeting if isinstance(f.message, Nak)] == [0]
        raw.send(0, Hello("Cycled", "1", "C-2"))  # the shoe's answer to NAK 0: its HELLO, at once
        raw.expect(is_ack(0))
        raw.send(1, CardMsg(parse_card("9C")))
        raw.expect(is_ack(1))
        consumer.wait(1)
        hello, card = (f for f, _ in consumer.frames)
        assert hello is not None and hello.session != "s1" and card == FrameId(hello.session, 1)
    finally:
        reader.stop()
        raw.close()


def test_a_damaged_hello_after_frame_0_is_asked_for_again_not_acknowledged() -> None:
    """The last frame delivered is 0 and the shoe's next frame arrives damaged: it may be frame 1 or
    the HELLO 0 of a shoe that was just power-cycled; NAK 0 resends the HELLO, where NAK 1 would
    acknowledge it unseen (a frame 1 in flight ignores NAK 0 and comes back with its own resend)."""
    raw, consumer = RawShoe(), Consumer()
    reader, _ = start(raw, consumer)
    try:
        raw.send(0, Hello("Before", "1", "B-1"))
        raw.expect(is_ack(0))
        damaged = bytearray(encode_frame(0, Hello("After", "1", "A-2")))
        damaged[5] ^= 0x01
        raw.write(bytes(damaged))
        got = raw.expect(lambda f: isinstance(f.message, Nak))
        assert [f.seq for f in got if isinstance(f.message, Nak)] == [0]
        raw.send(0, Hello("After", "1", "A-2"))
        raw.expect(is_ack(0))
        deadline = time.monotonic() + 30
        while len(consumer.frames) < 2:
            assert time.monotonic() < deadline, consumer.frames
            time.sleep(0.01)
        sessions = [f.session for f, _ in consumer.frames if f is not None]
        assert len(set(sessions)) == 2  # the second HELLO was delivered: a new session
    finally:
        reader.stop()
        raw.close()


def test_stop_while_the_consumer_waits_acknowledges_nothing() -> None:
    raw = RawShoe()
    entered, release = threading.Event(), threading.Event()

    def slow(frame: FrameId | None, event: ShoeEvent | None) -> bool:
        if isinstance(event, ShoeCard):
            entered.set()
            release.wait(30)
            return False  # what ShoeLink answers when the daemon stops mid-hand-over
        return True

    events = ShoeEvents()
    reader = ShoeReader(profile(raw.path), events, on_frame=slow)
    reader.start()
    try:
        events.wait(lambda: bool(events.status("connected")))
        raw.send(3, CardMsg(parse_card("QS")))
        assert entered.wait(30)
        stopper = threading.Thread(target=reader.stop)
        stopper.start()
        release.set()
        stopper.join(30)
        assert not stopper.is_alive()
        assert acks(drain(raw, 0.3)) == []
    finally:
        reader.stop()
        raw.close()
