"""False shuffle: a new shoe's card order checked against every earlier shoe of the floor, by two rules.

A shoe that was not really shuffled (dealt twice from a stacked order, or given only a riffle or a few
strips) carries the earlier shoe's order with it. Rule 1, a shared run: any :data:`RUN` or more cards
in the same order in both shoes. Each run of :data:`RUN` cards is indexed by a 64-bit hash of its exact
code (6 bits a card, 72 bits a run) and confirmed card by card (controller.floor.integrity.run_index:
compact sorted arrays), so a new shoe is looked up against thousands of earlier ones in a few binary
searches per position. Rule 2, kept pairs: the count of the new shoe's adjacent pairs
(card, next card) that are also adjacent somewhere in an earlier shoe. For a truly shuffled shoe that
count is close to Binomial(pairs, distinct pairs of the earlier shoe / 52^2); an alarm is raised at the
least count whose tail under that law is at most :data:`PAIR_FALSE_ALARM`. Pairs are indexed too (each
pair lists the shoes holding it), so counting against every earlier shoe is one pass over the lists.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Final

from controller.cards import Card
from controller.floor.integrity.run_index import RunIndex
from controller.floor.integrity.stats import binomial_threshold

#: Cards in order shared by two shoes that make a false-shuffle alarm (issue 27's rule).
RUN: Final = 12
#: Per comparison of two shoes, the kept-pairs rule's false-alarm probability under the binomial law.
#: With H earlier shoes a new shoe's false-alarm rate is at most H times this (1e-7 for H = 100,000).
PAIR_FALSE_ALARM: Final = 1e-12
_RUN_MASK: Final = (1 << (6 * RUN)) - 1
_AT: Final = 1 << 16  # a sighting is stored as shoe * _AT + start: one int, not a tuple


@dataclass(frozen=True)
class SharedRun:
    """``length`` cards in the same order (or, ``reverse``, the reverse order: a discard rack put back
    unshuffled upside down): from ``start`` in the new shoe, ``earlier_start`` in ``earlier`` (from 0)."""

    earlier: str
    start: int
    earlier_start: int
    length: int
    reverse: bool = False


@dataclass(frozen=True)
class KeptPairs:
    """The new shoe kept ``kept`` of its ``pairs`` adjacent pairs from ``earlier``; ``threshold`` or more
    is an alarm."""

    earlier: str
    kept: int
    pairs: int
    expected: float
    threshold: int


@dataclass(frozen=True)
class ShuffleVerdict:
    runs: tuple[SharedRun, ...]
    kept: tuple[KeptPairs, ...]

    @property
    def false_shuffle(self) -> bool:
        return bool(self.runs or self.kept)

    def findings(self) -> list[str]:
        """One line per alarm, for an alert's text; empty when the shoe looks shuffled."""
        order = {False: "same order as", True: "reverse order of"}
        return ([f"{r.length} cards in the {order[r.reverse]} shoe {r.earlier} "
                 f"(cards {r.start + 1}.. here, {r.earlier_start + 1}.. there)" for r in self.runs]
                + [f"{k.kept} of {k.pairs} adjacent pairs kept from shoe {k.earlier} "
                   f"(expected {k.expected:.0f}, alarm at {k.threshold})" for k in self.kept])


def _runs(codes: Sequence[int]) -> Iterator[tuple[int, int]]:
    """(code of the RUN cards ending at i, their start) for each start."""
    code = 0
    for i, c in enumerate(codes):
        code = ((code << 6) | c) & _RUN_MASK
        if i >= RUN - 1:
            yield code, i - RUN + 1


def _pairs(codes: Sequence[int]) -> list[int]:
    return [a * 52 + b for a, b in zip(codes, codes[1:], strict=False)]


class ShoeHistory:
    """Every earlier shoe's runs and adjacent pairs, indexed; :meth:`check` a shoe, then :meth:`add` it."""

    def __init__(self) -> None:
        self.shoes: list[str] = []
        self._distinct: list[int] = []
        self._run_at = RunIndex(RUN, _AT)  # run code -> shoe * _AT + start of its first sighting
        self._pair_shoes: dict[int, array[int]] = {}  # pair code -> the shoes holding it, each once

    def add(self, shoe: str, cards: Sequence[Card]) -> None:
        """Remember ``shoe`` (a name unique on the floor, e.g. ``table:journal:shoe``) for later checks."""
        number = len(self.shoes)
        codes = [c.index for c in cards]
        self._run_at.add(codes, list(_runs(codes)))
        distinct = set(_pairs(codes))
        for pair in distinct:
            self._pair_shoes.setdefault(pair, array("I")).append(number)
        self.shoes.append(shoe)
        self._distinct.append(len(distinct))

    def shared_runs(self, cards: Sequence[Card]) -> tuple[SharedRun, ...]:
        """Every run of RUN or more of ``cards`` in the same or the reverse order in an earlier shoe."""
        backwards = self._runs_in_order(cards[::-1])
        n = len(cards)
        return self._runs_in_order(cards) + tuple(
            SharedRun(r.earlier, n - r.start - r.length, r.earlier_start, r.length, True) for r in backwards)

    def _runs_in_order(self, cards: Sequence[Card]) -> tuple[SharedRun, ...]:
        """Every run of RUN or more of ``cards`` in the same order in an earlier shoe, overlaps joined."""
        found: list[list[int]] = []  # [earlier shoe, start, earlier start, length]
        codes = bytes(c.index for c in cards)
        for code, start in _runs(codes):
            hit = self._run_at.first(code, codes[start:start + RUN])
            if hit is None:
                continue
            shoe, at = divmod(hit, _AT)
            last = found[-1] if found else None
            step = last[3] - RUN + 1 if last else 0  # the next window of the last run starts this far on
            if last and last[0] == shoe and last[1] + step == start and last[2] + step == at:
                last[3] += 1
            else:
                found.append([shoe, start, at, RUN])
        return tuple(SharedRun(self.shoes[s], start, at, n) for s, start, at, n in found)

    def kept_pair_counts(self, cards: Sequence[Card]) -> tuple[int, dict[int, int]]:
        """The new shoe's adjacent pairs, and per earlier shoe (by number) how many of them it also holds."""
        pairs = _pairs([c.index for c in cards])
        lists = (self._pair_shoes.get(p, ()) for p in pairs)
        return len(pairs), Counter(chain.from_iterable(lists))

    def kept_pair_threshold(self, pairs: int, earlier: int, alpha: float = PAIR_FALSE_ALARM) -> int:
        """The least kept count that is an alarm against earlier shoe number ``earlier``."""
        return binomial_threshold(pairs, self._distinct[earlier] / 2704, alpha)

    def kept_pairs(self, cards: Sequence[Card]) -> tuple[KeptPairs, ...]:
        """Every earlier shoe whose adjacent pairs the new shoe kept significantly more of than chance."""
        pairs, counts = self.kept_pair_counts(cards)
        if pairs == 0:
            return ()
        alarms = []
        for shoe, kept in sorted(counts.items()):
            expected = pairs * self._distinct[shoe] / 2704
            if kept <= expected:  # at or below the mean: the tail is about 1/2, far above any alarm level
                continue
            threshold = self.kept_pair_threshold(pairs, shoe)
            if kept >= threshold:
                alarms.append(KeptPairs(self.shoes[shoe], kept, pairs, expected, threshold))
        return tuple(alarms)

    def check(self, cards: Sequence[Card]) -> ShuffleVerdict:
        """Both rules for a new shoe (its cards in the order dealt, burns included) against every earlier."""
        return ShuffleVerdict(self.shared_runs(cards), self.kept_pairs(cards))
