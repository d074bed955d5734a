"""A second object beside a card read, found by three sides of its outline in the frame's edges.

Why: the other looks for a second object (:mod:`vision.one_card`, :mod:`vision.second_paper`,
:mod:`vision.face_down`) judge regions of brightness, greyness or darkness, and each loses an object whose
region joins something else: a pale strip or wall running to the window's edge, a table as grey as the
object, the card read itself. Sweeps of two objects side by side found the reader reading one card with
a plain object, a back, a big-pipped prop card or another deck's card beside it
(``bench/vision_side_by_side.py``).
What such an object still shows is most of its outline: straight sides where its light meets the table's,
the strip's or the card's. So the frame's strong edges (Canny, in its light and in its tint) part it into
regions, and a region (or a blob of edges) whose outer contour holds three sides of a rectangle of the card's
size and proportions as seen (two opposite sides, the card's width or length apart, and one joining them
squarely; the fourth placed by the proportions, seen or not), lying wholly inside the window and apart from
the card, filled by the region, is a second object, provided two of its three sides away from the card's
outline are steps of light or colour (a channel's level differs inside and outside): a printed line, a stripe
of cloth or a seam between boards is the same on both sides. In colour, not grey alone: a face-down back in
shadow on felt (its dim border and its dark red or blue field) is as grey as the green felt.

What it leaves alone: a neighbour reaching the window's edge (its placed fourth side lies past it, by more
than 0.06 of the card's short side); an object whose outline is lost on two sides (as bright as what lies
round it). Under a tilted camera it judges the frame on the table's plane (:mod:`vision.table_view`): as
seen, a second card turned against the card read has corners far from :data:`SQUARE`. What it costs: an
object with a card's size, straight sides and its own light or colour in the window (a phone, a banknote, a
card box, a card spot printed solid on the layout in another colour than the cloth's: the scan window keeps
such spots out) leaves the frame unknown, a read lost, never a wrong one; and about 1.3 ms per
card read at 640 x 480 (the mean of the six photo sets' looks, 2026-12-07), up to 2.6 ms on wood's grain and
5.5 to 6 ms on a monitor full of text (it looks at the half working size, as :func:`vision.by_index.halved`
gives it); through the table's view 0.7 ms more for the view (its warp 0.45) and a frame up to 1.5 times as
large to look at.
"""

from __future__ import annotations

import itertools
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision import sides
from vision.levels import Tinted, tint_of
from vision.runs import Line, oriented, unoriented_each
from vision.sides import meet, overlap
from vision.table_view import table_view
from vision.window import Bounds, side_lengths

