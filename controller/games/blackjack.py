"""Blackjack building blocks shared by the blackjack variants (Swap-Hand, 2WayWinner, ...).

Every variant counts hands, asks whether the dealer draws and decides
whether a hand may double or split in the same way; only the wagers and
the special rules around them differ. Keeping these rules in one pure,
game-agnostic module means a fix to "is a soft 17 a hit?" is made once, and
each variant's tests exercise the same code the others rely on.

Nothing here knows about seats, money or the table: a :class:`Hand` holds
cards and the bookkeeping every variant needs (its stake spot, whether it
was doubled or made by a split, whether it is finished and how it ended),
and the legality helpers take the rule options as plain arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from controller.cards import Card

#: Ranks worth ten points.
TEN_RANKS: Final = frozenset("TJQK")

#: The ``double_on`` option: any first two cards, or only a hard 9-11 / 10-11.
DoubleOn = Literal["any2", "9-11", "10-11"]

_DOUBLE_RANGES: Final[dict[str, tuple[int, int] | None]] = {"any2": None, "9-11": (9, 11), "10-11": (10, 11)}


def card_points(card: Card) -> int:
    """Points of one card with an ace counted as 1 (the soft count is decided per hand)."""
    if card.rank == "A":
        return 1
    if card.rank in TEN_RANKS:
        return 10
    return card.rank_value


def ten_value(card: Card) -> bool:
    """True for T, J, Q, K: the cards that make a natural with an ace and that the dealer peeks under."""
    return card.rank in TEN_RANKS


def hand_total(cards: Sequence[Card]) -> tuple[int, bool]:
    """The best total of ``cards`` and whether it is soft.

    At most one ace can count 11 without busting (two would be 22), so the
    best total is the hard count plus 10 when one ace fits. The hand is
    *soft* exactly when that happens: an ace counts 11 and the hand cannot bust
    on the next card.
    """
    hard = 0
    has_ace = False
    for card in cards:
        hard += card_points(card)
        has_ace = has_ace or card.rank == "A"
    if has_ace and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def is_natural(cards: Sequence[Card]) -> bool:
    """Two cards, an ace and a ten-value card (whether it *pays* as one is the variant's call)."""
    return len(cards) == 2 and hand_total(cards)[0] == 21


def is_pair(cards: Sequence[Card]) -> bool:
    """Two cards of the same rank: K-K is a pair, K-Q is not (ten-values split only by rank)."""
    return len(cards) == 2 and cards[0].rank == cards[1].rank


def is_bust(cards: Sequence[Card]) -> bool:
    return hand_total(cards)[0] > 21


def dealer_should_hit(cards: Sequence[Card], hits_soft_17: bool) -> bool:
    """The dealer's fixed drawing rule: hit below 17, and on a soft 17 when the table says so."""
    total, soft = hand_total(cards)
    if total < 17:
        return True
    return total == 17 and soft and hits_soft_17


@dataclass(slots=True)
class Hand:
    """One player hand: its cards and the state every blackjack variant tracks.

    ``spot`` is the stake spot the hand settles on (``main``, ``main:2``...).
    ``split_from`` names the spot of the hand it was split from (``None`` for
    an original hand); ``outcome`` is set once the hand is decided (the words
    are the variant's, e.g. ``win``, ``blackjack``, ``push``, ``lose``).
    """

    spot: str
    cards: list[Card] = field(default_factory=list)
    doubled: bool = False
    split_from: str | None = None
    split_aces: bool = False
    finished: bool = False
    outcome: str | None = None

    @property
    def is_split(self) -> bool:
        return self.split_from is not None

    @property
    def total(self) -> int:
        return hand_total(self.cards)[0]

    @property
    def soft(self) -> bool:
        return hand_total(self.cards)[1]

    @property
    def busted(self) -> bool:
        return self.total > 21

    def natural(self) -> bool:
        """A two-card 21 on an original (unsplit) hand; a split hand's 21 is never a natural."""
        return not self.is_split and is_natural(self.cards)

    def codes(self) -> list[str]:
        return [card.code for card in self.cards]


@dataclass(frozen=True, slots=True)
class SplitRules:
    """The split and double options of a table, as plain values (no pydantic, no game)."""

    double_on: DoubleOn = "any2"
    double_after_split: bool = True
    max_split_hands: int = 4
    resplit_aces: bool = False
    hit_split_aces: bool = False


def double_total_allowed(cards: Sequence[Card], double_on: str) -> bool:
    """Whether the two-card ``cards`` meet ``double_on``.

    The ranges apply to the hand's best total, so a soft hand (A-8 is soft 19,
    A-9 soft 20, A-A soft 12) never qualifies for ``9-11`` or ``10-11``:
    that is the common casino reading of "double on 9, 10 or 11 only".
    """
    if double_on not in _DOUBLE_RANGES:
        raise ValueError(f"unknown double_on {double_on!r}")
    bounds = _DOUBLE_RANGES[double_on]
    if bounds is None:
        return True
    total, soft = hand_total(cards)
    return not soft and bounds[0] <= total <= bounds[1]


def can_double(hand: Hand, rules: SplitRules) -> bool:
    """A hand may double on its first two cards, per ``double_on`` and double-after-split.

    A split ace that may not be hit may not double either (doubling is
    taking a card). A finished hand never doubles.
    """
    if hand.finished or len(hand.cards) != 2 or hand.doubled:
        return False
    if hand.is_split and not rules.double_after_split:
        return False
    if hand.split_aces and not rules.hit_split_aces:
        return False
    return double_total_allowed(hand.cards, rules.double_on)


def can_split(hand: Hand, hands_in_play: int, rules: SplitRules) -> bool:
    """A two-card pair by rank may split while the seat has fewer than ``max_split_hands`` hands.

    Aces made by a split split again only with ``resplit_aces``.
    """
    if hand.finished or not is_pair(hand.cards) or hand.doubled:
        return False
    if hands_in_play >= rules.max_split_hands:
        return False
    return not (hand.split_aces and not rules.resplit_aces)


def can_hit(hand: Hand, rules: SplitRules) -> bool:
    """A live hand under 21 may take a card, except a split ace without ``hit_split_aces``."""
    if hand.finished or hand.doubled or hand.total >= 21:
        return False
    return not (hand.split_aces and not rules.hit_split_aces)


def split_spot(base: str, number: int) -> str:
    """The spot of the ``number``-th hand of a seat: hand 1 keeps ``base``, then ``base:2``..."""
    return base if number == 1 else f"{base}:{number}"
