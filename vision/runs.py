"""The straight runs of a region's contour, each fitted by a line: of one contour, or of several at once.

Why a module of its own: the detector's joined-card search (:mod:`vision.sides`) fits the runs of one
bright region at a time, while the look for a second object's outline (:mod:`vision.second_outline`) fits
those of every region its edges part that has room for an object, often five to ten per look on a cluttered
frame (GuilleX7's q5-AC and q7-AS, its slowest frames). A contour's runs cost some twenty small numpy calls
(about 110 us, more in the calls than in their arithmetic), so :func:`runs_each` makes them for all of a
look's contours in one pass: 60 to 70 us a contour for five. Each contour's runs are exactly what it gives
alone: its points keep their own order in the joined arrays, every integer is the same, and each line's
sums run over the same points in the same order (:func:`numpy.bincount` adds each bin's weights in turn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

#: The contour may leave a straight run by this many pixels (the noise of a thresholded edge).
RUN_TOLERANCE: Final = 1.5
#: The longest runs kept (the card's four sides are among them).
MAX_LINES: Final = 10
#: A contour's index in the joined codes, above its points' own codes (y * 2 ** 32 + x, under 2 ** 48).
_OWNER_SHIFT: Final = 48


def point_codes(pts: NDArray[Any]) -> NDArray[np.int64]:
    """Each of the N x 2 (or N x 1 x 2) integer points as one int64, its x and y int32 side by side
    (``y * 2 ** 32 + x`` for points in a frame): equal points, equal codes, with no arithmetic (as
    ``x * 65536 + y`` gave, for a tenth of a search's cost). Found by equal codes: a contour's vertices
    among its points (:func:`unoriented_each`), a polygon's corners (:func:`vision.sides.fitted_corners`)."""
    return np.ascontiguousarray(pts, np.int32).view(np.int64).ravel()


@dataclass(frozen=True)
class Line:
    """A straight run: a point on it, its unit direction, its length, and the unit normal pointing
    into the region (the paper's side)."""

    x: float
    y: float
    dx: float
    dy: float
    length: float
    nx: float
    ny: float
    #: Its undirected direction, 0..180 degrees.
    angle: float

    def faces(self, other: Line, gap: float) -> bool:
        """``other`` lies at least ``gap`` pixels away on this line's paper side: the opposite side."""
        return (other.x - self.x) * self.nx + (other.y - self.y) * self.ny >= gap


Contour = tuple[NDArray[np.int32], NDArray[np.bool_], NDArray[np.uint8]]


def runs(
    pts: NDArray[np.int32], on_rim: NDArray[np.bool_], region: NDArray[np.uint8], min_run: float,
    most: int = MAX_LINES,
) -> list[Line]:
    """The contour's straight runs off the window's rim, each fitted by a line, longest first (at most
    ``most``). ``pts``: the contour (N x 2); ``on_rim``: which points lie on the window's rim;
    ``region``: the region filled (which side of a run is its paper)."""
    return runs_each([(pts, on_rim, region)], min_run, most)[0]


def runs_each(contours: list[Contour], min_run: float, most: int = MAX_LINES) -> list[list[Line]]:
    """:func:`runs` of each contour (its points, which lie on the rim, its region filled), in one pass."""
    found = unoriented_each([(p, r) for p, r, _ in contours], min_run, most)
    return [oriented(lines, region) for lines, (_, _, region) in zip(found, contours, strict=True)]


def unoriented_each(contours: list[tuple[NDArray[np.int32], NDArray[np.bool_]]], min_run: float,
                    most: int = MAX_LINES) -> list[list[Line]]:
    """:func:`runs_each` before each run's paper side is known: every run's normal is its direction turned
    a quarter clockwise (-dy, dx) until :func:`oriented` looks at its region. Why apart: the look for a
    second object's outline (:mod:`vision.second_outline`) pairs the runs by their directions and places
    alone, and fills a region (about 40 us) only when its runs make a rectangle, for most make none."""
    if not contours:
        return []
    polys = [cv2.approxPolyDP(p.reshape(-1, 1, 2), RUN_TOLERANCE, True).reshape(-1, 2)
             for p, _ in contours]
    if len(contours) == 1:
        return [_unoriented_one(*contours[0], np.asarray(polys[0], np.int32), min_run, most)]
    sizes = np.array([len(p) for p, _ in contours], np.int64)
    count = np.array([len(v) for v in polys], np.int64)
    pts = np.concatenate([p for p, _ in contours])
    poly = np.concatenate(polys)
    owner = np.repeat(np.arange(len(contours), dtype=np.int64), count)  # each vertex's contour
    offsets = np.cumsum(sizes) - sizes
    # Each point's code (:func:`point_codes`, under 2 ** 48), its contour's index above it.
    codes = (np.repeat(np.arange(len(contours), dtype=np.int64), sizes) << _OWNER_SHIFT) + point_codes(pts)
    order = np.argsort(codes, kind="stable")  # each vertex's first place on its contour
    found = (owner << _OWNER_SHIFT) + point_codes(poly)
    start = np.sort(order[np.searchsorted(codes[order], found)]) - offsets[owner]  # contour by contour
    n, base = sizes[owner], offsets[owner]
    first = (np.cumsum(count) - count)[owner]  # the contour's first vertex
    after = np.arange(1, len(start) + 1)
    end = np.where(after == first + count[owner], start[first] + n, start[np.minimum(after, len(start) - 1)])
    step = (pts[base + end % n] - pts[base + start % n]).astype(np.float64)
    lengths = np.hypot(step[:, 0], step[:, 1])
    long = lengths >= min_run
    on_rim = np.concatenate([r for _, r in contours])
    if on_rim.any():  # with no point on the rim, every run is off it
        before = np.zeros(len(pts) + 1, np.int64)  # points on the rim before each, contour after contour
        np.cumsum(on_rim, out=before[1:])
        past = end + 1 - n  # a run past its contour's last point goes on from its first
        rim = before[base + np.minimum(end + 1, n)] - before[base + start] + np.where(
            past > 0, before[base + np.maximum(past, 0)] - before[base], 0)
        long &= rim / (end - start + 1) <= 0.2
    keep = np.flatnonzero(long)
    keep = keep[np.argsort(-lengths[keep], kind="stable")]
    keep = keep[np.argsort(owner[keep], kind="stable")]  # contour by contour, the longest first
    rank = np.arange(len(keep)) - np.searchsorted(owner[keep], owner[keep])
    keep = keep[rank < most]  # only the longest are fitted
    fitted = _fit_lines(pts, start[keep], end[keep], n[keep], base[keep])
    out: list[list[Line]] = [[] for _ in contours]
    for k, j, (x, y, dx, dy) in zip(keep.tolist(), owner[keep].tolist(), fitted, strict=True):
        angle = math.degrees(math.atan2(dy, dx)) % 180.0
        out[j].append(Line(x, y, dx, dy, float(lengths[k]), -dy, dx, angle))
    return out


def _unoriented_one(
    pts: NDArray[np.int32], on_rim: NDArray[np.bool_], poly: NDArray[np.int32], min_run: float, most: int,
) -> list[Line]:
    """:func:`unoriented_each` of one contour (its points, which lie on the rim, and its polygon), the same
    arithmetic with its owner, offset and base all 0 left out. Why: most passes have one contour (the
    joined-card search's region, most second-outline looks), and the joined arrays' bookkeeping was a
    quarter of such a pass (180 to 140 us on the composed set's slowest frames; some 20 us less with the
    points' codes as int64 views, no rim count off the rim, contiguous rows fitted, 2026-12-07)."""
    n = len(pts)
    codes = point_codes(pts)
    order = np.argsort(codes, kind="stable")  # each vertex's first place on the contour
    start = np.sort(order[np.searchsorted(codes[order], point_codes(poly))])
    end = np.empty_like(start)  # each run ends at the next vertex, the last at the first past the end
    end[:-1] = start[1:]
    end[-1] = start[0] + n
    step = (pts[end % n] - pts[start]).astype(np.float64)
    lengths = np.hypot(step[:, 0], step[:, 1])
    long = lengths >= min_run
    if on_rim.any():
        before = np.zeros(n + 1, np.int64)  # points on the rim before each
        np.cumsum(on_rim, out=before[1:])
        # Only the last run goes past the contour's last point (on from its first, to its first vertex).
        after = end + 1
        after[-1] = n
        rim = before[after] - before[start]
        rim[-1] += before[start[0] + 1]
        long &= rim / (end - start + 1) <= 0.2
    keep = np.flatnonzero(long)  # with no point on the rim, every run is off it
    keep = keep[np.argsort(-lengths[keep], kind="stable")][:most]  # the longest first
    out = []
    for length, (x, y, dx, dy) in zip(lengths[keep].tolist(), _fit_lines(pts, start[keep], end[keep], n, 0),
                                      strict=True):
        angle = math.degrees(math.atan2(dy, dx)) % 180.0
        out.append(Line(x, y, dx, dy, length, -dy, dx, angle))
    return out


def oriented(lines: list[Line], region: NDArray[np.uint8]) -> list[Line]:
    """The runs of :func:`unoriented_each` with each normal pointing into ``region`` (the region filled):
    a point three pixels along the normal as given lies in it, else the normal is turned round."""
    h, w = region.shape
    out = []
    for line in lines:
        px, py = int(round(line.x - 3 * line.dy)), int(round(line.y + 3 * line.dx))
        inward = 0 <= px < w and 0 <= py < h and region[py, px] > 0
        # Made directly: dataclasses.replace looks up the fields each time, four times the cost.
        out.append(line if inward else Line(line.x, line.y, line.dx, line.dy, line.length, line.dy, -line.dx,
                                            line.angle))
    return out


def _fit_lines(
    pts: NDArray[np.int32], start: NDArray[np.int64], end: NDArray[np.int64], n: NDArray[np.int64] | int,
    base: NDArray[np.int64] | int,
) -> list[tuple[float, float, float, float]]:
    """The least-squares line (centroid x, y and unit direction dx, dy: :func:`cv2.fitLine`'s
    ``DIST_L2``) through the middle 80 % of each run ``start[k]..end[k]`` of its contour (``n[k]`` points
    from ``base[k]`` in ``pts``; ints where every run is of one contour), all runs in one pass: the
    principal axis of each run's points."""
    cut = (end - start + 1) // 10
    lo = start + cut
    sizes = end + 1 - cut - lo
    count = len(sizes)
    run = np.repeat(np.arange(count), sizes)
    at = np.arange(int(sizes.sum())) + np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)
    if isinstance(n, int) and isinstance(base, int):
        at = at % n if base == 0 else base + at % n
    else:
        at = np.asarray(base)[run] + at % np.asarray(n)[run]
    # x and y as two contiguous rows (one gather each, no strided columns for bincount to copy); every
    # element and every bin's sum the same as of the N x 2 array's columns.
    x, y = pts[at, 0].astype(np.float64), pts[at, 1].astype(np.float64)
    mx, my = np.bincount(run, x, count) / sizes, np.bincount(run, y, count) / sizes
    dx, dy = x - mx[run], y - my[run]
    sxx, syy, sxy = (np.bincount(run, v, count) for v in (dx**2, dy**2, dx * dy))
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    return [  # as plain floats first: iterating over numpy's rows cost more than the arithmetic
        (cx, cy, math.cos(t), math.sin(t))
        for cx, cy, t in zip(mx.tolist(), my.tolist(), theta.tolist(), strict=True)
    ]
