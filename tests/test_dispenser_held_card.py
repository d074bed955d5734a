"""A dealing shuffler's card held back by a RESET answers its DISPENSE: never asked for twice.

docs/shoe-protocol.md, host rule 10: the host's ACK of a card is damaged on the line, so before a
RESET the host waits for the shoe's proof that it got that ACK. A new CARD arriving meanwhile is
held back (rule 9): the shoe sends it again after the HELLO that answers the RESET, and it answers
the DISPENSE still outstanding, which that HELLO therefore does not void
(``Dispenser.on_status``, ``ShoeReader.held_a_card``). Voided, a second DISPENSE would bring a
second card out of the shuffler. The same across a kill right after that RESET went out: the
restarted daemon cannot know a card was held back, so its HELLO does not void the DISPENSE either.

The shuffler is the project's simulator on a real pty; the daemon is the real one. Between them a
relay on a second pty passes every byte, except that it damages (drops) the host's ACKs of one card
until the test lets the last one through late, so the instant of the RESET is the test's to choose.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from restart_support import Croupier
from test_dealing_shuffler import dealt_by, play_to_close, status
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.client import CommandClient
from controller.daemon.server import Daemon
from drivers.shoe.codec import Frame, FrameDecoder, encode_frame
from drivers.shoe.messages import Ack, CardMsg, Dispense, Hello, Reset
from drivers.shoe.sim import SimulatedShoe

pytestmark = pytest.mark.timeout(60)

#: The shuffler's cards in the order it deals them: a baccarat round takes the first four to six.
DECK = [parse_card(code) for code in ("9C", "2D", "3H", "4S", "5C", "6D", "7H", "8S", "TC", "JD", "QH")]


class AckDamagingLine:
    """The line between the daemon (its own pty) and the simulator (the simulator's pty).

    Shoe-to-host bytes pass as they come. Host-to-shoe frames pass whole, except the ACKs of the
    first card after :meth:`damage_next_card`, which are dropped until :meth:`deliver_late` lets
    the last of them through. Every frame each way is recorded, in order.
    """

    def __init__(self, shoe_port: str) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._shoe = os.open(shoe_port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._shoe)
        self._lock = threading.Lock()
        self._host_frames: list[Frame] = []
        self._shoe_frames: list[Frame] = []
        self._armed = False
        self._damaged_seq: int | None = None
        self._dropped: Frame | None = None
        self._late = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-line", daemon=True)
        self._thread.start()

    def damage_next_card(self) -> None:
        with self._lock:
            self._armed = True

    def deliver_late(self) -> None:
        """The last ACK dropped reaches the shoe now; ACKs pass from here on."""
        with self._lock:
            self._late = True

    def host_sent(self) -> list[Frame]:
        with self._lock:
            return list(self._host_frames)

    def shoe_sent(self) -> list[Frame]:
        with self._lock:
            return list(self._shoe_frames)

    def dropped(self) -> int | None:
        with self._lock:
            return None if self._dropped is None else self._damaged_seq

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for fd in (self._master, self._slave, self._shoe):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        from_host, from_shoe = FrameDecoder(), FrameDecoder()
        while not self._stop.is_set():
            with self._lock:
                if self._late and self._dropped is not None:
                    os.write(self._shoe, encode_frame(self._dropped.seq, self._dropped.message))
                    self._dropped, self._armed = None, False
            ready, _, _ = select.select([self._master, self._shoe], [], [], 0.02)
            if self._shoe in ready:
                data = os.read(self._shoe, 4096)
                with self._lock:  # noted before the host can see (and acknowledge) the card
                    for frame in from_shoe.feed(data):
                        if isinstance(frame, Frame):
                            self._shoe_frames.append(frame)
                            if (self._armed and self._damaged_seq is None
                                    and isinstance(frame.message, CardMsg)):
                                self._damaged_seq = frame.seq
                with contextlib.suppress(OSError):  # no daemon has the port open: lost (the shoe resends)
                    os.write(self._master, data)
            if self._master in ready:
                try:
                    data = os.read(self._master, 4096)
                except OSError:  # no daemon has the port open (killed, not yet restarted)
                    self._stop.wait(0.02)
                    continue
                for frame in from_host.feed(data):
                    if not isinstance(frame, Frame):
                        continue
                    with self._lock:
                        self._host_frames.append(frame)
                        damaged = (self._armed and not self._late and isinstance(frame.message, Ack)
                                   and frame.seq == self._damaged_seq)
                        if damaged:
                            self._dropped = frame
                    if not damaged:
                        os.write(self._shoe, encode_frame(frame.seq, frame.message))


@pytest.fixture
def shuffler(tmp_path: Path) -> Iterator[tuple[SimulatedShoe, AckDamagingLine, Path]]:
    """The simulated shuffler behind the line, and the profile of the daemon's end of the line."""
    sim = SimulatedShoe("v1", deck=DECK, mode="dealing_shuffler")
    line = AckDamagingLine(sim.open_pty())
    profile = tmp_path / "shuffler.yaml"
    # dispense_timeout well past the test's held ACK: no feed tilt blurs what is asked for.
    profile.write_text(f"port: {line.path}\nprotocol: v1\nmode: dealing_shuffler\ndispense_timeout: 8\n"
                       "baud: 115200\nheartbeat_timeout: 5.0\nreconnect: {initial: 0.05, max: 0.2}\n")
    try:
        yield sim, line, profile
    finally:
        line.close()
        sim.close()


@pytest.fixture
def table(tmp_path: Path, shuffler: tuple[SimulatedShoe, AckDamagingLine, Path]
          ) -> Iterator[tuple[SimulatedShoe, AckDamagingLine, Daemon, CommandClient]]:
    sim, line, profile = shuffler
    with dealt_by(tmp_path, sim, profile) as (daemon, client):
        yield sim, line, daemon, client


def dispenses(line: AckDamagingLine) -> int:
    return sum(isinstance(f.message, Dispense) for f in line.host_sent())


def reset_while_the_second_card_crosses(line: AckDamagingLine, start_reset: Callable[[], None]) -> None:
    """The round's first card's ACK is damaged; the daemon asks for the second card; the dealer's
    reset then waits (rule 10) for the shoe's proof that it got that ACK, and the proof is the second
    card, which the host holds back as the RESET goes out."""
    wait_for(lambda: line.dropped() is not None and dispenses(line) == 2, "the second DISPENSE")
    start_reset()
    threading.Event().wait(1.2)  # the RESET is waiting for its proof (it gives up after 2.5 s)
    line.deliver_late()  # the shoe has its ACK: it sends the second card, which the host holds back


def assert_the_card_crossed_the_reset(line: AckDamagingLine) -> None:
    """The scenario happened: the second card left the shoe before the RESET, and came again after
    its HELLO."""
    assert any(isinstance(f.message, Reset) for f in line.host_sent())
    shoe = [f.message for f in line.shoe_sent()]
    hello = max(i for i, m in enumerate(shoe) if isinstance(m, Hello))
    before = [m.card for m in shoe[:hello] if isinstance(m, CardMsg)]
    after = [m.card for m in shoe[hello:] if isinstance(m, CardMsg)]
    assert after[0] == before[-1] == DECK[1], (before, after)


def assert_each_card_dealt_once(sim: SimulatedShoe, line: AckDamagingLine, rounds: list[dict[str, Any]]
                                ) -> None:
    """Exactly the cards the round asked for came out, each dealt once, in the shuffler's order."""
    dealt = [c["card"] for c in rounds[0]["cards"]]
    assert dealt == [c.code for c in DECK[:len(dealt)]], dealt
    assert sim.stats.dispense_requests == sim.stats.dispensed == len(dealt) == dispenses(line)
    assert sim.remaining == len(DECK) - len(dealt)


def test_a_card_held_back_by_a_reset_answers_its_dispense_and_is_dealt_once(table: Any) -> None:
    sim, line, daemon, client = table
    line.damage_next_card()
    play_to_close(client)
    reply: dict[str, Any] = {}
    resetting = threading.Thread(target=lambda: reply.update(client.call("shoe", action="reset")))
    reset_while_the_second_card_crosses(line, resetting.start)
    resetting.join(10)
    assert {k: reply.get(k) for k in ("ok", "sent")} == {"ok": True, "sent": "RESET"}, reply
    wait_for(lambda: status(client)["phase"] == "idle", "the round to settle")
    assert daemon.shoe.reader.held_a_card
    assert_the_card_crossed_the_reset(line)
    wait_for(lambda: sim.wait_idle(0.1), "the shoe to be idle")
    threading.Event().wait(0.3)  # a second card for one DISPENSE would be on the line by now
    assert_each_card_dealt_once(sim, line, client.call("recall", n=1)["rounds"])
    assert status(client)["tilt"] is None and status(client)["offline"] == {}


@pytest.mark.timeout(90)
def test_a_card_held_back_by_a_reset_the_daemon_was_killed_after_is_not_asked_for_again(
        tmp_path: Path, shuffler: tuple[SimulatedShoe, AckDamagingLine, Path]) -> None:
    """Killed right after that RESET went out (fault point ``shoe_reset_sent``): the restarted daemon
    cannot know that a card was held back, so the HELLO does not void the DISPENSE (the card comes
    again after it and answers it), where it used to ask again and a second card came out."""
    sim, line, profile = shuffler
    t = Croupier(tmp_path, shoe=profile).start(fault="shoe_reset_sent:1:kill")
    try:
        assert sim.wait_idle(30)
        for cmd, fields in (("credit_in", {"seat": 1, "amount": 10_000}), ("new_shoe", {})):
            t.ok(cmd, **fields)
        line.damage_next_card()
        for cmd, fields in (("open", {}), ("bet", {"seat": 1, "spot": "player", "amount": 1000}),
                            ("close", {})):
            t.ok(cmd, **fields)
        assert t.cmd is not None
        reset = t.cmd._socket()  # the reply never comes: the daemon dies as the RESET goes out
        reset_while_the_second_card_crosses(line, lambda: reset.send(b'{"cmd": "shoe", "action": "reset"}'))
        t.died()
        t.start()
        wait_for(lambda: t.status()["phase"] == "idle", "the round to settle with no dealer action")
        assert_the_card_crossed_the_reset(line)
        wait_for(lambda: sim.wait_idle(0.1), "the shoe to be idle")
        threading.Event().wait(0.3)  # a second card for one DISPENSE would be on the line by now
        assert_each_card_dealt_once(sim, line, t.call("recall", n=1)["rounds"])
        assert t.status()["tilt"] is None and t.status()["offline"] == {}
    finally:
        t.stop()
