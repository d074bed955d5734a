"""The reader on a given event loop (the daemon's way): one thread for the read, the consumer and the ACK.

Over a real pty (the test playing the shoe byte by byte) and pyserial's ``loop://`` (a port
without a file descriptor: the pump thread's case). Blocking waits on the shoe's side run in
``asyncio.to_thread`` so that the loop under test keeps turning.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import serial  # type: ignore[import-untyped]

from controller.cards import parse_card
from drivers.shoe.events import ShoeCard, ShoeEvent
from drivers.shoe.messages import Ack, CardMsg, Heartbeat, Hello, Reset
from drivers.shoe.transport import FrameId, ShoeReader
from tests.shoe_support import RawShoe, ShoeEvents, is_ack, profile

pytestmark = pytest.mark.timeout(60)


#: Threads that were there before (other tests in this process may have left some).
_BEFORE: set[threading.Thread] = set()


def shoe_threads() -> list[str]:
    """The shoe threads started since the test began."""
    return [t.name for t in threading.enumerate() if t.name.startswith("shoe-") and t not in _BEFORE]


@pytest.fixture(autouse=True)
def _threads_before() -> None:
    _BEFORE.clear()
    _BEFORE.update(threading.enumerate())


async def until(pred: Any, timeout: float = 10.0) -> None:
    """Let the loop run until ``pred()`` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not pred():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_card_is_read_taken_and_acknowledged_on_the_loops_thread_with_no_reader_thread() -> None:
    raw = RawShoe()
    events = ShoeEvents()
    taken: list[tuple[FrameId | None, ShoeEvent | None, int, list[int]]] = []

    def on_frame(frame: FrameId | None, event: ShoeEvent | None) -> bool:
        # What has reached the shoe while the frame is being taken: never its ACK.
        on_wire = [f.seq for f in raw.drain(0.01) if isinstance(f.message, Ack)]
        taken.append((frame, event, threading.get_ident(), on_wire))
        return True

    async def main() -> None:
        reader = ShoeReader(profile(raw.path), events, on_frame=on_frame)
        reader.start_on(asyncio.get_running_loop())
        try:
            await until(lambda: bool(events.status("connected")))
            assert shoe_threads() == []  # a pty has an fd: the loop watches it, no thread of ours
            raw.send(0, Hello("Test", "0.1", "T-1"))
            await asyncio.to_thread(raw.expect, is_ack(0))
            raw.send(1, CardMsg(parse_card("AS")))
            got = await asyncio.to_thread(raw.expect, is_ack(1))
            assert [f.seq for f in got if isinstance(f.message, Ack)] == [1]
        finally:
            await reader.aclose()
        assert not reader.connected
        # The port is closed on return: the exclusive lock is free for the next reader.
        serial.Serial(raw.path, exclusive=True).close()

    asyncio.run(main())
    loop_thread = threading.get_ident()  # asyncio.run ran the loop on this thread
    assert [t[2] for t in taken] == [loop_thread, loop_thread]
    (hello, _, _, hello_wire), (card, event, _, card_wire) = taken
    assert hello is not None and card == FrameId(hello.session, 1)
    assert event == ShoeCard(parse_card("AS"))
    assert 0 not in hello_wire and 1 not in card_wire  # each ACK went out after on_frame returned
    raw.close()


def test_a_card_the_consumer_refuses_on_the_loop_is_not_acknowledged() -> None:
    raw = RawShoe()
    events = ShoeEvents()
    offers: list[FrameId | None] = []

    def on_frame(frame: FrameId | None, event: ShoeEvent | None) -> bool:
        offers.append(frame)
        return len(offers) != 2  # the card's first offer is refused (a journal fault, a stop)

    async def main() -> list[int]:
        reader = ShoeReader(profile(raw.path), events, on_frame=on_frame)
        reader.start_on(asyncio.get_running_loop())
        try:
            await until(lambda: bool(events.status("connected")))
            raw.send(0, Hello("Test", "0.1", "T-1"))
            await asyncio.to_thread(raw.expect, is_ack(0))
            raw.send(1, CardMsg(parse_card("KD")))
            await until(lambda: len(offers) == 2)
            raw.send(1, CardMsg(parse_card("KD")))  # the shoe's resend: offered again, then accepted
            got = await asyncio.to_thread(raw.expect, is_ack(1))
        finally:
            await reader.aclose()
        return [f.seq for f in got if isinstance(f.message, Ack)]

    assert asyncio.run(main()) == [1]  # one ACK for seq 1: the refused offer had none
    assert len(offers) == 3 and offers[1] == offers[2]
    raw.close()


