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
#: bet_up repeats after half a second held, a step each tenth of a second.
HOLD = {"delay_ms": 500, "interval_ms": 100, "steps": [1]}


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


def _panel(lamps: bool, pin_class: Any = DyingPin, **top: Any
           ) -> tuple[Panel, SimulatedPins, Any, Any, list[PinEvent], Clock]:
    """A started panel of one seat on a chip that may die, its simulated pins, the chip (its factory),
    the seat's map, the events it reported and its clock."""
    pin_map = build_map("baccarat", {1: {"buttons": ["bet_up"], "spots": ["player"], "lamps": lamps}}, **top)
    assert pin_map.input_check_s == 1.0  # the default: the checks below are a second apart
    factory = MockFactory(pin_class=pin_class)
    events: list[PinEvent] = []
    clock = Clock()
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=clock)
    panel.start(thread=False)
    return panel, SimulatedPins(factory), factory, pin_map.seats[1], events, clock


def _checks(panel: Panel, clock: Clock, n: int) -> None:
    _steps(panel, clock, n, 1.0)


def _steps(panel: Panel, clock: Clock, n: int, seconds: float = 0.1) -> None:
    for _ in range(n):
        clock.t += seconds
        panel.pump()


def _chips_on(panel: Panel, pins: SimulatedPins, clock: Clock, sensor: int) -> None:
    pins.drive(sensor, False)  # chips on the spot (pull-up: active low)
    clock.t += 0.1
    panel.pump()


def test_a_line_that_cannot_be_read_fails_the_maps_inputs_once_and_clean_checks_bring_them_back() -> None:
    panel, pins, factory, seat, events, clock = _panel(lamps=False)
    sensor, up = seat.spots["player"].sensor.pin, seat.buttons["bet_up"].pin
    try:
        _chips_on(panel, pins, clock, sensor)
        assert events == [PinEvent("sensor", 1, "player", sensor, "active")]
        factory.dead = True
        _checks(panel, clock, 3)  # three checks: reported once
        assert events[1:] == [PinEvent("inputs", None, "inputs", -1, "failed", detail=(
            f"input seat 1 bet_up (GPIO {up}) cannot be read: "
            f"{__name__}.ChipGone: GPIO read failed (chip not answering)"))]
        factory.dead = False  # nothing changed meanwhile: back after three clean checks, not at the first
        _checks(panel, clock, 2)
        assert len(events) == 2
        _checks(panel, clock, 1)
        assert events[2:] == [PinEvent("inputs", None, "inputs", -1, "read")]
        assert panel.sensors() == {(1, "player"): True}
    finally:
        factory.dead = False
        panel.stop()


def test_chips_lifted_while_the_chip_was_dead_keep_its_panels_offline_never_taken_as_a_lift() -> None:
    """The lift's edge was lost with the chip: its line reads what no edge said. Taken as an edge it would
    be the check's guess; it is a fault until the daemon starts again and reads the panels afresh."""
    panel, pins, factory, seat, events, clock = _panel(lamps=False)
    sensor = seat.spots["player"].sensor.pin
    try:
        _chips_on(panel, pins, clock, sensor)
        factory.dead = True
        pins.drive(sensor, True)  # chips lifted while the chip is dead: no edge comes
        _checks(panel, clock, 1)
        factory.dead = False
        _checks(panel, clock, 6)
        assert [(e.kind, e.change) for e in events[1:]] == [("inputs", "failed"), ("inputs", "failed")]
        assert events[2].detail == (
            f"input seat 1 player (GPIO {sensor}) reads inactive, which no edge said: its chip's interrupts "
            "lost or its state garbage (mend it, then start the daemon again)")
        assert panel.sensors() == {(1, "player"): True}  # as the edges said: the table tilts on the fault
    finally:
        factory.dead = False
        panel.stop()


class ZeroWhenDead(backend._quiet_pin_class()):  # type: ignore[misc]
    """A chip that answers garbage when dead, without raising: an SPI expander has no acknowledge, and
    the Pi's MISO pulled down reads every register 0x0000, so every pulled-up input reads low."""

    def _get_state(self) -> Any:
        if getattr(self.factory, "dead", False) and self._function == "input":
            return False
        return super()._get_state()


def test_a_chip_reading_garbage_without_raising_presses_nothing_and_fails_the_maps_inputs() -> None:
    panel, _, factory, seat, events, clock = _panel(lamps=False, pin_class=ZeroWhenDead)
    try:
        factory.dead = True  # nobody touches the table
        _steps(panel, clock, 70, 0.05)
        assert [(e.kind, e.change) for e in events] == [("inputs", "failed")]  # not a press, not a chip
        assert events[0].detail.startswith(f"input seat 1 bet_up (GPIO {seat.buttons['bet_up'].pin}) "
                                           "reads active, which no edge said")
        assert panel.sensors() == {(1, "player"): False}
    finally:
        panel.stop()


def test_a_held_bet_key_stops_repeating_when_its_chip_fails() -> None:
    panel, pins, factory, seat, events, clock = _panel(lamps=False, bet_hold=HOLD)
    try:
        pins.drive(seat.buttons["bet_up"].pin, False)  # held
        _steps(panel, clock, 9)
        repeats = sum(e.change == "repeat" for e in events)
        assert repeats > 0
        factory.dead = True  # it dies held, released meanwhile: no edge
        _steps(panel, clock, 50)
        failed = next(i for i, e in enumerate(events) if e.kind == "inputs")
        assert not [e for e in events[failed:] if e.change == "repeat"]  # no step after the failure
        assert sum(e.change == "repeat" for e in events) <= repeats + 10  # at most a check period's worth
    finally:
        factory.dead = False
        panel.stop()


