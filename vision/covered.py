"""Whether a card recovered from its sides lies under another card: the card on top is the one dealt.

Why: :mod:`vision.sides` recovers a card whose bright region is joined to something else, a glare, a
vignette or a neighbouring card, from the straight runs of that region's outline. When the neighbour is
a second card lying over this one and cut by the window's edge, the region is both cards, the card
under it still shows most of its four sides, and the card over it shows no whole outline (the window
cuts it): the card underneath was read, and the card dealt last, on top, was not. Both cards' papers
are equally bright, so the region's shape cannot tell which is on top; the frame can. Where the two
cards' outlines meet, the card on top keeps its edge across the other's paper (its thickness and its
shadow draw a faint straight line), and the card underneath has none there.

So at each place where a straight run of the region that is not one of the card's sides meets one of
them (a T of the two outlines), the two ways on are compared: the run's line carried on into the card's
face, and the card's side carried on where the region's outline leaves it. When the run carries on as
an edge (:data:`MIN_EDGE`, and :data:`OVER` times the side's edge there) and the side does not, the
other card lies over this one and the frame is refused. The run must itself be as sharp an edge as the
card's own sides (:data:`SHARP`): a glare's soft rim that happens to point at a court card's frame line
is no card; and the side is followed only up to its corner. An edge is measured as the median, along
the line, of the grey level's gradient across it, where the gradient points across the line
(:data:`ACROSS`) and, for the two ways on, where both sides of the line are paper (:data:`PAPER`):
printed pips and letters give strong gradients at a few points, and a run carried on along a pip's
border has ink on one side (composed seed 7's 5H, a neighbour's side carried on along a heart's top,
was refused before the paper rule); a card's edge over paper is a steady, faint line all along.

What it cannot see: a card on top whose edge leaves no line on the paper under it (a flat, shadowless
light) is not caught, and the card underneath is read as before. What it costs: one gradient of the
working frame and a few hundred samples, only for cards recovered from their sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import grey_percentile
from vision.runs import Line
from vision.sides import Region, near_outline

#: Why a card recovered from its sides is refused when another card's edge crosses it (:mod:`vision.detect`).
COVERED: Final = "another card lies over this one (one card at a time: the card on top was dealt last)"
#: The way on is measured over this share of the card's short side, from the meeting point.
REACH: Final = 0.25
#: A run carried on into the face is another card's edge when its gradient (grey levels per pixel on
#: the blurred working frame) is at least this ...
MIN_EDGE: Final = 2.0
#: ... and this many times the card's own side's gradient where that side goes on past the meeting.
OVER: Final = 3.0
#: The run's own visible part is at least this share as sharp as the card's sharpest side.
SHARP: Final = 0.5
#: A sample counts when the gradient's part across the line is at least this share of the gradient.
ACROSS: Final = 0.85
#: An edge between two papers has paper this many pixels off it on both sides (past the blur's reach) ...
BESIDE: Final = 4.0
#: ... at least this share as bright as the card's paper (the grey level of three quarters of its face).
PAPER: Final = 0.8
#: Offsets across the line sampled at each step (pixels): a fitted line is within a pixel or so.
_OFFSETS: Final = np.array([-1.5, -0.75, 0.0, 0.75, 1.5], np.float32)
#: A run and one of the card's sides are the same line within these (sine of the angle, pixels).
_SAME_TURN: Final = 0.1
_SAME_GAP: Final = 4.0
#: A run meets a side only when it crosses it at least this steeply (sine of the angle) ...
_STEEP: Final = 0.3
#: ... away from the side's corners by this share of its length ...
_CORNER: Final = 0.1
#: ... and ends there: its nearer end within this share of its length, plus a few pixels.
_END: Final = 0.15


@dataclass(frozen=True)
class Grey:
    """The blurred grey working frame (8-bit) and its gradient (Sobel, in eighths of a grey level per pixel).

    Why 16-bit integers: Sobel's 3 x 3 kernel on 8-bit levels gives integers within +-1020, which float32
    holds exactly in any order of summing, so OpenCV's integer Sobel of the 8-bit frame is the float Sobel of
    its float copy, value for value; each sample is turned into grey levels per pixel (:meth:`at`, float32,
    times 1/8, exact) only where :func:`edge_along` looks. The float copy and the two float gradients of the
    whole working frame cost 0.15 ms a card recovered from its sides; the integer gradients a fraction."""

    level: NDArray[np.uint8]
    gx: NDArray[np.int16]
    gy: NDArray[np.int16]

    @classmethod
    def of(cls, grey: MatLike) -> Grey:
        level = np.asarray(grey, np.uint8)
        return cls(level, np.asarray(cv2.Sobel(level, cv2.CV_16S, 1, 0, ksize=3), np.int16),
                   np.asarray(cv2.Sobel(level, cv2.CV_16S, 0, 1, ksize=3), np.int16))

    def at(self, y: NDArray[np.intp], x: NDArray[np.intp]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """The gradient at the pixels (``y``, ``x``), grey levels per pixel (float32: the float Sobel's)."""
        eighth = np.float32(1 / 8)  # Sobel's 3 x 3 kernel weighs a step of one grey level by 8
        return self.gx[y, x].astype(np.float32) * eighth, self.gy[y, x].astype(np.float32) * eighth


_Pixels = tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_]]


