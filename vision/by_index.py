"""Find a card by its two corner indices when its outline cannot be told from what it lies on.

Why: :func:`vision.detect.find_card` finds the card by its paper's outline, which fails where the
paper is not set off from its surroundings (a card on a white sheet, held against a lit monitor, on
top of a pile): the outline is lost while both indices are plainly visible. So, only when the detector
refused the frame for a bright region reaching or filling the window (:data:`SEARCHED`), the card is
looked for by its ink: dark or red pieces on lighter paper (each pixel against the brightest paper
around it), a *candidate index* is a glyph of the rank's size above one of the suit's size at the
deck's learned spacing (which gives the card's turn and scale), two candidates a card's length apart
and turned half a turn from each other, where the deck's layout puts the second index, give the card's
four corners (a similarity through both suits' centres), and the two index boxes are then read exactly
as a detected card's are, both of them, agreeing (the caller's ``read_pair``).

Why it cannot read a card that is not one: two agreeing index reads at a card's geometry are needed,
every index box must lie inside the frame and the scan window, and any other candidate index in the
window that reads as a card (the same or another) leaves the frame unknown, as does a second pair,
a second bright region of a card's size or a dark one (a face-down back, :mod:`vision.face_down`),
a second card's grey paper however dim (:func:`vision.second_paper.dim_second`), or three sides of a
second object's outline (:mod:`vision.second_outline`).
The work is bounded: cheap size and spacing tests first, then at most :data:`MAX_PAIRS` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.candidates import Candidate, candidates, ink_pieces
from vision.detect import Detection, DetectParams
from vision.index_glyphs import anchors, face_corners, glyph_anchors, glyph_points, similarity, to_frame
from vision.levels import block_mean
from vision.profile import DeckProfile
from vision.refusal import Refusal
from vision.second_object import second_object
from vision.second_paper import apart
from vision.second_pip import glyph_share
from vision.warp import warp_box, warp_indices
from vision.window import Bounds, ScanWindow, bounds

Image = MatLike
Reading = TypeVar("Reading")

#: The working width of the ink search (a 640 x 480 frame is searched as it is).
WORK_WIDTH: Final = 480
#: Most card places read: the work per frame is bounded whatever it shows.
MAX_PAIRS: Final = 2
#: Two candidates may be one card's indices when their scales agree within this factor, their axes are
#: opposite within :data:`TURN_SLACK` (radians), and the second lies where the first's layout puts it
#: (:func:`pairs`).
SCALE_FACTOR: Final = 2.0
TURN_SLACK: Final = 0.45
#: The kinds of the detector's refusal (:class:`vision.refusal.Refusal`, never its message's words)
#: after which the card is searched for by its indices: a bright region that reaches the window's edge
#: or fills it (the card's paper joined to a sheet, a monitor, a pale table). Never after an odd outline
#: inside the window (its corners, notch or proportions: two overlapping cards make one), a glare, nor
#: after two objects: a second card may be there.
SEARCHED: Final = frozenset({Refusal.CUT, Refusal.FILLS})
#: Another candidate is looked at as a second card's index when its paper is at least this share as
#: bright as the card's (a card beside it lies in the same light; the felt's or wood's grain does not).
OTHER_PAPER: Final = 0.6


@dataclass(frozen=True)
class Found(Generic[Reading]):
    """The search's outcome: the card's reading when one was read, else None, and what was found."""

    reading: Reading | None
    summary: str
    #: The card's corners in the frame (pixels), when one was read.
    corners: NDArray[np.float32] | None = None


def pair_up(one: Candidate, two: Candidate, profile: DeckProfile) -> NDArray[np.float64] | None:
    """The homography (face to working frame) that puts ``one`` at the face's top index and ``two`` at
    its bottom one (:func:`pairs`), through both ranks' and suits' centres, or None when the fit is a
    mirror image or no convex card."""
    src = np.array(anchors(profile), np.float32)
    dst = np.array([one.rank, one.suit, two.rank, two.suit], np.float32)
    plane = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    corners = to_frame(plane, face_corners(profile))
    if not cv2.isContourConvex(corners.reshape(-1, 1, 2)):
        return None
    # Clockwise on screen as on the face (image axes): a mirror image runs the other way.
    if cv2.contourArea(corners, oriented=True) <= 0:
        return None
    return plane


def centre_of(plane: NDArray[np.float64], profile: DeckProfile) -> tuple[float, float]:
    """The face's centre in the frame."""
    fw, fh = profile.spec.face
    x, y = to_frame(plane, [((fw - 1) / 2, (fh - 1) / 2)])[0]
    return float(x), float(y)


