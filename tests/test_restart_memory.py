"""What a SIGKILLed daemon must not forget: a seat's repeat bet, the shuffler's DISPENSE, a RESET in flight.

Each test kills the real daemon (``croupier run``) at the instant issue 33
describes, with ``CROUPIER_FAULT`` where the instant is inside the daemon,
and starts it again on the same journal (restart_support.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from restart_support import BACCARAT_PANEL, Croupier, shuffler
from wait_support import wait_for

from controller.daemon.client import DaemonUnavailable
from controller.daemon.journal import Journal
from controller.daemon.service import TableService
from controller.simulation.shoe_shuffle import ShuffledShoe
from drivers.shoe.sim import SimulatedShoe

BET_KEYS = ("bet_up", "bet_down", "repeat_bet")


def wagers(t: Croupier) -> dict[tuple[int, str], int]:
    return {(w["seat"], w["spot"]): w["amount"] for w in t.status()["wagers"]}


def bet_lamps(t: Croupier, seat: int) -> set[str]:
    lamps: dict[str, dict[str, Any]] = json.loads(t.press("lamps"))
    return {lamps[f"seat {seat} {word}"]["mode"] for word in BET_KEYS}


def checkpoint_now(t: Croupier) -> int:
    """With the daemon dead: a checkpoint at the journal's last row, so the next start loads it."""
    c = t.config
    journal = Journal.open(c.state_dir, table=c.table_id, game=c.game_name, options=c.options_dict())
    try:
        service = TableService(c, journal, checkpoint_every=1)
        service.replay()  # writes the checkpoint (the round is over)
        assert service.checkpoint_row == journal.last_id
        return journal.last_id
    finally:
        journal.close()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("from_checkpoint", [False, True], ids=["replayed", "from_checkpoint"])
def test_repeat_bet_after_a_kill_between_rounds_bets_what_the_seat_had_down(
    tmp_path: Path, from_checkpoint: bool
) -> None:
    t = Croupier(tmp_path, panels=[BACCARAT_PANEL]).start()
    shoe = ShuffledShoe(8, 5, 0)
    try:
        t.ok("credit_in", seat=1, amount=100_000)
        t.ok("new_shoe")
        t.ok("open")
        for _ in range(4):
            t.press("press 1 add_25")  # 1 + 4 x 25 units: 10,100
        assert json.loads(t.press("selected 1"))["banker"] == 10_100
        t.press("chips 1 banker on")
        wait_for(lambda: wagers(t) == {(1, "banker"): 10_100}, "the chips' wager")
        t.ok("close")
        while t.status()["phase"] == "dealing":
            t.ok("card", card=str(shoe.draw()))
        t.press("chips 1 banker off")  # the round is settled: the player takes the chips back
        t.kill()  # between rounds: the panels' memory of the round is gone with the process
        row = checkpoint_now(t) if from_checkpoint else None
        t.start()
        if row is not None:
            assert t.status()["journal"]["checkpoint_row"] == row
            assert t.status()["journal"]["replayed_at_start"] == 0  # nothing but the checkpoint
        t.ok("open")
        # The keyed amount is not journaled: back at the minimum, and the bet keys say so by blinking.
        assert json.loads(t.press("selected 1")) == {"player": 100, "banker": 100, "tie": 100}
        assert bet_lamps(t, 1) == {"blink"}
        t.press("press 1 repeat_bet")
        assert json.loads(t.press("selected 1"))["banker"] == 10_100  # the journal's last round
        assert bet_lamps(t, 1) == {"on"}  # keyed again: what the keys select is what chips bet
        t.press("chips 1 banker on")
        wait_for(lambda: wagers(t) == {(1, "banker"): 10_100}, "the repeated wager")
        placed = [i["amount"] for s, i in t.inputs() if i["input"] == "place_wager"]
        assert placed == [10_100, 10_100]
        assert "keyed amount back at the table minimum 100" in t.log
        assert "repeat_bet repeats the journal's last round: seat 1 {'banker': 10100}" in t.log
        assert t.call("recall", n=1)["rounds"][0]["round"] == 2
        assert t.call("recall", n=2)["rounds"][0]["bets"] == {"1": {"banker": 10_100}}
    finally:
        t.stop()


@pytest.fixture
def shuffler_table(tmp_path: Path) -> Iterator[Callable[[float], tuple[SimulatedShoe, Croupier]]]:
    """A table dealt by a simulated dealing shuffler (``dispense_timeout`` given); both closed after."""
    made: list[tuple[SimulatedShoe, Croupier]] = []

    def make(timeout: float) -> tuple[SimulatedShoe, Croupier]:
        sim, profile = shuffler(tmp_path, timeout)
        made.append((sim, Croupier(tmp_path, shoe=profile)))
        return made[-1]

    yield make
    for sim, t in made:
        t.stop()
        sim.close()


def play_to_close(t: Croupier) -> None:
    """Credit, a new shoe, a bet, and close. Closing makes the first card due, and the card that comes
    makes the second due: a fault point armed there may kill the daemon before the close's reply leaves
    it (the reply is only queued for ZeroMQ's I/O thread, and the simulated shuffler's card comes within
    milliseconds; seen once on a loaded CI run). The close is then journaled and the daemon dead, which
    the caller's ``died`` and restart check; a daemon that is alive and silent still fails."""
    for cmd, fields in (("credit_in", {"seat": 1, "amount": 10_000}), ("new_shoe", {}), ("open", {}),
                        ("bet", {"seat": 1, "spot": "player", "amount": 1000})):
        t.ok(cmd, **fields)
    try:
        t.ok("close")
    except DaemonUnavailable:
        assert t.proc is not None
        t.proc.wait(15)  # killed at its fault point, not stuck: else this times out and fails


