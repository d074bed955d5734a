"""Where enrolment looks for a deck's index: the usual corner window, or a taller one for a large index.

Why a choice per deck and not one taller window for all: most decks print a small index in the top
fifth of the face, and the usual window (the top 36 %) finds it on every face; a large ("jumbo",
casino) index reaches lower (a US Playing Card "Aristocrat" 2-9's suit lies at 32-42 % of the face's
height), and the usual window cuts its suit in two, so enrolment found no index on half the deck and
refused it, whatever the photographs. A taller window would look among more of the centre's pips on
every deck, so it is taken only when it finds the index on clearly more faces than the usual one: a
deck whose index fits the usual window is measured exactly as before, and the profile keeps the same
format (the window is only where enrolment looks; the profile stores the index box it measured).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from vision.profile import FACE_SIZE
from vision.recognise import Image, split_index

#: The window's width, a share of the face's: the index column of every deck seen so far.
SEARCH_WIDTH: Final = 0.32
#: The window's heights tried, shares of the face's height: the usual one first, then taller ones for a
#: large index (0.44 takes a suit reaching 42 % down; 0.48 a little more, the index box padded to the
#: face's middle, where the other index's half begins).
SEARCH_HEIGHTS: Final = (0.36, 0.44, 0.48)
#: A taller window is taken only when it finds the index on at least this share of the faces more than
#: the usual one: a few faces refused for a blur or a glare do not move the deck's window.
CLEARLY_MORE: Final = 0.1


class SearchWindow(NamedTuple):
    """The corner holding the index (``tl``, or ``tr`` for a left-handed deck) and the window's width
    and height in face pixels."""

    corner: str
    width: int
    height: int

    def crop(self, face: Image) -> Image:
        """The window's part of ``face``."""
        left = 0 if self.corner == "tl" else FACE_SIZE[0] - self.width
        return face[: self.height, left : left + self.width]


def search_window(faces: Sequence[Image]) -> SearchWindow:
    """The corner and window that find the index on the most faces, the usual height unless a taller
    one finds it on clearly more (:data:`CLEARLY_MORE`); ties go to the shorter window."""
    w, h = FACE_SIZE
    width = int(w * SEARCH_WIDTH)

    def found(window: SearchWindow) -> int:
        return sum(not isinstance(split_index(window.crop(face)), str) for face in faces)

    def best_corner(height: int) -> tuple[int, SearchWindow]:
        counts = [(found(win), win) for win in (SearchWindow(c, width, height) for c in ("tl", "tr"))]
        return max(counts, key=lambda cw: cw[0])  # the first (tl) on a tie, as before

    usual_count, usual = best_corner(int(h * SEARCH_HEIGHTS[0]))
    if usual_count == len(faces):
        return usual
    chosen_count, chosen = usual_count, usual
    for share in SEARCH_HEIGHTS[1:]:
        count, window = best_corner(int(h * share))
        if count > chosen_count and count - usual_count >= CLEARLY_MORE * len(faces):
            chosen_count, chosen = count, window
    return chosen