def level(paper: Image, at: NDArray[np.float64]) -> float:
    """The paper's level at a point."""
    return float(paper[int(at[1]), int(at[0])])


def inside(quad: NDArray[np.float32], point: tuple[float, float]) -> bool:
    """Whether ``point`` lies in the quadrilateral ``quad`` (or on its outline)."""
    return bool(cv2.pointPolygonTest(quad.reshape(-1, 1, 2), point, False) >= 0)


def index_boxes(plane: NDArray[np.float64], profile: DeckProfile) -> NDArray[np.float32]:
    """The corners of both index boxes (face pixels, the card as it lies and turned) in the frame."""
    fw, fh = profile.spec.face
    x0, y0, x1, y1 = profile.spec.index.box
    pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    pts += [(fw - 1 - x, fh - 1 - y) for x, y in pts]
    return to_frame(plane, [(float(x), float(y)) for x, y in pts])


def alone(one: Candidate, profile: DeckProfile, at: list[tuple[float, float]] | None = None
          ) -> NDArray[np.float64]:
    """The similarity (face to working frame) of a card whose top index is ``one``, by its axis and scale;
    ``at``: the deck's :func:`anchors`, if taken already (a look at many candidates takes them once). In
    Python's floats: the same IEEE arithmetic, term by term, as numpy's arrays of two (2.5 us against 7)."""
    (rx, ry), (sx, sy) = (anchors(profile) if at is None else at)[:2]
    (d0, d1), scale = one.down.tolist(), one.scale
    down, across = (d0 * scale, d1 * scale), (d1 * scale, -(d0 * scale))
    u0, u1 = one.suit.tolist()
    origin = (u0 - across[0] * sx - down[0] * sy, u1 - across[1] * sx - down[1] * sy)
    return np.array([[across[0], down[0], origin[0]], [across[1], down[1], origin[1]], [0, 0, 1]])


def pairs(found: list[Candidate], profile: DeckProfile) -> list[tuple[int, int]]:
    """The candidates (top index, bottom index) that may be one card's, the likeliest first: scales within
    :data:`SCALE_FACTOR`, axes opposite within :data:`TURN_SLACK`, and the second where the first's axes
    put the card's other index: in that direction within :data:`TURN_SLACK`, at that distance (at the
    pair's mean scale) within :data:`SCALE_FACTOR` (a tilted card's glyphs are foreshortened)."""
    (_, _), top, (_, _), bottom = anchors(profile)
    span = np.subtract(bottom, top)  # from the top suit to the bottom one, face pixels
    suit = np.array([c.suit for c in found])
    down = np.array([c.down for c in found])
    scale = np.array([c.scale for c in found])
    rank, suits = np.array([c.pieces for c in found]).T
    slack = np.log(SCALE_FACTOR)
    # The scales' ratio, the axes and the shared pieces first (a few operations on the whole square), the
    # turn and the distance only for the pairs they leave, with the same arithmetic on the same values:
    # the same pairs, in the same order (a search's 40 candidates: 1,600 pairs, about 100 left). A piece
    # shared by two candidates is found by four comparisons of two columns (a broadcast over both pieces
    # of both, 4-D, cost 49 us).
    shared = ((rank[:, None] == rank[None, :]) | (rank[:, None] == suits[None, :])
              | (suits[:, None] == rank[None, :]) | (suits[:, None] == suits[None, :]))
    ii, jj = np.nonzero((np.abs(np.log(scale[:, None] / scale[None, :])) <= slack)
                        & (down @ down.T <= -np.cos(TURN_SLACK)) & ~shared)
    across = np.stack([down[:, 1], -down[:, 0]], axis=1)
    want = (across * span[0] + down * span[1])[ii]  # where each one's layout puts the other index, at scale 1
    seen = suit[jj] - suit[ii]
    turn = np.angle((seen[:, 0] + 1j * seen[:, 1]) / (want[:, 0] + 1j * want[:, 1]))
    far = np.log(np.hypot(seen[:, 0], seen[:, 1]) + 1e-9) - np.log(
        np.hypot(*span) * (scale[ii] + scale[jj]) / 2)
    ok = np.flatnonzero((np.abs(turn) <= TURN_SLACK) & (np.abs(far) <= slack))
    ii, jj = ii[ok], jj[ok]
    order = np.argsort((np.abs(turn) + np.abs(far))[ok])
    return [(int(ii[k]), int(jj[k])) for k in order]


#: Two indices whose glyphs differ in size by more than this factor are a tilted card's: a homography
#: is tried after the similarity.
TILT_FACTOR: Final = 1.05


