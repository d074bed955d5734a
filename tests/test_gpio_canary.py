"""Canary lines: spare lines of an expander tied to their idle level, which must never read active.

A dead SPI expander answers every read without raising (SPI has no acknowledge), every line alike: all
low, or all high, as its bus floats. A seat's lines alone do not always show it: a chip carrying fewer
than two buttons that is dead at start gave the panels garbage as their starting state (its spots read
"covered", wagering at betting open), and a chip dying mid-play was found only at the second check. A
canary tied high (``active: low``) reads active on an all-low chip, one tied low (``active: high, pull:
none``) on an all-high chip: the map's inputs fail at start, or at the first check. The simulated
hardware is gpiozero's mock pins with a chip that answers garbage when dead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped, unused-ignore]
from panel_support import MOCK, Table
from test_daemon_support import write_table

from controller.panels.pinmaps import parse_pin_map
from drivers.gpio import GpioZeroBackend, Panel, PinEvent, SimulatedPins, backend, expanders
from drivers.gpio.backend import make_factory
from drivers.gpio.pinmap import PinMap
from tests.test_gpio_rig import Clock, build_map

pytestmark = pytest.mark.timeout(60)
#: Free mock lines for the canaries (build_map takes its pins from the low end).
HIGH, LOW = 26, 27
CANARIES = [{"pin": HIGH}, {"pin": LOW, "active": "high", "pull": "none"}]


class GarbageWhenDead(backend._quiet_pin_class()):  # type: ignore[misc]
    """A chip that, dead, reads every input as ``factory.garbage`` (the bus's floating level)."""

    def _get_state(self) -> Any:
        if getattr(self.factory, "dead", False) and self._function == "input":
            return self.factory.garbage
        return super()._get_state()


def _chip_map(chip: str, canaries: list[dict[str, Any]]) -> PinMap:
    """One seat with one button and one spot on expander ``chip`` (lines 0 and 1), and ``canaries``."""
    return parse_pin_map({"game": "baccarat", "chip": chip, "canaries": canaries, "seats": {
        1: {"buttons": {"bet_up": {"pin": 0}}, "spots": {"player": {"sensor": {"pin": 1}}}}}},
        "<test map>")


def _seat_map(**top: Any) -> PinMap:
    """One seat with one button and one spot: a chip too small for the all-buttons-pressed rule."""
    return build_map("baccarat", {1: {"buttons": ["bet_up"], "spots": ["player"], "lamps": False}}, **top)


def _panel(pin_map: PinMap, *, dead: bool, garbage: bool = False) -> tuple[Panel, Any, list[PinEvent], Clock]:
    factory = MockFactory(pin_class=GarbageWhenDead)
    factory.dead, factory.garbage = dead, garbage
    events: list[PinEvent] = []
    clock = Clock()
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=clock)
    panel.start(thread=False)
    return panel, factory, events, clock


@pytest.mark.parametrize(("garbage", "canary", "pin"), [(False, 0, HIGH), (True, 1, LOW)])
def test_a_chip_dead_at_start_fails_the_maps_inputs_at_start_by_its_canary(
        garbage: bool, canary: int, pin: int) -> None:
    panel, _, events, clock = _panel(_seat_map(canaries=CANARIES), dead=True, garbage=garbage)
    try:
        assert [(e.kind, e.change) for e in events] == [("inputs", "failed")]
        assert events[0].detail.startswith(f"pin map canary {canary} (GPIO {pin}) reads active: "
                                           "a line tied to its idle level, so its chip answers garbage")
        clock.t += 5
        panel.pump()
        assert [(e.kind, e.change) for e in events] == [("inputs", "failed")]  # no press, no chip, no repeat
    finally:
        panel.stop()


def test_without_canaries_the_same_dead_chip_is_the_panels_starting_state() -> None:
    """What the canaries are for: the same chip, dead at start, reading all low, with no canary."""
    panel, _, events, clock = _panel(_seat_map(), dead=True)
    try:
        assert events == []
        assert panel.sensors() == {(1, "player"): True}  # "covered": it would wager at betting open
    finally:
        panel.stop()


