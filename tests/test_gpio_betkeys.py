"""Bet entry a player would accept: chip keys, clear, press-and-hold with acceleration; quiet mock pins."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller import inputs as I
from controller.daemon.config import load_table
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.logic import PanelLogic
from controller.panels.pinmaps import load_pin_map, parse_pin_map
from controller.table import Table
from drivers.gpio import GpioZeroBackend, PinMapError, SimulatedPins, make_factory
from drivers.gpio.betkeys import HoldRepeat, presses_for
from drivers.gpio.pinmap import BetHold, chip_key_units
from tests.test_gpio_rig import Rig, build_map

pytestmark = pytest.mark.timeout(60)

KEYS = ["bet_up", "bet_down", "clear_bet", "add_5", "add_25", "add_100"]


def test_chip_keys_add_their_units_and_clear_goes_back_to_the_minimum() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}, dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    for word in ("add_100", "add_25", "add_5", "bet_up"):
        rig.press(1, word)
    assert rig.panel.logic.selected(1, "banker") == 100 + 131 * 100
    rig.press(1, "clear_bet")
    assert rig.panel.logic.selected(1, "banker") == 100
    rig.press(1, "add_25")
    rig.chips(1, "banker", True)
    assert [inp for inp, _ in rig.posted] == [I.PlaceWager(1, "banker", 2600)]


def test_a_chip_key_stops_at_the_table_maximum() -> None:
    limits = TableLimits(seats=7, unit=100, min_bet=100, max_bet=5000)
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}), limits=limits)
    rig.press(1, "add_100")
    assert rig.panel.logic.selected(1, "banker") == 5000


def test_holding_bet_up_repeats_in_growing_steps_and_stops_on_release() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}))
    pin = rig.map.seats[1].buttons["bet_up"].pin
    rig.pins.drive(pin, False)
    rig.step(0.02)  # the debounce: the press counts now (one unit)
    rig.step(2.05)  # held: repeats at 0.5, 0.6, ... 2.0 s: ten of 1 unit, six of 5
    assert rig.panel.logic.selected(1, "banker") == 100 + (1 + 10 * 1 + 6 * 5) * 100
    rig.pins.drive(pin, True)
    rig.step(5.0)
    assert rig.panel.logic.selected(1, "banker") == 100 + 41 * 100
    assert rig.posted == []


def test_holding_bet_down_walks_down_to_the_minimum_and_no_further() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}))
    rig.press(1, "add_100")
    pin = rig.map.seats[1].buttons["bet_down"].pin
    rig.pins.drive(pin, False)
    rig.step(10.0)
    assert rig.panel.logic.selected(1, "banker") == 100


def test_a_map_without_bet_hold_steps_once_per_press() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}, bet_hold=None))
    pin = rig.map.seats[1].buttons["bet_up"].pin
    rig.pins.drive(pin, False)
    rig.step(5.0)
    assert rig.panel.logic.selected(1, "banker") == 200


def test_a_stuck_bet_button_stops_repeating() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker"]}}, stuck_after_s=1.0,
                        bet_hold={"delay_ms": 500, "interval_ms": 100, "steps": [1]}))
    pin = rig.map.seats[1].buttons["bet_up"].pin
    rig.pins.drive(pin, False)
    rig.step(0.02)
    rig.step(5.0)
    # press + repeats at 0.5 .. 0.9 s (the repeat due at 1.0 s comes after the stuck fault at 1.0 s)
    assert rig.panel.logic.selected(1, "banker") == 100 + 6 * 100
    assert [inp.kind for inp, _ in rig.posted] == ["device"]


def test_hold_repeat_timing_is_exact() -> None:
    hold = HoldRepeat(BetHold(delay_ms=400, interval_ms=50, accelerate_every=2, steps=(1, 10)))
    assert hold.deadline() is None and hold.poll(10.0) == []
    hold.press(1.0)
    assert hold.poll(1.399) == []
    assert hold.poll(1.5) == [1, 1, 10]
    assert hold.deadline() == pytest.approx(1.55)
    hold.release()
    assert hold.poll(9.0) == []


@pytest.mark.parametrize("bad, key", [
    ({"bet_hold": {"steps": [5, 1]}}, "bet_hold"),
    ({"bet_hold": {"interval_ms": 1}}, "bet_hold.interval_ms"),
])
def test_bad_bet_hold_is_refused_naming_the_key(bad: dict[str, object], key: str) -> None:
    with pytest.raises(PinMapError, match=key):
        seats = {1: {"buttons": {"bet_up": {"pin": 4}}}}
        parse_pin_map({"game": "baccarat", "seats": seats, **bad}, "m.yaml")


@pytest.mark.parametrize("word", ["add_0", "add_", "add_x", "add_12345", "add_05"])
def test_a_bad_chip_key_is_an_unknown_action(word: str) -> None:
    with pytest.raises(PinMapError, match=f"seats.1.buttons.{word}"):
        parse_pin_map({"game": "baccarat", "seats": {1: {"buttons": {word: {"pin": 4}}}}}, "m.yaml")
    assert chip_key_units(word) is None


@given(st.integers(1, 400), st.integers(1, 400),
       st.lists(st.sampled_from(KEYS), unique=True))
def test_presses_reach_the_target_when_the_keys_can(start: int, target: int, words: list[str]) -> None:
    limits = TableLimits(seats=7, unit=100, min_bet=100, max_bet=40_000)
    keys = presses_for(start * 100, target * 100, words, limits.unit, limits.min_bet)
    chips = [u for w in words if (u := chip_key_units(w)) is not None]

    def up_ok(frm: int) -> bool:  # 100, 25 and 5 divide each other: what greedy leaves is diff mod the least
        diff = target - frm
        return diff == 0 or "bet_up" in words or bool(chips) and diff % min(chips) == 0

    if target >= start:
        reachable = up_ok(start)
    else:
        reachable = ("clear_bet" in words and up_ok(1)) or ("clear_bet" not in words and "bet_down" in words)
    assert (keys is not None) == reachable
    if keys is None:
        return
    pin_map = parse_pin_map({"game": "baccarat", "seats": {1: {"buttons": {w: {"pin": 4 + i} for i, w in
                                                                           enumerate(KEYS)}}}})
    logic = PanelLogic(pin_map, limits)
    logic.amount[1] = start * 100
    for word in keys:
        assert word in words
        logic.button(1, word)
    assert logic.amount[1] == target * 100
    # The largest key first: a smaller key (or bet_up) is never pressed as often as the next one up is worth.
    sizes = sorted([1, *chips]) if "bet_up" in words else sorted(chips)
    for small, big in zip(sizes, sizes[1:], strict=False):
        word = "bet_up" if small == 1 and "bet_up" in words else f"add_{small}"
        assert keys.count(word) < big // small


def test_a_thousand_units_is_a_handful_of_presses_not_a_thousand() -> None:
    keys = presses_for(100, 100_100, KEYS, 100, 100)
    assert keys == ["add_100"] * 10
    assert presses_for(100_100, 3_300, KEYS, 100, 100) == ["clear_bet", "add_25", "add_5", "bet_up", "bet_up"]


def test_mock_pins_keep_no_history_and_inputs_start_no_threads() -> None:
    factory = make_factory("mock")
    pins = SimulatedPins(factory)
    before = threading.active_count()
    pin_map = build_map("baccarat", {1: {"buttons": KEYS, "spots": ["banker", "player", "tie"]}}, dealer=True)
    panel = PanelLink(pin_map, GpioZeroBackend(factory), lambda inp, src: None, TableLimits())
    assert threading.active_count() == before  # no hold thread per input (gpiozero's Button has one)
    pin = pin_map.seats[1].buttons["bet_up"].pin
    for _ in range(5_000):
        pins.drive(pin, False)
        pins.drive(pin, True)
    assert len(factory.pin(pin).states) == 1
    panel.stop()


SWAP_HAND = Path(__file__).resolve().parents[1] / "firmware_configs"


@given(st.lists(st.sampled_from(["bet_up", "bet_down", "clear_bet", "add_10", "add_50", "add_100"]),
                max_size=40))
def test_the_swap_hand_panel_selects_only_wagers_the_table_takes(words: list[str]) -> None:
    """Swap-Hand's main must be an even number of units: whatever the player keys, the amount the
    chips will wager is one the table accepts (an add_5 key once selected 7 units, which it refused)."""
    pin_map = load_pin_map(SWAP_HAND / "panels" / "swap_hand.yaml")
    config = load_table(SWAP_HAND / "tables" / "swap_hand_sim.yaml")
    assert set(words) <= set(pin_map.seats[1].buttons)
    logic = PanelLogic(pin_map, config.limits)
    for word in words:
        logic.button(1, word)
    amount = logic.selected(1, "main")
    table = Table(config.new_game(), config.limits)
    table.apply(I.CreditIn(1, 10**9))
    table.apply(I.OpenBetting())
    events = table.apply(I.PlaceWager(1, "main", amount))
    assert {e.event for e in events} == {"wager_placed"}, events  # the main (and its Odds-Win)


def test_a_step_the_table_cannot_take_is_refused_in_the_pin_map() -> None:
    seats = {1: {"buttons": {"bet_up": {"pin": 4}, "add_5": {"pin": 5}}}}
    odd_key = "seats.1.buttons.add_5: a chip key must add a multiple of bet_step"
    with pytest.raises(PinMapError, match=odd_key):
        parse_pin_map({"game": "swap_hand", "bet_step": 2, "bet_hold": None, "seats": seats}, "m.yaml")
    seats = {1: {"buttons": {"bet_up": {"pin": 4}}}}
    with pytest.raises(PinMapError, match="bet_hold.steps must be multiples of bet_step"):
        parse_pin_map({"game": "swap_hand", "bet_step": 2, "seats": seats}, "m.yaml")  # steps 1, 5, ...


def test_presses_with_a_two_unit_bet_step() -> None:
    keys = ["bet_up", "bet_down", "clear_bet", "add_10", "add_50", "add_100"]
    assert presses_for(200, 1_600, keys, 100, 200, bet_step=2) == ["add_10", "bet_up", "bet_up"]
    assert presses_for(1_600, 1_200, ["bet_down"], 100, 200, bet_step=2) == ["bet_down", "bet_down"]
    assert presses_for(200, 700, keys, 100, 200, bet_step=2) is None  # 5 units: no key gets there
