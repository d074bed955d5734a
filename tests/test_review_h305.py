"""Review h305: 2WayWinner is dealt from one deck shuffled before every round.

docs/rules/two_way_winner.md, line 14: "One 52-card deck, shuffled every round, one hand per seat."
and line 20 (table options): "`decks` | 1 | 1 only | one deck, shuffled before every round".

The engine lets a second round be opened, closed and dealt with no new shoe in between: the round
is dealt from what the first round left of the deck (the rules' dealer never does that), and a card
of the first round, back in the deck after the shuffle the rules call for, tilts the table as an
impossible card. Whatever the fix (the engine refuses to deal a round on a used deck, or every round
starts a fresh deck), a round must never be dealt from a deck a previous round was dealt from.
"""

from __future__ import annotations

from controller import inputs as I
from controller.cards import parse_card
from controller.events import Event
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.table import Table

ANTES = {"bj_ante": 1000, "poker_ante": 1000}


def _apply_all(table: Table, inputs: list[I.Input]) -> list[Event]:
    events: list[Event] = []
    for inp in inputs:
        events.extend(table.apply(inp))
    return events


def _betting(table: Table) -> list[Event]:
    return _apply_all(table, [I.OpenBetting(), *(I.PlaceWager(1, s, a) for s, a in ANTES.items()),
                              I.CloseBetting()])


def test_a_two_way_winner_round_is_never_dealt_from_the_previous_rounds_deck() -> None:
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    table.apply(I.CreditIn(1, 100_000))
    table.apply(I.NewShoe())
    # Round 1: seat 1 TC 9D = 19 plays blackjack and stands; dealer 9H TS = 19: every wager pushes.
    events = _betting(table)
    events += _apply_all(table, [I.CardSeen(parse_card("TC")), I.CardSeen(parse_card("9H")),
                                 I.CardSeen(parse_card("9D")), I.CardSeen(parse_card("TS")),
                                 I.Decision(1, "blackjack"), I.Decision(1, "stand")])
    assert [e.event for e in events].count("round_settled") == 1
    assert table.phase == "idle"

    # Round 2, no new_shoe input: the deck has not been shuffled since round 1.
    events = _betting(table)
    if any(e.event == "refused" for e in events) or table.phase != "dealing":
        return  # the engine refuses to deal a round on a used deck: what the rule asks
    # Otherwise the round is dealt, and it must be from a full, shuffled deck: the TC of round 1
    # is back in it and is an ordinary first card for seat 1, not an impossible card.
    out = table.apply(I.CardSeen(parse_card("TC")))
    kinds = [e.event for e in out]
    assert "tilt" not in kinds, [e.to_dict() for e in out]
    assert kinds == ["card_dealt"], [e.to_dict() for e in out]
