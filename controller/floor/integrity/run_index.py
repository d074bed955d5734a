"""A compact index of every earlier shoe's runs of cards: 16 bytes a run instead of a dictionary entry.

A year of a floor is some 100,000 shoes of about 405 runs each. A Python dictionary of the runs' exact
codes costs about 50 KB a shoe (5 GB for such a year), so the runs are kept as 64-bit hashes in sorted
arrays of unsigned 64-bit integers, each beside where it was first seen (shoe * 2^16 + start), and
every shoe's cards as bytes (one a card) to confirm a hit card by card: a hash collision is never a
false alarm. New runs go into a small dictionary that is frozen into a sorted segment when it is big
enough; segments of like size are merged (as a log-structured merge tree does), so a look-up is a
binary search in a few segments. About 7 KB a shoe (docs/floor.md, "Alerts").
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from heapq import merge
from typing import Final

#: Runs held in the dictionary before it is frozen into a sorted segment (about 160 8-deck shoes).
FREEZE: Final = 1 << 16
_MASK: Final = (1 << 64) - 1
_MIX: Final = 0x9E3779B97F4A7C15


def _hash(code: int) -> int:
    """64 bits of a run's exact code (72 bits): the low bits mixed with the high ones."""
    return ((code & _MASK) ^ ((code >> 64) * _MIX)) & _MASK


class RunIndex:
    """Where each run of ``run`` cards (by its exact code) was first seen: :meth:`first` and :meth:`add`."""

    def __init__(self, run: int, at: int) -> None:
        self.run = run
        self._at = at
        self.cards: list[bytes] = []  # every shoe's cards, by shoe number
        self._open: dict[int, int] = {}
        self._segments: list[tuple[array[int], array[int]]] = []  # (sorted hashes, places), oldest first

    def add(self, codes: Sequence[int], runs: Sequence[tuple[int, int]]) -> None:
        """Shoe number ``len(self.cards)``: its card codes and its (run code, start) pairs."""
        number = len(self.cards)
        self.cards.append(bytes(codes))
        for code, start in runs:
            self._open.setdefault(_hash(code), number * self._at + start)
        if len(self._open) >= FREEZE:
            self._freeze()

    def _freeze(self) -> None:
        items = sorted(self._open.items())
        self._open = {}
        self._segments.append((array("Q", (k for k, _ in items)), array("Q", (v for _, v in items))))
        while len(self._segments) >= 2 and len(self._segments[-2][0]) <= len(self._segments[-1][0]):
            (k1, v1), (k2, v2) = self._segments[-2], self._segments.pop()
            joined = list(merge(zip(k1, v1, strict=True), zip(k2, v2, strict=True)))  # ties: the older first
            self._segments[-1] = (array("Q", (k for k, _ in joined)), array("Q", (v for _, v in joined)))

    def first(self, code: int, cards: bytes) -> int | None:
        """Where the run ``cards`` (whose code is ``code``) was first seen, or None."""
        key = _hash(code)
        for keys, places in self._segments:
            i = bisect_left(keys, key)
            while i < len(keys) and keys[i] == key:
                if self._same(places[i], cards):
                    return places[i]
                i += 1
        place = self._open.get(key)
        return place if place is not None and self._same(place, cards) else None

    def _same(self, place: int, cards: bytes) -> bool:
        shoe, start = divmod(place, self._at)
        return self.cards[shoe][start:start + self.run] == cards
