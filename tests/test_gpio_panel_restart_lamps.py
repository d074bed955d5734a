"""Panel faults at a restart, as a third review found them (helper-214, 2026-12-07): what the start posts is
measured against what the table was last told (a lamp that failed as the panel opened had been posted, and
the start posted it again, or left the table with the lamp's words alone while the panel was unplugged too);
the dealer's panel, two seats with the same button, several faults at once; a dead input chip, or dead
lamps, still so at a restart mid-deal: the journal's fault was dropped at start and raised again by the
driver's first check or write, lifting the halt for a moment (from before; both fail before the fix).
Each restart plays the daemon's order (PanelHost.open: restore, after_restart, resample, the first update;
then PanelHost.start)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from test_gpio_rig import Rig, build_map

from controller import inputs as I
from controller.daemon.panels import after_restart
from controller.events import TiltCleared
from controller.panels.link import PanelLink
from controller.panels.pinmaps import parse_pin_map
from controller.panels.view import LampView
from drivers.gpio import GpioZeroBackend
from drivers.gpio.pinmap import BET_WORDS, InputPin

pytestmark = pytest.mark.timeout(60)


def restart(rig: Rig, sensor_wagers: Iterable[tuple[int, str]], *,
            drive: Iterable[tuple[InputPin, bool]] = (), backend: Any = None) -> list[I.Input]:
    """The daemon restarted on the same table; ``drive`` sets input levels as the new panel first reads
    them. Returns every input the restarted panel posted (each would be journaled)."""
    rig.panel.stop()
    be = backend or GpioZeroBackend(rig.factory, "mock")
    posted: list[I.Input] = []

    def post(inp: I.Input, src: str) -> None:
        posted.append(inp)
        rig.posted.append((inp, src))

    link = PanelLink(rig.map, be, post, rig.table.limits, clock=rig.clock)
    for spec, level in drive:
        rig._drive(spec, level)
    link.logic.keyed = {key for key in rig.table.staked if key not in set(sensor_wagers)}
    link.logic.restore(rig.table.offline)
    after_restart(link.logic, {}, rig.table.limits.min_bet)
    link.resample()
    rig.panel = link
    link.update(LampView.from_table(rig.table))  # PanelHost.open's after_apply...
    link.start(thread=False)  # ...then PanelHost.start
    rig.sync()
    return posted


def statuses(posted: list[I.Input]) -> list[I.Input]:
    return [p for p in posted if isinstance(p, I.DeviceStatus)]


def _no_dealer_rig(buttons: list[str], presence: bool = False, tower: bool = False) -> Rig:
    rig = Rig(build_map("baccarat", {1: {"buttons": buttons, "spots": ["player", "banker"],
                                         "presence": presence}}, tower=tower))
    if presence:
        loop = rig.map.seats[1].presence
        assert loop is not None
        rig._drive(loop, True)  # plugged in
    rig.step()
    rig.sync()
    return rig


def _stake_and_close_by_command(rig: Rig) -> None:
    rig.posted.append((I.OpenBetting(), "command"))
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    rig.posted.append((I.CloseBetting(), "command"))
    rig.sync()
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 100}


# ---------------------------------------------------------------- D1: a dead input chip at a restart

def test_restart_with_the_map_inputs_still_failed_mid_deal_keeps_the_halt() -> None:
    """The map's inputs failed (every button of its chip reads pressed: line_check.at_open) halt the deal.
    The daemon restarts with the chip still dead: _start drops the journal's "inputs" fault and posts the
    panel online ("back to normal at start": device_back, the halt ends), then Panel.start's at_open check
    raises it again. In the daemon the shoe and the camera are awaited between open_panels and gpio.start
    (server.py), so cards can be dealt while the lines are garbage. 5f3abe4 keeps presence and stuck
    faults standing for exactly this reason but not the "inputs" one."""
    rig = _no_dealer_rig(["bet_up", "bet_down"])
    _stake_and_close_by_command(rig)
    held = [(rig.map.seats[1].buttons[w], True) for w in ("bet_up", "bet_down")]
    held.append((rig.map.seats[1].spots["banker"].sensor, True))
    restart(rig, {(1, "banker")}, drive=held)  # a first restart on a dead chip: the inputs fault
    before = dict(rig.table.offline)
    assert "read pressed at start" in before.get("panel 1", ""), before
    assert rig.table.tilt is not None and rig.table.tilt.reason == "device_offline"
    n = len(rig.events)
    posted = restart(rig, {(1, "banker")}, drive=held)  # again, nothing changed: the chip still dead
    assert rig.table.offline == before
    assert not [e for e in rig.events[n:] if isinstance(e, TiltCleared)], rig.events[n:]
    assert statuses(posted) == [], posted


# -------------------------------------------- D2: a lamp fault raised before the first view at a restart

class _Out:
    def __init__(self, line: Any, dead: Callable[[], bool]) -> None:
        self._line, self._dead = line, dead

    @property
    def lit(self) -> bool:
        return self._line.lit

    def set(self, lit: bool) -> None:
        if self._dead():
            raise OSError("lamp expander not answering")
        self._line.set(lit)

    def close(self) -> None:
        self._line.close()


class _DeadLamps(GpioZeroBackend):
    """Mock pins whose lamp lines cannot be written."""

    def output(self, pin: int, *, active_high: bool, chip: str = "header") -> Any:  # type: ignore[override]
        return _Out(super().output(pin, active_high=active_high, chip=chip), lambda: True)


def test_restart_unplugged_with_lamps_still_failed_keeps_the_table_text() -> None:
    """A seat panel unplugged mid-deal, its map's lamps dead too: the table holds both faults
    ("lamp ... cannot be written; panel unplugged ...", sorted by key as fault() joins them). The daemon
    restarts, nothing changed. The lamp write fails while the PanelLink is built (the tower's idle lamp is
    lit for the idle view), before restore: fault("lamps") posts the panel's status with the lamp text
    alone (the table drops the unplugged words). At the first view _standing adds "presence" and the joined
    text equals the journal's, which is all _start compares with now (``before`` from RESTORED only), so
    nothing is posted: the table is left saying the panel is offline for its lamps only, while the panel
    is unplugged (and says nothing more until a fault changes). Before 5f3abe4 ``before`` included every
    key and the full text was posted again."""
    rig = _no_dealer_rig(["bet_up", "bet_down"], presence=True, tower=True)
    _stake_and_close_by_command(rig)
    loop = rig.map.seats[1].presence
    assert loop is not None
    rig._drive(loop, False)  # unplugged mid-deal
    rig.step()
    rig.sync()
    unplugged = rig.table.offline["panel 1"]
    assert unplugged.startswith("panel unplugged")
    lamp = "lamp tower idle cannot be written: lamp expander not answering"
    # The lamps then die too: the table's text as PanelLogic.fault joins the two keys ("lamps" < "presence").
    rig.posted.append((I.DeviceStatus("panel 1", False, f"{lamp}; {unplugged}"), "gpio panel 1"))
    rig.sync()
    before = dict(rig.table.offline)
    restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)],
            backend=_DeadLamps(rig.factory, "mock"))  # still unplugged, lamps still dead
    logic = rig.panel.logic.faults["panel 1"]
    assert "presence" in logic and "lamps" in logic  # the panel knows both...
    assert rig.table.offline == before, rig.table.offline  # ...the table should still say both


# ------------------------------------------------------------- what was tried and found right (pass)

def _dealer_presence_map() -> Any:
    data = {"game": "baccarat",
            "seats": {1: {"buttons": {"bet_up": {"pin": 4}, "bet_down": {"pin": 17}},
                          "spots": {"player": {"sensor": 27}, "banker": {"sensor": 22}}},
                      2: {"buttons": {"bet_up": {"pin": 5}, "bet_down": {"pin": 6}},
                          "spots": {"player": {"sensor": 13}, "banker": {"sensor": 19}}}},
            "dealer": {"buttons": {"open_betting": {"pin": 26}, "close_betting": {"pin": 21},
                                   "void": {"pin": 20}}, "presence": 16}}
    return parse_pin_map(data, "<h314 map>")


def test_dealer_panel_still_unplugged_at_restart_posts_nothing() -> None:
    rig = Rig(_dealer_presence_map())
    assert rig.map.dealer is not None and rig.map.dealer.presence is not None
    rig._drive(rig.map.dealer.presence, True)
    rig.step()
    rig.sync()
    _stake_and_close_by_command(rig)
    rig._drive(rig.map.dealer.presence, False)
    rig.step()
    rig.sync()
    before = dict(rig.table.offline)
    assert before["dealer panel"].startswith("panel unplugged")
    posted = restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)])
    assert statuses(posted) == [] and rig.table.offline == before
    rig._drive(rig.map.dealer.presence, True)
    rig.step()
    rig.sync()
    assert not rig.table.offline


def test_two_seats_same_button_one_stuck_the_other_held_without_fault() -> None:
    """Seat 1's bet_up stuck in the journal and held at start: kept. Seat 2's bet_up held at start with no
    fault: not stuck until the driver says so (stuck_after_s)."""
    rig = Rig(_dealer_presence_map())
    rig._drive(rig.map.dealer.presence, True)  # type: ignore[union-attr, arg-type]
    rig.step()
    rig.sync()
    _stake_and_close_by_command(rig)
    b1, b2 = rig.map.seats[1].buttons["bet_up"], rig.map.seats[2].buttons["bet_up"]
    rig._drive(b1, True)
    rig.step(rig.map.stuck_after_s + 1)
    rig.sync()
    before = dict(rig.table.offline)
    assert list(before) == ["panel 1"] and "stuck" in before["panel 1"]
    posted = restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True),
                                                  (rig.map.dealer.presence, True),  # type: ignore[union-attr]
                                                  (b1, True), (b2, True)])
    assert statuses(posted) == [] and rig.table.offline == before
    rig.step(rig.map.stuck_after_s - 1)
    rig.sync()
    assert "panel 2" not in rig.table.offline
    rig.step(2)
    rig.sync()
    assert "stuck" in rig.table.offline.get("panel 2", "")
    rig._drive(b1, False)
    rig._drive(b2, False)
    rig.step()
    rig.sync()
    assert not rig.table.offline and rig.table.tilt is None


def test_stuck_in_journal_released_at_restart_online_at_start() -> None:
    rig = _no_dealer_rig(list(BET_WORDS))
    _stake_and_close_by_command(rig)
    b = rig.map.seats[1].buttons["bet_up"]
    rig._drive(b, True)
    rig.step(rig.map.stuck_after_s + 1)
    rig.sync()
    assert "stuck" in rig.table.offline["panel 1"]
    banker = rig.map.seats[1].spots["banker"].sensor
    posted = restart(rig, {(1, "banker")}, drive=[(banker, True), (b, False)])
    assert [s.online for s in statuses(posted)] == [True]  # type: ignore[attr-defined]
    assert not rig.table.offline and rig.table.tilt is None


def test_presence_chips_and_stuck_together_restart_posts_nothing() -> None:
    rig = _no_dealer_rig(list(BET_WORDS), presence=True)
    _stake_and_close_by_command(rig)
    b = rig.map.seats[1].buttons["bet_up"]
    loop = rig.map.seats[1].presence
    assert loop is not None
    rig.chips(1, "banker", False)
    rig.chips(1, "player", True)
    rig._drive(b, True)
    rig.step(rig.map.stuck_after_s + 1)
    rig._drive(loop, False)
    rig.step()
    rig.sync()
    before = dict(rig.table.offline)
    assert len(before["panel 1"].split("; ")) == 4, before
    posted = restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["player"].sensor, True), (b, True)])
    assert statuses(posted) == [] and rig.table.offline == before
    posted = restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["player"].sensor, True), (b, True)])
    assert statuses(posted) == [] and rig.table.offline == before


def test_restart_with_lamps_dead_and_a_clean_journal_posts_the_lamp_fault_once() -> None:
    """The same path, no journal fault: the lamp write fails as the link is built (posted, offline), and
    _start posts the identical DeviceStatus again (its ``before`` is the absent RESTORED, ""): two inputs
    journaled for one fault. Before 5f3abe4 one."""
    rig = _no_dealer_rig(["bet_up", "bet_down"], tower=True)
    posted = restart(rig, (), backend=_DeadLamps(rig.factory, "mock"))
    lamp = "lamp tower idle cannot be written: lamp expander not answering"
    assert statuses(posted) == [I.DeviceStatus("panel 1", False, lamp)], posted


def _halted_by(rig: Rig, lamp: str) -> int:
    """The table told panel 1 is offline for ``lamp`` (as fault("lamps") posts it), the deal halted; the
    number of events so far."""
    rig.posted.append((I.DeviceStatus("panel 1", False, lamp), "gpio panel 1"))
    rig.sync()
    assert rig.table.tilt is not None
    return len(rig.events)


def test_restart_with_the_lamps_still_dead_mid_deal_keeps_the_halt() -> None:
    """For "lamps" as for a dead input chip: a lamp fault halts the deal; the daemon restarts, the lamps dead
    (no lamp is lit for the idle view, so the first write is the first view's). _start drops the journal's
    lamp fault and posts the panel online (device_back: the halt ends), then the first view's show() fails
    and posts it offline again: a TiltCleared and a new TiltRaised journaled for nothing."""
    rig = _no_dealer_rig(["bet_up", "bet_down"])
    _stake_and_close_by_command(rig)
    lamp = "lamp seat 1 bet_up cannot be written: lamp expander not answering"
    n = _halted_by(rig, lamp)
    restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)],
            backend=_DeadLamps(rig.factory, "mock"))
    assert "panel 1" in rig.table.offline
    assert not [e for e in rig.events[n:] if isinstance(e, TiltCleared)], rig.events[n:]


def test_restart_with_the_map_inputs_mended_while_down_ends_the_fault_at_start() -> None:
    """The journal's inputs fault is kept only until the driver's own check at start: the chip mended while
    the daemon was down (the buttons read released), the check passes and the panel is online, the halt
    over."""
    rig = _no_dealer_rig(["bet_up", "bet_down"])
    _stake_and_close_by_command(rig)
    held = [(rig.map.seats[1].buttons[w], True) for w in ("bet_up", "bet_down")]
    banker = (rig.map.seats[1].spots["banker"].sensor, True)
    restart(rig, {(1, "banker")}, drive=[*held, banker])  # a restart on a dead chip: the inputs fault
    assert "read pressed at start" in rig.table.offline.get("panel 1", ""), rig.table.offline
    released = [(spec, False) for spec, _ in held]
    posted = restart(rig, {(1, "banker")}, drive=[*released, banker])  # mended while down
    assert [s.online for s in statuses(posted)] == [True], posted  # type: ignore[attr-defined]
    assert not rig.table.offline and rig.table.tilt is None


def test_restart_with_the_lamps_mended_while_down_ends_the_fault_with_the_first_view() -> None:
    """The journal's lamp fault is kept until the first view's lamps are written: written (the staked spot's
    lamp lit), the panel is online and the halt over."""
    rig = _no_dealer_rig(["bet_up", "bet_down"])
    _stake_and_close_by_command(rig)
    _halted_by(rig, "lamp seat 1 bet_up cannot be written: lamp expander not answering")
    posted = restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)])
    assert [s.online for s in statuses(posted)] == [True], posted  # type: ignore[attr-defined]
    assert not rig.table.offline and rig.table.tilt is None


# ------------------------------------------- lamp lines the first view leaves dark (a review, helper-215)

class _DeadPins(GpioZeroBackend):
    """Mock pins where only the lamp lines in ``dead`` cannot be written (one lamp, or one chip's)."""

    def __init__(self, factory: Any, name: str, dead: set[int]) -> None:
        super().__init__(factory, name)
        self.dead = dead

    def output(self, pin: int, *, active_high: bool, chip: str = "header") -> Any:  # type: ignore[override]
        return _Out(super().output(pin, active_high=active_high, chip=chip), lambda: pin in self.dead)


def test_restart_in_betting_with_a_dead_spot_lamp_the_first_view_leaves_off_keeps_its_fault() -> None:
    """Betting open; chips on 'player' light its lamp, the write fails: the panel is offline (betting cannot
    close). The chips are lifted: the lamp is now to be off, but the driver retries a failed line every pass
    (_failed_lamps), so the fault stands while the line is dead. The daemon restarts, the lamp still dead:
    the first view has the lamp off, which a fresh output already reads, so it is never written, and
    _standing_ends("lamps") ends the journal's fault: the panel is online, betting can close, although
    nothing was written to the dead line."""
    rig = _no_dealer_rig(["bet_up", "bet_down", "clear_bet"])
    dead = {rig.map.seats[1].spots["player"].lamp.pin}  # type: ignore[union-attr]
    restart(rig, (), backend=_DeadPins(rig.factory, "mock", dead))  # the same daemon, now on a dead lamp
    rig.posted.append((I.OpenBetting(), "command"))
    rig.sync()
    rig.press(1, "clear_bet")  # the seat chooses its amount after that restart
    rig.sync()
    rig.chips(1, "player", True)
    rig.sync()
    offline = rig.table.offline
    assert "lamp seat 1 spot player cannot be written" in offline.get("panel 1", ""), offline
    rig.chips(1, "player", False)  # lifted: the wager cancelled, the lamp to be off; still a dead line
    rig.step()
    rig.sync()
    assert "panel 1" in rig.table.offline, "the live process keeps the fault while the line is dead"
    before = dict(rig.table.offline)
    posted = restart(rig, (), backend=_DeadPins(rig.factory, "mock", dead))  # nothing mended
    assert rig.table.offline == before, (rig.table.offline, statuses(posted))


def test_dead_tower_lamp_off_during_the_tilt_keeps_the_halt_at_restart() -> None:
    """Mid-deal the tower's in_play lamp cannot be written: the deal halts (device_offline). While tilted the
    in_play lamp is to be off. The daemon restarts, the lamp still dead: the first view leaves it off (never
    written), so the journal's lamp fault ends (device_back: the halt lifts), and as soon as the tilt is
    cleared the in_play lamp is lit, fails, and the panel is offline again: the TiltCleared c5730f4 set out
    to prevent."""
    rig = _no_dealer_rig(["bet_up", "bet_down"], tower=True)
    _stake_and_close_by_command(rig)
    assert rig.map.tower is not None
    lamp = "lamp tower in_play cannot be written: lamp expander not answering"
    n = _halted_by(rig, lamp)
    restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)],
            backend=_DeadPins(rig.factory, "mock", {rig.map.tower.in_play.pin}))
    assert not [e for e in rig.events[n:] if isinstance(e, TiltCleared)], rig.events[n:]
    assert "panel 1" in rig.table.offline


