"""The card path of the simulated shoe: what is in it (a seeded shuffle or a deck file) and,
in a dealing shuffler, the gate that lets one card out per DISPENSE, with its misfeeds.

Split from :mod:`drivers.shoe.sim` (which owns the line and the protocol): this
part knows cards, not bytes. Not thread-safe on its own: the shoe calls it with
its lock held.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from controller.cards import DECK, Card, CardError, parse_card

#: What a DISPENSE does at the gate: nothing (jammed until RESET, or lost), a jam, a card later, a card now.
GateOutcome = Literal["jammed", "jam", "lost", "later", "now"]


class SimError(ValueError):
    """A request the simulated shoe cannot do (empty shoe, no such message on the plain profile...)."""


def load_deck(path: Path | str) -> list[Card]:
    """Cards in shoe order from a text file: whitespace separated, ``#`` starts a comment."""
    cards: list[Card] = []
    try:
        content = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise SimError(f"{path}: cannot read the deck file ({why})") from None
    for number, line in enumerate(content.splitlines(), 1):
        for text in line.split("#", 1)[0].split():
            try:
                cards.append(parse_card(text))
            except CardError as exc:
                raise SimError(f"{path}:{number}: {exc}") from None
    if not cards:
        raise SimError(f"{path}: no cards in the file")
    return cards


def fill(deck: Sequence[Card] | None, decks: int, rng: random.Random) -> deque[Card]:
    """A full shoe: the deck file's cards in their order, or ``decks`` decks shuffled by ``rng``."""
    if deck is not None:
        return deque(deck)
    cards = list(DECK) * decks
    rng.shuffle(cards)
    return deque(cards)


class Gate:
    """A dealing shuffler's gate: each card comes out ``delay`` seconds after its DISPENSE, unless
    a misfeed asked for (``jam``, ``lose``) takes that DISPENSE."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._misfeeds: deque[str] = deque()

    def misfeed(self, kind: str, arg: float = 0.0) -> bool:
        """``jam``/``lose`` the next DISPENSE, ``slow`` (``arg`` ms a card), ``normal``; False if unknown."""
        if kind in ("jam", "lose"):
            self._misfeeds.append(kind)
        elif kind == "slow":
            self.delay = arg / 1000.0
        elif kind == "normal":
            self.delay = 0.0
            self._misfeeds.clear()
        else:
            return False
        return True

    def dispense(self, jammed: bool, has_cards: bool) -> GateOutcome:
        """What one DISPENSE does; ``jammed``: the shoe is in a fault (it stays until RESET)."""
        if jammed:
            return "jammed"
        misfeed = self._misfeeds.popleft() if self._misfeeds else ""
        if misfeed == "jam":
            return "jam"
        if misfeed == "lose":
            return "lost"
        return "later" if self.delay > 0 and has_cards else "now"
