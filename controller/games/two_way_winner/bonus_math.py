"""2WayWinner's Dealer Bonus, exactly: its return over every five-card hand, by rank multisets.

The Dealer Bonus is decided before the deal, when the five community cards
are any five cards of the deck, so its return is exact over the 2,598,960
five-card hands. They are not ranked one by one: the hands are grouped by
their multiset of ranks (6,175 groups) and each group's hands are counted
with binomial coefficients (which suits can the ranks take, how many of
those are flushes). That takes milliseconds and shares nothing with the
evaluator, so the test suite can check the two against each other. Its own
module so that the par sheet and the simulation (which prints the exact
return beside its measured one) both use it without importing each other.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations_with_replacement
from math import comb
from typing import Any, Final

from controller.games.two_way_winner.options import BONUS_KEYS, JACKS, DealerBonusPayTable

#: Every five-card hand of one deck.
ALL_HANDS: Final = comb(52, 5)

#: Rank indexes (2 = 0 .. A = 12) of the ten straights, the wheel included.
_STRAIGHTS: Final = frozenset(
    [frozenset(range(low, low + 5)) for low in range(9)] + [frozenset({12, 0, 1, 2, 3})]
)
_ACE_HIGH_STRAIGHT: Final = frozenset(range(8, 13))


def bonus_class_counts() -> dict[str | None, int]:
    """How many five-card hands fall in each pay-table class (``None``: below a pair of jacks)."""
    counts: dict[str | None, int] = dict.fromkeys((*BONUS_KEYS, None), 0)
    for ranks in combinations_with_replacement(range(13), 5):
        per_rank = {r: ranks.count(r) for r in set(ranks)}
        if max(per_rank.values()) > 4:
            continue
        ways = 1
        for n in per_rank.values():
            ways *= comb(4, n)
        shape = sorted(per_rank.values(), reverse=True)
        if len(per_rank) == 5:
            distinct = frozenset(per_rank)
            flushes = 4  # all five of one suit
            straight = distinct in _STRAIGHTS
            if straight:
                top = "royal_flush" if distinct == _ACE_HIGH_STRAIGHT else "straight_flush"
                counts[top] += flushes
                counts["straight"] += ways - flushes
            else:
                counts["flush"] += flushes
                counts[None] += ways - flushes
        elif shape == [4, 1]:
            counts["four_of_a_kind"] += ways
        elif shape == [3, 2]:
            counts["full_house"] += ways
        elif shape == [3, 1, 1]:
            counts["three_of_a_kind"] += ways
        elif shape == [2, 2, 1]:
            counts["two_pair"] += ways
        else:  # one pair
            pair = next(r for r, n in per_rank.items() if n == 2)
            counts["jacks_or_better" if pair + 2 >= JACKS else None] += ways
    return counts


def par_sheet(table: DealerBonusPayTable) -> dict[str, Any]:
    """Exact return, house edge, hit rate and per-class lines of a pay table (fractions)."""
    counts = bonus_class_counts()
    assert sum(counts.values()) == ALL_HANDS
    returned = Fraction(0)
    hits = 0
    second = Fraction(0)  # E[net^2] per unit
    lines = []
    for key in (*BONUS_KEYS, None):
        n = counts[key]
        odds = table.pays(key)
        net = Fraction(-1) if odds is None else Fraction(odds.num, odds.den)
        if odds is not None:
            hits += n
            returned += n * (1 + net)
        second += n * net * net
        lines.append({"hand": key or "nothing", "hands": n, "pays": "lose" if odds is None else str(odds)})
    ret = returned / ALL_HANDS
    edge = 1 - ret
    variance = second / ALL_HANDS - edge * edge
    return {
        "hands": ALL_HANDS,
        "lines": lines,
        "return": ret,
        "house_edge": edge,
        "hit_rate": Fraction(hits, ALL_HANDS),
        "variance": variance,
    }
