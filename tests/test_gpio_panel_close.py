"""What the chips must read at the close, game by game, and two edges a review found (2026-12-07): a wager
keyed by command on a spot whose chips were placed and taken back, and a restart in betting then chips lifted
as the close is applied (each fails before its fix). A real Table, the panel logic and simulated pins."""
from __future__ import annotations

import pytest
from test_gpio_rig import Rig, build_map

from controller import inputs as I
from controller.limits import TableLimits
from controller.panels.logic import PanelLogic
from controller.panels.view import LampView
from drivers.gpio.pinmap import BET_WORDS

pytestmark = pytest.mark.timeout(60)


def _clean(rig: Rig) -> bool:
    return not rig.table.offline and rig.table.tilt is None


def _chips_on_banker() -> Rig:
    """A baccarat seat's chips put on banker while betting is open: a wager placed by its chips."""
    rig = Rig(build_map("baccarat", {1: {"buttons": list(BET_WORDS), "spots": ["player", "banker"]}},
                        dealer=True))
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "banker", True)
    rig.sync()
    return rig


def test_swap_hand_main_lifted_is_a_move() -> None:
    rig = Rig(build_map("swap_hand", {1: {"spots": ["main"]}}, dealer=True, bet_step=2,
                        bet_hold={"steps": [2, 10]}),
              limits=TableLimits(min_bet=200))
    rig.stake_and_close(1, "main")
    assert (1, "main") in rig.table.staked and (1, "odds_win") in rig.table.staked
    assert _clean(rig)
    rig.chips(1, "main", False)
    rig.sync()
    assert "panel 1" in rig.table.offline


def test_one_card_poker_tie_handed_back_no_move_primary_lifted_move() -> None:
    seats = {1: {"spots": ["primary", "tie"]}, 2: {"spots": ["primary", "tie"]}}
    rig = Rig(build_map("one_card_poker", seats, dealer=True), limits=TableLimits(seats=6),
              credits={1: 100_000, 2: 100_000, 3: 100_000})
    rig.table.apply(I.SetDesignatedPlayer(3))
    rig.press(None, "open_betting")
    rig.sync()
    rig.chips(1, "tie", True)  # a lone tie: handed back
    rig.chips(2, "primary", True)
    rig.chips(2, "tie", True)
    rig.sync()
    rig.press(None, "close_betting")
    rig.sync()
    assert rig.table.phase == "dealing", rig.table.phase
    assert (1, "tie") not in rig.table.staked and (2, "tie") in rig.table.staked
    rig.chips(1, "tie", False)
    rig.sync()
    assert _clean(rig)
    rig.chips(2, "tie", False)
    rig.sync()
    assert "panel 2" in rig.table.offline


def test_a_wager_keyed_by_command_on_a_spot_whose_chips_were_placed_and_taken_back_is_no_move() -> None:
    """Chips placed (a wager) and lifted (cancelled) during betting; then the seat's wager is keyed by
    command on that spot, no chips. At the close nothing moved."""
    rig = _chips_on_banker()
    rig.chips(1, "banker", False)
    rig.sync()
    assert rig.table.staked == {}
    rig.posted.append((I.PlaceWager(1, "banker", 300), "ctl bet"))  # keyed by command
    rig.sync()
    assert rig.table.staked == {(1, "banker"): 300}
    rig.press(None, "close_betting")
    rig.sync()
    assert rig.table.phase == "dealing"
    assert _clean(rig), rig.table.offline


def test_restart_mid_betting_chips_lifted_while_close_is_journaled_still_a_move() -> None:
    """A sensor wager standing at a restart in betting; its chips are lifted as the close is applied (the
    cancel comes after the close, refused). The close must take the wager's chips as down."""
    rig = _chips_on_banker()
    # the restart: a new logic on the same table, chips down, the wager a sensor's
    logic = PanelLogic(rig.map, rig.table.limits)
    logic.covered[(1, "banker")] = True
    assert logic.update(LampView.from_table(rig.table)) == []
    rig.table.apply(I.CloseBetting())
    logic.sensor(1, "banker", False)  # posts a CancelWager the table refuses: after the close
    out = logic.update(LampView.from_table(rig.table))
    assert any(isinstance(inp, I.DeviceStatus) and not inp.online for inp, _ in out), out
