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

from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped, unused-ignore]

from drivers.gpio import GpioZeroBackend, Panel, PinEvent, backend
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


def test_the_wiring_tools_name_a_canary_and_do_not_ask_the_technician_to_actuate_it() -> None:
    from controller.tools.wiring_check import lines_of
    from controller.tools.wiring_tables import job

    pin_map = _seat_map(canaries=CANARIES)
    assert [line.key for line in lines_of([("seat", pin_map)])] == [
        key for key, _ in pin_map.specs() if not key.startswith("canaries.")]
    assert job("canaries.1") == ("pin map", "canary 1", "canary")
