"""The GPIO panel's lamps against a real Table over gpiozero's mock pins: every step of a round, every fault.

Every lamp on the mock pins is read against the table through a whole round of each game, and in
the fault patterns of a tilt and a journal fault. Time is a stepped clock (tests/test_gpio_rig.py),
so blinks are read at exact instants and nothing sleeps; presses and chips are in
tests/test_gpio_panel.py.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.game_base import CardDue
from controller.game_base import DecisionDue as DecisionDueState
from controller.games import GAMES
from controller.limits import TableLimits
from controller.panels.view import JOURNAL_FAULT, LampView
from drivers.gpio import LampMode
from drivers.gpio.pinmap import BET_2X, BET_WORDS
from tests.test_gpio_rig import Rig, build_map

pytestmark = pytest.mark.timeout(30)


#: Each game: seats with a panel, the table's extra seats, what to bet, options, and (optionally) fixed cards.
ROUNDS = {
    "baccarat": {"bets": {1: "banker", 2: "player"}, "cards": "2H KS 9C KD"},
    "swap_hand": {"bets": {1: "main", 2: "main"}, "min_bet": 200},  # an even number of units (Odds-Win)
    "two_way_winner": {"bets": {1: ("bj_ante", "poker_ante"), 2: ("bj_ante", "poker_ante")}},
    "one_card_poker": {"bets": {1: "primary", 2: "primary"}, "dp": 3, "cards": "9C 5S 9H KD 2H"},
}
#: The action a test player picks when several are legal (first found wins).
PREFERENCE = ["keep", "poker", "extend", "dp_extend", "stand", "check", "hit", "blackjack", "bet"]


def _panel_seats(game: str) -> dict[int, dict[str, object]]:
    """Panels that fit one header with the tower: seat 1 full (2WayWinner without spot lamps), another seat
    (seat 2, or One Card Poker's DP) with a few unlit buttons; seats without a panel act by command."""
    cls = GAMES[game]
    bets = ROUNDS[game]["bets"][1]
    spots = list(bets) if isinstance(bets, tuple) else [bets]
    if game == "baccarat":
        return {1: {"buttons": ["bet_up", "repeat_bet"], "spots": spots}}
    other = int(ROUNDS[game].get("dp", 2))
    few = [w for w in cls.actions if w in ("dp_extend", "dp_decline", "stand", "keep")]
    seats: dict[int, dict[str, object]] = {
        1: {"buttons": list(cls.actions), "spots": spots, "spot_lamps": game != "two_way_winner"}}
    if game != "two_way_winner":  # 2WayWinner's seat 1 and the tower take 26 pins
        seats[other] = {"buttons": few, "lamps": False}
    return seats


def _dealer(rig: Rig, word: str) -> None:
    """The dealer's action: by the dealer panel when the map has one, else by command."""
    if rig.map.dealer is not None:
        rig.press(None, word)
    else:
        inp = {"open_betting": I.OpenBetting(), "close_betting": I.CloseBetting()}[word]
        rig.posted.append((inp, "test"))
    rig.sync()


def _check_lamps(rig: Rig, game: str) -> None:
    """Every lamp on the mock pins against the real table (read at a whole second: blinks are lit)."""
    rig.at_whole_second()
    table = rig.table
    due = table.due()
    choices = due.choices if isinstance(due, DecisionDueState) else {}
    tilted = table.tilt is not None
    for seat, panel in rig.map.seats.items():
        for word, button in panel.buttons.items():
            if button.lamp is None:
                continue
            legal = (word if word != BET_2X else "bet") in choices.get(seat, ())
            if word in BET_WORDS:
                legal = table.phase == "betting" and seat in table.credits
            assert rig.lamp_level(button.lamp.pin) == (legal or tilted), (game, seat, word, choices)
        for spot, spec in panel.spots.items():
            if spec.lamp is not None:
                assert rig.lamp_level(spec.lamp.pin) == ((seat, spot) in table.staked or tilted), (game, spot)
    assert rig.map.tower is not None
    names = ("idle", "betting", "in_play", "fault")
    tower = {n: rig.lamp_level(getattr(rig.map.tower, n).pin) for n in names}
    expected = {"idle": table.phase == "idle", "betting": table.phase == "betting",
                "in_play": table.phase == "dealing", "fault": bool(table.offline)}
    fault_only = {"idle": False, "betting": False, "in_play": False, "fault": True}
    assert tower == (fault_only if tilted else expected)
    if choices:  # half a second later the "your turn" lamps are dark: they blink
        rig.clock.t += 0.5
        rig.panel.pump()
        for seat, actions in choices.items():
            if seat in rig.map.seats:
                for word in actions:
                    button = rig.map.seats[seat].buttons.get(word)
                    if button is not None and button.lamp is not None:
                        assert not rig.lamp_level(button.lamp.pin)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_lamps_tell_the_truth_at_every_step_of_a_round(game: str) -> None:
    assert set(ROUNDS) == set(GAMES), "every game in GAMES has a round here"
    spec = ROUNDS[game]
    seats = _panel_seats(game)
    pin_map = build_map(game, seats, dealer=game == "baccarat", tower=True)
    limits = TableLimits(seats=GAMES[game].default_seats, min_bet=int(spec.get("min_bet", 100)))
    rig = Rig(pin_map, credits={1: 100_000, 2: 100_000, 3: 100_000}, limits=limits)
    if "dp" in spec:
        rig.table.apply(I.SetDesignatedPlayer(int(spec["dp"])))
    rig.sync()
    _check_lamps(rig, game)
    _dealer(rig, "open_betting")
    _check_lamps(rig, game)
    for seat, spots in spec["bets"].items():
        for spot in (spots if isinstance(spots, tuple) else (spots,)):
            if seat in rig.map.seats and spot in rig.map.seats[seat].spots:
                rig.chips(seat, spot, True)
            else:
                rig.table.apply(I.PlaceWager(seat, spot, limits.min_bet))  # no panel: a bet by command
            rig.sync()
            _check_lamps(rig, game)
    _dealer(rig, "close_betting")
    assert rig.table.phase == "dealing", rig.events[-3:]
    _check_lamps(rig, game)
    fixed = spec.get("cards")
    deck = fixed.split() if isinstance(fixed, str) else [r + s for r in "A23456789TJQK" for s in "SHDC"]
    if not isinstance(fixed, str):
        random.Random(7).shuffle(deck)
    refused_once = False
    for _ in range(80):
        due = rig.table.due()
        if rig.table.phase != "dealing":
            break
        if isinstance(due, CardDue):
            rig.table.apply(I.CardSeen(parse_card(deck.pop(0))))
        else:
            assert isinstance(due, DecisionDueState)
            seat, legal = next(iter(sorted(due.choices.items())))
            if not refused_once:  # a press that is not legal now: posted, refused, nothing changes
                buttons = rig.map.seats[1].buttons
                wrong = next((w for w in buttons if w not in legal and w not in BET_WORDS), None)
                if wrong is not None:
                    before = rig.table.snapshot()
                    rig.press(1, wrong)
                    assert [e.event for e in rig.sync()] == ["refused"]
                    assert rig.table.snapshot() == before
                    refused_once = True
            word = next(w for w in PREFERENCE + list(legal) if w in legal)
            if seat in rig.map.seats and word in rig.map.seats[seat].buttons:
                rig.press(seat, word)
                assert rig.posted[-1][0] == I.Decision(seat, word)
            else:
                rig.table.apply(I.Decision(seat, word))
        rig.sync()
        _check_lamps(rig, game)
    assert rig.table.phase == "idle" and rig.table.rounds_settled == 1
    _check_lamps(rig, game)


def _dealing_rig() -> Rig:
    """One seat with a staked main bet, dealing; the dealer panel (no lamps) and the tower."""
    pin_map = build_map("swap_hand", {1: {"buttons": ["hit", "stand"], "spots": ["main"]}}, tower=True,
                        dealer=True)
    rig = Rig(pin_map, limits=TableLimits(min_bet=200))
    rig.stake_and_close(1, "main")
    return rig


def test_a_tilt_puts_every_lamp_in_the_fault_pattern() -> None:
    rig = _dealing_rig()
    assert rig.table.phase == "dealing"
    rig.table.apply(I.DeviceStatus("shoe", False, "unplugged"))
    rig.sync()
    modes = rig.panel.lamp_modes()
    assert {modes[k] for k in modes if k.startswith("seat")} == {LampMode.FAULT}
    assert modes["tower fault"] is LampMode.FAULT and modes["tower in_play"] is LampMode.OFF
    _check_lamps(rig, "swap_hand")


def test_a_journal_fault_lights_no_dealer_action() -> None:
    """No input is applied during a journal fault (void neither): no dealer lamp offers one."""
    rig = _dealing_rig()
    assert "void" in rig.panel.logic._dealer_lit()  # (this map's dealer has no lamps)
    view = dataclasses.replace(LampView.from_table(rig.table), tilt=JOURNAL_FAULT)
    rig.panel.logic.update(view)
    modes = rig.panel.logic.lamps()
    assert rig.panel.logic._dealer_lit() == set()  # void stayed lit before
    assert {modes[k] for k in modes if k.startswith("seat")} == {LampMode.FAULT}
    assert modes["tower fault"] is LampMode.FAULT
    assert {modes[f"tower {n}"] for n in ("idle", "betting", "in_play")} == {LampMode.OFF}


def test_close_betting_is_not_offered_while_a_device_is_offline() -> None:
    """Close is refused while a device is offline (the shoe's lid open): its lamp is dark, void stays (a
    review, 2026-12-05: close_betting stayed lit)."""
    rig = _dealing_rig()
    rig.table.apply(I.VoidRound())
    rig.table.apply(I.OpenBetting())
    rig.sync()
    assert rig.panel.logic._dealer_lit() == {"close_betting", "void"}
    rig.table.apply(I.DeviceStatus("shoe lid", False, "lid open"))
    rig.sync()
    assert rig.panel.logic._dealer_lit() == {"void"}
    rig.table.apply(I.DeviceStatus("shoe lid", True, "lid closed"))
    rig.sync()
    assert rig.panel.logic._dealer_lit() == {"close_betting", "void"}
