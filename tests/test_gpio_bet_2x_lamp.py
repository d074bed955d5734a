"""2WayWinner's ``bet_2x`` lamp shows only what a press would do: twice the ante, when the table takes it.

At check-or-bet a poker seat may bet the ante; twice the ante only with a natural, and only if its
credits cover it (docs/rules/two_way_winner.md, "Decisions not in the rules file"). The lamp blinked
whenever ``bet`` was legal, so a seat without a natural, or a natural short of credits, saw ``bet_2x``
offered and got a refusal for pressing it. Driven through a real Table, the mock pins and the panel.
"""

from __future__ import annotations

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.game_base import DecisionDue
from controller.limits import TableLimits
from controller.panels.view import LampView
from drivers.gpio import LampMode
from drivers.gpio.pinmap import BET_2X
from tests.test_gpio_rig import Rig, build_map

pytestmark = pytest.mark.timeout(30)

ANTE = 100


def _at_check_or_bet(cards: str, credits: int) -> Rig:
    """Seat 1 antes 100 twice, takes ``cards`` (seat, up, seat, hole), plays poker: check-or-bet is due."""
    pin_map = build_map("two_way_winner", {1: {"buttons": [BET_2X, "bet", "check", "poker"]}})
    rig = Rig(pin_map, credits={1: credits}, limits=TableLimits(seats=6, min_bet=ANTE))
    for inp in (I.OpenBetting(), I.PlaceWager(1, "bj_ante", ANTE), I.PlaceWager(1, "poker_ante", ANTE),
                I.CloseBetting(), *(I.CardSeen(parse_card(c)) for c in cards.split())):
        rig.table.apply(inp)
    rig.sync()
    rig.press(1, "poker")
    rig.sync()
    assert rig.table.due() == DecisionDue({1: ("check", "bet")}), rig.events[-3:]
    return rig


@pytest.mark.parametrize(("cards", "credits", "doubles"), [
    ("AS 5C KH 9D", 5 * ANTE, True),    # a natural with two antes left: 2x is allowed
    ("AS 5C KH 9D", 4 * ANTE, False),   # a natural with one ante left: only 1x
    ("9S 5C 9H 9D", 10 * ANTE, False),  # no natural: only 1x, whatever the credits
])
def test_bet_2x_lamp_blinks_only_when_2x_is_taken(cards: str, credits: int, doubles: bool) -> None:
    rig = _at_check_or_bet(cards, credits)
    modes = rig.panel.lamp_modes()
    assert modes["seat 1 bet"] is LampMode.BLINK  # the ante is always a bet here
    assert modes[f"seat 1 {BET_2X}"] is (LampMode.BLINK if doubles else LampMode.OFF)
    assert LampView.from_snapshot(rig.table.snapshot()) == LampView.from_table(rig.table)  # either way
    rig.press(1, BET_2X)  # and the press does what the lamp showed
    assert rig.posted[-1][0] == I.Decision(1, "bet", 2 * ANTE)
    events = [e.event for e in rig.sync()]
    assert ("refused" not in events) == doubles, events
    assert rig.table.staked.get((1, "poker_bet")) == (2 * ANTE if doubles else None)
