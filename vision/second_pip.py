"""A second card beside a card read, shown by one large pip on its paper: a dark compact print ringed by
plain paper.

Why: the other looks for a second object judge regions of light, greyness or darkness, and the outline's
sides (:mod:`vision.second_object`). A second card whose paper is dim, or as grey as the table, or
washed by a vignette or a pale wall beside it, loses its region and its sides; its indices may be too
faint or too small to read. Its large pip still shows: a card's centre pip (an ace's, a court card's
emblem, a prop card's) is a dark solid shape far larger than any index glyph, lying on plain paper. The
drawn sweep of two objects (``bench/vision_two_objects.py``) read 38 scenes of 4,000 with both objects
wholly inside as one card; 26 of them held such a pip beside the card read.

So, beside the card read (at most :data:`OVER_CARD` of its box over the card), wholly inside the window:
a piece of ink (darker than :data:`INK_SHARE` of the paper's level around it, on paper at least
:data:`LEAST_PAPER` bright, as the search by indices finds ink) whose box is :data:`LEAST_PIP` (and
:data:`OVER_INDEX` times the deck's tallest index glyph: a neighbour's index is no pip) to :data:`MOST_PIP`
of the card's short side; solid (at least :data:`SOLID` of its convex hull, as a heart, spade, diamond or
disc is; a club's lobes may part) and thick (:data:`THICK`); a card's ink, black or red; ringed,
:data:`GAP` to :data:`RING` of the short side out, by paper: at least :data:`CONTRAST` levels brighter
than the print (its 5th percentile against the print's median) and plain (its levels, less the quadratic
surface fitted to them, within :data:`TEXTURE` between the 10th and 90th percentiles: a vignette's or a
lamp's smooth light is paper, a photograph's or a keyboard's clutter is not). The ring leaves out the card
read and any ink (a club's other lobes), and at least :data:`KEEP` of it must be left. Paper flooded from
the ring's flattest point (each pixel within :data:`DRIFT` of a neighbour) that reaches the window's rim
as a sheet of at most :data:`SHEET` card areas is a neighbour the window cuts, left alone as the detector
leaves it; paper that floods further has no outline of its own (a card as grey as the table or a wall it
lies on), and its pip counts. It is the last look (:func:`vision.second_object.second_object`).

What it leaves alone: a print ringed by a glare's bright blob, a club whose lobes part with clutter about
them; ink on a dark table (its least channel under :data:`LEAST_PAPER`: green, blue or red felt), so a
chip on felt beside the card is not taken for a pip; a pen line, a letter, a blue chip, skin. What it
costs: on a pale or grey table, a black or red solid print of a pip's size on plain ground in the window
beside the card (a black or red chip, a solid logo disc, a dark shadow, a phone) leaves the frame unknown,
a read lost, never a wrong one: the scan window must keep them out. About 0.2 ms per card read (0.45 at
the 99th percentile; more on a cluttered pale ground, where each dark print is weighed). Measured
(2026-12-05): the drawn sweep read 18 scenes of 4,000 with both objects wholly inside as one card (38
before), the side-by-side sweep 12 of 600 (19); on the 1,914 real and composed frames and the 924 newer
reads, no read was lost. A second reading built 350 scenes of a second card of the deck with its indices
hidden beside the card on a table of its grey: without this look 150 were read as one card, with it none.
It looks at the half working size (:func:`vision.by_index.halved`).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import ink_on_paper, least_channel, median_under
from vision.profile import DeckProfile
from vision.regions import components
from vision.window import Bounds, side_lengths

#: Ink is darker than this share of the paper's level around it (the search by indices' share).
INK_SHARE: Final = 0.62
#: Paper is at least this bright in its least channel (the search by indices' floor): felt is not.
LEAST_PAPER: Final = 80
#: A red print's red channel over its blue and green (a card's red ink; not skin, not a bronze coin).
RED_OVER: Final = 60
#: The pip's box, its longer side, as shares of the card's short side: at least :data:`LEAST_PIP` and
#: :data:`OVER_INDEX` times the deck's tallest index glyph (drawn decks' glyphs are 0.11 of the card's
#: width, real decks' 0.13 to 0.22: a neighbour's index at the frame's edge, on its paper, is no pip),
#: at most :data:`MOST_PIP` (a jumbo pip is about two thirds).
LEAST_PIP: Final = 0.2
OVER_INDEX: Final = 1.6
MOST_PIP: Final = 0.7
#: The pip fills at least this share of its convex hull, and its greatest distance from its edge is at least
#: :data:`THICK` of the card's short side: a pen line, a letter's bar, a stroke has a hull of almost no area
#: and passed the first alone (a review, 2026-12-05).
SOLID: Final = 0.6
THICK: Final = 0.05
#: At most this share of the pip's box lies over the card read.
OVER_CARD: Final = 0.2
#: The ring of paper round the pip: from :data:`GAP` to :data:`RING` of the card's short side out from it
#: (the pip's own blurred edge left out); the card read, :data:`GAP` round it, and other ink left out too,
#: and at least :data:`KEEP` of the ring must be left (clutter round a print is mostly ink).
GAP: Final = 0.03
RING: Final = 0.06
KEEP: Final = 0.6
#: The ring is at least this much brighter than the print, and its levels (less their fitted quadratic
#: surface) within this spread: 25 with a plane read past a pip under a lamp's glare (the drawn sweep);
#: 35 with the surface found 5 more of the sweep's 38 and lost no read of the real sets.
CONTRAST: Final = 30.0
TEXTURE: Final = 35.0
#: The paper round the print is followed while each pixel's level is within this of a neighbour's; a sheet
#: of at most :data:`SHEET` card areas reaching the window's rim is a neighbour the window cuts.
DRIFT: Final = 2
SHEET: Final = 2.0


def glyph_share(profile: DeckProfile) -> float:
    """The deck's tallest index glyph (rank or suit) as a share of its face's short side."""
    index = profile.spec.index
    return max(index.rank_height, index.suit_height) / min(profile.spec.face)


def large_pip(half: MatLike, quad: NDArray[np.float32], win: Bounds, glyph: float,
              least: MatLike | None = None) -> bool:
    """Whether the window (``win``, in the half-size frame ``half``) holds a large pip on plain paper
    beside the card read at ``quad`` (pixels of ``half``): see the module. ``glyph``: the deck's tallest
    index glyph as a share of the card's short side (:func:`glyph_share`). ``least``: ``half``'s
    :func:`vision.levels.least_channel`, if made already (the look for a back made it)."""
    short = float(min(side_lengths(quad)))
    least = least_channel(half) if least is None else least
    reach = max(3, int(0.25 * short) | 1)  # the paper's level closed over half the card's short side
    paper, ink = ink_on_paper(least, 2, reach, INK_SHARE, LEAST_PAPER)
    if win.inside is not None:
        ink = cv2.bitwise_and(ink, win.inside)
    card = np.zeros(ink.shape, np.uint8)
    cv2.fillConvexPoly(card, np.round(quad).astype(np.int32), 255)
    gap = max(2, int(GAP * short))  # at the half working size 0.03 is a pixel: the ring lay on the blur
    near_card = cv2.dilate(card, np.ones((2 * gap + 1,) * 2, np.uint8))
    not_paper = cv2.bitwise_or(near_card, ink)  # left out of a ring: the card read, any ink (a club's lobes)
    _, labels, stats, _ = components(ink)
    sizes = np.maximum(stats[:, 2], stats[:, 3])
    least_pip = max(LEAST_PIP, OVER_INDEX * glyph) * short
    for k in np.flatnonzero((sizes >= least_pip) & (sizes <= MOST_PIP * short)).tolist():
        if k == 0:
            continue
        x, y, w, h, area = stats[k].tolist()
        if cv2.countNonZero(card[y : y + h, x : x + w]) > OVER_CARD * w * h:
            continue
        pip = (labels[y : y + h, x : x + w] == k).astype(np.uint8)
        outline, _ = cv2.findContours(pip, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if area < SOLID * cv2.contourArea(cv2.convexHull(np.vstack(outline))):
            continue
        framed = cv2.copyMakeBorder(pip, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)  # np.pad's zeros, cheaper
        if cv2.distanceTransform(framed, cv2.DIST_L2, 3).max() < THICK * short:
            continue
        paper_level = _median(paper[y : y + h, x : x + w])
        if not _black_or_red(half[y : y + h, x : x + w][pip > 0], paper_level):
            continue
        seed = _ringed(least, pip, (x, y), not_paper, win, (short, gap))
        if seed is not None and not _paper_cut(least, seed, win, SHEET * cv2.contourArea(quad)):
            return True
    return False


def _ringed(least: MatLike, pip: NDArray[np.uint8], at: tuple[int, int], not_paper: MatLike, win: Bounds,
            size: tuple[float, int]) -> tuple[int, int] | None:
    """A point of the plain paper ringing the print ``pip`` (its mask, its box's corner ``at`` in
    ``least``), wholly inside the window and brighter than it (see the module), or None when it is not so
    ringed. ``not_paper``: what the ring leaves out (the card read and a gap round it, and any ink: a club's
    other lobes); ``size``: the card's short side and the gap (pixels) left out round the print, a radius."""
    short, gap = size
    x, y = at
    h, w = pip.shape
    reach = max(gap + 1, int(RING * short))
    rows, cols = least.shape[:2]
    x0, y0, x1, y1 = x - reach, y - reach, x + w + reach, y + h + reach
    if x0 < 0 or y0 < 0 or x1 > cols or y1 > rows:
        return None  # the ring leaves the frame: not wholly inside
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    mask[reach : reach + h, reach : reach + w] = pip
    outer = cv2.dilate(mask, np.ones((2 * reach + 1,) * 2, np.uint8))
    ring = (outer > 0) & (cv2.dilate(mask, np.ones((2 * gap + 1,) * 2, np.uint8)) == 0)
    if np.any(ring & (win.rim[y0:y1, x0:x1] > 0)):
        return None
    whole = int(np.count_nonzero(ring))
    ring &= not_paper[y0:y1, x0:x1] == 0
    if win.inside is not None:
        ring &= win.inside[y0:y1, x0:x1] > 0
    ys, xs = np.nonzero(ring)
    if len(xs) < max(KEEP * whole, 20):
        return None
    levels = least[y0:y1, x0:x1][ys, xs].astype(np.float64)
    u, v = xs / short, ys / short
    plane = np.stack([np.ones(len(xs)), u, v, u * u, u * v, v * v], axis=1)
    fitted, *_ = np.linalg.lstsq(plane, levels, rcond=None)
    low, high = np.percentile(levels - plane @ fitted, [10, 90])
    print_level = float(np.median(least[y : y + h, x : x + w][pip > 0]))
    if high - low > TEXTURE or np.percentile(levels, 5) - print_level < CONTRAST:
        return None
    # The flood starts from the flattest ring point near its median level: a point on the print's blurred
    # edge or a JPEG's ringing floods a few pixels and never reaches a neighbour's rim (a review).
    near = np.abs(levels - np.median(levels)) <= 3
    steep = cv2.morphologyEx(cv2.GaussianBlur(least[y0:y1, x0:x1], (3, 3), 0), cv2.MORPH_GRADIENT,
                             np.ones((3, 3), np.uint8))[ys, xs].astype(np.int32)
    middle = int(np.argmin(np.where(near, steep, 1 << 20)))
    return x0 + int(xs[middle]), y0 + int(ys[middle])