def _pixels(at: NDArray[np.float64], shape: tuple[int, ...]) -> _Pixels:
    """The nearest pixels' columns and rows of the points ``at`` (... x 2), and which are in the frame."""
    x, y = np.rint(at[..., 0]).astype(np.intp), np.rint(at[..., 1]).astype(np.intp)
    ok = (x >= 0) & (x < shape[1]) & (y >= 0) & (y < shape[0])
    return np.where(ok, x, 0), np.where(ok, y, 0), ok


def edge_along(
    grey: Grey, start: NDArray[np.float64], way: NDArray[np.float64], reach: float, paper: float = 0.0,
) -> float:
    """The edge along the line from ``start`` in the unit direction ``way``, from 3 pixels to ``reach``:
    the median over the steps of the largest gradient across the line, near it, that points across.
    With ``paper`` (a grey level), a step counts only where both sides of the line, :data:`BESIDE`
    pixels off it, are at least that bright: an edge between two papers, not an ink's."""
    steps = np.arange(3.0, reach, 1.0)
    if steps.size == 0:
        return 0.0
    normal = np.array([-way[1], way[0]])
    line = start + steps[:, None] * way
    x, y, ok = _pixels(line[:, None, :] + _OFFSETS[None, :, None] * normal, grey.level.shape)
    sx, sy = grey.at(y, x)
    across = np.abs(sx * normal[0] + sy * normal[1])
    counts = ok & (across >= ACROSS * np.hypot(sx, sy)) & (across > 0)
    best = np.where(counts, across, 0.0).max(axis=1)
    if paper > 0:
        for side in (BESIDE, -BESIDE):
            bx, by, bok = _pixels(line + side * normal, grey.level.shape)
            best = np.where(bok & (grey.level[by, bx] >= paper), best, 0.0)
    return _median(best)


def _median(values: NDArray[np.float64]) -> float:
    """``numpy.median`` of a few dozen floats (none NaN), exactly: the middle one of them sorted, or the mean
    of the middle two (their sum halved, as numpy's mean of two takes it). Its general machinery cost ten
    times the sort on :func:`edge_along`'s steps, three to seven times a card recovered from its sides."""
    ranked = np.sort(values)
    middle = len(ranked) // 2
    if len(ranked) % 2:
        return float(ranked[middle])
    return (float(ranked[middle - 1]) + float(ranked[middle])) / 2


_Meeting = tuple[NDArray[np.float64], NDArray[np.float64], int]


