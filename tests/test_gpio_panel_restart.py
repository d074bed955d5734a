"""The panels across a daemon restart, as a second reading found them (2026-12-07): a panel unplugged mid-deal
stayed offline after the restart until the round was voided, plugged back or not; a refused command bet on a
spot made its chips' wager "keyed" when the journal was replayed (no "chips missing"). Each fails before its
fix. A real Table, the real panel logic and simulated pins (tests/test_gpio_rig.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_daemon_support import config_for
from test_gpio_rig import Rig, build_map

from controller import inputs as I
from controller.daemon.journal import Journal
from controller.daemon.panels import after_restart
from controller.daemon.service import TableService
from controller.panels.link import PanelLink
from controller.panels.logic import PanelLogic
from controller.panels.view import LampView
from drivers.gpio import GpioZeroBackend
from drivers.gpio.pinmap import BET_WORDS

pytestmark = pytest.mark.timeout(60)


def _clean(rig: Rig) -> bool:
    return not rig.table.offline and rig.table.tilt is None


def _restart(rig: Rig, sensor_wagers: set[tuple[int, str]], last_bets: dict[int, dict[str, int]],
             chips: tuple[tuple[int, str], ...] = (), plugged: tuple[int, ...] = ()) -> None:
    """The daemon restarted on the same table (as PanelHost.open does): a new link on the same pins, with
    ``chips`` on their spots and the presence loops of ``plugged`` closed as it first reads them."""
    rig.panel.stop()
    link = PanelLink(rig.map, GpioZeroBackend(rig.factory, "mock"),
                     lambda inp, src: rig.posted.append((inp, src)), rig.table.limits, clock=rig.clock)
    for seat, spot in chips:
        rig._drive(rig.map.seats[seat].spots[spot].sensor, True)
    for seat in plugged:
        loop = rig.map.seats[seat].presence
        assert loop is not None
        rig._drive(loop, True)
    link.logic.keyed = {key for key in rig.table.staked if key not in sensor_wagers}
    link.logic.restore(rig.table.offline)
    after_restart(link.logic, last_bets, rig.table.limits.min_bet)
    link.resample()
    rig.panel = link
    link.update(LampView.from_table(rig.table))  # PanelHost.open ends with after_apply: the first view...
    link.start(thread=False)  # ...then PanelHost.start: the driver reports the panels missing now
    rig.sync()


def _plugged_seat_panel() -> Rig:
    """A Baccarat seat panel with a presence loop, plugged in, and the dealer panel, idle."""
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"],
                                         "presence": True}}, dealer=True))
    presence = rig.map.seats[1].presence
    assert presence is not None
    rig.pins.drive(presence.pin, False)  # plugged in
    rig.step()
    rig.sync()
    return rig


def test_a_panel_unplugged_mid_deal_and_plugged_back_while_the_daemon_was_down_is_online_at_start() -> None:
    """docs/daemon.md: a panel fault the journal holds is kept until its round ends, but "a missing panel or
    a stuck button is re-reported by its pin at start". A seat panel unplugged mid-deal (the deal halts), the
    daemon restarted with it plugged back in: its pin says it is there, so the deal may go on."""
    rig = _plugged_seat_panel()
    presence = rig.map.seats[1].presence
    assert presence is not None
    assert _clean(rig)
    rig.stake_and_close(1, "banker")
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 100}
    rig.pins.drive(presence.pin, True)  # unplugged mid-deal: the deal halts
    rig.step()
    rig.sync()
    assert "panel 1" in rig.table.offline
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"),), plugged=(1,))  # plugged back while down
    assert rig.panel.logic.covered[(1, "banker")] and rig.table.phase == "dealing"
    assert _clean(rig), rig.table.offline


def test_a_panel_still_unplugged_at_a_restart_mid_deal_is_online_once_plugged_back() -> None:
    """The same, the panel still unplugged at the restart (its pin re-reports it) and plugged in after: the
    fault the journal held is the one the pin now says, and ends with it."""
    pin_map = build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"],
                                         "presence": True}}, dealer=True)
    rig = Rig(pin_map)
    presence = rig.map.seats[1].presence
    assert presence is not None
    rig.pins.drive(presence.pin, False)
    rig.step()
    rig.sync()
    rig.stake_and_close(1, "banker")
    rig.pins.drive(presence.pin, True)  # unplugged mid-deal
    rig.step()
    rig.sync()
    assert "panel 1" in rig.table.offline
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"),))  # still unplugged
    assert "panel 1" in rig.table.offline
    rig.pins.drive(presence.pin, False)  # plugged in
    rig.step()
    rig.sync()
    assert _clean(rig), rig.table.offline


def test_a_refused_command_bet_does_not_make_a_chip_wager_keyed_after_a_restart(tmp_path: Path) -> None:
    """Which standing wagers chips placed decides what a restart expects on the sensors (keyed wagers have
    no chips: never "chips missing"). Live, only accepted placements count (WagerPlaced events); rebuilt
    from the journal after a restart, a refused command bet on the spot (here over the seat's credits)
    counted as a placement by command, so the chips' wager became "keyed": lifted while the daemon was
    down, it stood with no chips and no fault, and betting could close on it (docs/daemon.md, "Chips on the
    spots across a restart": chips missing is a fault, never silent)."""
    config = config_for(tmp_path)

    def service() -> tuple[Journal, TableService]:
        journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                               options=config.options_dict(), fsync=False)
        svc = TableService(config, journal)
        svc.replay()
        return journal, svc

    journal, svc = service()
    svc.submit(I.CreditIn(1, 1000), "command:olive")
    svc.submit(I.OpenBetting(), "gpio dealer open_betting")
    svc.submit(I.PlaceWager(1, "banker", 200), "gpio seat 1 sensor banker: chips on the spot")
    refused = svc.submit(I.PlaceWager(1, "banker", 5000), "command:olive")  # more than the seat has
    assert [e.event for e in refused.events] == ["refused"]
    assert svc.sensor_wagers == {(1, "banker")}  # live: the chips' wager
    journal.close()
    journal, again = service()  # the restart
    try:
        assert again.table.staked == {(1, "banker"): 200}
        # The panel at start, the chips lifted while the daemon was down (as PanelHost.open sets it up):
        logic = PanelLogic(build_map("baccarat", {1: {"spots": ["player", "banker"]}}), config.limits)
        logic.keyed = {key for key in again.table.staked if key not in again.sensor_wagers}
        out = logic.update(LampView.from_table(again.table))
        assert [inp for inp, _ in out] == [I.DeviceStatus(
            "panel 1", False, "chips missing at start: banker wager 200 accepted, no chips on the spot")]
    finally:
        journal.close()


def _seat_panel() -> Rig:
    """A Baccarat seat panel (player and banker spots, the bet keys) and the dealer panel, idle."""
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"]}},
                        dealer=True))
    rig.step()
    rig.sync()
    return rig


