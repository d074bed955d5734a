"""A shuffled shoe for simulations and simulators: seeded, with a cut card.

Randomness belongs to tools and simulated devices, never to the rules
engine; every shuffle here comes from a ``random.Random`` seeded by the
caller, so a simulation run can be repeated card for card.
"""

from __future__ import annotations

import random
from typing import Protocol

from controller.cards import DECK, Card, decks_text


class CardSource(Protocol):
    """What a simulation deals from: a shoe that says when it is due a shuffle."""

    def needs_shuffle(self) -> bool: ...

    def shuffle(self) -> None: ...

    def draw(self) -> Card: ...


class ShuffledShoe:
    """``decks`` decks shuffled by a seeded generator; reshuffles when the cut card comes out.

    ``cut_card`` counts the cards left behind the cut card (not dealt); a new
    shoe is due when fewer than that remain.
    """

    def __init__(self, decks: int, seed: int | None, cut_card: int) -> None:
        if cut_card >= 52 * decks:
            raise ValueError(f"cut card {cut_card} leaves nothing to deal from {decks_text(decks)}")
        self.decks = decks
        self.cut_card = cut_card
        self.rng = random.Random(seed)
        self.cards: list[Card] = []
        self.shuffles = 0
        self.shuffle()

    def shuffle(self) -> None:
        self.cards = list(DECK) * self.decks
        self.rng.shuffle(self.cards)
        self.shuffles += 1

    def needs_shuffle(self) -> bool:
        """True once the cut card has come out."""
        return len(self.cards) < self.cut_card

    def draw(self) -> Card:
        return self.cards.pop()
