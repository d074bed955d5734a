"""The GPIO panel's inputs against a real Table over gpiozero's mock pins: presses, chips, faults.

Time is a stepped clock (tests/test_gpio_rig.py), so debounce and stuck times
are exact and nothing sleeps. The lamps through whole rounds are in tests/test_gpio_panel_lamps.py.
"""

from __future__ import annotations

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.logic import PanelLogic
from controller.panels.view import LampView
from drivers.gpio import LampMode
from drivers.gpio.pinmap import BET_2X, BET_WORDS, PinMap
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
    rig.stake_and_close(1, "player")
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



def test_chips_lifted_while_the_close_is_being_journaled_are_chips_moved_after_no_more_bets() -> None:
    """The lift reaches the panel before the close's new state does: it posts a cancel, which the table
    refuses (betting closed), and the panel then took the sensor as it read after the lift for the state at
    the close: the wager stood, no fault, no halt (a helper's review, 2026-12-07)."""
    rig = Rig(build_map("baccarat", {1: {"spots": ["player"]}}, dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "player", True)
    rig.sync()
    rig.press(None, "close_betting")
    close = rig.posted.pop(0)[0]
    rig.table.apply(close)           # journaled and applied on the daemon's loop...
    rig.chips(1, "player", False)    # ...while the panel, its view still "betting", sees the chips lifted
    rig.panel.update(LampView.from_table(rig.table))
    events = rig.sync()
    assert [e.event for e in events][:1] == ["refused"]  # the cancel: betting had closed
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: player chips lifted"}
    assert rig.table.tilt is not None and rig.table.tilt.reason == "device_offline"
    rig.chips(1, "player", True)     # the chips back: as at the close
    rig.sync()
    assert rig.table.offline == {}


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
    antes = {(1, "poker_ante"): 300, (1, "bj_ante"): 300}
    logic.update(LampView(phase="dealing", wagers=antes, due={1: ("check", "bet")}, bets={1: (300, 600)}))
    assert logic.button(1, BET_2X) == [(I.Decision(1, "bet", 600), "gpio seat 1 bet_2x")]
    assert logic.lamps()[f"seat 1 {BET_2X}"] is LampMode.BLINK
    logic.update(LampView(phase="dealing", wagers=antes, due={1: ("check", "bet")}, bets={1: (300,)}))
    assert logic.lamps()[f"seat 1 {BET_2X}"] is LampMode.OFF  # only 1x taken: tests/test_gpio_bet_2x_lamp.py
    assert logic.lamps()["seat 1 bet"] is LampMode.BLINK


class _Line:
    """A simulated line of a chip that may stop answering (the set of dead chips is shared)."""

    def __init__(self, dead: set[str], chip: str) -> None:
        self.lit = self.is_active = False
        self.dead, self.chip = dead, chip

    def set(self, lit: bool) -> None:
        if self.chip in self.dead:
            raise OSError(121, "Remote I/O error")
        self.lit = lit

    def close(self) -> None:
        pass


class _TwoChips:
    """Simulated hardware: the header and an expander, each line a :class:`_Line`."""

    name = "simulated"

    def __init__(self) -> None:
        self.dead: set[str] = set()

    def input(self, pin: int, *, pull: str, active_high: bool, on_change: object,
              chip: str = "header") -> _Line:
        return _Line(self.dead, chip)

    def output(self, pin: int, *, active_high: bool, chip: str = "header") -> _Line:
        return _Line(self.dead, chip)

    def close(self) -> None:
        pass


def test_a_dead_expander_keeps_its_panels_offline_while_the_headers_lamps_still_work() -> None:
    """A map's lamps on two chips, the expander dead: offline once, not offline and online at every blink
    because the header's lamp was written (a review, 2026-12-05); online once the expander answers again."""
    pin_map = PinMap.model_validate({"game": "baccarat", "chip": "0x21", "seats": {1: {"buttons": {
        "bet_up": {"pin": 0, "lamp": {"pin": 10}},  # on the expander
        "bet_down": {"pin": 1, "lamp": {"pin": 17, "chip": "header"}}},
        "spots": {"player": {"sensor": {"pin": 7}}}}}})
    clock = [0.0]
    hardware = _TwoChips()
    posts: list[dict[str, object]] = []
    link = PanelLink(pin_map, hardware, lambda inp, _: posts.append(inp.to_dict()), TableLimits(seats=7),
                     clock=lambda: clock[0])
    link.start(thread=False)
    hardware.dead.add("0x21")
    link.panel.show({"seat 1 bet_up": LampMode.BLINK, "seat 1 bet_down": LampMode.BLINK})
    for step in range(1, 9):
        clock[0] = step * 0.5
        link.pump(clock[0])
    assert [(p["device"], p["online"]) for p in posts] == [("panel 1", False)], posts
    hardware.dead.clear()
    clock[0] = 5.0
    link.pump(clock[0])
    assert [(p["device"], p["online"]) for p in posts] == [("panel 1", False), ("panel 1", True)], posts


def test_a_panel_with_a_dead_expander_stops_and_releases_every_line() -> None:
    """Turning the lamps off at stop raises on a dead chip: the rest of the stop must still run (a review,
    2026-12-05: it raised out of stop, past the daemon's own clean-up)."""
    pin_map = PinMap.model_validate({"game": "baccarat", "chip": "0x21", "seats": {1: {"buttons": {
        "bet_up": {"pin": 0, "lamp": {"pin": 10}}}, "spots": {"player": {"sensor": {"pin": 7}}}}}})
    hardware = _TwoChips()
    link = PanelLink(pin_map, hardware, lambda inp, _: None, TableLimits(seats=7), clock=lambda: 0.0)
    link.start(thread=False)
    link.panel.show({"seat 1 bet_up": LampMode.ON})
    hardware.dead.add("0x21")
    link.stop()
    assert all(entry.line is None for entry in link.panel._inputs)
