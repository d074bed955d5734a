"""Where enrolment looks for a deck's index: the usual corner window, or a taller one for a large index.

Why a choice per deck and not one taller window for all: most decks print a small index in the top
fifth of the face, and the usual window (the top 36 %) finds it on every face; a large ("jumbo",
casino) index reaches lower (a US Playing Card "Aristocrat" 2-9's suit lies at 32-42 % of the face's
height), and the usual window cut its suit in two, so enrolment could not read the index on half the
deck and refused it, whatever the photographs. A taller window looks among more of the centre's
pips, so it is taken only when the index it measures is readable on clearly more cards than the
usual one's, or on every card the usual one reads and more (a deck whose aces alone carry a large
index: too few cards for "clearly more", refused for them before whatever the photographs). A deck
the usual window reads whole keeps it and is measured exactly as before (even one whose suit the
usual window trims, read the same way trimmed in every frame), and the profile keeps its format (the
window is only where enrolment looks; the profile stores the index box it measured).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

import cv2
import numpy as np

from vision.glyphs import Glyphs, Image, glyph_area, split_index
from vision.profile import FACE_SIZE

#: The window's width, a share of the face's: the index column of every deck seen so far.
SEARCH_WIDTH: Final = 0.32
#: The window's heights tried, shares of the face's height: the usual one first, then taller ones for a
#: large index (0.44 takes a suit reaching 42 % down; 0.48 a little more, the index box padded to the
#: face's middle, where the other index's half begins).
SEARCH_HEIGHTS: Final = (0.36, 0.44, 0.48)
#: A taller window is taken only when its index is readable on at least this share of the cards more
#: than the usual one's: a few faces refused for a blur or a glare do not move the deck's window.
CLEARLY_MORE: Final = 0.1
#: Padding around the measured glyph area, in face pixels (the index crop, for a card warped a little off).
PAD: Final = 12

Box = tuple[int, int, int, int]


class SearchWindow(NamedTuple):
    """The corner holding the index (``tl``, or ``tr`` for a left-handed deck) and the window's width
    and height in face pixels."""

    corner: str
    width: int
    height: int

    @property
    def left(self) -> int:
        return 0 if self.corner == "tl" else FACE_SIZE[0] - self.width

    def crop(self, face: Image) -> Image:
        """The window's part of ``face``."""
        return face[: self.height, self.left : self.left + self.width]


class IndexPlace(NamedTuple):
    """Where a deck's index was measured: the window, the index crop and the glyph area (face pixels),
    and each face's two indices split there (:func:`index_glyphs`), which enrolment's glyph pass takes
    as they are instead of splitting every face again."""

    window: SearchWindow
    box: Box
    area: Box
    glyphs: tuple[list[Glyphs | str], ...] = ()


def index_glyphs(face: Image, box: Box, area: Box) -> list[Glyphs | str]:
    """The face's two indices (as it lies, and turned half a turn) split in the deck's index crop."""
    x0, y0, x1, y1 = box
    crop = glyph_area(box, area)
    return [split_index(t[y0:y1, x0:x1], crop) for t in (face, cv2.rotate(face, cv2.ROTATE_180))]


def index_place(faces: Sequence[Image], cards: Sequence[str]) -> IndexPlace | None:
    """The index measured in the usual window, or in a taller one that reads it on clearly more cards
    (:data:`CLEARLY_MORE`) or on every card the shorter reads and more (it loses none); ties go to the
    shorter. None when no window finds any index.

    ``cards`` names each face's card: a card counts once, readable when one of its photographs is, so
    more photographs of one card (``--images`` repeated) do not move the deck's window (counted by
    faces, ten more photographs of a card the usual window reads took a deck whose large index it cuts
    on six cards back to the usual window, and enrolment then refused those six). A deck whose index
    reaches lower on only a few cards (jumbo aces: 4 of 52, under a tenth) takes the taller window by
    the second rule: the few blurred faces the tenth guards against are no more readable lower down, so
    they never move a usual deck's window among the centre's pips.
    """
    h = FACE_SIZE[1]
    total = len(set(cards))

    def read(place: IndexPlace | None) -> tuple[IndexPlace | None, set[str]]:
        if place is None:
            return None, set()
        glyphs = tuple(index_glyphs(face, place.box, place.area) for face in faces)
        readable = {card for both, card in zip(glyphs, cards, strict=True)
                    if all(not isinstance(g, str) for g in both)}
        return place._replace(glyphs=glyphs), readable

    usual, usual_cards = read(measure(faces, window_at(faces, int(h * SEARCH_HEIGHTS[0]))))
    chosen, chosen_cards = usual, usual_cards
    if len(usual_cards) == total:
        return usual
    for share in SEARCH_HEIGHTS[1:]:
        place, found = read(measure(faces, window_at(faces, int(h * share))))
        clearly = len(found) > len(chosen_cards) and len(found) - len(usual_cards) >= CLEARLY_MORE * total
        if clearly or found > chosen_cards:
            chosen, chosen_cards = place, found
    return chosen


def window_at(faces: Sequence[Image], height: int) -> SearchWindow:
    """The window ``height`` pixels tall in the corner (``tl`` or ``tr``) that finds an index on more
    faces (``tl`` on a tie)."""
    width = int(FACE_SIZE[0] * SEARCH_WIDTH)
    windows = [SearchWindow(corner, width, height) for corner in ("tl", "tr")]
    counts = [sum(not isinstance(split_index(win.crop(face)), str) for face in faces) for win in windows]
    return windows[int(np.argmax(counts))]


def measure(faces: Sequence[Image], window: SearchWindow) -> IndexPlace | None:
    """The glyph area (the 2nd to 98th percentile of the rank-and-suit boxes found in ``window`` on
    every face, either way up) and the index crop around it, padded; None when none is found."""
    w, h = FACE_SIZE
    boxes = []
    for face in faces:
        for turned in (face, cv2.rotate(face, cv2.ROTATE_180)):
            g = split_index(window.crop(turned))
            if not isinstance(g, str):  # a face without one is judged by the glyph pass that follows
                boxes.append(g.box)
    if not boxes:
        return None
    arr = np.array(boxes, np.float32)
    x0, y0 = np.percentile(arr[:, 0], 2), np.percentile(arr[:, 1], 2)
    x1, y1 = np.percentile(arr[:, 2], 98), np.percentile(arr[:, 3], 98)
    left = window.left
    area = (left + int(x0), int(y0), left + int(math.ceil(x1)), int(math.ceil(y1)))
    # The crop ends at the face's middle, where the other index's half begins (a profile's rule).
    box = (max(0, area[0] - PAD), max(0, area[1] - PAD), min(w, area[2] + PAD), min(h // 2, area[3] + PAD))
    return IndexPlace(window, box, area)
