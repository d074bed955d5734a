"""Shoe integrity: a shoe's cards must be whole decks, so a card missing, added or seen too often is named.

A shoe of ``decks`` decks holds each of the 52 cards exactly ``decks`` times. When it ends, the cards
seen (dealt and burned, as the reader read them) plus the cards left undealt behind the cut card must
make 52 x decks, and no card may have been seen more than ``decks`` times. Either failing means a card
was taken out, slipped in, or misread: play on that shoe cannot be trusted (docs/floor.md, "Integrity
alerts (rules)").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from controller.cards import DECK, Card, decks_text


@dataclass(frozen=True)
class OverSeen:
    """A card seen more often than the shoe holds it."""

    card: Card
    seen: int
    holds: int


@dataclass(frozen=True)
class ShoeCount:
    """A finished shoe's count: ``short`` > 0 cards missing, < 0 cards added; the cards it can name."""

    decks: int
    seen: int
    undealt: int
    short: int
    over_seen: tuple[OverSeen, ...]
    #: Cards seen fewer times than the shoe holds them, with how many are unaccounted for. Named only
    #: when the shoe was dealt out (nothing undealt): otherwise the missing card may be any card still
    #: behind the cut card, which was never read, so the count alone cannot say which.
    missing_cards: tuple[tuple[Card, int], ...]

    @property
    def ok(self) -> bool:
        return self.short == 0 and not self.over_seen

    def findings(self) -> list[str]:
        """One line per fault, for an alert's text; empty when the shoe is whole."""
        lines: list[str] = []
        total = (f"({self.seen} seen + {self.undealt} undealt = {self.seen + self.undealt}, "
                 f"not {52 * self.decks})")
        shoe, plural = decks_text(self.decks), "s" if abs(self.short) > 1 else ""
        if self.short > 0:
            named = ", ".join(f"{card} x{n}" if n > 1 else str(card) for card, n in self.missing_cards)
            which = f": {named}" if named else " (which cannot be told: the undealt cards were not read)"
            lines.append(f"{self.short} card{plural} missing from {shoe} {total}{which}")
        elif self.short < 0:
            lines.append(f"{-self.short} card{plural} added to {shoe} {total}")
        lines.extend(f"{o.card} seen {o.seen} times; the shoe holds it {o.holds} times"
                     for o in self.over_seen)
        if self.short <= 0:  # a card read in place of another: the one it replaced is named too
            lines.extend(f"{card} seen {n} time{'s' if n > 1 else ''} too few"
                         for card, n in self.missing_cards)
        return lines


def count_shoe(decks: int, seen: Sequence[Card], undealt: int) -> ShoeCount:
    """Check a finished shoe: ``seen`` every card read from it (dealt, burned), ``undealt`` the cards left."""
    if decks < 1:
        raise ValueError(f"a shoe holds at least 1 deck, not {decks}")
    if undealt < 0:
        raise ValueError(f"undealt cards cannot be negative: {undealt}")
    counts = Counter(seen)
    short = 52 * decks - len(seen) - undealt
    over = tuple(OverSeen(card, counts[card], decks) for card in DECK if counts[card] > decks)
    missing: tuple[tuple[Card, int], ...] = ()
    if undealt == 0:
        missing = tuple((card, decks - counts[card]) for card in DECK if counts[card] < decks)
    return ShoeCount(decks, len(seen), undealt, short, over, missing)
