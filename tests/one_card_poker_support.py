"""Shared set-up for the One Card Poker table tests (no tests here): a table, a round's inputs, its results.

Both tests/test_one_card_poker.py (play and settlement) and tests/test_one_card_poker_refusals.py (what
the game refuses) play real inputs into :class:`controller.table.Table` through these helpers, so the
two read a round the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from controller import inputs as I
from controller.cards import parse_card
from controller.events import Event
from controller.games.one_card_poker.rules import OneCardPoker, OneCardPokerOptions
from controller.limits import TableLimits
from controller.table import Table

Step = str | tuple[Any, ...]


def make_table(credits: dict[int, int], dp: int | None = None, unit: int = 100, **options: Any) -> Table:
    limits = TableLimits(unit=unit, min_bet=unit)
    table = Table(OneCardPoker(OneCardPokerOptions(**options)), limits)
    for seat, amount in credits.items():
        table.apply(I.CreditIn(seat, amount))
    table.apply(I.NewShoe())
    if dp is not None:
        assert names(table.apply(I.SetDesignatedPlayer(dp))) == ["dp_set"]
    return table


def names(events: list[Event]) -> list[str]:
    return [e.event for e in events]


def open_and_bet(table: Table, bets: dict[int, dict[str, int]]) -> list[Event]:
    events = table.apply(I.OpenBetting())
    for seat, spots in bets.items():
        for spot, amount in spots.items():
            events += table.apply(I.PlaceWager(seat, spot, amount))
    events += table.apply(I.CloseBetting())
    return events


def step(table: Table, s: Step) -> list[Event]:
    if isinstance(s, str):
        return table.apply(I.CardSeen(parse_card(s)))
    return table.apply(I.Decision(*s))


def play(table: Table, bets: dict[int, dict[str, int]], steps: Sequence[Step] = ()) -> list[Event]:
    """A whole round; every input must be accepted."""
    events = open_and_bet(table, bets)
    for s in steps:
        events += step(table, s)
    refused = [e.to_dict() for e in events if e.event == "refused"]
    assert not refused
    return events


def settled(events: list[Event]) -> tuple[dict[tuple[int, str], tuple[int, int]], int]:
    """``{(seat, spot): (stake, net)}`` and the house's net of the round's settlement line."""
    (line,) = [e.to_dict() for e in events if e.event == "round_settled"]
    lines = {(s["seat"], s["spot"]): (s["stake"], s["net"]) for s in line["settlements"]}
    assert sum(n for _, n in lines.values()) + line["house_net"] == 0
    return lines, line["house_net"]


def result(events: list[Event]) -> dict[str, Any]:
    (res,) = [e.to_dict()["result"] for e in events if e.event == "round_result"]
    assert isinstance(res, dict)
    return res


def hands(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.to_dict()["hand"], e.to_dict()["card"]) for e in events if e.event == "card_dealt"]


CREDITS = {1: 10_000, 2: 10_000, 3: 10_000, 4: 50_000, 5: 10_000, 6: 10_000, 7: 10_000}
