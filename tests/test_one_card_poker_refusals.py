"""One Card Poker with a Designated Player: what the game refuses, each refusal changing nothing at the table.

Illegal decisions and answers, a wager from the Designated Player's seat, a round with no Designated
Player and bad options; the rounds themselves are in tests/test_one_card_poker.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from one_card_poker_support import CREDITS, make_table, names, play, step
from pydantic import ValidationError

from controller import inputs as I
from controller.game_base import Refusal
from controller.games.one_card_poker.rules import OneCardPoker, OneCardPokerOptions


# ------------------------------------------------------------------ the DP seat
def test_the_dp_seat_places_no_wager() -> None:
    table = make_table(CREDITS, dp=4)
    table.apply(I.OpenBetting())
    before = table.snapshot()
    refused = table.apply(I.PlaceWager(4, "primary", 500))
    assert names(refused) == ["refused"] and "Designated Player" in refused[0].to_dict()["reason"]
    assert table.snapshot() == before


def test_a_seat_that_is_not_seated_cannot_be_the_dp() -> None:
    table = make_table({1: 1000})
    refused = table.apply(I.SetDesignatedPlayer(5))
    assert names(refused) == ["refused"] and "not seated" in refused[0].to_dict()["reason"]
    game = OneCardPoker(OneCardPokerOptions())
    with pytest.raises(Refusal, match="not seated"):
        game.set_designated_player(5, [1, 2])


def test_close_is_refused_without_a_dp() -> None:
    table = make_table(CREDITS)
    table.apply(I.OpenBetting())
    table.apply(I.PlaceWager(1, "primary", 500))
    before = table.snapshot()
    refused = table.apply(I.CloseBetting())
    assert names(refused) == ["refused"] and "no Designated Player" in refused[0].to_dict()["reason"]
    assert table.snapshot() == before


# ------------------------------------------------------------- refusals change nothing
@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        ((3, "extend"), "not to act"),
        ((4, "dp_extend"), "not to act"),
        ((1, "hit"), "not legal"),
        ((1, "extend", 400), "must be 5.00"),
        ((1, "surrender", 250), "takes no amount"),
    ],
)
def test_illegal_player_decisions_are_refused_and_change_nothing(
    decision: tuple[Any, ...], reason: str
) -> None:
    table = make_table(CREDITS, dp=4)
    play(table, {1: {"primary": 500}, 3: {"primary": 500}}, ["TC", "2D", "TD"])  # seat 3 lost, seat 4 DP
    before = table.snapshot()
    refused = step(table, decision)
    assert names(refused) == ["refused"] and reason in refused[0].to_dict()["reason"]
    assert table.snapshot() == before


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        ((1, "dp_extend"), "not to act"),
        ((4, "extend"), "not legal"),
        ((4, "dp_extend", 1000), "must be 5.00"),
        ((4, "dp_decline", 0), "takes no amount"),
    ],
)
def test_illegal_dp_answers_are_refused_and_change_nothing(decision: tuple[Any, ...], reason: str) -> None:
    table = make_table(CREDITS, dp=4)
    play(table, {1: {"primary": 500}}, ["TC", "TD", (1, "extend")])
    before = table.snapshot()
    refused = step(table, decision)
    assert names(refused) == ["refused"] and reason in refused[0].to_dict()["reason"]
    assert table.snapshot() == before


def test_a_decision_while_a_card_is_due_is_refused() -> None:
    table = make_table(CREDITS, dp=4)
    play(table, {1: {"primary": 500}}, ["TC"])
    before = table.snapshot()
    assert names(step(table, (1, "extend"))) == ["refused"]
    assert table.snapshot() == before


def test_the_round_itself_refuses_what_was_not_offered() -> None:
    """The table checks seat and action first; the round must refuse them too when called directly."""
    table = make_table(CREDITS, dp=4)
    play(table, {1: {"primary": 500}}, ["TC", "TD"])
    rnd = table.round
    assert rnd is not None
    view = rnd.view()
    for seat, action in [(2, "extend"), (1, "dp_extend"), (4, "dp_decline")]:
        with pytest.raises(Refusal, match="not"):
            rnd.on_decision(seat, action, None)
    assert rnd.view() == view


# ----------------------------------------------------------------------- options
def test_options_defaults_and_validation() -> None:
    opts = OneCardPokerOptions()
    assert (opts.decks, str(opts.tie_pays), opts.tie_banker, opts.tie_requires_extend) == (
        1,
        "10:1",
        "house",
        False,
    )
    assert (opts.dp_rotation, opts.dp_fee) == ("fixed", 0)
    for bad in (
        {"tie_pays": 541},
        {"tie_pays": "10:2"},
        {"tie_banker": "player"},
        {"dp_rotation": "random"},
        {"dp_fee": -1},
        {"decks": 9},
        {"tie_requires_extend": "yes"},
        {"surrender": True},
    ):
        with pytest.raises(ValidationError):
            OneCardPokerOptions(**bad)
