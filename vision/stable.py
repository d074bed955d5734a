"""Stable reads: a card is reported once, after K frames agree, and not again until the window changes.

Why: a frame is a moment. A card sliding into the window reads "unknown"
for a few frames, then as itself for as long as it stays; reporting each
frame would deal it many times. So a card is reported when the last K
frames all read it, and the same card is not reported again until the
window has shown something else: K frames of an empty window, or another
card read K times. A run of "unknown" frames (a hand passing, glare) only
breaks the count; it does not clear the card in the window, so a card that
stays put behind a passing hand is never dealt twice. Eight-deck shoes hold
the same card many times: the dealer clears the window between two cards,
which is the "empty" that lets the same card be reported again.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.cards import Card
from vision.recognise import Reading


@dataclass
class StableReads:
    """Feed every frame's :class:`Reading` to :meth:`feed`; it returns the reading to report, once."""

    frames: int = 3
    #: The card reported last and still in the window (None once the window has been empty).
    shown: Card | None = None
    _candidate: Card | None = None
    _count: int = 0
    _empty: int = 0

    def __post_init__(self) -> None:
        if self.frames < 1:
            raise ValueError(f"stable frames must be at least 1, not {self.frames}")

    @property
    def cleared(self) -> bool:
        """The window has been empty for K frames (or more): no card the camera reported is in it."""
        return self._empty >= self.frames

    def forget(self) -> Card | None:
        """Forget the card reported last (returned): its next K agreeing reads report it again. For a
        window whose emptiness is in doubt (:mod:`vision.felt`): the caller asks the dealer about it."""
        shown, self.shown = self.shown, None
        self._candidate, self._count = None, 0
        return shown

    def feed(self, reading: Reading) -> Reading | None:
        if reading.status == "empty":
            self._candidate, self._count = None, 0
            self._empty += 1
            if self._empty >= self.frames:
                self.shown = None
            return None
        self._empty = 0
        if reading.status != "card" or reading.card is None:
            self._candidate, self._count = None, 0
            return None
        if reading.card is not self._candidate:
            self._candidate, self._count = reading.card, 0
        self._count += 1
        if self._count >= self.frames and reading.card is not self.shown:
            self.shown = reading.card
            return reading
        return None
