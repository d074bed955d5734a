"""An index crop split into its rank glyph(s) and suit glyph, with their sizes, ink colour and place.

Why a module of its own: the reader (:mod:`vision.recognise`), enrolment's index windows
(:mod:`vision.enrol_window`) and the second look at an index found off its box (:mod:`vision.reread`)
all cut the glyphs the same way; which piece of ink is which is decided in :mod:`vision.index_split`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

from vision.colour import InkColour, ink_colour
from vision.index_split import LOCAL_GLARE, Blob, local_ink, split_binary, with_faded, within
from vision.levels import grey_percentile

Image = MatLike


@dataclass(frozen=True)
class Glyphs:
    """An index split into its rank and suit glyphs (binary, cropped), and the suit ink's colour against
    the paper (``chroma``: :class:`vision.colour.InkColour`'s spread; ``red_dominant``: red-led).

    The suit's image and the ink's colour are made when first asked for, from the crop as it was split
    (the crop is never changed once warped): a reader asks for them only once the rank reads (the suit)
    and the suit reads (the colour), and most crops looked at beside a card read are refused before
    (0.07 ms for the colour, 0.02 for the suit's image, a split index)."""

    rank: Image
    rank_height: int
    suit_height: int
    #: x0, y0, x1, y1 of rank and suit together, in the crop's pixels.
    box: tuple[int, int, int, int]
    #: The rank's centre less the suit's, across, over the rank's height (where the rank sits).
    rank_offset: float
    _suit: Callable[[], Image] = field(repr=False, compare=False)
    _colour: Callable[[], InkColour] = field(repr=False, compare=False)

    @cached_property
    def suit(self) -> Image:
        """The suit glyph's ink, cropped."""
        return self._suit()

    @cached_property
    def _ink(self) -> InkColour:
        return self._colour()

    @property
    def chroma(self) -> float:
        return self._ink.spread

    @property
    def red_dominant(self) -> bool:
        return self._ink.red


#: An index crop whose grey levels span less than this holds no ink: "blank index", however it is cut.
LEAST_RANGE: Final = 50

#: Ink this far outside the learned glyph area (face pixels) is still the glyph's (a card warped a
#: little off, a blurred edge); beyond it, it is trimmed.
AREA_SLACK: Final = 3


def glyph_area(box: tuple[int, int, int, int], area: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The profile's glyph area (face pixels) in the index crop's own pixels, with :data:`AREA_SLACK`."""
    return (
        area[0] - box[0] - AREA_SLACK,
        area[1] - box[1] - AREA_SLACK,
        area[2] - box[0] + AREA_SLACK,
        area[3] - box[1] + AREA_SLACK,
    )


def split_index(
    crop: Image, area: tuple[int, int, int, int] | None = None, rank_height: float | None = None,
    sized: Callable[[int, int], str | None] | None = None,
) -> Glyphs | str:
    """The rank glyph(s) on top and the suit glyph under them; a reason string when there are none.

    ``area`` (x0, y0, x1, y1 in the crop) is where the deck's glyphs lie: ink outside it is trimmed
    before the glyphs are split, so a blurred suit joined to a court card's frame line or a corner pip
    outside the area keeps its own shape instead of being dropped with them as cut by the box's edge.
    ``sized(rank_height, suit_height)``: why glyphs of those heights are no index's, or None; its reason
    is returned before the glyphs' images and ink colour are made (a caller that would refuse them so
    anyway: the looks at other candidate indices beside a card, most of them no index's, 0.07 ms each).
    """
    grey = _inked(crop)
    if isinstance(grey, str):
        return grey
    level, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    labels, split = split_binary(within(binary, area), rank_height)
    if isinstance(split, str):  # a second look, for a rank faded paler than its suit (index_split)
        faded = with_faded(grey, binary, level)
        labels, again = (labels, split) if faded is None else split_binary(within(faded, area), rank_height)
        if isinstance(again, str):
            return split
        split = again

    def ink() -> Image:
        return cv2.normalize(255 - np.asarray(grey), np.empty_like(grey), 0, 255, cv2.NORM_MINMAX)

    return _made(crop, labels, split, ink, lambda: (grey > level).astype(np.uint8), sized)


def split_local(
    crop: Image, area: tuple[int, int, int, int] | None, rank_height: float, suit_height: float,
    sized: Callable[[int, int], str | None] | None = None,
) -> Glyphs | str:
    """:func:`split_index` with the ink cut by its local contrast (:func:`vision.index_split.local_ink`),
    each glyph's image that ink: for an index lit unevenly (a glare's edge across a far index), which only
    ever confirms the card the other index read (:func:`vision.recognise.read_indices`).

    Not under a glare (a tenth of the index at :data:`~vision.index_split.LOCAL_GLARE` or brighter): a
    glare that washes an index out washes out a second object beside the card as well, and the index
    left unread was then all that kept such a frame unknown. In 4,000 drawn scenes of a card beside a
    second object, the look read 8 more as one card, every one under a glare (its index's brightest
    tenth at 250 to 255); the photographs' indices it read were at 232 at most (2026-12-06)."""
    grey = _inked(crop)
    if isinstance(grey, str):
        return grey
    if grey_percentile(grey, None, 90) >= LOCAL_GLARE:
        return "the index lies under a glare"
    ink, binary = local_ink(grey, max(rank_height, suit_height))
    labels, split = split_binary(within(binary, area), rank_height)
    if isinstance(split, str):
        return split
    return _made(crop, labels, split, lambda: ink, lambda: cv2.bitwise_not(binary) // 255, sized)


def _inked(crop: Image) -> Image | str:
    """The crop in grey, or "blank index" when its levels span less than :data:`LEAST_RANGE` (however it
    would be cut)."""
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    darkest, brightest, _, _ = cv2.minMaxLoc(grey)  # one call for both: numpy's two cost 5 us a crop
    return "blank index" if int(brightest) - int(darkest) < LEAST_RANGE else grey


def _made(
    crop: Image, labels: Image, split: tuple[list[Blob], Blob], ink: Callable[[], Image],
    paper: Callable[[], Image],
    sized: Callable[[int, int], str | None] | None,
) -> Glyphs | str:
    """The :class:`Glyphs` of ``split``'s pieces of ``labels``, their images cut from ``ink()`` and the
    suit's colour judged against the ``paper()`` mask's pixels; ``sized``'s reason first, before either is
    made (:func:`split_index`)."""
    rank, suit = split
    top, rank_bottom = min(b.y for b in rank), max(b.bottom for b in rank)
    if sized is not None and (why := sized(rank_bottom - top, suit.h)) is not None:
        return why
    image = ink()
    used = [*rank, suit]
    box = (min(u.x for u in used), top, max(u.right for u in used), suit.bottom)
    across = min(b.x for b in rank) + max(b.right for b in rank) - suit.x - suit.right
    offset = across / 2 / (rank_bottom - top)

    def colour() -> InkColour:
        return ink_colour(crop, (labels == suit.label).astype(np.uint8), paper())

    return Glyphs(_glyph(labels, rank, image), rank_bottom - top, suit.h, box, offset,
                  lambda: _glyph(labels, [suit], image), colour)


def _glyph(labels: Image, blobs: list[Blob], ink: Image) -> Image:
    """The listed pieces' ink (grey levels kept: at 20 pixels the anti-aliased edge is half the shape),
    cropped to their joint bounding box (their boxes' union: the box of their pixels), with everything
    else in the box blanked. Only the box's labels are looked up: the whole crop's lookup and the box
    found from it cost twice as much (the same pixels). One piece (a suit, most ranks) is OpenCV's
    range of one label, the same mask as the lookup for 7 us against 11 a glyph."""
    x, y = min(b.x for b in blobs), min(b.y for b in blobs)
    w, h = max(b.right for b in blobs) - x, max(b.bottom for b in blobs) - y
    part = np.asarray(labels)[y : y + h, x : x + w]
    if len(blobs) == 1:
        chosen = cv2.inRange(part, (blobs[0].label,), (blobs[0].label,))
    else:
        lookup = np.zeros(int(part.max()) + 1, np.uint8)
        lookup[[b.label for b in blobs]] = 255
        chosen = lookup[part]  # a lookup per pixel: np.isin sorted them
    near = cv2.dilate(chosen, _NEAR)
    return cv2.bitwise_and(ink[y : y + h, x : x + w], near)


#: The 3 x 3 square a glyph's pieces are widened by to keep their anti-aliased edge (:func:`_glyph`).
_NEAR: Final = np.ones((3, 3), np.uint8)