def _banker_staked_and_closed() -> Rig:
    """:func:`_seat_panel` whose chips wagered on banker, betting closed: the deal is on."""
    rig = _seat_panel()
    rig.stake_and_close(1, "banker")
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 100}
    return rig


def test_chips_lifted_mid_deal_and_put_back_while_the_daemon_was_down_let_the_deal_go_on() -> None:
    """Chips lifted after no more bets halt the deal; put back, the deal goes on. Put back while the daemon
    was down, the sensors at start say they are back as at the close: the journal's fault must not outlive
    what the pins now say (it kept the deal halted until the dealer voided the round: noted 2026-12-07)."""
    rig = _banker_staked_and_closed()
    rig.chips(1, "banker", False)  # lifted mid-deal: the deal halts
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips lifted"}
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"),))  # put back while the daemon was down
    assert rig.table.phase == "dealing" and rig.panel.logic.covered[(1, "banker")]
    assert _clean(rig), rig.table.offline


def test_chips_lifted_mid_deal_and_still_off_at_a_restart_keep_the_deal_halted_until_put_back() -> None:
    """The same, still lifted at the restart: the fault stands (the same words), ends when they are back."""
    rig = _banker_staked_and_closed()
    rig.chips(1, "banker", False)
    rig.sync()
    _restart(rig, {(1, "banker")}, {})
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips lifted"}
    rig.chips(1, "banker", True)  # put back
    rig.sync()
    assert _clean(rig), rig.table.offline


