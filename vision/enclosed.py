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
the window is required as ever (two objects refuse the window). A region is sized by what its outline
encloses (a back's white border is a thin ring), and one nested inside another region wholly inside
the window (the face inside a court card's frame line) is part of it and is dropped; the table's own
region reaches the window's edge and holds nothing (its outline is the window). The card must then lie
on the table along every side (:func:`on_table`); the reader reads it on both indices and holds it to
the search by indices' one-card checks (:func:`vision.by_index.only_card`). An index
or a frame line close to the card's border joins its edges to the border's and notches the region
there; such a region stands for its convex hull only when every side of the hull lies on the frame's
edges over :data:`HULL_SUPPORT` of its middle (a notch by an index is short; a hand or a second card
over the border hides the border's edge over a long stretch, and the region stays refused).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Enclosed:
    """The regions the edges enclose: the outer contours of the card-sized ones, the label of every
    pixel (0: an edge, or outside the window) and, per label, whether the region reaches the window's
    edge (the table, or whatever runs out of the window)."""

    outlines: list[NDArray[np.int32]]
    labels: NDArray[np.int32]
    table: NDArray[np.bool_]


def enclosed_regions(
    edges: NDArray[np.uint8], least_area: float, rim: MatLike, inside: MatLike | None = None,
) -> Enclosed:
    """The regions of at least ``least_area`` pixels that ``edges`` (the widened edge map of
    :func:`vision.rim.edge_map`) enclose, each outline grown back over the edge's widening; those nested
    inside another region wholly inside the window are dropped (only such a region can hold another:
    the table's own region reaches the window's ``rim`` and its outer contour is the window, so every
    card lying on the table would be nested in it). ``inside``: the scan window's mask, if any."""
    free = cv2.bitwise_not(edges)
    if inside is not None:
        free = cv2.bitwise_and(free, np.asarray(inside, np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=4)
    table = np.zeros(n, bool)
    table[labels[np.asarray(rim) > 0]] = True
    table[0] = False
    kernel = np.ones((3, 3), np.uint8)
    outlines: list[NDArray[np.int32]] = []
    holders: list[NDArray[np.int32]] = []
    for k in range(1, n):
        if stats[k, cv2.CC_STAT_WIDTH] * stats[k, cv2.CC_STAT_HEIGHT] < least_area:
            continue  # sized by what its outline encloses: a back's white border is a thin ring
        x, y, w, h = (int(v) for v in stats[k, :4])
        x0, y0 = max(x - 2, 0), max(y - 2, 0)
        roi = (labels[y0 : y + h + 2, x0 : x + w + 2] == k).astype(np.uint8) * 255
        grown = cv2.dilate(roi, kernel, iterations=1)
        contours, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE, offset=(x0, y0))
        found = [np.asarray(c, np.int32) for c in contours if cv2.contourArea(c) >= least_area]
        outlines.extend(found)
        holders.extend([] if table[k] else found)
    kept = [c for c in outlines if not any(_nested(c, o) for o in holders if o is not c)]
    return Enclosed(kept, np.asarray(labels, np.int32), table)


#: Just outside each side of a card found by its outline, at these distances (working pixels), this
#: share of the side must lie in a region reaching the window's edge: the card lies on the table, with
#: nothing against it. A back partly under the card (its lattice breaks it into pieces too small to
#: count as a region), a second card's sliver or border fail it.
TABLE_OFFSETS: Final = (4.0, 7.0)
TABLE_SHARE: Final = 0.5


def on_table(quad: NDArray[np.float32], regions: Enclosed) -> bool:
    """Whether ``quad`` (working pixels) lies on the table all round (:data:`TABLE_SHARE`)."""
    h, w = regions.labels.shape
    centre = quad.mean(axis=0)
    t = np.linspace(0.1, 0.9, 40, dtype=np.float32)[:, None]
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        d = b - a
        out = np.array([d[1], -d[0]], np.float32) / max(float(np.hypot(d[0], d[1])), 1e-6)
        out = out if float(np.dot((a + b) / 2 - centre, out)) >= 0 else -out
        hit = np.zeros(len(t), bool)
        for off in TABLE_OFFSETS:
            p = np.round(a + t * d + off * out).astype(np.int64)
            seen = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
            hit[seen] |= regions.table[regions.labels[p[seen, 1], p[seen, 0]]]
        if float(hit.mean()) < TABLE_SHARE:
            return False
    return True


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
