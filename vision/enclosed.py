"""The regions the frame's strong edges enclose: a card found by its outline alone, whatever its paper's
brightness against what it lies on.

Why: the detector's looks all start from the paper's brightness (one level, the mask cut along the
edges, higher levels). A card lying on something as pale as its own paper in shadow (a grey laptop, a
keyboard, a light table under a dim lamp) falls on both sides of every level: part of the card goes
dark with the table, part of the table stays bright with the card, and no level gives the card's
outline. Its outline is still a step edge all round (Canny finds it under any exposure), so the pixels
that no strong edge crosses fall into regions bounded by edges, and the card's paper is one of them:
the ring of paper between its border and its ink or art, whose outer contour is the card's outline.

The detector looks here last, and only where its first look saw bright regions at the window's edge
alone (a card joined to something reaching the edge, the case the search by indices is also allowed
for): every region found is then classified by the detector's own checks, and one card wholly inside
the window is required as ever (two objects refuse the window). A region nested inside another (the
face inside a court card's frame line, a pip's interior) is part of that one and is dropped. An index
or a frame line close to the card's border joins its edges to the border's and notches the region
there; such a region stands for its convex hull only when every side of the hull lies on the frame's
edges over :data:`HULL_SUPPORT` of its middle (a notch by an index is short; a hand or a second card
over the border hides the border's edge over a long stretch, and the region stays refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.mend import Region
from vision.sides import side_support

R = TypeVar("R", bound=Region)

#: Each side of a region's hull must lie on the frame's edges over this share of its middle 80 %.
HULL_SUPPORT: Final = 0.85


def enclosed_regions(
    edges: NDArray[np.uint8], least_area: float, inside: MatLike | None = None,
) -> list[NDArray[np.int32]]:
    """The outer contours of the regions of at least ``least_area`` pixels that ``edges`` (the widened
    edge map of :func:`vision.rim.edge_map`) enclose, each grown back over the edge's widening; those
    nested inside another are dropped. ``inside``: the scan window's mask, if any."""
    free = cv2.bitwise_not(edges)
    if inside is not None:
        free = cv2.bitwise_and(free, np.asarray(inside, np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=4)
    kernel = np.ones((3, 3), np.uint8)
    outlines: list[NDArray[np.int32]] = []
    for k in range(1, n):
        if stats[k, cv2.CC_STAT_AREA] < least_area:
            continue
        x, y, w, h = (int(v) for v in stats[k, :4])
        x0, y0 = max(x - 2, 0), max(y - 2, 0)
        roi = (labels[y0 : y + h + 2, x0 : x + w + 2] == k).astype(np.uint8) * 255
        grown = cv2.dilate(roi, kernel, iterations=1)
        contours, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE, offset=(x0, y0))
        outlines.extend(np.asarray(c, np.int32) for c in contours if cv2.contourArea(c) >= least_area)
    return [c for c in outlines if not any(_nested(c, o) for o in outlines if o is not c)]


def _nested(inner: NDArray[np.int32], outer: NDArray[np.int32]) -> bool:
    """``inner`` lies inside ``outer``: smaller, and its first point and centre within it."""
    if cv2.contourArea(inner) >= cv2.contourArea(outer):
        return False
    pts = inner.reshape(-1, 2)
    centre = tuple(float(v) for v in pts.mean(axis=0))
    first = (float(pts[0, 0]), float(pts[0, 1]))
    return cv2.pointPolygonTest(outer, centre, False) >= 0 and cv2.pointPolygonTest(outer, first, False) >= 0


def region_or_hull(
    contour: NDArray[np.int32], classify: Callable[[NDArray[np.int32]], R], edges: NDArray[np.uint8],
) -> R:
    """The detector's classification (``classify``) of an enclosed region, or of its convex hull when
    the region is refused inside the window and the hull is a card whose sides all lie on ``edges``."""
    region = classify(contour)
    if region.kind != "odd":
        return region
    x, y, w, h = cv2.boundingRect(contour)
    canvas = np.zeros((h + 2, w + 2), np.uint8)  # the hull drawn, for a dense outline to fit sides to
    cv2.fillConvexPoly(canvas, cv2.convexHull(contour.reshape(-1, 2) - (x - 1, y - 1)), 255)
    outline, _ = cv2.findContours(canvas, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE, offset=(x - 1, y - 1))
    hull = classify(np.asarray(outline[0], np.int32))
    near = np.asarray(cv2.dilate(edges, np.ones((3, 3), np.uint8)), np.uint8)
    if hull.kind == "card" and hull.quad is not None and min(side_support(hull.quad, near)) >= HULL_SUPPORT:
        return hull
    return region
