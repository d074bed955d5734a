"""docs/zeromq.md names every key a late joiner reads of a round in play (``round_view``, ``shoe``), per game.

A third party reading the documents alone had to guess them (a review, 2026-12-07)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.games import GAMES
from controller.limits import TableLimits
from controller.table import Table

DOC = (Path(__file__).resolve().parents[1] / "docs" / "zeromq.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("**What a display that joins late reads of `state`**"):
              DOC.index("The fields (written as")]


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return {k for k in value if not k.isdigit()} | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_key_of_a_round_in_play_is_documented(game: str) -> None:
    cls = GAMES[game]
    table = Table(cls(cls.options_model.model_validate({})), TableLimits(seats=6))
    for seat in (1, 2, 3):
        table.apply(I.CreditIn(seat, 100_000))
    if game == "one_card_poker":
        table.apply(I.SetDesignatedPlayer(1))
    table.apply(I.NewShoe())
    table.apply(I.OpenBetting())
    spots = cls.bet_spots[:2] if game == "two_way_winner" else cls.bet_spots[:1]
    for seat in (2, 3):
        for spot in spots:
            table.apply(I.PlaceWager(seat, spot, 1000))
    table.apply(I.CloseBetting())
    for card in ("9C", "KD"):
        table.apply(I.CardSeen(parse_card(card)))
    state = table.snapshot()
    missing = sorted(k for k in _keys(state["round_view"]) | set(state["shoe"]) if f'"{k}"' not in SECTION)
    assert state["round_view"] and not missing, missing
