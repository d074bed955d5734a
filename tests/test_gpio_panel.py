"""The GPIO panel against a real Table over gpiozero's mock pins: presses, chips, lamps, faults.

Time is a stepped clock (tests/test_gpio_rig.py), so debounce and stuck times
are exact and nothing sleeps.
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
from controller.panels.logic import PanelLogic
from controller.panels.view import JOURNAL_FAULT, LampView
from drivers.gpio import LampMode
from drivers.gpio.pinmap import BET_2X, BET_WORDS
from tests.test_gpio_rig import Rig, build_map

pytestmark = pytest.mark.timeout(30)


def kinds(rig: Rig) -> list[str]:
    return [inp.kind for inp, _ in rig.posted]


# ------------------------------------------------------------------ debounce
def test_a_bouncing_press_is_one_press() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"]}}))
    pin = rig.map.seats[1].buttons["hit"].pin
    for _ in range(6):  # a contact chattering 1 ms at a time, then held
        rig.pins.drive(pin, False)
        rig.clock.t += 0.001
        rig.pins.drive(pin, True)
        rig.clock.t += 0.001
    rig.pins.drive(pin, False)
    rig.step(0.1)
    rig.pins.drive(pin, True)
    rig.step(0.1)
    assert rig.posted == [(I.Decision(1, "hit"), "gpio seat 1 hit")]


def test_a_glitch_shorter_than_the_settle_time_is_no_press() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"]}}))
    pin = rig.map.seats[1].buttons["hit"].pin
    rig.pins.drive(pin, False)
    rig.clock.t += 0.010  # debounce_ms 20
    rig.pins.drive(pin, True)
    rig.step(0.5)
    assert rig.posted == []


def test_a_press_and_release_between_two_pumps_is_still_a_press() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit", "stand"]}}))
    for word in ("hit", "stand"):
        pin = rig.map.seats[1].buttons[word].pin
        rig.pins.drive(pin, False)
        rig.clock.t += 0.03
        rig.pins.drive(pin, True)
        rig.clock.t += 0.03
    rig.step(1.0)
    assert [inp for inp, _ in rig.posted] == [I.Decision(1, "hit"), I.Decision(1, "stand")]


def test_simultaneous_presses_are_all_posted_in_one_order() -> None:
    words = ["hit", "stand", "double"]
    rig = Rig(build_map("swap_hand", {1: {"buttons": words, "lamps": False},
                                      2: {"buttons": words, "lamps": False}}))
    order = [(2, "stand"), (1, "hit"), (2, "double"), (1, "double"), (2, "hit"), (1, "stand")]
    for seat, word in order:  # all in the same instant of the clock
        rig.pins.drive(rig.map.seats[seat].buttons[word].pin, False)
    rig.step(0.1)
    assert [inp for inp, _ in rig.posted] == [I.Decision(s, w) for s, w in order]


# ------------------------------------------------------ one decision path
def test_a_press_in_the_wrong_phase_is_posted_and_refused_with_nothing_changed() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"], "spots": ["main"]}}))
    before = rig.table.snapshot()
    rig.press(1, "hit")
    assert rig.posted == [(I.Decision(1, "hit"), "gpio seat 1 hit")]
    events = rig.sync()
    assert [e.event for e in events] == ["refused"]
    assert "no round is in play" in events[0].to_dict()["reason"]
    assert rig.table.snapshot() == before


# ------------------------------------------------------------- bet sensors
def test_chips_place_the_selected_amount_and_lifting_cancels() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"]}},
                        dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    rig.press(1, "bet_up")
    rig.press(1, "bet_up")
    rig.press(1, "bet_down")
    assert rig.posted == []  # choosing an amount is local to the panel
    rig.chips(1, "banker", True)
    assert [inp for inp, _ in rig.posted] == [I.PlaceWager(1, "banker", 200)]
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 200}
    rig.chips(1, "banker", False)
    rig.sync()
    assert rig.table.staked == {}
    for _ in range(50):  # bet_down stops at the table minimum
        rig.press(1, "bet_down")
    assert rig.panel.logic.selected(1, "player") == rig.table.limits.min_bet


def test_a_flapping_sensor_is_debounced_and_never_bets_twice() -> None:
    rig = Rig(build_map("baccarat", {1: {"spots": ["player"]}}, dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    pin = rig.map.seats[1].spots["player"].sensor.pin
    for _ in range(20):  # a chip stack rocking on the sensor, 3 ms per flap
        rig.pins.drive(pin, False)
        rig.clock.t += 0.003
        rig.pins.drive(pin, True)
        rig.clock.t += 0.003
    rig.pins.drive(pin, False)
    rig.step(0.2)
    assert [inp for inp, _ in rig.posted] == [I.PlaceWager(1, "player", 100)]
    rig.sync()
    assert rig.table.staked == {(1, "player"): 100}


def test_repeat_bet_selects_last_rounds_wagers_spot_by_spot() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "tie"]}},
                        dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    for _ in range(4):
        rig.press(1, "bet_up")
    rig.chips(1, "player", True)
    rig.press(1, "bet_down")
    rig.press(1, "bet_down")
    rig.chips(1, "tie", True)
    rig.sync()
    assert rig.table.staked == {(1, "player"): 500, (1, "tie"): 300}
    rig.press(None, "void")
    rig.sync()
    rig.chips(1, "player", False)
    rig.chips(1, "tie", False)
    rig.press(1, "repeat_bet")
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "tie", True)
    rig.chips(1, "player", True)
    rig.sync()
    assert rig.table.staked == {(1, "player"): 500, (1, "tie"): 300}


def test_chips_already_down_when_betting_opens_are_placed() -> None:
    rig = Rig(build_map("baccarat", {1: {"spots": ["banker"]}}, dealer=True))
    rig.chips(1, "banker", True)
    assert rig.posted == []  # idle: nothing to bet on yet
    rig.press(None, "open_betting")
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 100}


def test_chips_moved_after_no_more_bets_is_a_fault_that_changes_no_wager() -> None:
    rig = Rig(build_map("baccarat", {1: {"spots": ["player", "tie"]}}, dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "player", True)
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
    staked, credits = dict(rig.table.staked), dict(rig.table.credits)
    rig.chips(1, "player", False)  # past-posting in reverse: a stake pulled after the close
    rig.chips(1, "tie", True)      # and one added
    assert [inp.kind for inp, _ in rig.posted] == ["device", "device"]
    fault = rig.posted[-1][0]
    assert isinstance(fault, I.DeviceStatus) and fault.device == "panel 1" and not fault.online
    assert "chips moved after no more bets" in fault.detail
    assert "player" in fault.detail and "tie" in fault.detail
    rig.sync()
    assert rig.table.staked == staked and rig.table.credits == credits
    assert rig.table.tilt is not None and rig.table.tilt.reason == "device_offline"
    assert rig.table.apply(I.CardSeen(parse_card("2H")))[0].event == "card_held"  # no deal on a moved stake
    rig.chips(1, "tie", False)
    rig.chips(1, "player", True)  # chips back as they were at the close
    assert [inp for inp, _ in rig.posted] == [
        I.DeviceStatus("panel 1", False, "chips moved after no more bets: player chips lifted"),  # one left
        I.DeviceStatus("panel 1", True, "chips player: back to normal"),
    ]
    rig.sync()
    assert rig.table.tilt is not None and rig.table.tilt.reason == "held_card" and rig.table.staked == staked
    assert [e.event for e in rig.table.apply(I.TakeHeld())][:2] == ["tilt_cleared", "card_dealt"]
    assert rig.table.tilt is None



def test_the_dealer_confirm_takes_a_held_card_and_its_lamps_say_so() -> None:
    """During a ``held_card`` tilt the dealer's confirm, burn and void lamps are lit; confirm takes."""
    rig = Rig(build_map("baccarat", {1: {"spots": ["player"]}}, dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    rig.table.apply(I.PlaceWager(1, "player", 100))
    rig.press(None, "close_betting")
    rig.sync()
    for inp in (I.DeviceStatus("shoe lid", False, "lid open"), I.CardSeen(parse_card("2H")),
                I.DeviceStatus("shoe lid", True)):
        rig.posted.append((inp, "test"))
    rig.sync()
    assert rig.panel.logic._dealer_lit() == {"confirm", "burn", "void"}  # (this map's dealer has no lamps)
    rig.press(None, "confirm")
    assert [inp for inp, _ in rig.posted] == [I.TakeHeld()]
    assert [e.event for e in rig.sync()] == ["tilt_cleared", "card_dealt"]
    assert rig.table.tilt is None


def test_at_start_a_missing_stake_is_a_fault_until_its_chips_are_back_or_its_wager_is_gone() -> None:
    """The panel's first view (after a restart): reconciled with the accepted wagers, never posted blindly."""
    pin_map = build_map("baccarat", {1: {"spots": ["banker", "tie"]}})
    missing = I.DeviceStatus("panel 1", False, "chips missing at start: tie wager 200 accepted, no chips on "
                                                "the spot")
    betting = LampView(phase="betting", wagers={(1, "banker"): 200, (1, "tie"): 200}, seated=frozenset({1}))
    for resolve, expected in [
        (lambda lg: lg.sensor(1, "tie", True), "chips tie: back to normal"),          # chips back: it stands
        (lambda lg: lg.update(LampView(phase="betting", wagers={(1, "banker"): 200})),  # cancelled
         "chips tie: back to normal"),
        (lambda lg: lg.update(LampView(phase="idle")), "chips tie: back to normal"),  # voided
    ]:
        logic = PanelLogic(pin_map, TableLimits())
        logic.covered[(1, "banker")] = True
        assert [inp for inp, _ in logic.update(betting)] == [missing]  # banker: chips and wager, nothing
        assert logic.sensor(1, "banker", False)[0][0] == I.CancelWager(1, "banker")  # the rest as ever
        assert [inp for inp, _ in resolve(logic)] == [I.DeviceStatus("panel 1", True, expected)]
        assert logic.faults == {"panel 1": {}}
    logic = PanelLogic(pin_map, TableLimits())  # restarted again, still missing: nothing new to journal
    logic.covered[(1, "banker")] = True
    logic.restore({"panel 1": missing.detail})
    assert logic.update(betting) == []


# ------------------------------------------------------- unplugged / stuck
def test_an_unplugged_panel_is_reported_offline_and_back() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"], "presence": True}}))
    presence = rig.map.seats[1].presence
    assert presence is not None
    detail = f"panel unplugged: presence loop (GPIO {presence.pin}) open"
    # Nothing is plugged into the mock header yet: the pulled-up loop reads open, reported at start.
    assert rig.table.offline == {"panel 1": detail}
    rig.pins.drive(presence.pin, False)  # plugged in: the loop pulls the pin to GND
    rig.step()
    assert rig.posted == [(I.DeviceStatus("panel 1", True, "presence: back to normal"), "gpio panel 1")]
    rig.sync()
    assert rig.table.offline == {}
    rig.pins.drive(presence.pin, True)  # unplugged
    rig.step()
    assert rig.posted == [(I.DeviceStatus("panel 1", False, detail), "gpio panel 1")]
    rig.sync()
    assert rig.table.offline == {"panel 1": detail}
    assert rig.table.apply(I.OpenBetting())[0].event == "betting_opened"
    assert rig.table.apply(I.CloseBetting())[0].event == "refused"  # no deal with a panel missing


def test_a_button_held_past_stuck_after_takes_the_panel_offline_until_released() -> None:
    rig = Rig(build_map("swap_hand", {1: {"buttons": ["hit"]}}, stuck_after_s=5))
    pin = rig.map.seats[1].buttons["hit"].pin
    rig.pins.drive(pin, False)
    rig.step(4.9)
    assert kinds(rig) == ["decision"]
    rig.step(0.2)
    assert kinds(rig) == ["decision", "device"]
    stuck = rig.posted[-1][0]
    assert isinstance(stuck, I.DeviceStatus) and not stuck.online and "stuck" in stuck.detail
    rig.pins.drive(pin, True)
    rig.step()
    assert rig.posted[-1][0] == I.DeviceStatus("panel 1", True, "stuck hit: back to normal")
    assert kinds(rig) == ["decision", "device", "device"]  # no second press on release


# -------------------------------------------------------------- bet_2x
def test_bet_2x_sends_bet_with_twice_the_ante() -> None:
    pin_map = build_map("two_way_winner", {1: {"buttons": [BET_2X, "bet"], "spots": ["poker_ante"]}})
    logic = PanelLogic(pin_map, TableLimits())
    assert logic.button(1, BET_2X) == [(I.Decision(1, "bet", 0), "gpio seat 1 bet_2x")]  # no ante: refused
    logic.update(LampView(phase="dealing", wagers={(1, "poker_ante"): 300, (1, "bj_ante"): 300},
                          due={1: ("check", "bet")}))
    assert logic.button(1, BET_2X) == [(I.Decision(1, "bet", 600), "gpio seat 1 bet_2x")]
    assert logic.lamps()[f"seat 1 {BET_2X}"] is LampMode.BLINK


# ------------------------------------------------ lamps through whole rounds
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
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "main", True)
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
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
