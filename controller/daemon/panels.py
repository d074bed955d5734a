"""The GPIO panels inside the daemon: pins in through the one input path, lamps out after every input.

A :class:`PanelHost` owns one :class:`controller.panels.link.PanelLink` (the
GPIO driver and what its presses mean) per pin map of the table file. Each
panel's worker thread calls ``post(input, source)``; the
host hands that to the daemon's loop with ``call_soon_threadsafe``, so a
press is journaled and applied exactly like a shoe card or a command (one
path, one order: the loop's queue is FIFO, so presses from two panels keep
the order their threads posted them in, and none is dropped).

After every applied input, from any source, the daemon calls
:meth:`PanelHost.after_apply`: the lamps follow the table (only when the
view the lamps show changed, which is most inputs during a round but cheap
to check), and the host returns the lamp states for the ``<table>.lamps``
side topic when they changed. Lamp states are not table events and carry
no ``seq`` (docs/zeromq.md): they are derived from the state, not journaled.

Unlike the shoe, a panel does not wait for the journal: a button has no
acknowledgement to withhold. A press posted in the instant before a crash
is lost, and the lamps never showed it taken, so the player presses again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from controller.daemon.config import TableConfig
from controller.inputs import Input
from controller.panels.link import PanelLink
from controller.panels.logic import PanelLogic
from controller.panels.view import JOURNAL_FAULT, RESTORED, LampView, chips_said, seat_device
from controller.table import Table
from drivers.gpio import LampMode, SimulatedPins
from drivers.gpio.backend import own_simulation
from drivers.gpio.control import ControlServer, PanelControl
from drivers.gpio.expanders import canary_advice, map_backends

log = logging.getLogger("croupier.daemon.gpio")


class PanelHost:
    """Every panel of a table, their control socket (mock pins only) and the lamps they show."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.panels: list[PanelLink] = []
        self.pins: list[SimulatedPins] = []
        self.control: PanelControl | None = None
        self.server: ControlServer | None = None
        self._view: LampView | None = None
        self._lamps: dict[str, LampMode] = {}
        self.lamp_count = 0

    def open(self, table: Table, loop: asyncio.AbstractEventLoop,
             submit: Callable[[Input, str], Any],
             sensor_wagers: Collection[tuple[int, str]] = (),
             last_bets: Mapping[int, Mapping[str, int]] | None = None) -> None:
        """Open every map's pins (BackendError, OSError if they cannot be) and show the table's state.

        ``last_bets`` (a restart: the journal has rounds or inputs): each seat's wagers when betting
        last ended, from the journal, for ``repeat_bet`` (:func:`after_restart`).

        On mock pins without expanders each map gets its own pin factory: a map
        is one header, and two headers may both use BCM 4. A real backend, or a
        simulated table that lists expanders, is one Pi: one header and the
        expanders' chips for every map (the table file check refuses a line used
        twice).
        """
        gpio = self.config.spec.gpio
        assert gpio is not None
        backends = map_backends(gpio.backend, gpio.expanders, len(self.config.panels))
        for advice in canary_advice(gpio.expanders, self.config.panels):
            log.warning("gpio: %s", advice)

        def post(inp: Input, source: str) -> None:
            loop.call_soon_threadsafe(submit, inp, source)

        try:
            for (_name, pin_map), backend in zip(self.config.panels, backends, strict=True):
                panel = PanelLink(pin_map, backend, post, self.config.limits)
                self.panels.append(panel)
                # Wagers keyed by command have no chips on a sensor: never "chips missing" for them.
                panel.logic.keyed = {key for key in table.staked if key not in set(sensor_wagers)}
                panel.logic.restore(table.offline)
                if last_bets is not None:
                    after_restart(panel.logic, last_bets, table.limits.min_bet)
                if gpio.backend == "mock":
                    pins = SimulatedPins(backend.factory, backend.chips)
                    self.pins.append(pins)
                    if own_simulation(backend.factory):
                        as_it_was(panel, pins, sensor_wagers)
            if gpio.control is not None:
                self.control = PanelControl(self.panels[0], self.pins[0],
                                            list(zip(self.panels[1:], self.pins[1:], strict=True)))
                self.server = ControlServer(self.control, gpio.control)
        except BaseException:
            self.stop()
            raise
        self.after_apply(table)

    def start(self) -> None:
        for panel in self.panels:
            panel.start()
        if self.server is not None:
            self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        for panel in self.panels:
            panel.stop()
        self.panels = []

    @property
    def control_endpoint(self) -> str | None:
        return None if self.server is None else self.server.endpoint

    def after_apply(self, table: Table) -> dict[str, LampMode] | None:
        """Lamps follow the table; returns every lamp's mode if any changed, else ``None``."""
        view = LampView.from_table(table)
        if view == self._view:
            return None
        self._view = view
        lamps: dict[str, LampMode] = {}
        for panel in self.panels:
            panel.update(view)
            lamps.update(panel.lamp_modes())
        if lamps == self._lamps:
            return None
        self._lamps = lamps
        self.lamp_count += 1
        return lamps

    def show_fault(self, table: Table) -> None:
        """The journal cannot be written: every lamp in its fault pattern, the tower's fault lamp too.

        Shown as a tilt of its own (``journal_fault``) on top of the table's state; nothing the table
        does afterwards changes it, since no input is applied until the daemon is restarted.
        """
        self._view = view = dataclasses.replace(LampView.from_table(table), tilt=JOURNAL_FAULT)
        lamps: dict[str, LampMode] = {}
        for panel in self.panels:
            panel.update(view)
            lamps.update(panel.lamp_modes())
        self._lamps = lamps
        self.lamp_count += 1

    def lamps_payload(self, table_id: str) -> dict[str, Any]:
        """The ``<table>.lamps`` message for the lamps as they are now."""
        return lamps_payload(table_id, self.lamp_count, self._lamps)


