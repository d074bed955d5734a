"""Pin map validation: every shipped map loads; every mistake stops the start naming file, key and reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.panels.pinmaps import load_pin_map, parse_pin_map
from drivers.gpio.pinmap import PinMapError
from drivers.gpio.table_maps import check_disjoint

pytestmark = pytest.mark.timeout(30)

PANELS = Path(__file__).resolve().parents[1] / "firmware_configs" / "panels"
SEAT = {"buttons": {"hit": {"pin": 5, "lamp": 6}}, "spots": {"main": {"sensor": 13, "lamp": 19}}}


@pytest.mark.parametrize("path", sorted(PANELS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_maps_load_and_fit_their_chips(path: Path) -> None:
    """Each chip's lines once, at most a header's 26 or an expander's 16."""
    pin_map = load_pin_map(path)
    lines = [(chip, pin) for _, chip, pin in pin_map.lines()]
    assert len(lines) == len(set(lines))
    for chip in {chip for chip, _ in lines}:
        assert sum(c == chip for c, _ in lines) <= (26 if chip == "header" else 16)


def test_a_map_for_every_game_is_shipped() -> None:
    from controller.games import GAMES

    assert {load_pin_map(p).game for p in PANELS.glob("*.yaml")} >= set(GAMES)


def _problem(data: dict[str, Any], game: str | None = None) -> str:
    with pytest.raises(PinMapError) as info:
        parse_pin_map(data, "panels/test.yaml", game)
    return str(info.value)


@pytest.mark.parametrize(("data", "key", "reason"), [
    ({"game": "swap_hand", "seats": {1: {"buttons": {"hit": {"pin": 5, "lamp": 5}}}}},
     "seats.1.buttons.hit.lamp", "pin 5 is already used by seats.1.buttons.hit.pin"),
    ({"game": "swap_hand", "seats": {1: {"buttons": {"fold": {"pin": 5}}}}},
     "seats.1.buttons.fold", "unknown action 'fold' for swap_hand"),
    ({"game": "swap_hand", "seats": {1: {"spots": {"tie": {"sensor": 5}}}}},
     "seats.1.spots.tie", "swap_hand has no spot 'tie'; spots: main"),
    ({"game": "swap_hand", "seats": {1: {"spots": {"main": {"sensor": 28}}}}},
     "seats.1.spots.main.sensor", "pin 28 is not a GPIO on the 40-pin header (BCM 2..27)"),
    ({"game": "swap_hand", "seats": {1: {"buttons": {"hit": {"pin": 1}}}}},
     "seats.1.buttons.hit.pin", "pin 1 is not a GPIO"),
    ({"game": "swap_hand", "seats": {1: {**SEAT, "lamps": {}}}},
     "seats.1.lamps", "unknown key"),
    ({"game": "swap_hand", "seats": {1: {"buttons": {"hit": {"pin": 5, "pull": "up", "active": "high"}}}}},
     "seats.1.buttons.hit", "pull: up reads high when idle"),
    ({"game": "baccarat", "dealer": {"buttons": {"shuffle": {"pin": 4}}}},
     "dealer.buttons.shuffle", "unknown dealer action 'shuffle'"),
    ({"game": "poker", "seats": {}}, "game", "unknown game 'poker'"),
    ({"seats": {1: SEAT}}, "game", "a map with seat panels must name its game"),
    ({"game": "swap_hand", "tower": {"idle": 4, "betting": 5, "in_play": 6}},
     "tower.fault", "Field required"),
    ({"game": "swap_hand", "debounce_ms": -1}, "debounce_ms", "greater than or equal to 0"),
    ({"game": "baccarat", "seats": {1: {"buttons": {"hit": {"pin": 5}}}}},
     "seats.1.buttons.hit", "unknown action 'hit' for baccarat"),
])
def test_mistakes_name_the_file_the_key_and_the_reason(data: dict[str, Any], key: str, reason: str) -> None:
    message = _problem(data)
    assert f"panels/test.yaml: key '{key}': " in message and reason in message, message


def test_a_map_for_another_game_is_refused() -> None:
    assert "the map is for swap_hand, the table plays baccarat" in _problem({"game": "swap_hand"}, "baccarat")


def test_bet_2x_exists_only_where_the_game_bets() -> None:
    parse_pin_map({"game": "two_way_winner", "seats": {1: {"buttons": {"bet_2x": {"pin": 5}}}}})
    wrong = {"game": "swap_hand", "seats": {1: {"buttons": {"bet_2x": {"pin": 5}}}}}
    assert "unknown action 'bet_2x'" in _problem(wrong)


def test_file_errors(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("game: swap_hand\nseats:\n  1:\n    buttons:\n      hit: {pin: 5}\n      hit: {pin: 6}\n")
    with pytest.raises(PinMapError, match=r"dup.yaml: not valid YAML: .*key 'hit' is given twice"):
        load_pin_map(dup)
    with pytest.raises(PinMapError, match=r"missing.yaml: cannot read"):
        load_pin_map(tmp_path / "missing.yaml")
    top = tmp_path / "list.yaml"
    top.write_text("- 1\n")
    with pytest.raises(PinMapError, match="must be a mapping"):
        load_pin_map(top)


def test_several_headers_may_not_share_a_seat_or_the_dealer() -> None:
    a = load_pin_map(PANELS / "baccarat.yaml")
    b = load_pin_map(PANELS / "dealer.yaml")
    with pytest.raises(PinMapError, match="key 'dealer': also in baccarat.yaml"):
        check_disjoint({"baccarat.yaml": a, "dealer.yaml": b})
    check_disjoint({"one_card_poker.yaml": load_pin_map(PANELS / "swap_hand.yaml"), "dealer.yaml": b})


def test_a_map_file_may_not_settle_an_input_under_five_ms(tmp_path: Path) -> None:
    """A settle time of 0 counts a chattering ``hit`` as two: refused in a file, map-wide and per pin."""
    path = tmp_path / "seat.yaml"
    text = ("game: swap_hand\ndebounce_ms: 4\nseats:\n  1:\n    buttons: {hit: {pin: 5, debounce_ms: 0}}\n"
            "    spots: {main: {sensor: {pin: 13, debounce_ms: 1}}}\n"
            "    presence: {pin: 6, debounce_ms: 5}\n")
    path.write_text(text)
    with pytest.raises(PinMapError) as info:
        load_pin_map(path)
    message = str(info.value)
    for key in ("debounce_ms", "seats.1.buttons.hit.debounce_ms", "seats.1.spots.main.sensor.debounce_ms"):
        assert f"key '{key}': under 5 ms a contact's bounce can count as several presses" in message, message
    assert "presence" not in message
    for short, settled in (("4", "5"), ("0", "20"), ("1", "50")):
        text = text.replace(f"debounce_ms: {short}", f"debounce_ms: {settled}")
    path.write_text(text)
    assert load_pin_map(path).debounce_ms == 5


def test_a_map_built_in_code_for_pins_that_never_bounce_may_settle_at_once() -> None:
    """The scenario tool's simulated contacts never bounce: its maps say 0 and are taken."""
    assert parse_pin_map({"game": "swap_hand", "debounce_ms": 0, "seats": {1: SEAT}}).debounce_ms == 0
