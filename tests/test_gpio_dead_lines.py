"""A line that stops answering is a fault, whatever the pin library raises, and nothing done meanwhile is
lost.

An I2C expander that stops answering (a loose cable, a brown-out) raises on every read and write of its
lines, and sends no more edges. lgpio, the library the expanders are read through on a Pi, raises its own
``lgpio.error``, not an OSError (the lamps' fault was caught only as OSError before: on a Pi the error
left :meth:`Panel.show` and no fault was reported). The simulated hardware here is gpiozero's mock pins
with one change, a chip that can die: its lines then raise :class:`ChipGone` (an Exception, as lgpio's
error is) and a level driven on them fires no edge (its interrupt is dead), while the level is still
what the wires say, to be read once the chip answers again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped, unused-ignore]
from panel_support import MOCK, Table
from test_daemon_support import write_table

from drivers.gpio import GpioZeroBackend, LampMode, Panel, PinEvent, SimulatedPins, backend
from tests.test_gpio_rig import Clock, build_map

pytestmark = pytest.mark.timeout(60)


class ChipGone(Exception):  # noqa: N818 (named as lgpio names its own: a plain Exception subclass)
    """What lgpio raises for a line whose chip stopped answering: its own error class, not an OSError."""


class DyingPin(backend._quiet_pin_class()):  # type: ignore[misc]
    """A mock pin of a chip that may die (``factory.dead``): reads and writes then raise :class:`ChipGone`,
    and a level driven on it changes the wire without an edge."""

    def _get_state(self) -> Any:
        if getattr(self.factory, "dead", False):
            raise ChipGone("GPIO read failed (chip not answering)")
        return super()._get_state()

    def _set_state(self, value: Any) -> None:
        if getattr(self.factory, "dead", False):
            raise ChipGone("GPIO write failed (chip not answering)")
        super()._set_state(value)

    def drive_high(self) -> None:
        if getattr(self.factory, "dead", False):
            self._state = True  # the wire changes; the dead chip raises no interrupt
        else:
            super().drive_high()

    def drive_low(self) -> None:
        if getattr(self.factory, "dead", False):
            self._state = False
        else:
            super().drive_low()


def _panel(events: list[PinEvent], clock: Clock, lamps: bool) -> tuple[Panel, SimulatedPins, Any, Any]:
    pin_map = build_map("baccarat", {1: {"buttons": ["bet_up"], "spots": ["player"], "lamps": lamps}})
    assert pin_map.input_check_s == 1.0  # the default: the checks below are a second apart
    factory = MockFactory(pin_class=DyingPin)
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=clock)
    return panel, SimulatedPins(factory), factory, pin_map.seats[1]


def test_an_input_line_that_cannot_be_read_fails_the_maps_inputs_once_and_a_lift_meanwhile_is_seen() -> None:
    events: list[PinEvent] = []
    clock = Clock()
    panel, pins, factory, seat = _panel(events, clock, lamps=False)
    sensor = seat.spots["player"].sensor
    try:
        panel.start(thread=False)
        pins.drive(sensor.pin, False)  # chips on the spot (pull-up: active low)
        clock.t += 0.1
        panel.pump()
        assert events == [PinEvent("sensor", 1, "player", sensor.pin, "active")]
        factory.dead = True
        pins.drive(sensor.pin, True)  # chips lifted while the chip is dead: no edge comes
        for _ in range(3):  # three checks: reported once
            clock.t += 1.0
            panel.pump()
        failed = events[1:]
        assert [(e.kind, e.change) for e in failed] == [("inputs", "failed")]
        up = seat.buttons["bet_up"].pin
        assert failed[0].detail == (f"input seat 1 bet_up (GPIO {up}) cannot be read: "
                                    f"{__name__}.ChipGone: GPIO read failed (chip not answering)")
        factory.dead = False
        clock.t += 1.0
        panel.pump()  # the check reads every line again: back, and the lift is an edge now
        clock.t += 0.1
        panel.pump()  # settled
        assert events[2:] == [PinEvent("inputs", None, "inputs", -1, "read"),
                              PinEvent("sensor", 1, "player", sensor.pin, "inactive")]
        assert panel.sensors() == {(1, "player"): False}
    finally:
        factory.dead = False
        panel.stop()


def test_a_lamp_on_a_chip_that_raises_the_librarys_own_error_is_a_fault_not_an_exception() -> None:
    events: list[PinEvent] = []
    clock = Clock()
    panel, _, factory, seat = _panel(events, clock, lamps=True)
    try:
        panel.start(thread=False)
        factory.dead = True
        panel.show({"seat 1 bet_up": LampMode.ON})  # raised ChipGone out of show() before
        assert [(e.kind, e.change) for e in events] == [("lamps", "failed")]
        assert events[0].detail.endswith(f"{__name__}.ChipGone: GPIO read failed (chip not answering)")
        factory.dead = False
        clock.t += 0.5
        panel.pump()
        assert [(e.kind, e.change) for e in events[1:]] == [("lamps", "written")]
        assert panel.lamp_levels()["seat 1 bet_up"]
    finally:
        factory.dead = False
        panel.stop()


@pytest.mark.timeout(90)
def test_the_daemon_stops_play_while_a_panels_input_lines_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chip of inputs only: no lamp write shows it dead. Its panels go offline (betting cannot close) within
    the map's check, say which line, and come back by themselves when it answers."""
    failing = {"on": False}
    quiet = backend._quiet_pin_class()
    real_get = quiet._get_state

    def get_state(self: Any) -> Any:
        if failing["on"] and self._function == "input":
            raise ChipGone("GPIO read failed (chip not answering)")
        return real_get(self)

    monkeypatch.setattr(quiet, "_get_state", get_state)
    t = Table(write_table(tmp_path, panels=["baccarat.yaml"], gpio=MOCK))
    try:
        assert t.call("credit_in", seat=1, amount=100_000)["ok"] and t.call("new_shoe")["ok"]
        assert t.call("open")["ok"] and t.call("bet", seat=1, spot="player", amount=1000)["ok"]
        failing["on"] = True
        status = t.until("the panels offline", lambda s: set(s["offline"]) == {"panel 1", "dealer panel"})
        why = status["offline"]["panel 1"]
        assert "cannot be read: " in why
        assert why.endswith(f"{__name__}.ChipGone: GPIO read failed (chip not answering)")
        refused = t.call("close")
        assert refused["refused"] and "is offline" in refused["error"]
        failing["on"] = False
        t.until("the panels back", lambda s: s["offline"] == {})
        assert t.call("close")["ok"]
    finally:
        t.close()