#: Canny's thresholds on the blurred grey frame: lower than the detector's second look's (30 and 90,
#: :mod:`vision.detect`), since a dim object beside the card on a grey table has a faint outline (on the
#: drawn sweep 20 and 60 found the most; 15 and 45, 10 and 30 part the table's grain into more regions).
EDGE_LOW: Final = 20
EDGE_HIGH: Final = 60
#: The frame's tint (its greatest channel less its least, blurred), times this, has its edges found too: white
#: paper against a pale wall or sheet of a slight colour differs in tint more than in light.
TINT: Final = 2.0
#: The object's sides are the card's within this factor (a second card seen by the same camera, a little
#: nearer or further).
SIZE_FACTOR: Final = 1.25
#: A straight run of the region's contour is at least this share of the card's short side.
LEAST_RUN: Final = 0.35
#: The joining side meets each of the opposite two at least this steeply (degrees): the camera that sees the
#: card read square sees a card beside it square too (the felt between two cards lying at an angle to each
#: other makes slanted corners).
SQUARE: Final = 75.0
#: The object shares at most this share of its area with the card read (its fourth side is only placed).
OVERLAP: Final = 0.25
#: At least this share of the object's rectangle lies in its region.
FILLED: Final = 0.8
#: A region whose box has less than this share of the card's area outside the card is not searched (the
#: card's own regions, its outline's blob). Not a strict bound: an object at the least size, a quarter under
#: the card and its region barely ``FILLED``, has about 0.35 there and is passed over (a review, 2026-12-05).
APART: Final = 0.4
#: A side is a step when the median level along it inside and outside, in the channel (blue, green or red)
#: where they differ most, differ by at least this, taken at :data:`STEP_AT` and twice that of the candidate
#: rectangle's short side each way: a blurred printed line differs only near it. Two of the three seen sides
#: away from the card's outline are steps (the third may be the seam with the card read, as bright as the
#: object). 8, not 15: a dim object on a wall a shade paler (13 and 14 levels) was read past. The drawn
#: sweep of two objects (``bench/vision_two_objects.py``) read as one card, of the scenes with both wholly
#: inside: 110 at 15, 98 at 12, 89 at 10, 75 at 8 (in grey), 46 at 8 in colour; at each, no real, composed
#: or drawn-design frame was lost (the tests' drawn stripes differ by 0). Grey alone (until 2026-12-05) read
#: a back at half the card's light past on felt, within 7 grey levels of it (``bench/vision_tilted_pairs.py
#: --back 0.5``: 187 of 420 frames). 8 was chosen in grey, not tuned again: a step in colour is nearly always
#: at least the step in grey (grey is the channels' weighted mean; medians need not keep it exactly).
STEP: Final = 8
STEP_AT: Final = 0.08
#: The longest straight runs of a region's contour searched for sides (the detector's joined-card search keeps
#: 10, :data:`vision.runs.MAX_LINES`, enough for one card's region). A blob of edges here may join the card
#: read's outline and pale walls' lines (each line's two sides two runs), whose runs crowded an object's out
#: of 10: the drawn sweep of two objects read 3 more scenes as one card (two backs among them, one on felt
#: with walls touching it on three sides). 12 found 2 of the 3, 14 and 16 all 3. What it costs: more
#: candidate rectangles where a contour has many runs: GuilleX7's q5-AC (a card held against a monitor full
#: of text, the slowest look of the real sets) 3.7 ms at 10, 4.5 at 12, 5.7 at 14; the mean look on the
#: real frames did not change (1.5 ms). Leaving out runs that face another a few pixels away (a thin line's
#: two sides) found the felt's back at 10, but read 12 more scenes as one card.
MOST_RUNS: Final = 14


#: A region's rectangles left inside the frame up to this many are tested by their corners before the
#: contour's support (:func:`_three_sides`); more, by the support first. Only the order of the tests, for
#: their cost.
FEW_RECTANGLES: Final = 12

#: A region's box in the frame: x0, y0, x1, y1.
Box = tuple[int, int, int, int]


def second_outline(small: MatLike, quad: NDArray[np.float32], win: Bounds, placed: bool = False,
                   seen: Tinted | None = None) -> bool:
    """Whether the window (``win``, in the working frame ``small``) holds three sides of a second object's
    outline, of a card's size and shape, apart from the card at ``quad`` (working pixels, in the face's
    order): see the module. Judged on the table's plane when the card is seen out of square
    (:func:`vision.table_view.table_view`). ``placed``: the card's corners were placed from its indices,
    a few pixels off, so a plane taken from them may be wrong far from the card: the frame is then judged
    as seen too (a review found objects the frame showed lost in such a view, 2026-12-05). ``seen``:
    ``small``'s :func:`vision.levels.tint_of`, if made already (the look as seen starts from it)."""
    view = table_view(small, quad, win)
    if view is None:
        return _outline_in(small, quad, win, seen)
    return _outline_in(*view) or (placed and _outline_in(small, quad, win, seen))


def light_edges(seen: Tinted) -> MatLike:
    """The outline's edges in the light of a frame (its :func:`vision.levels.tint_of`): one test for the look
    and for the gate that passes a plain window (:func:`vision.second_object.plain_beside`)."""
    return cv2.Canny(cv2.cvtColor(seen.blurred, cv2.COLOR_BGR2GRAY), EDGE_LOW, EDGE_HIGH)


def tint_edges(seen: Tinted) -> MatLike:
    """The outline's edges in the tint of a frame (its :func:`vision.levels.tint_of`)."""
    return cv2.Canny(cv2.convertScaleAbs(seen.chroma, alpha=TINT), EDGE_LOW, EDGE_HIGH)