def refine(frame: Image, plane: NDArray[np.float64], profile: DeckProfile, zoom: float, sized: bool = True
           ) -> NDArray[np.float64] | None:
    """``plane`` corrected so that both indices' glyphs lie where the deck puts them: in each index box
    (padded) warped by ``plane``, the suit's centre and the rank's top are found (Otsu's ink split into
    rank and suit, :mod:`vision.index_split`); a similarity puts both suits' centres on the deck's
    layout (exact for a card seen square: by the face's half-turn symmetry the card's centre is midway
    between them), or, when the indices differ in size in the frame by :data:`TILT_FACTOR` (a tilted
    card, whose far index is smaller), a homography that puts the ranks' tops there too. None
    when an index shows no rank over a suit, or glyphs of other heights than the deck's. ``plane`` is
    in working pixels, ``frame`` ``zoom`` times larger (the glyphs are measured at its full detail)."""
    seen: list[tuple[float, float]] = []
    wanted: list[tuple[float, float]] = []
    for turned in (False, True):
        points = glyph_points(frame, plane, profile, zoom, turned, sized)
        if points is None:
            return None
        seen += points
        wanted += glyph_anchors(profile, turned)
    square = similarity(plane, [seen[0], seen[2]], [wanted[0], wanted[2]])
    tilted = cv2.getPerspectiveTransform(np.array(wanted, np.float32), np.array(seen, np.float32))
    at = to_frame(plane, seen)  # each index's suit centre and rank top in the frame: their sizes there
    sizes = [float(np.linalg.norm(at[k] - at[k + 1])) for k in (0, 2)]
    tilt = abs(np.log(max(sizes[0], 1.0) / max(sizes[1], 1.0))) > np.log(TILT_FACTOR)
    return np.asarray(plane @ tilted, np.float64) if tilt else square


def halved(small: Image, quad: NDArray[np.float32], window: ScanWindow | None
           ) -> tuple[Image, NDArray[np.float32], Bounds]:
    """The working frame ``small`` at half its size (2 x 2 block means), the card at ``quad`` (working
    pixels) and the window's bounds there: the looks for a second card's paper or back (:func:`apart`,
    :func:`vision.face_down.face_down`) judge card-sized regions, which need no detail, and their
    connected regions cost a quarter."""
    half = block_mean(small, 2)
    scale = np.float32(half.shape[1] / small.shape[1])
    return half, quad * scale, bounds(window, (half.shape[1], half.shape[0]))


def find_by_indices(
    frame: Image, profile: DeckProfile, window: ScanWindow | None, params: DetectParams, refused: Detection,
    read_pair: Callable[[list[Image]], Reading | None], reads_alone: Callable[[Image], bool],
) -> Found[Reading]:
    """The card found by its two indices and read by ``read_pair`` (both index crops of
    :func:`vision.warp.warp_indices`; None: not a card), or None and what the search found (to follow
    the reason of the detector's ``refused`` detection). ``reads_alone``: whether one index crop alone
    reads as a card (a second card's index); ``params``: the detector's limits (the least and greatest
    card area). Searched only after the kinds of refusal :data:`SEARCHED` names, whatever the words."""
    if refused.refusal not in SEARCHED:
        return Found(None, "")
    found = search(frame, profile, window, params.area, read_pair, reads_alone)
    return Found(found.reading, f"; by its indices: {found.summary}", found.corners)


def working(frame: Image) -> tuple[Image, float]:
    """The frame at the ink search's working width (:data:`WORK_WIDTH`; a narrower one as it is) and the
    factor it was shrunk by. Linear, not area-averaged: at 0.75 area-averaging cost more than the search."""
    shrink = min(1.0, WORK_WIDTH / frame.shape[1])
    small = frame if shrink >= 1.0 else cv2.resize(frame, None, fx=shrink, fy=shrink,
                                                    interpolation=cv2.INTER_LINEAR)
    return small, shrink


