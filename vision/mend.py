"""A card parted from a bright patch of table by the edge cut, whose outline the same cut notched at an index.

Why: a white card on a light table under uneven light is as bright as a patch of the table beside it,
so the paper threshold joins the two; the detector's second look cuts the bright mask along the frame's
strong edges, which parts them (a card's border is a step edge however close the brightness), but the
cut also follows every ink edge, and where an index (or a court card's frame line) lies within a few
pixels of the card's border the thin paper between them is cut away: the card's region opens there
into a notch and is refused as an odd outline. So, within the region's convex hull, what the cut took
is put back: ink enclosed by the first look's paper (its holes) and paper on the strong edges; table
(dark and open to the outside) and anything else is not. The region so mended must then pass every
check of the detector's own (four corners, no notch, sides on its contour, a card's proportions,
wholly inside the window) and have every side on the frame's strong edges; a hand or a second card
showing beyond the card by more than that check tolerates still leaves a notch or a fifth corner, and
the window stays refused.

A shallower notch passes the checks as four corners, but it pulls the fitted sides into the face,
through the index, which is then warped from the wrong place and cut; growing the card back to the
paper by the cut's width does not close a notch as deep as an index. So a region found as a card is
mended the same way; the mended outline, checked as above, replaces it (on a card with no notch the
mend changes nothing). Measured on yuchenrao's webcam deck on its pale table: 16 of its 19 unknown
frames were such outlines, and read now (2026-12-04).

On a court card the paper is a ring about the picture; where both indices lie against the border, the
cut takes the paper at both and the ring falls in two halves, two odd regions where there is one card
(yuchenrao's other 3 unknowns). Two odd regions are mended together, within their joint hull, and are
the card only when the mended outline passes the same checks and holds both whole: a card notched at
an index beside another object mends to the card alone, and the two stay two objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeVar

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.rim import sharp_outline


class Region(Protocol):
    """A classified bright region (the detector's ``_Outline``)."""

    @property
    def kind(self) -> str: ...
    @property
    def contour(self) -> NDArray[np.int32] | None: ...
    @property
    def quad(self) -> NDArray[np.float32] | None: ...


R = TypeVar("R", bound=Region)

#: Kinds of region that lie wholly inside the window (each one object there).
INSIDE: Final = ("card", "odd")


def mend(
    found: Sequence[R], first: MatLike, edges: NDArray[np.uint8],
    classify: Callable[[NDArray[np.int32]], R],
) -> R | None:
    """The card, when the cut look's regions ``found`` hold one object inside the window and it is a
    card notched by the cut (refused as odd, or a card whose sides the notch pulled), or two odd ones
    that are the halves of one card; else None.
    ``first`` is the first look's paper, ``edges`` the frame's strong edges (both at the working
    size), ``classify`` the detector's own check of an outline."""
    inside = [o for o in found if o.kind in INSIDE]
    halves = len(inside) == 2 and all(o.kind == "odd" for o in inside)  # a ring cut through at both ends
    contours = [o.contour for o in inside if o.contour is not None]
    if not (len(inside) == 1 or halves) or len(contours) != len(inside):
        return None
    binary = np.asarray(first, np.uint8)
    h, w = binary.shape
    hull = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(np.concatenate([c.reshape(-1, 2) for c in contours])), 255)
    region = np.zeros((h, w), np.uint8)
    cv2.drawContours(region, [c.reshape(-1, 1, 2) for c in contours], -1, 255, -1)
    paper = np.zeros((h, w), np.uint8)  # the first look's regions with their holes (ink) filled
    outer, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(paper, outer, -1, 255, -1)
    ink = cv2.bitwise_and(paper, cv2.bitwise_not(binary))
    refill = cv2.bitwise_and(hull, cv2.bitwise_or(ink, cv2.bitwise_and(binary, edges)))
    outline, _ = cv2.findContours(cv2.bitwise_or(region, refill), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    card = classify(np.asarray(max(outline, key=cv2.contourArea), np.int32))
    if card.kind != "card" or card.quad is None or not sharp_outline(card.quad, edges):
        return None
    if halves and not holds(card.quad, region):
        return None  # the card is one of the two; the other object stays in the window
    return card


def holds(quad: NDArray[np.float32], region: NDArray[np.uint8]) -> bool:
    """Whether the card at ``quad`` holds all of ``region`` but a rim of two pixels (a corner's rounding)."""
    card = np.zeros_like(region)
    cv2.fillConvexPoly(card, np.rint(quad).astype(np.int32), 255)
    rim = cv2.dilate(card, np.ones((5, 5), np.uint8))
    return cv2.countNonZero(cv2.bitwise_and(region, cv2.bitwise_not(rim))) == 0
