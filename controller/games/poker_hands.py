"""Poker hand ranking for the games, over a maintained evaluator library.

Ranking seven cards correctly and fast is a solved problem, so we do not
solve it again: the ``phevaluator`` package (the PH Evaluator, Apache-2.0, a
perfect-hash evaluator) gives each hand of five to seven cards its place among
the 7,462 distinct five-card poker hands, 1 being a royal flush. Its card
numbering (rank-major, suits clubs, diamonds, hearts, spades) is exactly
:attr:`controller.cards.Card.index`, so cards pass through unconverted.

The rest of the code must not depend on that numbering, nor on "smaller is
stronger": it sees a :class:`PokerHand` with a named :class:`HandRank`, a
``strength`` where larger is stronger (equal strengths are a tie: suits never
break ties) and the five cards that make the hand, ordered the way a dealer
reads them out (the pair or set first, A-2-3-4-5 as 5-4-3-2-A), for result
records and displays.

On x86-64 and macOS the package ships compiled wheels (0.6.x, a C
extension); on a Raspberry Pi (Linux aarch64/armv7l) there is no wheel, so
pyproject.toml pins the last pure-Python release, 0.5.3.1, which has the same
tables and the same ``evaluate_cards`` function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import total_ordering
from itertools import combinations
from typing import Any, Final

from phevaluator.evaluator import evaluate_cards as _ph_evaluate  # type: ignore[import-untyped]

from controller.cards import Card

#: The number of distinct five-card hand values (the evaluator's worst rank).
DISTINCT_HANDS: Final = 7462


class HandRank(IntEnum):
    """The ten named poker hand ranks, weakest first, so ranks compare as numbers."""

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def label(self) -> str:
        """The name people use: ``full house``, ``one pair``..."""
        return self.name.lower().replace("_", " ")


#: The evaluator's worst (largest) rank number in each class, strongest class first.
#: These are the sizes of the classes of distinct hands: 1 royal flush, 9 other
#: straight flushes, 156 quads, 156 full houses, 1277 flushes, 10 straights,
#: 858 sets, 858 two pairs, 2860 pairs and 1277 high cards.
_CLASS_LIMITS: Final[tuple[tuple[int, HandRank], ...]] = (
    (1, HandRank.ROYAL_FLUSH),
    (10, HandRank.STRAIGHT_FLUSH),
    (166, HandRank.FOUR_OF_A_KIND),
    (322, HandRank.FULL_HOUSE),
    (1599, HandRank.FLUSH),
    (1609, HandRank.STRAIGHT),
    (2467, HandRank.THREE_OF_A_KIND),
    (3325, HandRank.TWO_PAIR),
    (6185, HandRank.ONE_PAIR),
    (DISTINCT_HANDS, HandRank.HIGH_CARD),
)


def strength(cards: Sequence[Card]) -> int:
    """The value of the best five of 5..7 ``cards``: 1 (worst high card) .. 7462 (royal flush)."""
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"a poker hand is ranked from 5 to 7 cards, not {len(cards)}")
    if len({c.index for c in cards}) != len(cards):
        raise ValueError(f"a poker hand cannot hold the same card twice: {' '.join(c.code for c in cards)}")
    return DISTINCT_HANDS + 1 - int(_ph_evaluate(*(c.index for c in cards)))


def rank_of(value: int) -> HandRank:
    """The named rank of a :func:`strength` value."""
    ph_rank = DISTINCT_HANDS + 1 - value
    for limit, rank in _CLASS_LIMITS:
        if ph_rank <= limit:
            return rank
    raise ValueError(f"not a hand strength: {value}")


@total_ordering
@dataclass(frozen=True, slots=True, eq=False)
class PokerHand:
    """The best five-card hand from some cards; compares by ``strength`` only (ties are equal)."""

    strength: int
    rank: HandRank
    cards: tuple[Card, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PokerHand):
            return NotImplemented
        return self.strength == other.strength

    def __lt__(self, other: PokerHand) -> bool:
        return self.strength < other.strength

    def __hash__(self) -> int:
        return hash(self.strength)

    def to_dict(self) -> dict[str, Any]:
        """``{"rank": "full house", "cards": ["8S", "8D", "8C", "5H", "5S"]}`` for result records."""
        return {"rank": self.rank.label, "cards": [c.code for c in self.cards]}

    def __str__(self) -> str:
        return f"{self.rank.label} ({' '.join(c.code for c in self.cards)})"


def best_hand(cards: Iterable[Card]) -> PokerHand:
    """The best five of 5..7 cards, with its rank and the five cards in reading order.

    The library ranks the whole set at once; to name the five cards we look
    for a five-card subset of the same value (at most 21 subsets). When more
    than one subset has that value they differ only in suits, and we take the
    one with the higher cards of the higher suits, so the answer does not
    depend on the order the cards came in.
    """
    pool = sorted(cards, key=lambda c: -c.index)
    value = strength(pool)
    if len(pool) == 5:
        five: tuple[Card, ...] = tuple(pool)
    else:
        five = next(combo for combo in combinations(pool, 5) if strength(combo) == value)
    rank = rank_of(value)
    return PokerHand(value, rank, reading_order(five, rank))


def reading_order(five: Sequence[Card], rank: HandRank) -> tuple[Card, ...]:
    """Order five cards as a dealer reads them: bigger groups first, then higher ranks.

    In a five-high straight (A-2-3-4-5, the lowest straight) the ace plays
    low and goes last.
    """
    counts = Counter(c.rank_value for c in five)
    wheel = rank in (HandRank.STRAIGHT, HandRank.STRAIGHT_FLUSH) and set(counts) == {14, 2, 3, 4, 5}

    def key(card: Card) -> tuple[int, int, int]:
        value = 1 if wheel and card.rank_value == 14 else card.rank_value
        return (-counts[card.rank_value], -value, -card.index)

    return tuple(sorted(five, key=key))
