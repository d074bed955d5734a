"""Restarts with panel faults the journal holds, as a second review found them (helper-213, 2026-12-07).

A panel still unplugged, or a button still stuck, at a restart mid-deal: the start dropped the journal's
fault and posted the panel online, then the driver raised it again (the halt ended between the two, a card
could be dealt; a stuck button's came back only after stuck_after_s). Chips missing at a restart and put
back were not the wager's chips when lifted as the close was applied (no halt). Those four tests fail before
their fixes; the rest are what the review tried and found right. docs/daemon.md ("Chips on the
spots across a restart"): "A restart with the same state posts nothing at all,
so restarting twice journals nothing new." A real Table, the real panel logic, simulated pins."""
from __future__ import annotations

import pytest
from test_gpio_panel_restart import (
    _banker_staked_and_closed,
    _clean,
    _plugged_seat_panel,
    _restart,
    _seat_panel,
)
from test_gpio_rig import Rig, build_map

from controller import inputs as I
from controller.daemon.panels import after_restart
from controller.events import TiltCleared
from controller.panels.link import PanelLink
from controller.panels.view import LampView
from drivers.gpio import GpioZeroBackend
from drivers.gpio.pinmap import BET_WORDS

pytestmark = pytest.mark.timeout(60)


def _posted_by_restart(rig: Rig, sensor_wagers: set[tuple[int, str]], **kw: object) -> list[I.Input]:
    """_restart, returning what the restarted panel posted (each posted input is journaled)."""
    seen: list[I.Input] = []
    original = rig.sync

    def sync() -> list:  # type: ignore[type-arg]
        seen.extend(inp for inp, _ in rig.posted)
        return original()

    rig.sync = sync  # type: ignore[method-assign]
    try:
        _restart(rig, sensor_wagers, {}, **kw)  # type: ignore[arg-type]
    finally:
        rig.sync = original  # type: ignore[method-assign]
    return seen


# ------------------------------------------------------------------ non-chips faults at a restart

def test_restart_with_a_panel_still_unplugged_and_its_chips_still_lifted_journals_nothing_new() -> None:
    """Chips lifted mid-deal, then the panel unplugged; the daemon restarts with nothing changed (still
    unplugged, still lifted). The table's fault text is the same after as before, yet the restarted panel
    posts two DeviceStatus inputs: first the chips fault alone (the unplugged part dropped at _start),
    then both again when Panel.start re-reports the open loop."""
    rig = _plugged_seat_panel()
    rig.stake_and_close(1, "banker")
    rig.chips(1, "banker", False)  # lifted mid-deal
    rig.sync()
    presence = rig.map.seats[1].presence
    assert presence is not None
    rig.pins.drive(presence.pin, True)  # and unplugged
    rig.step()
    rig.sync()
    before = dict(rig.table.offline)
    lifted = "chips moved after no more bets: banker chips lifted"
    assert before["panel 1"].startswith(f"{lifted}; panel unplugged")
    posted = _posted_by_restart(rig, {(1, "banker")})  # nothing changed: not plugged, chips not back
    assert rig.table.offline == before  # the same text in the end...
    assert [p for p in posted if isinstance(p, I.DeviceStatus)] == [], posted  # ...but journaled twice


def test_restart_with_a_panel_still_unplugged_mid_deal_does_not_end_the_halt_for_a_moment() -> None:
    """A panel unplugged mid-deal halts the deal; the daemon restarts with it still unplugged. _start drops
    the journal's fault and posts the panel online ("back to normal at start"): the device_offline tilt is
    cleared (device_back), then raised again when Panel.start reports the open loop. In the daemon the two
    are separate inputs on the loop's queue: a card from the shoe between them is dealt to a round whose
    panel is unplugged, and the journal gains two DeviceStatus and a TiltCleared for nothing."""
    rig = _plugged_seat_panel()
    rig.stake_and_close(1, "banker")
    presence = rig.map.seats[1].presence
    assert presence is not None
    rig.pins.drive(presence.pin, True)  # unplugged mid-deal
    rig.step()
    rig.sync()
    assert "panel 1" in rig.table.offline and rig.table.tilt is not None
    n = len(rig.events)
    posted = _posted_by_restart(rig, {(1, "banker")}, chips=((1, "banker"),))  # still unplugged
    assert "panel 1" in rig.table.offline
    new = rig.events[n:]
    assert not [e for e in new if isinstance(e, TiltCleared)], new
    assert [p for p in posted if isinstance(p, I.DeviceStatus)] == [], posted