def _paper_cut(least: MatLike, seed: tuple[int, int], win: Bounds, most: float) -> bool:
    """Whether the paper round a print, from ``seed``, is a sheet of at most ``most`` pixels that runs to
    the window's rim: its light flooded from there while each pixel's level is within :data:`DRIFT` of a
    neighbour's (a vignette's gradient is followed, a card's edge is not). Such a sheet is a neighbour the
    window cuts, left alone as the detector leaves it. Paper that floods further has no outline of its
    own (a card as grey as the table or a wall it lies on) and its print counts wherever it runs."""
    filled = np.zeros((least.shape[0] + 2, least.shape[1] + 2), np.uint8)
    area = cv2.floodFill(cv2.GaussianBlur(least, (3, 3), 0), filled, seed, 0, DRIFT, DRIFT,
                         8 | cv2.FLOODFILL_MASK_ONLY | (255 << 8))[0]
    return area <= most and bool(np.any(filled[1:-1, 1:-1] & win.rim))


def _black_or_red(print_bgr: NDArray[np.uint8], paper: float) -> bool:
    """Whether a print's pixels (BGR) are a card's ink: dark (its brightest channel's median under
    :data:`INK_SHARE` of the ``paper``'s level) or red (red over blue and green by :data:`RED_OVER`, blue and
    green alike). Skin, a blue or green chip and a bronze coin are neither (a review, 2026-12-05)."""
    pixels = np.ascontiguousarray(print_bgr).reshape(-1, 1, 3)
    b, g, r = (_median(pixels, k) for k in range(3))
    return max(b, g, r) < INK_SHARE * paper or (r - max(b, g) >= RED_OVER and abs(b - g) < RED_OVER / 1.5)


def _median(levels: MatLike, channel: int = 0) -> float:
    """``numpy.median`` of an 8-bit image's ``channel`` (some pixel), exactly, from its histogram
    (:func:`vision.levels.median_under`): numpy's partition of a print's pixels cost several times more."""
    found = median_under(levels, None, channel)
    return 0.0 if found is None else found  # None: no pixel (never: a print and its box hold some)