def _outline_in(small: MatLike, quad: NDArray[np.float32], win: Bounds, seen: Tinted | None = None) -> bool:
    """:func:`second_outline`'s look at one frame (as seen, or the table's view; ``seen``: its
    :func:`vision.levels.tint_of`, if made already)."""
    seen = tint_of(small) if seen is None else seen
    found = cv2.bitwise_or(light_edges(seen), tint_edges(seen))
    edges = cv2.dilate(found, np.ones((3, 3), np.uint8))
    parted = cv2.bitwise_not(edges)
    if win.inside is not None:
        parted = cv2.bitwise_and(parted, win.inside)
    short, long = sorted(side_lengths(quad))
    rows, cols = seen.blurred.shape[:2]
    card = np.asarray(quad, np.float32)
    # The regions the edges part, and the edges' own blobs: a back's fine pattern is all edges inside its
    # outline, which is then the outline of a blob, not of a region. Every region's outer contour (not its
    # holes'): a region inside another's hole is one too.
    for binary in (parted, edges if win.inside is None else cv2.bitwise_and(edges, win.inside)):
        contours, tree = cv2.findContours(binary, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        if tree is None:
            continue
        lengths = np.fromiter(map(len, contours), np.int64, len(contours))
        regions: list[tuple[NDArray[np.int32], Box]] = []
        # Outer contours only (a hole's parent is set), long enough to go round an object.
        for k in np.flatnonzero((tree[0][:, 3] < 0) & (lengths >= 2 * long / SIZE_FACTOR)).tolist():
            contour = contours[k]
            x, y, bw, bh = cv2.boundingRect(contour)
            if max(bw, bh) < long / SIZE_FACTOR or min(bw, bh) < short / SIZE_FACTOR / 2:
                continue
            box = np.array([(x, y), (x + bw, y), (x + bw, y + bh), (x, y + bh)], np.float32)
            if bw * bh - cv2.intersectConvexConvex(box, card)[0] < APART * short * long:
                continue  # the card's own regions, its outline's blob: no room for an object apart
            x0, y0, x1, y1 = max(x - 3, 0), max(y - 3, 0), min(x + bw + 3, cols), min(y + bh + 3, rows)
            outline = np.asarray(contour, np.int32).reshape(-1, 2) - np.array([x0, y0], np.int32)
            regions.append((outline, (x0, y0, x1, y1)))
        if _any_three_sides(regions, seen.blurred, win, card, (short, long)):
            return True
    return False


def _any_three_sides(regions: list[tuple[NDArray[np.int32], Box]], colour: MatLike, win: Bounds,
                     card: NDArray[np.float32], size: tuple[float, float]) -> bool:
    """Whether any of the ``regions`` (each outlined by its points from its box's corner, and its box in
    the frame) holds three sides of an object (:func:`_three_sides`), in their order. Their contours'
    straight runs are fitted in one pass (:func:`vision.runs.unoriented_each`): a cluttered frame's look has
    five to ten such regions, and a pass each cost more in numpy's calls than in arithmetic. A region is
    filled, and its runs' normals turned into it, only when two of its runs and a third joining them make a
    rectangle (:func:`_joins`, which does not look at the normals): most regions' runs make none."""
    made = [(pts, _on_rim(pts, win.rim[y0:y1, x0:x1])) for pts, (x0, y0, x1, y1) in regions]
    each = unoriented_each(made, LEAST_RUN * size[0], MOST_RUNS)
    for (pts, on_rim), (_, box), lines in zip(made, regions, each, strict=True):
        joins = _joins(lines, *size)
        if not joins:
            continue
        x0, y0, x1, y1 = box
        filled = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.drawContours(filled, [pts.reshape(-1, 1, 2)], -1, 255, -1)
        found = _rectangles(oriented(lines, filled), joins)
        if _three_sides((pts, on_rim, filled), box, found, colour, win, card, size[0]):
            return True
    return False


def _on_rim(pts: NDArray[np.int32], rim: MatLike) -> NDArray[np.bool_]:
    """Which of a region's outline points (from its box's corner) lie on the window's rim (``rim``: its box
    of it): none where the box holds no rim pixel (most regions: a count over the box, not a look-up per
    point, and no rim count in :func:`vision.runs.unoriented_each`)."""
    if cv2.countNonZero(rim) == 0:
        return np.zeros(len(pts), np.bool_)
    return np.asarray(rim[pts[:, 1], pts[:, 0]] > 0)


def _three_sides(region: tuple[NDArray[np.int32], NDArray[np.bool_], NDArray[np.uint8]], box: Box,
                 found: list[NDArray[np.float32]], colour: MatLike, win: Bounds, card: NDArray[np.float32],
                 short: float) -> bool:
    """Whether the region (its outline's points from the corner of the frame's ``box`` x0, y0, x1, y1, which
    of them lie on the window's rim, and the region filled in the box), whose outline's straight runs make
    the rectangles ``found`` (:func:`_rectangles`, in the box), holds three sides of an object of the card's
    size (``short``: its short side) apart from the card at ``card``: see the module."""
    pts, on_rim, filled = region
    if not found:
        return False
    x0, y0, _, _ = box
    shift = np.array([x0, y0], np.float32)
    # Each test is of the rectangle alone, so their order is free, and is chosen for its cost. First, for all
    # at once, whether its corners lie within the frame's box (the window's first test). Then, where a few
    # are left (up to :data:`FEW_RECTANGLES`), the tests of their corners one by one (convex, apart from the
    # card read, inside the window's outline: 0.4 to 20 us each) before the contour's support: most are the
    # card's own sides with a run beside them, which the contour supports (on the real sets' slowest looks
    # 396 of 2,816 rectangles passed the corners' tests). Where dozens are left (a monitor full of text),
    # the support first, all in one pass: most of those are unsupported, and one pass costs less than
    # dozens of tests each.
    margin = 0.06 * short
    at_all = np.asarray(found, np.float32).reshape(-1, 4, 2) + shift  # each q + shift, as one array
    w, h = win.size
    x, y = at_all[:, :, 0], at_all[:, :, 1]
    in_box = ((x >= -margin) & (y >= -margin) & (x <= w - 1 + margin) & (y <= h - 1 + margin)).all(axis=1)
    kept = np.flatnonzero(in_box).tolist()

    def apart(k: int) -> bool:
        return bool(cv2.isContourConvex(found[k]) and overlap(at_all[k], card) <= OVERLAP
                    and win.within(at_all[k], margin))

    corners_first = len(kept) <= FEW_RECTANGLES
    if corners_first:
        kept = [k for k in kept if apart(k)]
    if not kept:
        return False
    seen = sides.near_outline(pts[~on_rim], (filled.shape[0], filled.shape[1]))
    for k, three in zip(kept, sides.side_supports([found[k] for k in kept], seen, 3), strict=True):
        if min(three) < sides.MIN_SIDE_SUPPORT or sum(three) / 3 < sides.MIN_SUPPORT:
            continue  # the fourth side is placed, not seen
        if not (corners_first or apart(k)) or _inside(found[k], filled) < FILLED:
            continue
        if _steps_apart(at_all[k], colour, card, short) >= 2:
            return True
    return False


#: Two opposite runs ``a`` and ``b`` (their places in the region's runs), the joining run ``c``'s place,
#: the length placed along ``a`` and ``b``, and where ``c`` meets ``a`` and ``b``.
Join = tuple[int, int, int, float, tuple[float, float], tuple[float, float]]


def _joins(lines: list[Line], short: float, long: float) -> list[Join]:
    """The rectangles of the card's proportions with two runs ``a`` and ``b`` as opposite sides (every pair,
    in :func:`itertools.combinations`' order), joined by a third run, before their corners are placed
    (:func:`_rectangles`). Only the runs' directions and places count here, never which way their normals
    point (``apart`` is a distance either way): so a region's runs are paired before it is filled. Every two
    runs' turn (:func:`vision.sides.turn`'s arithmetic) is taken once, in one array, and looked up in the
    loops: 14 runs make 91 pairs and 1,274 joining runs to try, and a call of ``turn`` for each cost half the
    look on the real sets' slowest frames (0.35 ms a look there, 0.2 after)."""
    if len(lines) < 3:
        return []  # no third run to join two
    angle = np.array([r.angle for r in lines], np.float64)
    d = np.abs(angle[:, None] - angle[None, :]) % 180.0
    turned = np.minimum(d, 180.0 - d)  # turn() of every two runs, exactly
    parallel, square = (turned <= sides.MAX_SKEW).tolist(), (turned >= SQUARE).tolist()
    widths = [(width, length, width / SIZE_FACTOR, width * SIZE_FACTOR)
              for width, length in ((short, long), (long, short))]
    out: list[Join] = []
    for i, j in itertools.combinations(range(len(lines)), 2):
        if not parallel[i][j]:
            continue
        a, b = lines[i], lines[j]
        apart = abs((b.x - a.x) * a.nx + (b.y - a.y) * a.ny)
        along = [apart * length / width for width, length, least, most in widths
                 if least <= apart <= most]  # a card's width or length apart
        for k, c in enumerate(lines if along else []):
            if k in (i, j) or not (square[i][k] and square[j][k]):
                continue
            p, q = meet(a, c), meet(b, c)
            if p is None or q is None:
                continue
            out.extend((i, j, k, o, p, q) for o in along)
    return out


def _rectangles(lines: list[Line], joins: list[Join]) -> list[NDArray[np.float32]]:
    """The rectangles of :func:`_joins`, their runs' normals now pointing into the region: corners along
    ``a`` from the far end to the joining side, across it, then along ``b``. Made in one batch of float32
    arithmetic, the same as each alone: a contour of many runs (a monitor full of text) makes a hundred or
    more, and an array each cost more than the arithmetic."""
    if not joins:
        return []
    meets = [(*p, *q) for _, _, _, _, p, q in joins]  # where the joining side meets a, and b
    aways = [(*_away(lines[i], lines[k]), *_away(lines[j], lines[k])) for i, j, k, _, _, _ in joins]
    pq = np.array(meets, np.float32).reshape(-1, 2, 2)
    others = np.array([o for _, _, _, o, _, _ in joins], np.float32)  # the length placed along a and b
    ends = pq + others[:, None, None] * np.array(aways, np.float32).reshape(-1, 2, 2)
    return list(np.stack([ends[:, 0], pq[:, 0], pq[:, 1], ends[:, 1]], axis=1))


def _away(a: Line, c: Line) -> tuple[float, float]:
    """``a``'s unit direction, pointing away from the joining run ``c`` into its region (``c``'s normal)."""
    sign = 1.0 if a.dx * c.nx + a.dy * c.ny >= 0 else -1.0
    return sign * a.dx, sign * a.dy


def _inside(q: NDArray[np.float32], filled: NDArray[np.uint8]) -> float:
    """The share of ``q``'s area lying in the region ``filled`` (what lies past the region's cut is not)."""
    poly = np.zeros_like(filled)
    cv2.fillConvexPoly(poly, np.round(q).astype(np.int32), 255)
    return cv2.countNonZero(cv2.bitwise_and(poly, filled)) / max(float(cv2.contourArea(q)), 1.0)


def _steps_apart(q: NDArray[np.float32], colour: MatLike, card: NDArray[np.float32], short: float) -> int:
    """How many of ``q``'s three seen sides are steps (:data:`STEP`) away from the card read's outline: the
    card's own side is a step of the card's light, not the object's."""
    outline = card.reshape(-1, 1, 2)
    count = 0
    for k, step in enumerate(_steps(q, colour)[:3]):
        mx, my = (q[k] + q[(k + 1) % 4]) / 2
        along = abs(cv2.pointPolygonTest(outline, (float(mx), float(my)), True)) <= 2 * STEP_AT * short
        count += int(step >= STEP and not along)
    return count


def _steps(q: NDArray[np.float32], colour: MatLike) -> list[float]:
    """For each side of ``q``: the least difference between the median levels along it inside and outside
    (in the channel where they differ most), each taken at :data:`STEP_AT` and twice that of its short side
    (0 where its samples leave the frame) in ``colour`` (the blurred frame)."""
    h, w = colour.shape[:2]
    centre = q.mean(axis=0)
    at = STEP_AT * min(side_lengths(q))
    t = np.linspace(0.1, 0.9, 16, dtype=np.float32)[:, None]
    out = []
    for k in range(4):
        p0, d = q[k], q[(k + 1) % 4] - q[k]
        n = np.array([-d[1], d[0]], np.float32) / max(float(np.hypot(d[0], d[1])), 1e-6)
        n = n if float(np.dot(centre - p0, n)) >= 0 else -n  # inward
        levels = []
        for far in (at, 2 * at, -at, -2 * at):
            xy = np.round(p0 + t * d + far * n).astype(np.int32)
            ok = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
            seen = colour[xy[ok, 1], xy[ok, 0]]  # each sample's channels
            levels.append(np.median(seen.reshape(len(seen), -1), axis=0) if ok.any() else None)
        inside, outside = [v for v in levels[:2] if v is not None], [v for v in levels[2:] if v is not None]
        out.append(min((float(np.abs(a - b).max()) for a in inside for b in outside), default=0.0))
    return out
