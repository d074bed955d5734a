"""A card's outline recovered from the straight runs of a bright region's contour, when that region is
the card joined to something else (a glare or vignette over one corner, a neighbouring card touching it).

Why: the bright region's own shape is then not a quadrilateral, but most of the card's four sides
are still on its contour as long straight runs, while a glare's rim and a vignette's are curves and
the window's rim is not the card's. The runs' lines are paired into the card's two pairs of opposite
sides, and a quadrilateral is accepted only when each of its sides is confirmed along a good share of
its length by the contour itself, its inside is the region's paper, it has a card's proportions and
it lies wholly inside the window. Where two such cards are found, the window holds two cards and the
caller refuses it; nothing here guesses a side that is not seen. The runs themselves are
:mod:`vision.runs`'s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.runs import Line, point_codes, runs

#: A straight run is at least this share of the working frame's width long (the short side of the
#: smallest card the detector accepts is about four times that).
MIN_RUN: Final = 0.04
#: Opposite sides of a card seen by a tilted camera differ in direction by at most this (degrees).
MAX_SKEW: Final = 20.0
#: Each side must be confirmed by the contour along this share of its length (the middle 80 %) ...
MIN_SIDE_SUPPORT: Final = 0.4
#: ... and the four sides together along this share.
MIN_SUPPORT: Final = 0.6
#: The quadrilateral's inside must be this share of the region's paper.
MIN_PAPER: Final = 0.97

#: :func:`side_supports` makes only the samples that can fall in the frame when more than this many
#: samples surely fall off it (about 60 us of sampling, more than working out which costs); below that
#: every sample is made.
CLIP_SAMPLES: Final = 4000


def meet(a: Line, b: Line) -> tuple[float, float] | None:
    cross = a.dx * b.dy - a.dy * b.dx
    if abs(cross) < 1e-6:
        return None
    t = ((b.x - a.x) * b.dy - (b.y - a.y) * b.dx) / cross
    return a.x + t * a.dx, a.y + t * a.dy


def turn(a: float, b: float) -> float:
    """The angle between two undirected directions, 0..90 degrees."""
    d = abs(a - b) % 180.0
    return min(d, 180.0 - d)


def side_support(q: NDArray[np.float32], seen: NDArray[np.uint8]) -> list[float]:
    """For each side of ``q``: the share of its middle 80 % that lies on the contour (``seen``)."""
    return side_supports([q], seen)[0]


def side_supports(
    quads: list[NDArray[np.float32]], seen: NDArray[np.uint8], measured: int = 4,
) -> list[list[float]]:
    """:func:`side_support` of each quadrilateral, all in one pass: the joined-card search measures a
    few dozen candidate outlines, where a pass each cost more in numpy's calls than in arithmetic.
    Every sample is the same element-wise arithmetic as one quadrilateral's alone. Only the first
    ``measured`` sides of each are measured (a side placed, not seen, needs none).

    When over :data:`CLIP_SAMPLES` samples surely fall off the frame, only those that can fall in it are
    made: two nearly parallel runs meet far off the frame, and such a candidate's sides, several frames
    long, once made a hundred thousand samples (3 ms of a frame's 15) that all missed. A side's samples
    off a box a pixel wider than the frame all round
    round to points off the frame, which count as misses, as they did; each side is still divided by its
    whole number of samples (:func:`_in_frame` picks the rest)."""
    if not quads:
        return []
    h, w = seen.shape
    corners = np.concatenate(quads).reshape(-1, 4, 2)  # their own precision (float32), as each alone
    # Each corner to the next, of the first ``measured`` sides of each, quadrilateral after quadrilateral.
    q = corners[:, :measured].reshape(-1, 2)
    step = (corners[:, [1, 2, 3, 0][:measured]] - corners[:, :measured]).reshape(-1, 2)
    ns = np.maximum(np.hypot(step[:, 0], step[:, 1]).astype(np.int64), 2)
    total = int(ns.sum())
    # A side's middle 80 % holds at most 1.25 samples per pixel of the frame's diagonal in the frame.
    most = 1.25 * math.hypot(w, h) + 4
    clipped = total > CLIP_SAMPLES and float((ns - most).clip(0).sum()) > CLIP_SAMPLES
    if clipped:
        k0, count = _in_frame(q, step, ns, (w, h))
        first = np.cumsum(count) - count  # each side's first sample made
        k = np.arange(int(count.sum())) - np.repeat(first - k0, count)
        t = (0.1 + 0.8 * k / np.repeat(ns - 1, count)).astype(np.float32)[:, None]
    else:
        count, first = ns, np.cumsum(ns) - ns
        t = np.concatenate([_places(n) for n in ns.tolist()])[:, None]
    s = np.rint(np.repeat(q, count, axis=0) + t * np.repeat(step, count, axis=0)).astype(np.int32)
    x, y = s[:, 0], s[:, 1]
    # In the frame (0 <= x < w, 0 <= y < h): a negative value as unsigned exceeds any size (two tests).
    ok = (x.view(np.uint32) < w) & (y.view(np.uint32) < h)
    # A sample off the frame looks at the first pixel and counts as a miss (whole arrays, no masked copies);
    # the hits are counted as integers (exact, as their float sums were).
    hits = np.logical_and(seen.ravel()[np.where(ok, y * w + x, 0)], ok)
    if clipped:  # a side with no sample made sums to nothing (reduceat gives an empty group an element)
        sums = np.where(count > 0, np.add.reduceat(np.append(hits, False), first), 0)
    else:
        sums = np.add.reduceat(hits, first)
    shares = (sums / ns).tolist()
    return [shares[i : i + measured] for i in range(0, len(shares), measured)]


@lru_cache(maxsize=2048)
def _places(n: int) -> NDArray[np.float32]:
    """Where a side of ``n`` samples is sampled along its middle 80 % (:func:`side_supports`: the same
    float64 arithmetic, then float32), made once for every side of ``n`` samples: a side's places depend on
    its number of samples alone, and making them for every sample of a pass cost a fifth of it."""
    places = (0.1 + 0.8 * np.arange(n) / (n - 1)).astype(np.float32)
    places.flags.writeable = False
    return places


def _in_frame(
    q: NDArray[np.float32], step: NDArray[np.float32], ns: NDArray[np.int64], size: tuple[int, int],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For each side (from corner ``q[i]`` along ``step[i]``, sampled ``ns[i]`` times over its middle
    80 %): its first sample and number of samples whose points lie in the box from (-1, -1) to (w, h),
    a sample more each way (the points are computed in float32; this bound in float64)."""
    w, h = size
    lo = np.full(len(q), 0.1)
    hi = np.full(len(q), 0.9)
    with np.errstate(divide="ignore", invalid="ignore"):
        for axis, top in ((0, float(w)), (1, float(h))):
            p, d = q[:, axis].astype(np.float64), step[:, axis].astype(np.float64)
            a, b = (-1.0 - p) / d, (top - p) / d
            flat = d == 0
            off = (p < -1.0) | (p > top)  # a side along this axis, off the box: no sample in it
            lo = np.where(flat, np.where(off, np.inf, lo), np.maximum(lo, np.minimum(a, b)))
            hi = np.where(flat, hi, np.minimum(hi, np.maximum(a, b)))
    span = (ns - 1) / 0.8
    start = np.clip(np.floor((lo - 0.1) * span) - 1, 0, ns)  # inf (never in the frame) clips to ns
    stop = np.clip(np.ceil((hi - 0.1) * span) + 1, -1, ns - 1)
    first = start.astype(np.int64)
    return first, np.maximum(stop.astype(np.int64) - first + 1, 0)


def fitted_corners(contour: NDArray[np.int32], quad: NDArray[np.int32]) -> NDArray[np.float32]:
    """The card's true corners: a line fitted to the middle of each side, intersected with the next.

    The corners of a card are rounded, so the polygon's vertices sit a few pixels inside the corner of
    the rectangle the printing is laid out on; fitted sides do not, and are sub-pixel accurate.
    """
    # Each corner's nearest contour point (the first of equals). The corners are the contour's polygon's,
    # so each is a contour point, its nearest at distance 0: its first equal point, found by comparing each
    # point's x, y pair as one int64 (:func:`vision.runs.point_codes`: a tenth of the squared distances'
    # cost). A corner not on the contour takes the squared distances, summed as two columns (the same
    # integers as a sum over the last axis of two, which numpy reduces slowly).
    same = point_codes(contour) == point_codes(quad)[:, None]  # 4 x N
    first = same.argmax(axis=1)
    if same[np.arange(4), first].all():
        at = first.tolist()
    else:
        d = contour[None, :, :] - quad[:, None, :]
        at = [int(i) for i in np.argmin(d[:, :, 0] * d[:, :, 0] + d[:, :, 1] * d[:, :, 1], axis=1)]
    n = len(contour)
    lines = []
    for k in range(4):
        a, b = at[k], at[(k + 1) % 4]
        m = (b - a) % n + 1  # the contour from vertex a on to b, as a slice where it does not wrap
        seg = contour[a : a + m] if a + m <= n else np.concatenate([contour[a:], contour[: a + m - n]])
        trim = len(seg) // 5
        seg = seg[trim : len(seg) - trim] if len(seg) - 2 * trim >= 2 else seg
        if len(seg) < 2:
            return quad.astype(np.float32)
        vx, vy, px, py = cv2.fitLine(seg.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel().tolist()
        lines.append((vx, vy, px, py))
    out = []
    for k in range(4):
        (ux, uy, ax, ay), (vx, vy, bx, by) = lines[k - 1], lines[k]
        cross = ux * (-vy) - uy * (-vx)
        if abs(cross) < 1e-6:
            return quad.astype(np.float32)
        t = ((bx - ax) * (-vy) - (by - ay) * (-vx)) / cross
        out.append((ax + t * ux, ay + t * uy))
    return np.array(out, np.float32)


def near_outline(pts: NDArray[np.int32], shape: tuple[int, int]) -> NDArray[np.uint8]:
    """The pixels within two of the contour points ``pts`` (N x 2) in a frame of ``shape`` (h, w): where
    a line that follows the contour runs (a thresholded edge wanders by a pixel or so)."""
    traced = np.zeros(shape, np.uint8)
    if len(pts) == 0:
        return traced
    traced[pts[:, 1], pts[:, 0]] = 255
    # Widened only over the points' box and two pixels round it, where all of it lies, when that is under
    # half the frame: the same pixels as widening the whole frame (dilation ignores what lies past an
    # image's edge), for a fraction of the work.
    h, w = shape
    (lx, ly), (hx, hy) = pts.min(axis=0).tolist(), pts.max(axis=0).tolist()  # two reductions, not four
    x0, y0 = max(int(lx) - 2, 0), max(int(ly) - 2, 0)
    x1, y1 = min(int(hx) + 3, w), min(int(hy) + 3, h)
    if 2 * (x1 - x0) * (y1 - y0) > h * w:
        return np.asarray(cv2.dilate(traced, np.ones((5, 5), np.uint8)), np.uint8)
    traced[y0:y1, x0:x1] = cv2.dilate(traced[y0:y1, x0:x1], np.ones((5, 5), np.uint8))
    return traced


def traced_sides(q: NDArray[np.float32], contour: NDArray[np.int32], shape: tuple[int, int]) -> bool:
    """Whether every side of ``q`` (fitted to the region ``contour``, N x 2, in a frame of ``shape``
    h, w) runs along that contour over :data:`MIN_SIDE_SUPPORT` of its middle 80 %: a side fitted
    across a region whose polygon's corner fell on a patch of table joined to the card (not on the
    card's corner) cuts through the face and leaves the contour, and would warp a shrunk, cut face."""
    return min(side_support(q, near_outline(contour, shape))) >= MIN_SIDE_SUPPORT


@dataclass(frozen=True)
class Region:
    """A bright region at the working size: its contour's points (N x 2), which of them lie on the
    window's rim, the region filled, and its contour's straight runs off the rim (:func:`runs`).
    Built once per region: the card's search (:func:`fit_quads`) and the look for a card over it
    (:mod:`vision.covered`) both need them."""

    pts: NDArray[np.int32]
    on_rim: NDArray[np.bool_]
    mask: NDArray[np.uint8]
    lines: list[Line]

    @classmethod
    def of(cls, contour: NDArray[np.int32], rim: NDArray[np.uint8]) -> Region:
        pts = contour.reshape(-1, 2)
        h, w = rim.shape
        on_rim = rim[pts[:, 1], pts[:, 0]] > 0
        mask = np.zeros((h, w), np.uint8)
        cv2.drawContours(mask, [pts.reshape(-1, 1, 2)], -1, 255, -1)
        return cls(pts, on_rim, mask, runs(pts, on_rim, mask, MIN_RUN * w))


#: A quadrilateral whose sides the contour supports by this much less than the least is dropped before
#: the caller's checks; the exact supports of the caller's ordering of its corners decide the rest.
_SLACK: Final = 0.02


def fit_quads(
    region: Region, accept: Callable[[NDArray[np.float32]], NDArray[np.float32] | None],
) -> list[NDArray[np.float32]]:
    """The card outlines (corners, float) that the bright ``region`` holds: four of its straight runs
    off the window's rim meeting as a convex quadrilateral that ``accept`` (the caller's proportions
    and within-the-window checks) orders and keeps, confirmed by the contour along its sides and filled
    by the region. Outlines that overlap the best one are the same card and are dropped; more than one
    left means more than one card. The contour's support is measured first, for every quadrilateral in
    one pass, and only those it nearly confirms go to ``accept``: most of the few dozen quadrilaterals
    are pairs of runs the contour does not follow, and the caller's checks cost more per outline."""
    lines = region.lines
    if len(lines) < 4:
        return []
    h, w = region.mask.shape
    seen = near_outline(region.pts[~region.on_rim], (h, w))
    gap = 4 * MIN_RUN * w
    pairs = [
        (a, b) for a, b in itertools.combinations(lines, 2)
        if turn(a.angle, b.angle) <= MAX_SKEW and a.faces(b, gap) and b.faces(a, gap)
    ]
    convex: list[NDArray[np.float32]] = []
    for (a, b), (c, d) in itertools.combinations(pairs, 2):
        if len({id(a), id(b), id(c), id(d)}) < 4:
            continue
        if turn((a.angle + b.angle) / 2, (c.angle + d.angle) / 2) < 90 - 2 * MAX_SKEW:
            continue
        corners = [meet(a, c), meet(c, b), meet(b, d), meet(d, a)]
        if any(p is None for p in corners):
            continue
        q = np.array(corners, np.float32)
        if cv2.isContourConvex(q.reshape(-1, 1, 2)):
            convex.append(q)
    candidates = [
        ordered for q, sides in zip(convex, side_supports(convex, seen), strict=True)
        if min(sides) >= MIN_SIDE_SUPPORT - _SLACK and sum(sides) / 4 >= MIN_SUPPORT - _SLACK
        and (ordered := accept(q)) is not None
    ]
    found: list[tuple[float, NDArray[np.float32]]] = []
    for ordered, sides in zip(candidates, side_supports(candidates, seen), strict=True):
        if min(sides) < MIN_SIDE_SUPPORT or sum(sides) / 4 < MIN_SUPPORT:
            continue
        if not _paper(np.round(ordered).astype(np.int32), region.mask):
            continue
        found.append((sum(sides), ordered))
    found.sort(key=lambda f: -f[0])
    cards: list[NDArray[np.float32]] = []
    for _, q in found:
        if not any(overlap(q, c) > 0.5 for c in cards):
            cards.append(q)
    return cards


def _paper(corners: NDArray[np.int32], region: NDArray[np.uint8]) -> bool:
    """Whether the convex polygon ``corners`` is non-empty and :data:`MIN_PAPER` of it is ``region``'s,
    counted within the polygon's bounding box only (a filled polygon never leaves it): a full-frame
    mask per candidate outline cost more than the count."""
    h, w = region.shape
    x0, y0 = np.maximum(corners.min(axis=0), 0)
    x1, y1 = np.minimum(corners.max(axis=0) + 1, (w, h))
    if x1 <= x0 or y1 <= y0:
        return False
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(inside, corners - np.array([x0, y0], np.int32), 255)
    area = cv2.countNonZero(inside)
    return area > 0 and cv2.countNonZero(cv2.bitwise_and(inside, region[y0:y1, x0:x1])) >= MIN_PAPER * area


def overlap(a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
    """The shared area of two convex quadrilaterals over the smaller one's."""
    shared, _ = cv2.intersectConvexConvex(a, b)
    return float(shared) / max(min(cv2.contourArea(a), cv2.contourArea(b)), 1e-6)
