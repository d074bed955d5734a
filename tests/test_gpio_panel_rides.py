"""What the panels post at the edges a review of their money path found (2026-12-07).

Chips left to ride after a ``repeat_bet`` bet the keyed amount (the choice was dropped when betting
closed); chips the table returned at the close (a lone 2WayWinner ante) were taken for chips moved after
no more bets, halting every seat's deal; a ``repeat_bet`` after a restart under a lower ``max_bet``
selected past it; a Swap-Hand panel at odd-unit limits could select no wager the table takes; and a bounce
of exactly the debounce floor counted as a second press. A real Table, the panel logic and simulated pins
(tests/test_gpio_rig.py).
"""

from __future__ import annotations

import pytest
from test_gpio_rig import Rig, build_map

from controller import inputs as I
from controller.cards import parse_card
from controller.daemon.panels import after_restart
from controller.limits import TableLimits
from controller.panels.logic import PanelLogic
from controller.panels.view import LampView
from drivers.gpio.pinmap import BET_WORDS

pytestmark = pytest.mark.timeout(60)


def _baccarat(limits: TableLimits | None = None) -> Rig:
    spots = {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"]}}
    return Rig(build_map("baccarat", spots, dealer=True), limits=limits)


def _round_over(rig: Rig) -> None:
    rig.press(None, "close_betting")
    rig.sync()
    rig.press(None, "void")  # the round over (a settlement ends betting the same way)
    rig.sync()


def test_chips_left_to_ride_after_a_repeat_bet_bet_what_the_panel_shows() -> None:
    rig = _baccarat()
    rig.press(None, "open_betting")
    rig.sync()
    for _ in range(4):
        rig.press(1, "bet_up")  # 500
    rig.chips(1, "banker", True)
    rig.sync()
    _round_over(rig)
    rig.chips(1, "banker", False)
    rig.press(1, "clear_bet")  # keyed back to the minimum
    rig.press(None, "open_betting")
    rig.sync()
    rig.press(1, "repeat_bet")  # banker 500 again
    rig.chips(1, "banker", True)
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 500}
    _round_over(rig)
    assert rig.panel.logic.selected(1, "banker") == 500  # what the panel shows, no key pressed since
    rig.press(None, "open_betting")  # the same chips left on the spot: they ride
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 500}


def test_a_repeat_bet_after_a_restart_under_a_lower_max_bet_stops_at_it() -> None:
    rig = _baccarat(TableLimits(min_bet=100, max_bet=5000))
    after_restart(rig.panel.logic, {1: {"banker": 10_000}}, 100)  # the journal's last round, under 10,000
    rig.press(None, "open_betting")
    rig.sync()
    rig.press(1, "repeat_bet")
    assert rig.panel.logic.selected(1, "banker") == 5000
    rig.chips(1, "banker", True)
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 5000}


def test_chips_the_table_returned_at_the_close_are_lifted_without_halting_the_deal() -> None:
    seats = {1: {"spots": ["bj_ante", "poker_ante"]}, 2: {"spots": ["bj_ante", "poker_ante"]}}
    rig = Rig(build_map("two_way_winner", seats, dealer=True), limits=TableLimits(seats=6))
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "bj_ante", True)  # seat 1: one ante only, handed back at the close
    rig.chips(2, "bj_ante", True)
    rig.chips(2, "poker_ante", True)
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
    assert (1, "bj_ante") not in rig.table.staked and (2, "poker_ante") in rig.table.staked
    rig.chips(1, "bj_ante", False)  # the dealer pushes the unmatched chips back
    rig.sync()
    assert not rig.table.offline and rig.table.tilt is None
    assert [e.event for e in rig.table.apply(I.CardSeen(parse_card("2H")))] == ["card_dealt"]
    rig.chips(2, "poker_ante", False)  # chips of a standing wager lifted: still a move that halts
    rig.sync()
    assert "panel 2" in rig.table.offline