def test_a_port_without_an_fd_is_pumped_by_a_thread_and_handled_on_the_loop() -> None:
    """``loop://`` echoes what the host writes: the host's own STATUS_REQUEST comes back, a framing
    error (is the line echoing?) reported on the loop's thread; the pump thread ends with the reader."""
    seen: list[tuple[str, int]] = []

    def on_event(event: ShoeEvent) -> None:
        seen.append((getattr(event, "status", ""), threading.get_ident()))

    async def main() -> list[str]:
        reader = ShoeReader(profile("loop://", heartbeat_timeout=30.0), on_event)
        reader.start_on(asyncio.get_running_loop())
        try:
            await until(lambda: any(s == "framing_error" for s, _ in seen))
            return shoe_threads()
        finally:
            await reader.aclose()

    threads = asyncio.run(main())
    assert threads == ["shoe-pump loop://"]
    assert shoe_threads() == []
    assert {ident for _, ident in seen} == {threading.get_ident()}
    assert [s for s, _ in seen][0] == "connected" and [s for s, _ in seen][-1] == "disconnected"


def test_a_shoe_reset_whose_wait_overlapped_a_cards_hand_over_is_sent_once_the_shoe_shows_the_ack() -> None:
    """Review hR: ``shoe reset`` waits in a worker thread (``prepare_reset``), then sends on the loop
    (``reset``). When the worker ran while the loop was handing a card over (its journal commit), it
    saw no unconfirmed card (the flag is set after the hand-over) and returned; ``reset`` on the loop
    then found the card unconfirmed and waited there, on the loop the reader runs on: the shoe's
    HEARTBEAT that shows the ACK could not be read, the loop stood still 2.5 s and the RESET was
    refused ("has not shown that it received the ACK")."""
    raw = RawShoe()
    events = ShoeEvents()
    readers: list[ShoeReader] = []
    command: list[asyncio.Task[None]] = []

    def on_frame(frame: FrameId | None, event: ShoeEvent | None) -> bool:
        if isinstance(event, ShoeCard) and not command:
            # The operator's shoe reset, as controller.daemon.shoe_events.shoe_command runs it, its
            # worker thread started a moment before the loop read this card.
            loop = asyncio.get_running_loop()
            waited = loop.run_in_executor(None, readers[0].prepare_reset)

            async def then_send() -> None:
                await waited
                readers[0].reset()

            command.append(loop.create_task(then_send()))
            threading.Event().wait(0.2)  # the card's journal commit (the GIL released meanwhile)
        return True

    async def main() -> None:
        reader = ShoeReader(profile(raw.path), events, on_frame=on_frame)
        readers.append(reader)
        reader.start_on(asyncio.get_running_loop())
        try:
            await until(lambda: bool(events.status("connected")))
            raw.send(0, Hello("Test", "0.1", "T-1"))
            await asyncio.to_thread(raw.expect, is_ack(0))
            raw.send(1, CardMsg(parse_card("9D")))
            await asyncio.to_thread(raw.expect, is_ack(1))
            raw.send(2, Heartbeat())  # the shoe got the ACK and moved on: the RESET may go now
            got = await asyncio.to_thread(raw.expect, lambda f: isinstance(f.message, Reset), 4.0)
            assert any(is_ack(2)(f) for f in got)
            await command[0]  # sent, not refused
        finally:
            await reader.aclose()

    asyncio.run(main())