def test_a_chip_reading_garbage_at_open_fails_the_maps_inputs_and_answering_again_does_not_clear_it() -> None:
    """At open the levels read are the panels' starting state, which no later check can doubt: a dead SPI
    chip reading 0 would have every spot covered (chips placed at betting open). Every button pressed at
    start is no table's state. Once the chip answers, its lines read what no edge said: still a fault,
    until the daemon starts again."""
    events: list[PinEvent] = []
    clock = Clock()
    pin_map = build_map("baccarat", {1: {"buttons": ["bet_up", "bet_down"], "spots": ["player"]}})
    factory = MockFactory(pin_class=ZeroWhenDead)
    factory.dead = True
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=clock)
    try:
        panel.start(thread=False)
        up = pin_map.seats[1].buttons["bet_up"].pin
        assert events == [PinEvent("inputs", None, "inputs", -1, "failed", detail=(
            f"input seat 1 bet_up (GPIO {up}) and every other button on its chip (2 in all) read pressed at "
            "start: a dead chip answering garbage? (mend it, then start the daemon again)"))]
        _checks(panel, clock, 5)
        assert len(events) == 1  # still failed, said once
        factory.dead = False  # the chip answers: its lines read idle, and no edge ever said so
        _checks(panel, clock, 6)
        assert len(events) == 1  # still failed as said: no release, no placement, no "read"
    finally:
        factory.dead = False
        panel.stop()


def test_a_bet_key_pressed_while_the_maps_inputs_are_failed_does_not_repeat() -> None:
    panel, pins, factory, seat, events, clock = _panel(lamps=False, bet_hold=HOLD)
    sensor = seat.spots["player"].sensor.pin
    try:
        _chips_on(panel, pins, clock, sensor)
        factory.dead = True
        pins.drive(sensor, True)  # a lift lost with the chip: the inputs fail and stay failed
        _checks(panel, clock, 1)
        factory.dead = False
        _checks(panel, clock, 2)
        assert [(e.kind, e.change) for e in events[1:]] == [("inputs", "failed"), ("inputs", "failed")]
        pins.drive(seat.buttons["bet_up"].pin, False)  # pressed and held on the working lines
        _steps(panel, clock, 30)
        assert [e.change for e in events[3:]] == ["active"]  # the press, and no repeat step
    finally:
        factory.dead = False
        panel.stop()


class SlowRead(backend._quiet_pin_class()):  # type: ignore[misc]
    """A line whose read takes 50 ms of the panel's clock, during which ``during`` happens once."""

    during: Any = None

    def _get_state(self) -> Any:
        during, SlowRead.during = SlowRead.during, None
        if during is not None and self._function == "input":
            during(self)
        return super()._get_state()


def test_a_key_pressed_while_the_lines_are_read_keeps_repeating() -> None:
    """The check read bet_up released; the press came while the other lines were read and settled before
    the check was judged: its old level must not cancel the hold (a second reading, 2026-12-06)."""
    panel, pins, factory, seat, events, clock = _panel(lamps=False, pin_class=SlowRead, bet_hold=HOLD)
    up = seat.buttons["bet_up"].pin
    try:
        def press(line: Any) -> None:
            if line is not factory.pin(up):  # bet_up is read first, released; then it is pressed
                pins.drive(up, False)
                clock.t += 0.05
            else:
                SlowRead.during = press  # wait for the next line's read
        _steps(panel, clock, 9)  # just before the check
        SlowRead.during = press
        _steps(panel, clock, 1)  # the check: bet_up read released, then pressed and settled
        _steps(panel, clock, 20)
        assert [e.change for e in events][:1] == ["active"]
        assert sum(e.change == "repeat" for e in events) >= 10  # held 2 s: it steps (none with the old level)
    finally:
        SlowRead.during = None
        panel.stop()


def test_a_dead_chip_at_open_is_an_oserror_and_at_stop_every_line_is_released() -> None:
    factory = MockFactory(pin_class=DyingPin)
    factory.dead = True
    pin_map = build_map("baccarat", {1: {"buttons": ["bet_up"], "spots": ["player"]}})
    with pytest.raises(OSError, match="ChipGone: GPIO read failed"):  # the daemon's start reports it, exit 4
        Panel(pin_map, GpioZeroBackend(factory, "mock"), print)
    factory.dead = False
    events: list[PinEvent] = []
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=Clock())
    panel.start(thread=False)
    factory.dead = True
    panel.stop()  # raised the library's own error at the first line before
    factory.dead = False
    reopened = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append)  # every pin was released
    reopened.stop()


def test_a_lamp_on_a_chip_that_raises_the_librarys_own_error_is_a_fault_not_an_exception() -> None:
    panel, _, factory, seat, events, clock = _panel(lamps=True)
    try:
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
        keyed = t.call("status")["gpio"]["lamps"]["seats"]["1"]["buttons"]
        assert keyed["bet_up"] == "blink"  # keyed amounts not trusted: chosen again before chips wager
        failing["on"] = False
        t.until("the panels back", lambda s: s["offline"] == {})
        assert t.call("close")["ok"]
    finally:
        t.close()
