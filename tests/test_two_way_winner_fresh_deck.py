"""2WayWinner is dealt from one deck shuffled before every round (docs/rules/two_way_winner.md: "One 52-card
deck, shuffled every round"; the table option ``decks``: "one deck, shuffled before every round").

Found by a second reading (2026-12-07): the engine closed betting and dealt a second round with no new shoe
in between, from what the first round left of the deck (a dealer skipping the shuffle was not stopped, and a
one-deck game dealt on is one a player can count), and a card of the first round, back in the deck after the
shuffle the rules call for but not said, tilted the table as an impossible card. Now betting does not close
on wagers while a card has been seen since the last new shoe; the refusal says what to do.
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
    return [event for inp in inputs for event in table.apply(inp)]


def _betting(table: Table) -> list[Event]:
    return _apply_all(table, [I.OpenBetting(), *(I.PlaceWager(1, s, a) for s, a in ANTES.items()),
                              I.CloseBetting()])


def _first_round(table: Table) -> None:
    """Seat 1 TC 9D = 19 plays blackjack and stands; dealer 9H TS = 19: every wager pushes."""
    cards = [I.CardSeen(parse_card(c)) for c in ("TC", "9H", "9D", "TS")]
    events = _betting(table) + _apply_all(table, cards)
    events += _apply_all(table, [I.Decision(1, "blackjack"), I.Decision(1, "stand")])
    assert [e.event for e in events].count("round_settled") == 1 and table.phase == "idle"


def test_betting_does_not_close_on_the_last_rounds_deck_and_closes_once_it_is_shuffled() -> None:
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    table.apply(I.CreditIn(1, 100_000))
    table.apply(I.NewShoe())
    _first_round(table)
    refused = _betting(table)[-1].to_dict()
    assert refused["event"] == "refused" and table.phase == "betting", refused
    assert refused["reason"] == ("every round is dealt from a freshly shuffled deck, and 4 cards were seen "
                                 "since the last new shoe: shuffle the deck, then new_shoe"), refused
    assert table.staked == {(1, "bj_ante"): 1000, (1, "poker_ante"): 1000}  # the wagers stand, unplayed
    assert [e.event for e in table.apply(I.NewShoe())] == ["new_shoe"]
    assert [e.event for e in table.apply(I.CloseBetting())] == ["betting_closed"]
    assert [e.event for e in table.apply(I.CardSeen(parse_card("TC")))] == ["card_dealt"]  # round 1's TC


def test_a_close_with_no_wagers_deals_nothing_and_is_not_refused() -> None:
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    table.apply(I.CreditIn(1, 100_000))
    table.apply(I.NewShoe())
    _first_round(table)
    assert [e.event for e in _apply_all(table, [I.OpenBetting(), I.CloseBetting()])][-1] != "refused"