def search(
    frame: Image, profile: DeckProfile, window: ScanWindow | None, area: tuple[float, float],
    read_pair: Callable[[list[Image]], Reading | None], reads_alone: Callable[[Image], bool],
) -> Found[Reading]:
    """:func:`find_by_indices`'s search; ``area``: the least and greatest card area, shares of the frame."""
    small, shrink = working(frame)
    centres, stats, scales, paper = ink_pieces(small, profile, *area)
    found = candidates(centres, stats, profile, scales)
    if len(found) < 2:
        return Found(None, f"{len(found)} candidate index")
    face = profile.spec.face
    win = bounds(window, (small.shape[1], small.shape[0]))
    fw, fh = face
    whole = face_corners(profile)
    read: list[tuple[Reading, NDArray[np.float32], float]] = []
    looked: list[NDArray[np.float32]] = []  # every card place read, a card or not
    why = "no two candidates at one card's geometry"
    for i, j in pairs(found, profile)[:MAX_PAIRS * 4]:
        if len(looked) >= MAX_PAIRS or len(read) > 1:
            break
        plane = pair_up(found[i], found[j], profile)
        if plane is None or any(inside(q, centre_of(plane, profile)) for q in looked):
            continue  # no card there, or a place already read, from other pieces of its ink
        # Twice: the pieces' centres at the working size place the card roughly, the glyphs at full detail
        # then place it well enough to judge their sizes.
        fit = refine(frame, plane, profile, 1 / shrink, sized=False)
        fit = None if fit is None else refine(frame, fit, profile, 1 / shrink)
        if fit is None:
            continue
        if not win.within(index_boxes(fit, profile), 0.0):
            why = "the indices are not wholly inside the window"
            continue
        corners = to_frame(fit, whole)
        looked.append(corners)
        reading = read_pair(warp_indices(frame, corners / shrink, face, profile.spec.index.box))
        if reading is None:
            why = "the pairs found do not read as one card on both indices"
            continue
        read.append((reading, corners, min(level(paper, c.suit) for c in (found[i], found[j]))))
    if not read:
        return Found(None, f"{len(found)} candidate indices; {why}")
    if len(read) > 1:
        return Found(None, "two cards read by their indices (one card at a time)")
    reading, quad, card_paper = read[0]
    half, at_half, win_half = halved(small, quad, window)
    if apart(half, at_half, win_half.inside, area[0]):
        return Found(None, "a second bright region of a card's size in the window (one card at a time)")
    second = second_object(half, at_half, win_half, glyph_share(profile), placed=True)
    if second is not None:
        return Found(None, second)
    other = other_index(frame, quad, found, paper, card_paper, profile, shrink, reads_alone)
    if other is not None:
        return Found(None, other)
    return Found(reading, "read by its two indices", np.asarray(quad / shrink, np.float32))


def other_index(
    frame: Image, quad: NDArray[np.float32], found: list[Candidate], paper: Image, card_paper: float,
    profile: DeckProfile, shrink: float, reads_alone: Callable[[Image], bool], *,
    within: Callable[[NDArray[np.float32]], bool] | None = None, least_paper: float = OTHER_PAPER,
    shown: bool = True, reads: str = "reads as a card",
) -> str | None:
    """Why the window holds a second card's index besides the card at ``quad`` (working pixels), or None:
    a candidate outside it, at a scale and on paper (``least_paper`` of ``card_paper``) a card beside it
    could have, that ``reads_alone`` takes for a card's (the search by indices: a whole card read; the look
    at one card at a time, :mod:`vision.one_card`: read but for its suit's margin) or (``shown``) shows a
    rank over a suit of the deck's sizes. ``within``: whether a card at those corners (working pixels)
    counts; None: every one does. ``reads``: what ``reads_alone`` found, in the reason."""
    fw, fh = profile.spec.face
    whole = face_corners(profile)
    outline = quad.reshape(-1, 1, 2)
    size = float(np.sqrt(cv2.contourArea(quad) / (fw * fh)))  # the card's scale
    seen: set[int] = set()
    others = []
    # One look per suit piece outside the card, at a scale and on paper a card beside it could have: the
    # scale and the paper of every candidate at once (the same arithmetic as :func:`level`'s, one by one).
    suits = np.array([c.suit for c in found], np.float64).reshape(-1, 2)
    scaled = np.array([c.scale for c in found], np.float64) / size
    fits = ((scaled >= 1 / SCALE_FACTOR) & (scaled <= SCALE_FACTOR) & (
        paper[suits[:, 1].astype(np.intp), suits[:, 0].astype(np.intp)].astype(np.float64)
        >= least_paper * card_paper)).tolist()
    for c, fit in zip(found, fits, strict=True):
        if (fit and c.pieces[1] not in seen
                and cv2.pointPolygonTest(outline, tuple(map(float, c.suit)), False) < 0):
            seen.add(c.pieces[1])
            others.append(c)
    at = anchors(profile)
    for other in others:
        plane = alone(other, profile, at)
        corners = to_frame(plane, whole)
        if within is not None and not within(corners):
            continue
        if reads_alone(warp_box(frame, corners / shrink, profile.spec.face, profile.spec.index.box)):
            return f"another index in the window {reads} (one card at a time)"
        # A rank over a suit of the deck's sizes is a second card's index even when it does not read
        # (a rank of two pieces, 10, turns the first look's box off it; blur leaves its suit ambiguous).
        if shown and glyph_points(frame, plane, profile, 1 / shrink, False, sized=True) is not None:
            return "another index in the window shows a rank over a suit (one card at a time)"
    return None
