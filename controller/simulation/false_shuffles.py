"""Seeded simulators of the shuffles a floor's false-shuffle rules must tell apart: a true shuffle, and the
weak or false ones a dealer (or a cheat) might do (one riffle, strips, an earlier shoe's run put back).

For bench/false_shuffle.py (the rules' false-alarm and detection rates) and tests/test_floor_integrity.py:
one copy of each model. Randomness only through the ``rng`` passed in, so every figure is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from controller.cards import DECK, Card

DECKS = 8


def shuffled(rng: random.Random) -> list[Card]:
    cards = list(DECK) * DECKS
    rng.shuffle(cards)
    return cards


def riffle(cards: Sequence[Card], rng: random.Random) -> list[Card]:
    """One Gilbert-Shannon-Reeds riffle: a binomial cut, then each card dropped from a packet in proportion
    to its size (the model of how people riffle)."""
    cut = sum(rng.random() < 0.5 for _ in cards)
    left, right = list(cards[:cut]), list(cards[cut:])
    out: list[Card] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if rng.random() * (len(left) - i + len(right) - j) < len(left) - i:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def strips(cards: Sequence[Card], rng: random.Random, packets: int = 4) -> list[Card]:
    """A strip shuffle: cut into ``packets`` at random places, the packets piled in reverse order."""
    cuts = sorted(rng.sample(range(1, len(cards)), packets - 1))
    bounds = [0, *cuts, len(cards)]
    return [c for k in reversed(range(packets)) for c in cards[bounds[k]:bounds[k + 1]]]


def with_run(earlier: Sequence[Card], rng: random.Random, length: int = 12) -> list[Card]:
    """A fresh shuffle into which ``length`` cards of ``earlier`` are put back in their order at a random
    place (each taken from where the shuffle put it, so the shoe stays whole decks)."""
    cards = shuffled(rng)
    src, dst = rng.randrange(len(earlier) - length), rng.randrange(len(cards) - length)
    for k in range(length):
        want = earlier[src + k]
        at = next(i for i, c in enumerate(cards) if c is want and not dst <= i < dst + k)
        cards[dst + k], cards[at] = cards[at], cards[dst + k]
    return cards
