"""Swap-Hand properties over random rounds driven by random legal decisions.

Money is conserved (credits plus the house's take never change), every
wager has exactly one settlement line, the round takes exactly the cards
the rules call for (two per seat and two for the dealer, two per swap and
per split, one per hit and double, and dealer draws only while a hand is
live and the dealer's rule says hit), each net follows from the recorded outcome, and
an illegal decision is refused without changing anything.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller import inputs as I
from controller.cards import DECK
from controller.game_base import CardDue, DecisionDue
from controller.games.blackjack import dealer_should_hit, hand_total
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.rules import SwapHand
from controller.limits import TableLimits
from controller.money import Odds
from controller.table import Table

ACTIONS = ("swap", "keep", "hit", "stand", "double", "split")

options_st = st.builds(
    SwapHandOptions,
    decks=st.integers(1, 8),
    dealer_hits_soft_17=st.booleans(),
    blackjack_pays=st.sampled_from([Odds(3, 2), Odds(6, 5)]),
    double_on=st.sampled_from(["any2", "9-11", "10-11"]),
    double_after_split=st.booleans(),
    max_split_hands=st.integers(1, 4),
    resplit_aces=st.booleans(),
    hit_split_aces=st.booleans(),
)


def shuffled_shoe(rng: random.Random, decks: int) -> list[Any]:
    cards = list(DECK) * decks
    rng.shuffle(cards)
    return cards


@settings(max_examples=40, deadline=None)
@given(options=options_st, seed=st.integers(0, 2**32), data=st.data())
def test_random_rounds_conserve_money_and_cards(
    options: SwapHandOptions, seed: int, data: st.DataObject
) -> None:
    rng = random.Random(seed)
    seats = data.draw(st.integers(1, 3), label="seats")
    table = Table(SwapHand(options), TableLimits(seats=3))
    # 1500 funds the main and Odds-Win only, 3000 one double or split, 20000 anything.
    levels = {s: data.draw(st.sampled_from([1500, 3000, 20_000]), label=f"credits {s}") for s in range(1, 4)}
    money = 0
    shoe: list[Any] = []
    for _ in range(4):
        for s, level in levels.items():
            top_up = level - table.credits.get(s, 0)
            if top_up > 0:
                table.apply(I.CreditIn(s, top_up))
                money += top_up
        if len(shoe) < 40:
            shoe = shuffled_shoe(rng, options.decks)
            table.apply(I.NewShoe())
        table.apply(I.OpenBetting())
        for s in range(1, seats + 1):
            table.apply(I.PlaceWager(s, "main", 1000))
        events = table.apply(I.CloseBetting())
        counts = {"hit": 0, "double": 0, "split": 0, "swap": 0}
        while table.phase == "dealing":
            due = table.due()
            if isinstance(due, CardDue):
                events += table.apply(I.CardSeen(shoe.pop()))
                continue
            assert isinstance(due, DecisionDue)
            [(seat, legal)] = due.choices.items()
            if data.draw(st.integers(0, 9), label="try illegal") == 0:
                before = table.snapshot()
                bad = data.draw(st.sampled_from(
                    [I.Decision(seat, a) for a in ACTIONS if a not in legal]
                    + [I.Decision(seat % 3 + 1, legal[0]), I.Decision(seat, legal[0], 1)]), label="illegal")
                [refused] = table.apply(bad)
                assert refused.event == "refused"
                assert table.snapshot() == before
            action = data.draw(st.sampled_from(legal), label="action")
            if action in counts:
                counts[action] += 1
            events += table.apply(I.Decision(seat, action))
        out = [e.to_dict() for e in events]
        assert not [e for e in out if e["event"] in ("refused", "tilt")]
        [settled] = [e for e in out if e["event"] == "round_settled"]
        [res] = [e["result"] for e in out if e["event"] == "round_result"]
        check_cards(out, res, seats, counts, options)
        check_nets(out, settled, res, options)
        assert sum(table.credits.values()) + table.house_net == money


def check_cards(out: list[dict[str, Any]], res: dict[str, Any], seats: int, counts: dict[str, int],
                options: SwapHandOptions) -> None:
    dealt = [e for e in out if e["event"] == "card_dealt"]
    dealer = [e["card"] for e in dealt if e["hand"] == "dealer"]
    assert dealer == res["dealer_cards"]
    draws = len(dealer) - 2
    # A split leaves two one-card hands: each takes a second card.
    swaps_and_splits = 2 * (counts["swap"] + counts["split"])
    expected = 2 * seats + 2 + swaps_and_splits + counts["hit"] + counts["double"] + draws
    assert len(dealt) == expected
    hands = [h for s in res["seats"].values() for h in s["hands"]]
    assert sum(len(h["cards"]) for h in hands) + 2 * counts["swap"] + len(dealer) == len(dealt)
    live = [h for h in hands if h["total"] < 21] if not res["dealer_blackjack"] else []
    if not live:
        assert draws == 0
    else:
        codes = {c.code: c for c in DECK}
        cards = [codes[c] for c in dealer]
        for n in range(2, len(cards)):
            assert dealer_should_hit(cards[:n], options.dealer_hits_soft_17)
        assert not dealer_should_hit(cards, options.dealer_hits_soft_17)
    for h in hands:
        assert len(h["cards"]) >= 2 or res["dealer_blackjack"]
        total = h["total"]
        if total > 21:
            assert h["outcome"] == "bust"
        elif total == 21 and not res["dealer_blackjack"]:
            assert h["outcome"] in ("win", "blackjack")


def check_nets(out: list[dict[str, Any]], settled: dict[str, Any], res: dict[str, Any],
               options: SwapHandOptions) -> None:
    lines = {(x["seat"], x["spot"]): x for x in settled["settlements"]}
    first_two: dict[int, list[str]] = {}
    for e in out:
        if e["event"] == "card_dealt" and e["hand"].startswith("seat ") and " " not in e["hand"][5:]:
            first_two.setdefault(int(e["hand"][5:]), []).append(e["card"])
    codes = {c.code: c for c in DECK}
    for seat_text, seat in res["seats"].items():
        s = int(seat_text)
        for h in seat["hands"]:
            line = lines.pop((s, h["spot"]))
            stake = line["stake"]
            assert stake == (2000 if h["doubled"] else 1000)
            want = {"blackjack": options.blackjack_pays.win(stake), "win": stake, "push": 0,
                    "lose": -stake, "bust": -stake}[h["outcome"]]
            assert line["net"] == want
        ow = lines.pop((s, "odds_win"))
        total, _ = hand_total([codes[c] for c in first_two[s][:2]])
        assert seat["odds_win_parity"] == ("even" if total % 2 == 0 else "odd")
        first = seat["hands"][0]["outcome"]
        want = -500 if total % 2 == 0 else {"blackjack": 1000, "win": 1000, "push": 0}.get(first, -500)
        assert ow == {"seat": s, "spot": "odds_win", "stake": 500, "net": want}
    assert not lines
    assert settled["house_net"] == -sum(x["net"] for x in settled["settlements"])
