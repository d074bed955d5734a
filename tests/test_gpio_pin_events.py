"""The GPIO driver alone knows pins, not games: plain pin events out, plain lamp states in.

No table and no panel logic here: the driver (``drivers.gpio.Panel``) over
gpiozero's mock pins reports what its pins did, named as the pin map names
them, and lights exactly the lamps it is told to.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from drivers.gpio import GpioZeroBackend, LampMode, Panel, PinEvent, SimulatedPins, make_factory
from tests.test_gpio_rig import Clock, build_map

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[1]


def test_the_driver_reports_pin_events_and_lights_what_it_is_told() -> None:
    pin_map = build_map("swap_hand", {1: {"buttons": ["hit", "bet_up"], "spots": ["main"], "presence": True}},
                        tower=True, stuck_after_s=2.0,
                        bet_hold={"delay_ms": 500, "interval_ms": 100, "steps": [1, 5]})
    seat = pin_map.seats[1]
    assert seat.presence is not None and pin_map.tower is not None
    factory, clock = make_factory("mock"), Clock()
    pins = SimulatedPins(factory)
    events: list[PinEvent] = []
    panel = Panel(pin_map, GpioZeroBackend(factory, "mock"), events.append, clock=clock)
    try:
        panel.start(thread=False)
        assert events == [PinEvent("presence", 1, "presence", seat.presence.pin, "inactive")]
        hit, up, main = seat.buttons["hit"], seat.buttons["bet_up"], seat.spots["main"].sensor

        def drive(pin: int, active: bool, seconds: float = 0.05) -> None:
            pins.drive(pin, not active)  # pull-up inputs: active is low
            clock.t += seconds
            panel.pump()

        drive(hit.pin, True)
        drive(hit.pin, False)
        drive(main.pin, True)
        drive(up.pin, True, 0.6)  # held past bet_hold's delay: one repeat step
        drive(up.pin, False)
        drive(hit.pin, True, 2.5)  # held past stuck_after_s
        drive(hit.pin, False)
        assert events[1:] == [
            PinEvent("button", 1, "hit", hit.pin, "active"),
            PinEvent("button", 1, "hit", hit.pin, "inactive"),
            PinEvent("sensor", 1, "main", main.pin, "active"),
            PinEvent("button", 1, "bet_up", up.pin, "active"),
            PinEvent("button", 1, "bet_up", up.pin, "repeat", 1),
            PinEvent("button", 1, "bet_up", up.pin, "inactive"),
            PinEvent("button", 1, "hit", hit.pin, "active"),
            PinEvent("button", 1, "hit", hit.pin, "stuck"),
            PinEvent("button", 1, "hit", hit.pin, "unstuck"),
            PinEvent("button", 1, "hit", hit.pin, "inactive"),
        ]
        assert panel.sensors() == {(1, "main"): True}

        assert not any(panel.lamp_levels().values())  # no lamp is lit until the driver is told
        panel.show({"seat 1 hit": LampMode.ON, "tower betting": LampMode.ON,
                    "seat 1 spot main": LampMode.OFF})
        assert hit.lamp is not None and pins.level(hit.lamp.pin) and pins.level(pin_map.tower.betting.pin)
        assert not pins.level(pin_map.tower.idle.pin)
        assert {k for k, lit in panel.lamp_levels().items() if lit} == {"seat 1 hit", "tower betting"}
    finally:
        panel.stop()


def test_the_drivers_import_no_rules() -> None:
    """Importing every driver module loads no rules: no table, game, input, limit, money or panel logic.

    The one daemon module a driver may load is the rule for files we create (with its fault points and
    the package it sits in): the shoe conformance kit writes its --json report by it, as import contract
    R3 allows (docs/architecture.md). Anything else of the daemon is the shell and is refused here.
    """
    probe = ("import sys, pkgutil, importlib, drivers\n"
             "for m in pkgutil.walk_packages(drivers.__path__, 'drivers.'):\n"
             "    importlib.import_module(m.name)\n"
             "rules = ('controller.table', 'controller.games', 'controller.inputs', 'controller.limits',\n"
             "         'controller.money', 'controller.events', 'controller.panels', 'controller.daemon')\n"
             "print(','.join(sorted(n for n in sys.modules if n.startswith(rules))))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    file_rule = {"controller.daemon", "controller.daemon.private", "controller.daemon.faults"}
    assert set(filter(None, out.stdout.strip().split(","))) - file_rule == set()