def _meetings(line: Line, quad: NDArray[np.float64]) -> list[_Meeting]:
    """Where the run ``line`` ends on a side of ``quad``: the point, the run's way on through it and
    the side's index; none when the run is one of the card's own sides."""
    dx, dy, cx, cy = line.dx, line.dy, line.x, line.y
    corners = quad.tolist()  # plain floats: a few dozen 2 x 2 solves cost more in numpy's calls
    found = []
    for k in range(4):
        (ax, ay), (bx, by) = corners[k], corners[(k + 1) % 4]
        length = math.hypot(bx - ax, by - ay)
        sx, sy = (bx - ax) / max(length, 1e-9), (by - ay) / max(length, 1e-9)
        cross = dx * sy - dy * sx
        if abs(cross) < _SAME_TURN and abs((cx - ax) * sy - (cy - ay) * sx) < _SAME_GAP:
            return []  # the card's own side
        if abs(cross) < _STEEP:
            continue
        # c + t d = a + u s, by Cramer's rule (the determinant is -cross, at least _STEEP from 0)
        t = ((ax - cx) * sy - (ay - cy) * sx) / cross
        u = ((ax - cx) * dy - (ay - cy) * dx) / cross
        ends_here = abs(abs(t) - line.length / 2) <= _END * line.length + 4
        if _CORNER * length < u < (1 - _CORNER) * length and ends_here:
            d = np.array([dx, dy])
            found.append((np.array([cx, cy]) + t * d, d if t > 0 else -d, k))
    return found


def covered(quad: NDArray[np.float32], region: Region, grey: MatLike) -> bool:
    """Whether the card at ``quad`` (working pixels), recovered from the bright ``region`` (the
    grey working frame ``grey``'s), lies under another card of that region (see the module)."""
    h, w = region.mask.shape
    q = quad.astype(np.float64).reshape(4, 2)
    meetings = [m for line in region.lines for m in _meetings(line, q)]
    if not meetings:
        return False
    g = Grey.of(grey)
    sides = [(q[k], q[(k + 1) % 4] - q[k]) for k in range(4)]
    lengths = [float(np.hypot(*v)) for _, v in sides]
    reach = REACH * min(lengths)
    # The card's sides' edges against the table, over their middle 80 %, measured only as far as a run needs
    # them: a run softer than SHARP of one side is softer than that of the sharpest (most runs are a glare's
    # rim, and the first side or two decide), and one as sharp as SHARP of all four is as sharp as it.
    owns: list[float] = []

    def soft(edge: float) -> bool:
        for i, ((start, v), n) in enumerate(zip(sides, lengths, strict=True)):
            if i == len(owns):
                owns.append(edge_along(g, start + 0.1 * v, v / n, 0.8 * n))
            if edge < SHARP * owns[i]:
                return True
        return False

    # The paper's level and the outline's pixels are made for the first meeting whose run is sharp enough,
    # only: most runs that meet a side are a glare's soft rim, and the two cost 0.1 ms a card.
    paper: float | None = None
    seen: MatLike | None = None
    for point, way, k in meetings:
        if soft(edge_along(g, point, -way, reach)):
            continue  # the run's own visible part is no card's edge: a glare's rim
        if paper is None or seen is None:
            face = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(face, np.rint(q).astype(np.int32), 255)
            paper = PAPER * grey_percentile(grey, face, 75)
            seen = near_outline(region.pts, (h, w))
        along = sides[k][1] / lengths[k]
        sign = min((_traced(seen, point, s * along, reach), s) for s in (1.0, -1.0))[1]
        a, b = sides[k][0], sides[k][0] + sides[k][1]
        to_corner = float(np.hypot(*((b if sign > 0 else a) - point)))  # the side ends at its corner
        carried = edge_along(g, point, way, reach, paper)
        side = edge_along(g, point, sign * along, min(reach, to_corner), paper)
        if carried >= MIN_EDGE and carried >= OVER * side:
            return True
    return False


def _traced(seen: MatLike, start: NDArray[np.float64], way: NDArray[np.float64], reach: float) -> float:
    """The share of the line from ``start`` along ``way`` (3 pixels to ``reach``) on the region's outline."""
    steps = np.arange(3.0, reach, 1.0)
    outline = np.asarray(seen)
    x, y, ok = _pixels(start + steps[:, None] * way, outline.shape)
    return float(np.count_nonzero(ok & (outline[y, x] > 0))) / max(len(steps), 1)
