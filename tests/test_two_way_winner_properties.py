"""Properties of random 2WayWinner rounds with random legal (and some illegal) decisions.

Whatever the cards and the players do: money is conserved, every wager has
exactly one settlement line, no seat ends below zero, a refused decision
changes nothing, and the round takes exactly the cards the rules call for
(no more, no fewer), with the dealer drawing only when the rules say so.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller import inputs as I
from controller.cards import DECK, Card, parse_card
from controller.events import RoundResult, RoundSettled
from controller.game_base import CardDue, DecisionDue
from controller.games.blackjack import dealer_should_hit, hand_total, is_natural
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.table import Table


@st.composite
def tables(draw: st.DrawFn) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    """Seats with equal antes, an optional Dealer Bonus, and credits from tight to ample."""
    seats = draw(st.lists(st.integers(1, 6), min_size=1, max_size=6, unique=True))
    bets: dict[int, dict[str, int]] = {}
    credits: dict[int, int] = {}
    for seat in sorted(seats):
        ante = draw(st.sampled_from([100, 500, 1000]))
        bets[seat] = {"bj_ante": ante, "poker_ante": ante}
        bonus = draw(st.sampled_from([0, 0, 100, 500]))
        if bonus:
            bets[seat]["dealer_bonus"] = bonus
        spare = draw(st.sampled_from([0, ante, 2 * ante, 3 * ante, 100 * ante]))
        credits[seat] = 2 * ante + bonus + spare
    return bets, credits


@settings(max_examples=150)
@given(tables(), st.permutations(DECK), st.data())
def test_random_rounds_conserve_money_and_take_exactly_the_cards_due(
    setup: tuple[dict[int, dict[str, int]], dict[int, int]], deck: list[Card], data: st.DataObject
) -> None:
    bets, credits = setup
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    for seat, amount in credits.items():
        table.apply(I.CreditIn(seat, amount))
    table.apply(I.NewShoe())
    table.apply(I.OpenBetting())
    for seat, spots in bets.items():
        for spot, amount in spots.items():
            assert table.apply(I.PlaceWager(seat, spot, amount))[0].event == "wager_placed"
    events = table.apply(I.CloseBetting())
    shoe = list(deck)
    used = 0
    for _ in range(200):
        if any(isinstance(e, RoundSettled) for e in events):
            break
        due = table.due()
        if isinstance(due, CardDue):
            out = table.apply(I.CardSeen(shoe[used]))
            used += 1
        else:
            assert isinstance(due, DecisionDue)
            seat = data.draw(st.sampled_from(sorted(due.choices)))
            action = data.draw(st.sampled_from(due.choices[seat]))
            ante = bets[seat]["bj_ante"]
            amount = data.draw(st.sampled_from([None, None, ante, 2 * ante, 3 * ante, 1]))
            before = table.snapshot()
            out = table.apply(I.Decision(seat, action, amount))
            if out[0].event == "refused":
                assert len(out) == 1 and table.snapshot() == before
                out = table.apply(I.Decision(seat, action, None))
        assert "tilt" not in {e.event for e in out} and "refused" not in {e.event for e in out}
        events = out
    settled = next(e for e in events if isinstance(e, RoundSettled))
    record = next(e for e in events if isinstance(e, RoundResult)).result

    # Money: nets and the house's net sum to zero; credits are what they were plus the nets.
    lines = settled.settlements
    assert sum(x["net"] for x in lines) + settled.house_net == 0
    assert sum(table.credits.values()) + settled.house_net == sum(credits.values())
    assert all(c >= 0 for c in table.credits.values())
    assert len({(x["seat"], x["spot"]) for x in lines}) == len(lines)
    for x in lines:
        assert x["net"] >= -x["stake"]
        assert table.credits[x["seat"]] >= 0
    for seat, spots in bets.items():
        got = {x["spot"]: x["stake"] for x in lines if x["seat"] == seat}
        assert {s: got[s] for s in spots} == spots  # pre-deal wagers settle at their stake
    check_cards(record, bets, used, deck)


def check_cards(record: dict[str, Any], bets: dict[int, dict[str, int]], used: int, deck: list[Card]) -> None:
    """The round took exactly the cards the rules call for, in the places they call for."""
    dealer = [parse_card(c) for c in record["dealer_cards"]]
    community = record["community"]
    seats = record["seats"]
    choices = {int(s): v["choice"] for s, v in seats.items()}
    poker = any(c == "poker" for c in choices.values())
    bonus = any("dealer_bonus" in b for b in bets.values())
    hands = [[parse_card(c) for c in h] for v in seats.values() for h in v["hands"]]
    bj_hands = [[parse_card(c) for c in h] for v in seats.values() if v["choice"] == "blackjack"
                for h in v["hands"]]
    dealer_bj = is_natural(dealer[:2])
    # The dealer's blackjack hand: drawn out (hitting soft 17) only for a live blackjack hand.
    live = not dealer_bj and any(hand_total(h)[0] <= 21 for h in bj_hands)
    if live:
        assert not dealer_should_hit(dealer, True)
        assert all(dealer_should_hit(dealer[:n], True) for n in range(2, len(dealer)))
    else:
        assert len(dealer) == 2
    # Community: the dealer's first five, then drawn cards, to five when poker or a bonus needs it.
    assert community[: min(5, len(dealer))] == record["dealer_cards"][:5]
    extra = community[len(dealer[:5]):]
    if poker or bonus:
        assert len(community) == 5
    else:
        assert extra == []
    burn_after_blackjack = 1 if dealer_bj and (poker or bonus) else 0
    assert len(record["burned"]) == max(0, len(dealer) - 5) + burn_after_blackjack
    assert len(record["dealer_poker_cards"]) == (2 if poker else 0)
    assert (record["bonus_hand"] is not None) == (len(community) == 5)
    total = len(dealer) + len(extra) + burn_after_blackjack + len(record["dealer_poker_cards"])
    total += sum(len(h) for h in hands)
    assert total == used
    # Every card named in the record came out of the shoe, once.
    named = [*record["dealer_cards"], *extra, *record["dealer_poker_cards"],
             *[c.code for h in hands for c in h], *record["burned"]]
    named_unique = set(named)
    assert named_unique == {c.code for c in deck[:used]}
    for seat, choice in choices.items():
        if choice == "poker":
            assert seats[str(seat)]["best_hand"]["rank"]
        if choice != "blackjack":
            assert len(seats[str(seat)]["hands"]) == 1