def test_chips_put_on_an_empty_spot_mid_deal_and_pushed_back_while_the_daemon_was_down_let_it_go_on() -> None:
    """The other move: chips put down mid-deal on a spot with no wager, pushed back while the daemon was down.
    The spot reads empty at start, as at the close; the wager's chips are still down: the deal goes on."""
    rig = _banker_staked_and_closed()
    rig.chips(1, "player", True)
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: player chips placed"}
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"),))
    assert _clean(rig), rig.table.offline


def test_keyed_wager_chips_put_on_mid_deal_still_on_at_restart_keep_the_deal_halted() -> None:
    """A wager keyed by command (no chips at the close); chips put on its spot mid-deal halt the deal.
    Still on at the restart, nothing is as at the close: the fault stands (a review found the first take on
    chips put back while the daemon was down ended it, a keyed wager's chips taken as as at the close)."""
    rig = _seat_panel()
    rig.press(None, "open_betting")
    rig.sync()
    rig.posted.append((I.PlaceWager(1, "banker", 100), "command:olive"))  # keyed, no chips
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 100} and _clean(rig)
    rig.chips(1, "banker", True)  # chips put down mid-deal: a move
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips placed"}
    _restart(rig, set(), {}, chips=((1, "banker"),))  # still on: the daemon restarted, nothing changed
    assert rig.panel.logic.covered[(1, "banker")]
    assert not _clean(rig), "the deal goes on with chips put down after no more bets still on the spot"


def test_chip_wager_topped_up_by_command_lifted_mid_deal_still_off_at_restart_keep_the_deal_halted() -> None:
    """Chips wager 100 on banker, a command adds 100 (the last placement is a command's: the journal calls
    the wager keyed after a restart), the chips stay down through the close. Lifted mid-deal: halt. Still
    lifted at the restart, not as at the close: the fault stands (its words say what the close was)."""
    rig = _seat_panel()
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    rig.posted.append((I.PlaceWager(1, "banker", 100), "command:olive"))
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
    assert rig.table.phase == "dealing" and rig.table.staked == {(1, "banker"): 200} and _clean(rig)
    rig.chips(1, "banker", False)  # lifted mid-deal
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: banker chips lifted"}
    # sensor_wagers after a restart (TableService._sensor_wagers_of_round): the last placement was a
    # command's, so not a sensor wager: keyed.
    _restart(rig, set(), {})  # chips still off
    assert not rig.panel.logic.covered[(1, "banker")]
    assert not _clean(rig), "the deal goes on with the wager's chips still lifted"


def test_chips_placed_still_on_at_restart_then_pushed_back_end_the_fault() -> None:
    """docs/daemon.md: a restored chips fault ends when the chips read as at the close again, at start or
    later. Chips put down mid-deal, still on at the restart, pushed back after it: the deal goes on (the
    fault stood until the round ended or was voided: a review, 2026-12-07)."""
    rig = _banker_staked_and_closed()
    rig.chips(1, "player", True)
    rig.sync()
    assert rig.table.offline == {"panel 1": "chips moved after no more bets: player chips placed"}
    _restart(rig, {(1, "banker")}, {}, chips=((1, "banker"), (1, "player")))
    assert rig.table.offline  # still on: the fault stands (right)
    rig.chips(1, "player", False)  # pushed back after the restart: as at the close
    rig.sync()
    assert _clean(rig), rig.table.offline
