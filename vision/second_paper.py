"""The looks for a second card's paper beside a card read: a bright region (:func:`apart`) or grey
paper, however dim (:func:`dim_second`).

Why: one card at a time must hold whatever light the second card is in. A second card brighter than the
table is a second bright region: the detector refuses it inside the window, and :func:`apart` finds one
reaching the window's edge beside a card read by its indices. One dimmer than the table (in shadow, under
the far side of a lamp) is no bright region at all, and its index may not read alone (a 10's rank is
two pieces), so it was missed beside a card read by its outline on felt and beside a card read by its
indices on pale wood; sweeps of two-card scenes found the reader reading one of two cards apart, one of
two touching, and the top card over a dim card showing most of its face (with the lower card as bright
as the top one, never: the two make one odd outline). Saturation does not depend on the light: a dim
card's paper is as grey as a lit one's, while felt, wood and tinted cloth are coloured. So the grey
pixels at any level but a dark one show every card, bright or dim, and a region of them apart from the
card read, wholly inside the window and shaped like a card or a band of one, is a second card.

What it cannot see: on a grey or pale table the table is grey too and reaches the window's edge, so a
dim card there is still the other looks' to find (:mod:`vision.face_down`, the candidate indices); nor a
card showing less than :data:`LEAST_SHOWN` of its area, or a triangle of it. What it leaves alone: a
neighbour reaching the window's edge, and a grey sheet or mat the card lies on. What it costs: a grey
object of a card's size and shape in the window (a white box, a sheet of paper) leaves the frame
unknown, a read lost, never a wrong one; and about 0.45 ms per card read (at the looks' half
working size).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import grey_percentile
from vision.regions import components
from vision.window import Bounds

#: Grey levels below this are no paper, however grey: ink, a shadow, a dark gap (the ink search's floor
#: for paper too, :data:`vision.by_index.MIN_PAPER`).
DARKEST_PAPER: Final = 80
#: A second card's paper shows by at least this share of the card's area (its convex hull), filling at
#: least :data:`RECT_FILL` of its least rectangle: a card apart, or a band of one showing from under the
#: card. Chips (a tenth of a card's area, round), a laptop's lit rim (thin) and a grey table's grain are
#: not.
LEAST_SHOWN: Final = 0.4
RECT_FILL: Final = 0.8
#: How far past the card's outline its own paper may show in the grey pixels (working pixels): blur.
OWN_RIM: Final = 3
#: The opening's square as a share of the working width (5 pixels at the looks' 240): specks of grey
#: table grain go, a card's paper stays.
OPEN_SHARE: Final = 7 / 320
#: The closing's square (working pixels): a dim card's pips and thin margins break its grey paper into
#: pieces, which it joins again.
CLOSE: Final = 5


def grey_paper(small: MatLike, inside: MatLike | None) -> MatLike:
    """The grey pixels of the working frame ``small`` (in the window ``inside``, if any) not darker than
    :data:`DARKEST_PAPER`: those whose chroma (the greatest channel less the least, blurred) is at most
    Otsu's level of the bright pixels' chroma, scaled by their light against the bright pixels' median
    light (the same saturation as the bright paper's); opened by :data:`OPEN_SHARE` of the width."""
    b, g, r = cv2.split(cv2.GaussianBlur(small, (5, 5), 0))  # numpy's max over channels cost 2 ms
    most = cv2.max(cv2.max(b, g), r)
    chroma = cv2.subtract(most, cv2.min(cv2.min(b, g), r))
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    if inside is not None:
        bright = cv2.bitwise_and(bright, inside)
    where = bright > 0
    if not where.any():
        return np.zeros_like(grey)
    level = cv2.threshold(chroma[where].reshape(1, -1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
    lit = max(grey_percentile(most, bright, 50), 1.0)
    found = (chroma.astype(np.float32) * lit <= level * most.astype(np.float32)) & (grey >= DARKEST_PAPER)
    side = max(3, round(OPEN_SHARE * small.shape[1]) | 1)
    opened = cv2.morphologyEx(found.astype(np.uint8) * 255, cv2.MORPH_OPEN, np.ones((side, side), np.uint8))
    return opened if inside is None else cv2.bitwise_and(opened, inside)


def second_grey(grey: MatLike, quad: NDArray[np.float32], rim: MatLike) -> bool:
    """Whether the grey pixels ``grey`` (in the window) hold, besides the card at ``quad`` (working
    pixels), a card's paper: a region wholly inside the window (off its ``rim``) whose convex hull covers
    at least :data:`LEAST_SHOWN` of the card's area and :data:`RECT_FILL` of its least rectangle, and not
    the card's centre (a grey sheet the card lies on)."""
    rest = grey.copy()
    corners = np.round(quad).astype(np.int32)
    cv2.fillConvexPoly(rest, corners, 0)
    cv2.polylines(rest, [corners.reshape(-1, 1, 2)], True, 0, 2 * OWN_RIM + 1)
    least = LEAST_SHOWN * cv2.contourArea(quad)
    closed = cv2.morphologyEx(rest, cv2.MORPH_CLOSE, np.ones((CLOSE, CLOSE), np.uint8))
    contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    centre = tuple(map(float, quad.mean(axis=0)))
    for contour in contours:
        hull = cv2.convexHull(contour)
        area = cv2.contourArea(hull)
        if area < least or np.any(rim[contour[:, 0, 1], contour[:, 0, 0]]):
            continue
        if cv2.pointPolygonTest(hull, centre, False) >= 0:
            continue  # it is under the card all round: a sheet or a mat the card lies on
        (_, _), (w, h), _ = cv2.minAreaRect(hull)
        if area >= RECT_FILL * w * h:
            return True
    return False


def dim_second(small: MatLike, quad: NDArray[np.float32], win: Bounds) -> bool:
    """Whether the window (``win``, in the working frame ``small``) holds a second card's grey paper,
    however dim, apart from the card at ``quad`` (:func:`grey_paper`, :func:`second_grey`)."""
    return second_grey(grey_paper(small, win.inside), quad, win.rim)


def apart(small: MatLike, quad: NDArray[np.float32], inside: NDArray[np.uint8] | None, least: float) -> bool:
    """Whether the window holds a bright region of a card's size (``least``: a share of the frame) apart
    from the card at ``quad`` (Otsu's bright mask, as the detector's): a second card that shows no index
    (a face-down back, a pile of them) reaching the window's edge beside a card read by its indices."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    if inside is not None:
        bright = cv2.bitwise_and(bright, inside)
    n, labels, stats, _ = components(bright)
    card = np.zeros_like(bright)
    cv2.fillConvexPoly(card, np.round(quad).astype(np.int32), 255)
    big = [k for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= least * bright.size]
    return any(not np.any(card[labels == k]) for k in big)
