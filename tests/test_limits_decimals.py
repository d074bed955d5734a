"""A change of the currency's decimals never waits for a round in play: it is refused at the start.

A change found mid-round is journaled at the round's end (docs/daemon.md,
"Limits"), but the rest of that round's commands are typed in the table
file's currency: a decimals change pending there would read "50.00" in the
new decimals while the table still counts the old minor units. So the
decimals change only between rounds with no money held, at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_limits_journal import config, open_service, refused_start

from controller import inputs as I
from controller.events import InputRefused
from controller.games import GAMES
from controller.limits import TableLimits
from controller.table import Table

pytestmark = pytest.mark.timeout(30)


def test_a_decimals_change_found_mid_round_is_refused_even_with_no_money_held(tmp_path: Path) -> None:
    live = open_service(config(tmp_path, 100, 1000))
    live.replay()
    for inp in (I.NewShoe(), I.OpenBetting()):  # a round in play, no seat holding anything
        assert live.submit(inp, "test", at=1.0).refused is None
    assert live.table.phase == "betting" and not any(live.table.credits.values())
    live.journal.close()
    refused_start(config(tmp_path, 100, 1000, minor_units=0),
                  "currency.minor_units 2 -> 0 while a round is in play")


def test_a_decimals_change_between_rounds_with_no_money_held_takes_effect_at_once(tmp_path: Path) -> None:
    live = open_service(config(tmp_path, 100, 1000))
    live.replay()
    live.journal.close()
    again = open_service(config(tmp_path, 100, 1000, minor_units=0))
    again.replay()
    assert again.table.limits.minor_units == 0 and again.journal.last_id == 1  # the change, journaled
    again.journal.close()


def _table(game: str, **limits: int) -> Table:
    return Table(GAMES[game](GAMES[game].options_model.model_validate({})), TableLimits(**limits))


def _change(**fields: int) -> I.SetLimits:
    return I.SetLimits(**{**TableLimits(seats=2).model_dump(), **fields})


def test_the_engine_itself_refuses_new_decimals_while_money_is_held() -> None:
    """The daemon asks before it journals a change, but a row made by hand (or by a daemon with
    another rule) must not rescale the money held either: the engine refuses it, so a replay plays it
    as refused and every balance keeps its worth."""
    table = _table("baccarat", seats=2)
    table.apply(I.CreditIn(1, 5000))
    refused = table.apply(_change(minor_units=0))
    assert isinstance(refused[0], InputRefused)
    assert "currency.minor_units 2 -> 0 while seats hold credits" in refused[0].reason
    assert table.limits.minor_units == 2 and table.credits == {1: 5000}
    table.apply(I.CreditOut(1, 5000))  # nothing held: the change is made
    assert table.apply(_change(minor_units=0)) == [] and table.limits.minor_units == 0


def test_the_engine_itself_keeps_the_designated_player_a_seat_of_the_table() -> None:
    """The Designated Player banks the next round with or without credits: limits that leave its
    seat out are refused by the engine, not only by the daemon's start."""
    table = _table("one_card_poker", seats=4)
    for inp in (I.CreditIn(3, 700), I.SetDesignatedPlayer(3), I.CreditOut(3, 700)):
        assert not isinstance(table.apply(inp)[0], InputRefused)
    refused = table.apply(_change(seats=2))
    assert isinstance(refused[0], InputRefused) and "seat 3 is the Designated Player" in refused[0].reason
    assert table.limits.seats == 4
