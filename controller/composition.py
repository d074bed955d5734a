"""Shoe composition: every card seen since the last shuffle.

A physical shoe of N decks holds exactly N copies of each card. Counting what
has come out is the cheapest integrity check a table has: a card of which
more copies have been seen than the shoe holds is an *impossible card* (a
misread, a foreign card, a marked deck) and the round must stop.
"""

from __future__ import annotations

from controller.cards import DECK, Card


class ShoeComposition:
    """Counts of each of the 52 cards seen since the last shuffle, burns included."""

    __slots__ = ("decks", "_seen", "dealt", "burned")

    def __init__(self, decks: int) -> None:
        if not 1 <= decks <= 8:
            raise ValueError(f"decks must be 1..8, not {decks}")
        self.decks = decks
        self._seen = [0] * 52
        self.dealt = 0
        self.burned = 0

    def shuffle(self) -> None:
        """A new shoe: nothing has been seen."""
        self._seen = [0] * 52
        self.dealt = 0
        self.burned = 0

    def is_possible(self, card: Card) -> bool:
        """True while fewer copies of ``card`` have been seen than the shoe holds."""
        return self._seen[card.index] < self.decks

    def see(self, card: Card, burn: bool = False) -> None:
        """Count a card. The caller has checked :meth:`is_possible` first."""
        self._seen[card.index] += 1
        if burn:
            self.burned += 1
        else:
            self.dealt += 1

    def take(self, card: Card) -> bool:
        """Count a card dealt to a hand if the shoe can hold another copy; ``False`` (nothing counted) if not.

        :meth:`is_possible` then :meth:`see` in one call: the engine's path for every card dealt.
        """
        seen, i = self._seen, card.index
        if seen[i] >= self.decks:
            return False
        seen[i] += 1
        self.dealt += 1
        return True

    def seen(self, card: Card) -> int:
        return self._seen[card.index]

    def remaining(self) -> int:
        return 52 * self.decks - self.dealt - self.burned

    def to_dict(self) -> dict[str, object]:
        """The composition as JSON-able data: counts of each card seen."""
        return {
            "decks": self.decks,
            "dealt": self.dealt,
            "burned": self.burned,
            "remaining": self.remaining(),
            "seen": {c.code: n for c, n in zip(DECK, self._seen, strict=True) if n},
        }