def after_restart(logic: PanelLogic, last_bets: Mapping[int, Mapping[str, int]], minimum: int) -> None:
    """What a press bets after a restart: never a surprise (docs/wiring.md, "After a restart").

    ``repeat_bet`` repeats what the journal says each seat had down when betting last ended, as it
    would have without the restart. The keyed amount (bet_up, chip keys) is not an input and is not
    journaled, so it is back at the table minimum; each seat's bet keys blink while betting is open
    until the seat presses ``clear_bet`` or ``repeat_bet``, so a player sees it before chips wager
    the minimum. (Not until any key: a chip key pressed across the restart adds to the minimum, not
    to what the player had keyed, and the blink must still say so.)
    """
    logic.last_round = {seat: {spot: amount for spot, amount in bets.items() if spot in logic.spots}
                        for seat, bets in last_bets.items() if seat in logic.map.seats}
    logic.choose_again()
    repeats = ", ".join(f"seat {seat} {bets}" for seat, bets in sorted(logic.last_round.items()) if bets)
    log.warning("restart: seats %s: keyed amount back at the table minimum %d (bet keys blink until the "
                "seat presses clear_bet or repeat_bet); repeat_bet repeats the journal's last round: %s",
                ",".join(str(s) for s in sorted(logic.map.seats)), minimum, repeats or "no wagers")


def as_it_was(panel: PanelLink, pins: SimulatedPins, sensor_wagers: Collection[tuple[int, str]]) -> None:
    """Simulated panels come back as real ones would: plugged in, chips still on the spots they were on.

    Real panels keep their cables and chips through a daemon restart; mock
    pins start from nothing. So, on mock pins only, every presence loop is
    closed and every sensor-placed wager's chips are back on its sensor
    before the panel first reads them (a shipped simulated table is plugged
    from the start; ``unplug`` on the control socket still unplugs), except
    where a chips fault the journal holds says otherwise: chips lifted after
    the close (or missing at a start) are still off, chips put down on a
    spot after it are still there (the faults were restored first).
    """
    m = panel.map
    loops = [p.presence for p in m.seats.values()] + [m.dealer.presence if m.dealer else None]
    faults = panel.logic.faults
    said = {seat: chips_said(faults.get(seat_device(seat), {}).get(RESTORED, "")) for seat in m.seats}
    chips = [spec.sensor for seat, p in m.seats.items() for spot, spec in p.spots.items()
             if (was.on if (was := said[seat].get(spot)) is not None else (seat, spot) in sensor_wagers)]
    for spec in [*[loop for loop in loops if loop is not None], *chips]:
        pins.drive(spec.pin, spec.active == "high", m.chip_of(spec))
    panel.resample()


def lamps_payload(table_id: str, n: int, modes: dict[str, LampMode]) -> dict[str, Any]:
    """Lit lamps only, grouped the way a person reads a table: seats, dealer, tower.

    ``{"event": "lamps", "table": ..., "n": 7, "fault": false,
    "seats": {"2": {"buttons": {"hit": "blink"}, "spots": {"main": "on"}}},
    "dealer": {"close_betting": "on"}, "tower": {"in_play": "on"}}``
    """
    seats: dict[str, dict[str, dict[str, str]]] = {}
    dealer: dict[str, str] = {}
    tower: dict[str, str] = {}
    for lamp_id, mode in sorted(modes.items()):
        if mode is LampMode.OFF:
            continue
        parts = lamp_id.split(" ")
        if parts[0] == "seat":
            seat = seats.setdefault(parts[1], {"buttons": {}, "spots": {}})
            if parts[2] == "spot":
                seat["spots"][parts[3]] = mode.value
            else:
                seat["buttons"][parts[2]] = mode.value
        elif parts[0] == "dealer":
            dealer[parts[1]] = mode.value
        else:
            tower[parts[1]] = mode.value
    ordered = dict(sorted(seats.items(), key=lambda kv: int(kv[0])))
    # ``fault`` says what the tower's fault lamp says: lit in the tilt pattern on a tilt, steady
    # while a device is offline; a table without a tower is at fault when any lamp shows the tilt.
    fault = any(m is LampMode.FAULT for m in modes.values()) or tower.get("fault", "off") != "off"
    return {"event": "lamps", "table": table_id, "n": n, "fault": fault,
            "seats": ordered, "dealer": dealer, "tower": tower}
