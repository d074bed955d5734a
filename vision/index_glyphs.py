"""Where a card's index glyphs lie, on the deck's layout and in a frame (for :mod:`vision.by_index`).

Why a module of its own: the search by indices places a card from its glyphs (both indices, to read it)
and a second card from one index (to refuse the frame): both measure an index the same way here.
"""

from __future__ import annotations

from statistics import median
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.index_split import split_binary
from vision.profile import DeckProfile

Image = MatLike


def suit_anchor(profile: DeckProfile) -> tuple[float, float]:
    """Where the suit's centre lies on the upright face (face pixels): the glyph area's middle across
    (a deck centres rank and suit on one column), half a suit above the area's bottom."""
    x0, _, x1, y1 = profile.spec.index.glyphs
    return (x0 + x1) / 2, y1 - profile.spec.index.suit_height / 2


def to_frame(plane: NDArray[np.float64], points: list[tuple[float, float]]) -> NDArray[np.float32]:
    """Face points through the homography ``plane`` (face to working frame), as frame points."""
    mapped = cv2.perspectiveTransform(np.array(points, np.float64).reshape(-1, 1, 2), plane)
    return mapped.reshape(-1, 2).astype(np.float32)


def face_corners(profile: DeckProfile) -> list[tuple[float, float]]:
    """The face's four corners (face pixels), clockwise from its top left: the order cards' corners take."""
    fw, fh = profile.spec.face
    return [(0.0, 0.0), (fw - 1.0, 0.0), (fw - 1.0, fh - 1.0), (0.0, fh - 1.0)]


def anchors(profile: DeckProfile) -> list[tuple[float, float]]:
    """The top index's rank and suit centres on the upright face, then the bottom index's (face pixels):
    the rank over the suit at the deck's median offset, its centre half a rank below the area's top. Made
    once for the profile as it is (:meth:`vision.profile.DeckProfile.kept`): each candidate index placed
    takes them."""
    return list(profile.kept("anchors", lambda: tuple(_anchors(profile))))


def _anchors(profile: DeckProfile) -> list[tuple[float, float]]:
    """:func:`anchors`, made."""
    fw, fh = profile.spec.face
    index = profile.spec.index
    sx, sy = suit_anchor(profile)
    offsets = [v for k, v in profile.aspects.items() if k.startswith("offset:")]
    rx = sx + (median(offsets) if offsets else 0.0) * index.rank_height
    ry = index.glyphs[1] + index.rank_height / 2
    top = [(rx, ry), (sx, sy)]
    return top + [(fw - 1 - x, fh - 1 - y) for x, y in top]


#: A refined index whose rank or suit is further than this share from the deck's height is no index.
GLYPH_SLACK: Final = 0.4
#: Face pixels around the index box warped to find the glyphs of a card placed a little off.
REFINE_PAD: Final = 14


def glyph_points(frame: Image, plane: NDArray[np.float64], profile: DeckProfile, zoom: float, turned: bool,
                 sized: bool) -> list[tuple[float, float]] | None:
    """Where the index box (padded) warped by ``plane`` shows its suit's centre and its rank's top (face
    pixels; ``turned``: the bottom index, the face turned half a turn), or None when it shows no rank
    over a suit, or (``sized``) glyphs of other heights than the deck's."""
    fw, fh = profile.spec.face
    x0, y0, x1, y1 = profile.spec.index.box
    box = (x0 - REFINE_PAD, y0 - REFINE_PAD, x1 + REFINE_PAD, y1 + REFINE_PAD)
    # The box's pixel (u, v) is the face's (box x0 + u, box y0 + v); turned: the face turned half a turn.
    m = np.array([[1, 0, box[0]], [0, 1, box[1]], [0, 0, 1]], np.float64)
    if turned:
        m = np.array([[-1, 0, fw - 1], [0, -1, fh - 1], [0, 0, 1]], np.float64) @ m
    to_crop = np.diag([zoom, zoom, 1.0]) @ plane @ m
    crop = cv2.warpPerspective(frame, to_crop, (box[2] - box[0], box[3] - box[1]),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)[1]
    split = split_binary(binary)[1]
    if isinstance(split, str):
        return None
    rank, suit = split
    rank_h = max(b.bottom for b in rank) - min(b.y for b in rank)
    if sized and not all(abs(got / want - 1) <= GLYPH_SLACK for got, want in (
            (rank_h, profile.spec.index.rank_height), (suit.h, profile.spec.index.suit_height))):
        return None  # glyphs of another size than the deck's: no read would accept them
    rank_x = (min(b.x for b in rank) + max(b.right for b in rank)) / 2
    found = [(suit.x + suit.w / 2, suit.y + suit.h / 2), (rank_x, float(min(b.y for b in rank)))]
    points = [(u + box[0], v + box[1]) for u, v in found]
    return [(fw - 1 - fx, fh - 1 - fy) for fx, fy in points] if turned else points


def glyph_anchors(profile: DeckProfile, turned: bool) -> list[tuple[float, float]]:
    """Where the deck puts an index's suit centre and rank top (face pixels), as :func:`glyph_points`."""
    fw, fh = profile.spec.face
    (rx, _), (sx, sy) = anchors(profile)[:2]
    want = [(sx, sy), (rx, float(profile.spec.index.glyphs[1]))]
    return [(fw - 1 - x, fh - 1 - y) for x, y in want] if turned else want


def similarity(plane: NDArray[np.float64], seen: list[tuple[float, float]],
               wanted: list[tuple[float, float]]) -> NDArray[np.float64]:
    """The similarity (face to frame) that puts the face points ``wanted`` where ``plane`` maps ``seen``
    (the first two points of each)."""
    (w1, w2), (z1, z2) = [complex(*w) for w in wanted[:2]], [complex(*z) for z in to_frame(plane, seen[:2])]
    a = (z2 - z1) / (w2 - w1)
    b = z1 - a * w1
    return np.array([[a.real, -a.imag, b.real], [a.imag, a.real, b.imag], [0, 0, 1]])