def cards_of_last_round(t: Croupier) -> int:
    return len(t.call("recall", n=1)["rounds"][0]["cards"])


@pytest.mark.timeout(90)
def test_kill_between_a_cards_commit_and_the_next_dispense_deals_on_without_the_dealer(
    shuffler_table: Callable[[float], tuple[SimulatedShoe, Croupier]],
) -> None:
    sim, t = shuffler_table(1.0)
    # The second DISPENSE of the round is due right after the first card's commit: killed there.
    t.start(fault="dispense_due:2:kill")
    play_to_close(t)
    t.died()
    assert sim.stats.dispense_requests == 1 and [i["input"] for _, i in t.inputs()][-1] == "card"
    t.start()
    wait_for(lambda: t.status()["phase"] == "idle", "the round to settle with no dealer action")
    assert sim.stats.dispense_requests == sim.stats.dispensed == cards_of_last_round(t)
    assert not [i for _, i in t.inputs() if i["input"] == "device"]  # never a feed tilt
    assert "no DISPENSE is on its way for the card due: asking for it" in t.log


@pytest.mark.timeout(90)
def test_kill_after_a_dispense_is_journaled_before_it_is_sent_tilts_saying_the_table_cannot_know(
    shuffler_table: Callable[[float], tuple[SimulatedShoe, Croupier]],
) -> None:
    sim, t = shuffler_table(0.5)
    t.start(fault="dispense_journaled:2:kill")
    play_to_close(t)
    t.died()
    assert sim.stats.dispense_requests == 1  # the second was journaled, never sent
    t.start()
    wait_for(lambda: "shoe feed" in t.status()["offline"], "the tilt")
    why = t.status()["offline"]["shoe feed"]
    assert "after the restart" in why and "not repeated" in why, why
    assert "cannot know whether that DISPENSE reached the shuffler" in t.log
    assert "after DISPENSE 0" not in t.log  # this process sent none
    assert sim.stats.dispense_requests == 1  # waited, never asked twice
    t.ok("shoe", action="reset")  # the dealer looked: the HELLO voids it, the card is asked for
    wait_for(lambda: t.status()["phase"] == "idle", "the round after the reset")
    assert sim.stats.dispense_requests == sim.stats.dispensed == cards_of_last_round(t)


@pytest.mark.timeout(90)
def test_shoe_reset_in_flight_across_a_kill_is_answered_by_the_hello_and_never_asks_twice(
    shuffler_table: Callable[[float], tuple[SimulatedShoe, Croupier]],
) -> None:
    """The HELLO after the restart answers the RESET; it does not void the DISPENSE, since a card the
    killed process held back would come after it (tests/test_dispenser_held_card.py): no card comes,
    so the table tilts saying it cannot know, and the dealer's second reset asks again, once."""
    sim, t = shuffler_table(0.5)
    t.start(fault="shoe_reset_sent:1:kill")
    sim.feed("lose")  # the round's first DISPENSE is never answered: the table tilts for the dealer
    play_to_close(t)
    wait_for(lambda: "shoe feed" in t.status()["offline"], "the feed tilt")
    assert t.cmd is not None
    t.cmd._socket().send(json.dumps({"cmd": "shoe", "action": "reset"}).encode())  # no reply comes
    t.died()  # RESET sent, its HELLO not yet taken
    t.start()
    wait_for(lambda: "HELLO for the RESET sent before the restart" in t.log, "the HELLO of that reset")
    wait_for(lambda: "after the restart" in t.status()["offline"].get("shoe feed", ""), "the tilt")
    why = t.status()["offline"]["shoe feed"]
    assert "the table cannot know whether" in why and "not repeated" in why, why
    assert sim.stats.dispense_requests == 1 and sim.stats.dispensed == 0  # not asked again
    t.ok("shoe", action="reset")  # the dealer looked: this process's HELLO voids it
    wait_for(lambda: t.status()["phase"] == "idle", "the round after the second reset")
    assert sim.stats.dispense_requests == sim.stats.dispensed + 1  # the lost one, never repeated
    assert sim.stats.dispensed == cards_of_last_round(t)
    assert t.status()["offline"] == {}


@pytest.mark.timeout(90)
def test_the_hello_of_a_reset_sent_before_the_restart_after_the_feed_tilt_tilts_again_if_no_card_comes(
    shuffler_table: Callable[[float], tuple[SimulatedShoe, Croupier]],
) -> None:
    """That HELLO comes after the restarted daemon's ``dispense_timeout`` (the shuffler unplugged a
    moment): its feed tilt is over (the HELLO brings the feed back), and the card it may bring must
    come within the timeout again, or the table tilts again saying why, rather than waiting with the
    feed online and nothing on its way."""
    sim, t = shuffler_table(0.5)
    t.start(fault="shoe_reset_sent:1:kill")
    sim.feed("lose")  # the round's first DISPENSE is never answered
    play_to_close(t)
    wait_for(lambda: "shoe feed" in t.status()["offline"], "the feed tilt")
    assert t.cmd is not None
    t.cmd._socket().send(json.dumps({"cmd": "shoe", "action": "reset"}).encode())  # no reply comes
    t.died()  # RESET sent, its HELLO not yet taken
    sim.inject("disconnect", 2.0)  # the restarted daemon hears that HELLO only after its timeout
    t.start()
    wait_for(lambda: "HELLO for the RESET sent before the restart" in t.log, "the HELLO of that reset")
    why = "cannot know whether the DISPENSE was answered"
    wait_for(lambda: why in t.status()["offline"].get("shoe feed", ""), "the tilt after the HELLO", timeout=5)
    assert sim.stats.dispense_requests == 1 and sim.stats.dispensed == 0  # not asked again