@pytest.mark.parametrize("garbage", [False, True])
def test_a_chip_dying_mid_play_fails_the_maps_inputs_at_the_first_check(garbage: bool) -> None:
    panel, factory, events, clock = _panel(_seat_map(canaries=CANARIES), dead=False)
    try:
        assert events == []
        factory.dead, factory.garbage = True, garbage
        clock.t += 1.0  # the first check (input_check_s 1.0); the lines' own rule needs a second one
        panel.pump()
        assert [(e.kind, e.change) for e in events] == [("inputs", "failed")]
        assert events[0].detail.startswith(f"pin map canary {1 if garbage else 0} ")
        factory.dead = False  # mended, nothing changed meanwhile: back after three clean checks
        for _ in range(3):
            clock.t += 1.0
            panel.pump()
        assert [(e.kind, e.change) for e in events] == [("inputs", "failed"), ("inputs", "read")]
    finally:
        panel.stop()


def test_a_canary_on_a_line_already_used_is_refused_naming_its_key() -> None:
    from drivers.gpio.pinmap import PinMapError

    taken = _seat_map().seats[1].buttons["bet_up"].pin
    with pytest.raises(PinMapError, match=rf"key 'canaries.0': pin {taken} is already used by seats.1"):
        _seat_map(canaries=[{"pin": taken}])


@pytest.mark.parametrize("loose", [None, HIGH, LOW])
def test_the_wiring_check_reads_each_canary_idle_and_never_asks_to_actuate_it(loose: int | None) -> None:
    """A canary whose strap is loose reads active, and the daemon would fail the map's inputs at start: the
    technician's check says so first, naming the line (a reading, 2026-12-06: it skipped canaries)."""
    from controller.tools.wiring_check import WiringCheck, lines_of
    from controller.tools.wiring_tables import job

    pin_map = _seat_map(canaries=CANARIES)
    lines = lines_of([("seat", pin_map)])
    assert [line.key for line in lines] == [key for key, _ in pin_map.specs()]
    assert job("canaries.1") == ("pin map", "canary 1", "canary")
    factory = MockFactory()
    asked: list[str] = []

    class Skips:
        def lamp_lit(self, line: Any, prompt: str) -> str:
            asked.append(prompt)
            return "s"

        def actuate(self, line: Any, prompt: str) -> str:
            asked.append(prompt)
            return "s"

    check = WiringCheck(lines, [GpioZeroBackend(factory, "mock")])
    check.open()
    if loose is not None:  # the strap is off: the line floats to the other level
        factory.pin(loose).drive_low() if loose == HIGH else factory.pin(loose).drive_high()
    try:
        findings = {f.line.name: f for f in check.run(Skips(), say=lambda _text: None)}
    finally:
        check.close()
    assert not any("canary" in prompt for prompt in asked)
    assert len(asked) == len(lines) - 2
    verdicts = {name: (f.verdict, f.detail) for name, f in findings.items() if name.startswith("canary")}
    bad = {f"canary {k}" for k, c in enumerate(CANARIES) if c["pin"] == loose}
    assert {name for name, (verdict, _) in verdicts.items() if verdict == "miswired"} == bad
    for name in bad:
        assert f"GPIO {loose} reads active: it must be tied to its idle level" in verdicts[name][1]