def test_restart_with_a_button_still_stuck_mid_deal_keeps_the_deal_halted() -> None:
    """A stuck button mid-deal halts the deal (DeviceStatus "button ... stuck or shorted"). The daemon
    restarts with the button still held: the journal's fault is dropped at start and the panel posted
    online, so the deal goes on for stuck_after_s (20 s) before the driver reports it stuck again."""
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS) + ["clear_bet"],
                                         "spots": ["player", "banker"]}}, dealer=True))
    rig.step()
    rig.sync()
    rig.stake_and_close(1, "banker")
    spec = rig.button_spec(1, "bet_up")
    rig._drive(spec, True)  # held down...
    rig.step(rig.map.stuck_after_s + 1)  # ...for longer than stuck_after_s: stuck
    rig.sync()
    before = dict(rig.table.offline)
    assert "stuck" in before.get("panel 1", ""), before
    # The restart, the button still held (as _restart, with the button's pin driven as it first reads).
    rig.panel.stop()
    link = PanelLink(rig.map, GpioZeroBackend(rig.factory, "mock"),
                     lambda inp, src: rig.posted.append((inp, src)), rig.table.limits, clock=rig.clock)
    rig._drive(rig.map.seats[1].spots["banker"].sensor, True)
    rig._drive(spec, True)
    link.logic.keyed = set()
    link.logic.restore(rig.table.offline)
    after_restart(link.logic, {}, rig.table.limits.min_bet)
    link.resample()
    rig.panel = link
    link.update(LampView.from_table(rig.table))
    link.start(thread=False)
    rig.sync()
    assert rig.table.offline == before, rig.table.offline  # nothing changed: still stuck, still halted
    rig._drive(spec, False)  # released before the driver's own stuck deadline: the kept fault ends with it
    rig.step()
    rig.sync()
    assert "stuck" not in rig.table.offline.get("panel 1", ""), rig.table.offline


# ------------------------------------------------------------------ what the review tried, found right

def test_two_chips_faults_restart_unchanged_posts_nothing_and_order_kept() -> None:
    rig = _banker_staked_and_closed()
    rig.chips(1, "banker", False)
    rig.chips(1, "player", True)
    rig.sync()
    before = dict(rig.table.offline)
    assert before == {"panel 1": "chips moved after no more bets: banker chips lifted; "
                                 "chips moved after no more bets: player chips placed"}
    posted = _posted_by_restart(rig, {(1, "banker")}, chips=((1, "player"),))
    assert posted == [] and rig.table.offline == before
    posted = _posted_by_restart(rig, {(1, "banker")}, chips=((1, "player"),))  # twice
    assert posted == [] and rig.table.offline == before
    rig.chips(1, "banker", True)
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: player chips placed"}
    rig.chips(1, "player", False)
    rig.sync()
    assert _clean(rig)


def test_one_of_two_faults_back_at_restart_other_stands_then_void_clears() -> None:
    rig = _banker_staked_and_closed()
    rig.chips(1, "banker", False)
    rig.chips(1, "player", True)
    rig.sync()
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"), (1, "player")))  # banker back while down
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: player chips placed"}
    rig.press(None, "void")
    rig.sync()
    assert _clean(rig) and rig.table.phase == "idle", rig.table.offline


def test_missing_at_start_mid_deal_then_restart_again_posts_nothing() -> None:
    rig = _banker_staked_and_closed()
    _restart(rig, {(1, "banker")}, {})  # chips lifted while the daemon was down
    before = dict(rig.table.offline)
    assert before == {"panel 1": "chips missing at start: banker wager 100 accepted, no chips on the spot"}
    assert _posted_by_restart(rig, {(1, "banker")}) == []
    assert rig.table.offline == before
    rig.chips(1, "banker", True)
    rig.sync()
    assert _clean(rig)


def test_restart_in_betting_with_missing_chips_twice_posts_nothing() -> None:
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker", "tie"]}},
                        dealer=True))
    rig.step()
    rig.sync()
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.chips(1, "tie", True)
    rig.sync()
    _restart(rig, {(1, "banker"), (1, "tie")}, {})  # both lifted while down
    before = dict(rig.table.offline)
    assert len(before["panel 1"].split("; ")) == 2
    assert _posted_by_restart(rig, {(1, "banker"), (1, "tie")}) == []
    rig.chips(1, "banker", True)
    rig.chips(1, "tie", True)
    rig.sync()
    assert _clean(rig)


# ------------------------------------------------------------- missing chips put back, then the close

def _close_while_lifting(rig: Rig) -> None:
    """The dealer closes betting and, in the same instant, the banker chips are lifted: the panel posts its
    CancelWager before it sees the close (the table refuses it: a late cancel is no cancel)."""
    rig.press(None, "close_betting")  # CloseBetting posted, not applied yet
    rig.chips(1, "banker", False)  # CancelWager posted behind it
    rig.sync()
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 100}


def test_control_chips_lifted_as_the_close_is_applied_halt_the_deal() -> None:
    """Without a restart (passes): the wager's chips stood at the close, lifted as it was applied: a move."""
    rig = _seat_panel()
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    _close_while_lifting(rig)
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips lifted"}


def test_chips_missing_at_a_restart_put_back_then_lifted_as_the_close_is_applied_halt_the_deal() -> None:
    """The same after a restart in betting with the chips missing (fault), put back (the wager stands): the
    spot is not in ``chipped`` (sensor()'s missing branch does not add it), so at the close the sensor's
    "off" is taken as the state at the close and the deal goes on with the wager's chips off the spot."""
    rig = _seat_panel()
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    _restart(rig, {(1, "banker")}, {})  # lifted while the daemon was down: chips missing at start
    assert rig.table.offline == {
        "panel 1": "chips missing at start: banker wager 100 accepted, no chips on the spot"}
    rig.chips(1, "banker", True)  # put back: the wager stands
    rig.sync()
    assert _clean(rig)
    _close_while_lifting(rig)
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips lifted"}, \
        "the deal goes on with the wager's chips lifted as betting closed"
