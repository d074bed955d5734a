"""A card parted from a bright patch of table by the edge cut, whose outline the same cut notched at an index.

Why: a white card on a light table under uneven light is as bright as a patch of the table beside it,
so the paper threshold joins the two; the detector's second look cuts the bright mask along the frame's
strong edges, which parts them (a card's border is a step edge however close the brightness), but the
cut also follows every ink edge, and where an index (or a court card's frame line) lies within a few
pixels of the card's border the thin paper between them is cut away: the card's region opens there
into a notch and is refused as an odd outline. The card is then its region's convex hull, accepted only
as a clean card (four corners, a card's proportions, wholly inside the window: the caller's own checks)
whose every side runs along the region's contour and along the frame's strong edges, and whose inside
is the region itself, ink enclosed by the first look's paper, or paper the cut took away. A notch of
table between two overlapping cards, or a hand, is none of these, and the window stays refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeVar

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.rim import sharp_outline
from vision.sides import MIN_PAPER, traced_sides


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
    card notched by the cut; else None. ``first`` is the first look's paper, ``edges`` the frame's
    strong edges (both at the working size), ``classify`` the detector's own check of an outline."""
    binary = np.asarray(first, np.uint8)
    inside = [o for o in found if o.kind in INSIDE]
    if len(inside) != 1 or inside[0].kind != "odd" or inside[0].contour is None:
        return None
    contour = inside[0].contour.reshape(-1, 2)
    shape = (binary.shape[0], binary.shape[1])
    hull = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(contour), 255)
    outline, _ = cv2.findContours(hull, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if len(outline) != 1:
        return None
    card = classify(np.asarray(outline[0], np.int32))
    q = card.quad
    if card.kind != "card" or q is None:
        return None
    if not traced_sides(q, contour, shape) or not sharp_outline(q, edges):
        return None
    return card if _paper(q, contour, binary, edges) else None


def _paper(q: NDArray[np.float32], contour: NDArray[np.int32], binary: NDArray[np.uint8],
           edges: NDArray[np.uint8]) -> bool:
    """Whether :data:`MIN_PAPER` of the quadrilateral ``q`` is the card's: neither table (dark pixels
    open to the outside in the first look's paper ``binary``; ink is enclosed by paper) nor a bright
    thing reaching in from outside ``q`` past the edge cut (a hand, a second card). The cut region
    (``contour``) and what the cut parted from it inside ``q`` (a court card's picture) are the card's."""
    h, w = binary.shape
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, np.round(q).astype(np.int32), 255)
    filled = np.zeros((h, w), np.uint8)
    outer, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, outer, -1, 255, -1)
    table = filled == 0
    cut = cv2.bitwise_and(binary, cv2.bitwise_not(edges))
    _, labels = cv2.connectedComponents(cut)
    beyond = np.unique(labels[cv2.dilate(inside, np.ones((5, 5), np.uint8)) == 0])
    foreign = np.isin(labels, beyond[beyond > 0])
    region = np.zeros((h, w), np.uint8)
    cv2.drawContours(region, [contour.reshape(-1, 1, 2)], -1, 255, -1)
    miss = (inside > 0) & (table | (foreign & (region == 0)))
    area = cv2.countNonZero(inside)
    return area > 0 and int(np.count_nonzero(miss)) <= (1 - MIN_PAPER) * area
