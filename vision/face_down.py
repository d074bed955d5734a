"""A face-down card beside a card read by its indices (or partly under it): a dark card-sized rectangle.

Why: the search by indices (:mod:`vision.by_index`) runs where the card's paper is not set off from
what it lies on, and a second card's paper is then lost the same way: a back's white border joins a
white sheet, so neither the detector's bright regions nor :func:`vision.by_index.apart` see it, and a
back shows no index for the search's look at other indices. What it does show is its printed field:
darker than the paper (its least channel: a red back is as dark as a blue one), filling a rectangle
nearly a card's size once its pattern's light lines are closed over. Wood, cork, a keyboard or a dark
room behind a sheet are darker too, but not as one solid rectangle, and reach the window's edge.
A rectangle reaching the edge is not judged (a cut one's size and shape are unknown): a back half out
of the window beside a card read by its indices is not found here. One reaching the card is a back
partly under it, cut by the card's edge to any proportions: judged by its size and fill alone (a back
mostly under the card shows less than :data:`LEAST_AREA` of field and is not found).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import least_channel
from vision.regions import areas, labelled
from vision.window import Bounds

#: The dark region is closed over this share of the card's short side (a back's lattice is finer).
CLOSE_SHARE: Final = 0.08
#: Least area of the dark rectangle, as a share of the card's (a back's field inside its border is
#: about three quarters of it), and least share of its least enclosing rectangle that it fills (a
#: rectangle fills all of it, seen at a slant nearly all; a disc, a chip, only pi / 4 = 0.79).
LEAST_AREA: Final = 0.4
LEAST_FILL: Final = 0.85
#: Its short side over its long one: a card's (0.72) seen at a slant or cut by its border.
PROPORTIONS: Final = (0.5, 0.9)
#: With ``most_area``: the largest enclosing rectangle of a back, as a share of the card's area (a dark
#: mat, a tablet, a felt whose rail shows all round is larger than any back at the card's scale).
MOST_AREA: Final = 2.0


def face_down(small: MatLike, quad: NDArray[np.float32], win: Bounds, most_area: float | None = None,
              least: MatLike | None = None) -> bool:
    """Whether the window at the working size ``small`` holds a dark card-sized rectangle wholly inside
    it and apart from the card at ``quad`` (working pixels): a face-down card (see the module). With
    ``most_area``, a rectangle larger than that many of the card's areas is no back. ``least``: ``small``'s
    :func:`vision.levels.least_channel`, if made already (the look for a large pip needs it too)."""
    least = least_channel(small) if least is None else least
    if win.inside is None:  # Otsu's level of the whole frame, and the frame thresholded at it, in one call
        dark = cv2.threshold(least, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)[1]
    else:
        seen = least[win.inside > 0].reshape(1, -1)
        level = cv2.threshold(seen, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
        dark = cv2.bitwise_and(cv2.threshold(least, level, 255, cv2.THRESH_BINARY_INV)[1], win.inside)
    short = float(min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1])))
    card = np.zeros_like(dark)
    cv2.fillConvexPoly(card, np.round(quad).astype(np.int32), 255)
    margin = max(3, int(CLOSE_SHARE * short) | 1)  # the card's own ink never joins a region beside it
    # Cleared where the widened card (0 or 255) is set: a saturating subtraction, not a boolean mask's copy.
    dark = cv2.subtract(dark, cv2.dilate(card, np.ones((margin, margin), np.uint8)))
    closed = cv2.morphologyEx(dark, cv2.MORPH_CLOSE, np.ones((margin, margin), np.uint8))
    # The regions' labels and sizes, and the boxes of the few large enough only: the closed dark mask is
    # mostly set, where OpenCV's statistics of every region cost 0.19 ms (:func:`vision.regions.areas`).
    n, labels = labelled(closed)
    sizes = areas(labels, n)
    area = cv2.contourArea(quad.astype(np.float32))
    # Regions reaching the window's edge, and regions reaching the card: a back partly under it, cut by
    # the card's edge to any proportions (marked by a lookup per pixel: numpy's unique sorted them all;
    # those reaching the card only once a region has a back's size and fill: most frames have none).
    cut = np.zeros(n, bool)
    cut[labels[win.rim > 0]] = True
    under: NDArray[np.bool_] | None = None
    for k in np.flatnonzero((sizes >= LEAST_AREA * area) & ~cut).tolist():  # large enough, not cut
        if k == 0:
            continue  # the background
        x, y, w, h = cv2.boundingRect(np.asarray(labels == k, np.uint8))  # the region's own box
        region = (labels[y : y + h, x : x + w] == k).astype(np.uint8)
        outline, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        (_, _), (rw, rh), _ = cv2.minAreaRect(np.vstack(outline))
        if most_area is not None and rw * rh > most_area * area:
            continue
        fill = int(sizes[k]) / max(rw * rh, 1.0)
        ratio = min(rw, rh) / max(rw, rh, 1.0)
        if fill < LEAST_FILL:
            continue
        if under is None:
            under = np.zeros(n, bool)
            under[labels[cv2.dilate(card, np.ones((2 * margin + 1,) * 2, np.uint8)) > 0]] = True
        if under[k] or PROPORTIONS[0] <= ratio <= PROPORTIONS[1]:
            return True
    return False
