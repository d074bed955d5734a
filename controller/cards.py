"""Playing cards: parsing, canonical text, and the 52 interned card objects.

Cards arrive from many sources (a shoe's serial line, a camera, an operator,
a scenario file) in slightly different spellings, so parsing is lenient
(any case, ``10`` for ``T``) while output is always the canonical
two-character form (``AS``, ``TD``, ``9H``) so that logs and events compare
byte for byte. The 52 cards are created once and shared: a card is a value,
and identity comparison keeps the hot path of the engine cheap.
"""

from __future__ import annotations

from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"


class CardError(ValueError):
    """Text that is not a card; the message quotes the text."""


class Card:
    """One playing card. Never construct directly: use :func:`parse_card` or :data:`DECK`."""

    __slots__ = ("rank", "suit", "code", "index", "rank_value")

    rank: str
    suit: str
    code: str
    index: int
    rank_value: int

    def __init__(self, rank: str, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.code = rank + suit
        #: 0..51, rank-major, for composition arrays.
        self.index = RANKS.index(rank) * 4 + SUITS.index(suit)
        #: 2..14 (ace high), the order used by poker-like comparisons.
        self.rank_value = RANKS.index(rank) + 2

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Keep interning across pickling (multiprocessing in the tools).
        return (parse_card, (self.code,))


#: The 52 distinct cards, in rank-major order (index == position).
DECK: Final[tuple[Card, ...]] = tuple(Card(r, s) for r in RANKS for s in SUITS)

_BY_TEXT: Final[dict[str, Card]] = {}
for _card in DECK:
    for _r in {_card.rank, _card.rank.lower()} | ({"10"} if _card.rank == "T" else set()):
        for _s in (_card.suit, _card.suit.lower()):
            _BY_TEXT[_r + _s] = _card


def parse_card(text: str) -> Card:
    """Parse ``AS``, ``as``, ``10h``, ``Td``; raise :class:`CardError` naming the text otherwise."""
    card = _BY_TEXT.get(text.strip()) if isinstance(text, str) else None
    if card is None:
        raise CardError(f"not a card: {text!r} (expected rank 2-9/T/10/J/Q/K/A then suit C/D/H/S)")
    return card


def parse_cards(texts: str) -> list[Card]:
    """Parse a space-separated list such as ``"AS KD 10h"``."""
    return [parse_card(t) for t in texts.split()]


def decks_text(n: int) -> str:
    """``'1 deck'``, ``'6 decks'``: how every message names a shoe's size."""
    return f"{n} deck" if n == 1 else f"{n} decks"