def test_a_seat_whose_maps_inputs_failed_at_start_places_no_wager_from_its_garbage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys on the header, the spots and both canaries on an MCP23S17 dead from the start (all low:
    every spot "covered"). The canary fails the inputs; a working key (``clear_bet``) must not then let
    the garbage wager at betting open (a second reading: 100 placed from spots nobody touched)."""
    made: list[Any] = []

    def factory(name: str) -> Any:
        if not made:  # the table's expander, opened first: dead from the start, reading all low
            dead = MockFactory(pin_class=GarbageWhenDead)
            dead.dead, dead.garbage = True, False
            made.append(dead)
            return dead
        made.append(make_factory(name))
        return made[-1]

    monkeypatch.setattr(expanders, "make_factory", factory)
    dealer = tmp_path / "dealer.yaml"
    dealer.write_text("dealer:\n  buttons:\n    open_betting: {pin: 4}\n    close_betting: {pin: 5}\n"
                      "    new_shoe: {pin: 12}\n")
    seat = tmp_path / "seat.yaml"
    seat.write_text("game: baccarat\nseats:\n  1:\n    buttons:\n      clear_bet: {pin: 13}\n"
                    "    spots:\n      player: {sensor: {pin: 7, chip: s1}}\n"
                    "canaries:\n  - {pin: 14, chip: s1}\n  - {pin: 15, chip: s1, active: high, pull: none}\n")
    gpio = {**MOCK, "expanders": [{"kind": "mcp23s17", "bus": 0, "address": 0x20, "int": 23, "label": "s1"}]}
    table = Table(write_table(tmp_path, gpio=gpio, panels=[str(dealer), str(seat)]))
    try:
        offline = table.status()["offline"]
        assert "reads active: a line tied to its idle level" in offline["panel 1"]
        table.call("credit_in", seat=1, amount=100_000)
        for line in ("press 1 clear_bet", "press dealer new_shoe", "press dealer open_betting"):
            table.ctl.call(line)
        table.until("betting", lambda s: s["phase"] == "betting")
        table.call("ping")
        assert table.status()["wagers"] == []
    finally:
        table.close()


def test_a_map_used_for_another_chip_takes_its_canaries_along() -> None:
    """One seat map serves every expander (``chips: {0x20: 0x21}``); its canaries were left on 0x20."""
    from drivers.gpio.table_maps import with_chips

    seat_map = _chip_map("0x20", [{"pin": 14, "chip": "0x20"}])
    moved = with_chips(seat_map, {"0x20": "0x21"})
    assert {chip for key, chip, _ in moved.lines() if key.startswith("canaries.")} == {"0x21"}


def test_a_canary_tied_high_without_its_pull_is_refused() -> None:
    """``pull: none, active: low`` reads active on a floating line (and on simulated pins, at once)."""
    from drivers.gpio.pinmap import PinMapError

    with pytest.raises(PinMapError, match=r"key 'canaries.0': a canary tied high is pull: up, active: low"):
        _seat_map(canaries=[{"pin": HIGH, "pull": "none"}])


def test_canaries_in_a_map_without_seat_or_dealer_panels_are_refused() -> None:
    """A tower-only map's canaries guard nothing: a fault they caught had no panel to stop and went unsaid
    (a reading, 2026-12-06). The map is refused, naming the key."""
    from drivers.gpio.pinmap import PinMapError

    tower = {w: {"pin": k} for k, w in enumerate(("idle", "betting", "in_play", "fault"))}
    canaries = [{"pin": 14}, {"pin": 15, "active": "high", "pull": "none"}]
    with pytest.raises(PinMapError, match=r"key 'canaries': canaries guard the inputs of this map's seat"):
        parse_pin_map({"chip": "0x20", "canaries": canaries, "tower": tower}, "<tower>")


def test_a_map_with_inputs_on_an_spi_expander_without_both_canaries_is_said_at_start() -> None:
    from drivers.gpio.expanders import Expander, canary_advice

    chips = [Expander(kind="mcp23s17", bus=0, address=0x20, int=23, label="s1")]
    bare = _chip_map("s1", [])
    one = _chip_map("s1", [{"pin": 14}])
    both = _chip_map("s1", [{"pin": 14}, {"pin": 15, "active": "high", "pull": "none"}])
    advice = canary_advice(chips, [("panels.0", bare), ("panels.1", one), ("panels.2", both)])
    assert [a.split(":")[0] for a in advice] == ["panels.0", "panels.1"]
    assert advice[0].endswith("inputs on MCP23S17 s1 without a canary tied high and one tied low on it: a "
                              "dead chip answering garbage may pass for its panels' state (docs/wiring.md, "
                              "\"Canary lines\")")


def test_a_canary_that_moves_has_the_lines_read_at_once_not_a_period_later() -> None:
    """A dying chip may fire garbage edges: the canary's own edge has every line read at the next pump, so
    the map's inputs fail within the debounce, not up to ``input_check_s`` later."""
    panel, factory, events, clock = _panel(_seat_map(canaries=CANARIES), dead=False)
    pins, start = SimulatedPins(factory), clock.t
    try:
        pins.drive(HIGH, False)  # the line tied high reads low: its chip answers garbage
        for _ in range(3):  # debounce (20 ms), then the check it calls for
            clock.t += 0.03
            panel.pump()
        assert clock.t - start < 0.2 and [(e.kind, e.change) for e in events] == [("inputs", "failed")]
    finally:
        panel.stop()