@pytest.mark.parametrize(("min_bet", "max_bet"), [(300, 100_000), (200, 1_100)])
def test_a_swap_hand_panel_selects_only_even_units_whatever_the_limits(min_bet: int, max_bet: int) -> None:
    """Swap-Hand takes a main wager of an even number of units (its Odds-Win is half). At an odd ``min_bet``
    the panel stepped by ``bet_step: 2`` from it selected only odd amounts, and at an odd ``max_bet`` the
    limit itself: every panel bet refused (a review, 2026-12-07)."""
    pin_map = build_map("swap_hand", {1: {"buttons": list(BET_WORDS), "spots": ["main"]}}, dealer=True,
                        bet_step=2, bet_hold={"steps": [2, 10]})  # as the shipped swap_hand.yaml
    rig = Rig(pin_map, limits=TableLimits(min_bet=min_bet, max_bet=max_bet))
    rig.press(None, "open_betting")
    rig.sync()
    for presses in (0, 1, 100):
        rig.press(1, "clear_bet")
        for _ in range(presses):
            rig.press(1, "bet_up")
        amount = rig.panel.logic.selected(1, "main")
        assert amount % 200 == 0 and min_bet <= amount <= max_bet, amount
        rig.chips(1, "main", True)
        rig.sync()
        assert rig.table.staked.get((1, "main")) == amount, rig.table.staked
        rig.chips(1, "main", False)
        rig.sync()


@pytest.mark.parametrize("open_ms", [4.9, 5.0])
def test_a_bounce_as_long_as_the_debounce_floor_is_one_press(open_ms: float) -> None:
    """A review (2026-12-07): at ``debounce_ms: 5`` (the least a map may set), a contact that opened for
    exactly 5 ms in a press counted as two presses; 4.9 ms as one."""
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"]}}, debounce_ms=5))
    pin = rig.map.seats[1].buttons["hit"].pin
    rig.pins.drive(pin, False)  # pressed (active low)
    rig.clock.t += 0.005  # settled: a press
    rig.pins.drive(pin, True)  # the contact bounces open...
    rig.clock.t += open_ms / 1000
    rig.pins.drive(pin, False)  # ...and closes again
    rig.step(0.1)
    rig.pins.drive(pin, True)  # released
    rig.step(0.1)
    assert [i for i, _ in rig.posted] == [I.Decision(1, "hit")]


def test_chips_put_down_as_betting_closes_are_no_wager_and_are_lifted_without_halting_the_deal() -> None:
    """Chips put down on an empty spot while the close was being applied: their wager came after it and was
    refused, so they stand for nothing. They were taken for chips standing at the close, so the dealer
    pushing them back (a late bet is no bet) halted every seat's deal; putting chips down on the spot once
    the deal is under way is still a move that halts."""
    rig = _baccarat()
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "player", True)
    rig.sync()
    rig.press(None, "close_betting")
    rig.chips(1, "banker", True)  # the sensor settles before the table has applied the close
    rig.sync()
    assert rig.table.staked == {(1, "player"): 100}
    assert not rig.table.offline and rig.table.tilt is None
    rig.chips(1, "banker", False)  # the dealer pushes the late chips back
    rig.sync()
    assert not rig.table.offline and rig.table.tilt is None
    assert [e.event for e in rig.table.apply(I.CardSeen(parse_card("2H")))] == ["card_dealt"]
    rig.chips(1, "banker", True)  # chips put down during the deal: a move, as on any spot without a wager
    rig.sync()
    assert "panel 1" in rig.table.offline


def test_chips_that_wager_nothing_at_the_close_are_lifted_without_halting_the_deal() -> None:
    """Chips down while a restart's blink says the amount is not chosen yet place no wager (docs/wiring.md);
    lifted after the close, they are no move either."""
    rig = _baccarat()
    rig.panel.logic.choose_again()  # as after a restart: bet keys blink, chips wager nothing
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    assert rig.table.staked == {}
    rig.press(None, "close_betting")
    rig.sync()
    rig.chips(1, "banker", False)
    rig.sync()
    assert not rig.table.offline and rig.table.tilt is None


def test_after_a_restart_mid_deal_chips_on_a_spot_with_no_wager_are_pushed_back_without_a_move() -> None:
    """The panel's first view in a deal (a daemon restarted): chips on a spot the table holds no wager on
    stand for nothing, as at the close; lifted, no move; put down again, a move."""
    logic = PanelLogic(build_map("baccarat", {1: {"spots": ["player", "banker"]}}), TableLimits())
    logic.covered.update({(1, "player"): True, (1, "banker"): True})
    assert logic.update(LampView(phase="dealing", wagers={(1, "player"): 200}, seated=frozenset({1}))) == []
    assert logic.sensor(1, "banker", False) == []
    placed = logic.sensor(1, "banker", True)
    assert [inp for inp, _ in placed] == [
        I.DeviceStatus("panel 1", False, "chips moved after no more bets: banker chips placed")]
    assert [inp for inp, _ in logic.sensor(1, "player", False)] == [I.DeviceStatus(
        "panel 1", False, "chips moved after no more bets: banker chips placed; chips moved after no more "
        "bets: player chips lifted")]