def test_restart_with_the_lamps_still_dead_in_the_dark_half_of_the_fault_blink_keeps_the_halt() -> None:
    """test_restart_with_the_lamps_still_dead_mid_deal_keeps_the_halt (every lamp dead), restarted when the
    tilt's fault blink is in its dark half (fault_blink_hz 4: 1000.125 s): every seat lamp is FAULT, its level
    now off, a fresh output reads off, nothing is written, and the journal's lamp fault ends with the first
    view (device_back). (The test above restarts in the lit half.)"""
    rig = _no_dealer_rig(["bet_up", "bet_down"])
    _stake_and_close_by_command(rig)
    _halted_by(rig, "lamp seat 1 bet_up cannot be written: lamp expander not answering")
    rig.clock.t = float(int(rig.clock.t) + 1) + 0.15  # the dark half of the fault blink
    n = len(rig.events)
    dead = {p.lamp.pin for p in [*rig.map.seats[1].buttons.values(), *rig.map.seats[1].spots.values()]
            if p.lamp is not None}
    restart(rig, {(1, "banker")}, drive=[(rig.map.seats[1].spots["banker"].sensor, True)],
            backend=_DeadPins(rig.factory, "mock", dead))
    assert not [e for e in rig.events[n:] if isinstance(e, TiltCleared)], rig.events[n:]
    assert "panel 1" in rig.table.offline
