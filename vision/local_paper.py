"""A card in shadow: its paper found against the paper around it, when one brightness level loses part of it.

Why: the detector's looks (:mod:`vision.detect`) find the paper as what is brighter than one level for
the whole frame. Under a lamp at one side, or in a hand's shadow, part of the card's paper (most often
the thin margin between an index and the border, on the far side from the lamp) is darker than that
level, while the table beside it is darker still. The region found then has a notch or extra corners
and is refused as an odd outline, though the card is plain to see; or, when a shadow's straight edge
crosses the card parallel to its end, it is the lit part alone, a clean rectangle too short for a card;
and when the edge leaves a lit part a half to two thirds of the card long, that part has a card's
proportions turned a quarter and is taken for a card lying across, whose index boxes fall on blank paper.
Paper is brighter than what is *near* it, whatever the light: a threshold against the local mean
(:func:`cv2.adaptiveThreshold`, a block about a fifth of the working frame wide, else two fifths)
finds the whole card there.

What guards it: it runs only after a refusal for the outline's shape or proportions (:data:`LOCAL`) where
exactly one such region lies in the window, or, when the reader asks because a card found did not read,
after that card if paper in shadow lies beyond one of its sides (:func:`lit_part`; the card found must
then be larger); the card it finds must pass every check of the detector's own (four corners, no notch,
sides on the contour, a card's proportions, wholly inside the window, one object), have every side on the
frame's strong edges, paper at each of its four corners (two overlapping cards a little apart can make an
outline that passes for one card's, and table shows at two of its corners), and hold all of the refused
region (a card and a hand, or a card and a sheet beside it, make a region that one card's outline cannot
hold), whose hull in turn spans half of it or more.

What it does not guard, as the first look does not: two cards lying squarely one on the other, offset
only along one side, make a rectangle near a card's proportions with paper at all four corners. The
detector finds that outline with or without a shadow; the reader then needs both index boxes to read
one card, which only the card on top can give (the one underneath shows one index at most), so the
card read is the top card's, and the card under it goes unremarked (``tests/test_vision_local_paper.py``
pins both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.mend import R, holds
from vision.refusal import Refusal
from vision.rim import sharp_outline

#: The first look's refusals of one region alone after which the paper is looked for locally: an odd
#: outline (a shaded margin's notch or extra corners), and a clean four-sided one of other proportions
#: than a card's (a shadow's edge across the card, parallel to a side, leaves the lit part a rectangle).
LOCAL: Final = (Refusal.SHAPE, Refusal.PROPORTIONS)
#: The local mean's blocks, as shares of the working frame's width (made odd), tried in turn. A fifth
#: finds a card whose margin alone lies in shadow; along a shadow's straight edge across the card, that
#: block straddles lit and shaded paper, the shaded paper beside the edge is darker than its mean, and
#: the card found is notched there (refused for its corners): a block twice as wide takes in the table
#: beyond the card as well, and the shaded paper is brighter than that mean. Of 576 drawn frames at half
#: the light beyond such an edge, 355 read with both blocks, 276 with the first alone, none as another card.
BLOCKS: Final = (0.2, 0.4)
#: A pixel is paper when it is brighter than the mean of its block (rounded) by more than this many
#: grey levels (:func:`cv2.adaptiveThreshold`'s rule with a negative constant).
OVER_MEAN: Final = 5
#: Each corner of the card found must be paper over this share of its corner patch (the card's corner
#: and :data:`CORNER` of each side from it): a rounded corner leaves about 0.97 of it, and every card
#: found this way on the real and drawn sets 0.87 or more; two overlapping cards whose union passes for
#: one card's outline leave table showing at two corners (0.54 or less in the drawn scenes, cards offset
#: by a sixth of their width).
MIN_CORNER: Final = 0.75
CORNER: Final = 0.15
#: The refused region's convex hull must cover this share of the card found: the look completes a card
#: the first look saw at least half of, and never builds one about a fragment. Not more: when a
#: shadow's straight edge (a sleeve's, the shoe's lip) crosses the card, the first look keeps only the
#: lit part, 0.62 of the card or more in the drawn scenes. With 0.85 (until 2026-12-04), a card whose
#: far part lay at half the light beyond an edge 20 to 40 px past its middle (a ninth to a fifth of its
#: width) was refused: of 2,304 such drawn scenes, 67 more read now, each as itself, and none read as
#: another card with either value. The hull, not the region: a court card's paper opened at an index
#: is a ring about its picture, whose own area is a third of the card's and whose hull is the card's.
MIN_HELD: Final = 0.5


def local_card(
    region: NDArray[np.int32], grey: MatLike, edges: NDArray[np.uint8], choose: Callable[[MatLike], R | None],
) -> R | None:
    """The card that the refused odd ``region`` (its contour) is part of, found in ``grey`` (the blurred
    grey working frame) by local paper (each of :data:`BLOCKS` in turn), or None. ``edges``: the frame's
    strong edges; ``choose``: the detector's own choice of the one card among a mask's regions."""
    for share in BLOCKS:
        card = _local_card(region, grey, edges, choose, max(3, int(share * grey.shape[1]) | 1))
        if card is not None:
            return card
    return None


def _local_card(
    region: NDArray[np.int32], grey: MatLike, edges: NDArray[np.uint8], choose: Callable[[MatLike], R | None],
    block: int,
) -> R | None:
    """:func:`local_card` with one block (pixels, odd)."""
    paper = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -OVER_MEAN)
    card = choose(paper)
    if card is None or card.kind != "card" or card.quad is None or card.contour is None:
        return None
    if not sharp_outline(card.quad, edges) or min(corner_paper(card.quad, card.contour)) < MIN_CORNER:
        return None
    inside = np.zeros(grey.shape[:2], np.uint8)
    cv2.drawContours(inside, [region.reshape(-1, 1, 2)], -1, 255, -1)
    if not holds(card.quad, inside):
        return None
    return card if cv2.contourArea(cv2.convexHull(region)) >= MIN_HELD * cv2.contourArea(card.quad) else None


def corner_paper(quad: NDArray[np.float32], contour: NDArray[np.int32]) -> list[float]:
    """For each corner of ``quad``: the share of its corner patch (a parallelogram on the corner reaching
    :data:`CORNER` of each side along it) inside ``contour`` (the region found, its holes filled)."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(np.int32) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(np.int32) + 2
    paper = np.zeros((int(y1 - y0), int(x1 - x0)), np.uint8)
    cv2.drawContours(paper, [contour.reshape(-1, 1, 2)], -1, 255, -1, offset=(-int(x0), -int(y0)))
    shares = []
    for k in range(4):
        at, after, before = quad[k], quad[(k + 1) % 4] - quad[k], quad[k - 1] - quad[k]
        patch = np.array([at, at + CORNER * after, at + CORNER * (after + before), at + CORNER * before])
        mask = np.zeros_like(paper)
        cv2.fillConvexPoly(mask, np.rint(patch - (x0, y0)).astype(np.int32), 255)
        shares.append(cv2.countNonZero(cv2.bitwise_and(mask, paper)) / max(cv2.countNonZero(mask), 1))
    return shares


#: A card the looks found may be only its lit part when the strip just beyond one of its sides is paper
#: under less light: this share of the strip just inside in brightness (a card's edge against the drawn
#: scenes' dark felt gives 0.2; a shadow at 0.5 or 0.6 of the light most often 0.5 to 0.6) ...
SHADED: Final = (0.3, 0.8)
#: ... and of the same colour, each channel's share of the brightness within this (wood, a coloured felt
#: beside the card is not its paper).
SAME_PAPER: Final = 0.02
#: The strips lie from 3 to 7 working pixels off the side (past the blur; an arange's bounds), along its
#: middle 70 %.
STRIP: Final = (3, 8)
#: The card found by local paper replaces the lit part when its area is more than this many times the
#: lit part's: in the drawn shadow-edge scenes a lit part taken for a card is 0.85 of the card or less
#: (growth 1.18 or more), and a card found again as itself measures within a few hundredths of its area.
GROWN: Final = 1.15


def lit_part(
    found: R, colour: Callable[[], MatLike], grey: MatLike, edges: Callable[[], NDArray[np.uint8]],
    choose: Callable[[MatLike], R | None], scale: float,
) -> Callable[[], NDArray[np.float32] | None]:
    """:func:`beyond_shadow`, put off until called: the whole card's corners in the frame's pixels (the
    working frame's divided by ``scale``), or None; ``edges``: the frame's strong edges, when asked.

    Why put off: a card the looks found is read first, and only one that does not read is questioned.
    Neutral grey at about half the paper's light beside a card (a grey sheet, grey paper, a second card
    in shadow) passes for paper in shadow beyond a side, and the look by local paper can find a larger
    outline about the card and the grey; asked of every card found (72a8995 to 9b2a1cd) it replaced cards
    that read with such outlines, and it cost every frame the strip test."""
    def whole() -> NDArray[np.float32] | None:
        card = beyond_shadow(found, colour(), grey, edges(), choose)
        return None if card is None or card.quad is None else card.quad / scale
    return whole


def beyond_shadow(
    found: R, colour: MatLike, grey: MatLike, edges: NDArray[np.uint8], choose: Callable[[MatLike], R | None],
) -> R | None:
    """The whole card when the card the looks ``found`` (its outline in working pixels) is only the part
    of it lit beyond a shadow's straight edge, or None.

    Why: such a lit part is a clean four-sided outline, and one a half to two thirds of the card's length
    has a card's proportions turned a quarter (the looks take it for a card lying across), so it is
    never refused and the look after refusals never follows it; its index boxes then fall on blank
    paper and the card is unknown. Only a side with paper in shadow beyond it (:func:`shaded_side` on the
    colour working frame ``colour``) costs the look; the card found must be larger by :data:`GROWN` and
    pass every guard of :func:`local_card`."""
    quad, region = found.quad, found.contour
    if quad is None or region is None or not shaded_side(quad, colour):
        return None
    card = local_card(region, grey, edges, choose)
    if card is None or card.quad is None or cv2.contourArea(card.quad) <= GROWN * cv2.contourArea(quad):
        return None
    return card


def shaded_side(quad: NDArray[np.float32], colour: MatLike) -> bool:
    """Whether a side of ``quad`` has paper in shadow beyond it (:data:`SHADED`, :data:`SAME_PAPER`): the
    median colours of the strips :data:`STRIP` pixels off it, outside and inside, compared. All four
    sides in one pass (a pass each cost more in numpy's calls than in arithmetic); a strip past the
    frame's edge repeats the edge's pixels. Blue, green and red alone: enrolment's captures pass BGRA
    frames, whose alpha would count as a fourth colour in the tint."""
    frame = np.asarray(colour)
    h, w = frame.shape[:2]
    step = np.roll(quad, -1, axis=0) - quad  # each side, from its corner to the next
    normal = np.stack([-step[:, 1], step[:, 0]], axis=1) / np.maximum(np.hypot(*step.T), 1e-6)[:, None]
    normal *= np.where(np.einsum("ij,ij->i", quad + step / 2 - quad.mean(axis=0), normal) < 0, -1, 1)[:, None]
    along = np.linspace(0.15, 0.85, 24, dtype=np.float32)[None, None, :, None, None]
    off = np.arange(*STRIP, dtype=np.float32)[None, :] * np.array([[1], [-1]], np.float32)  # outside, inside
    at = (quad[:, None, None, None, :] + along * step[:, None, None, None, :]
          + off[None, :, None, :, None] * normal[:, None, None, None, :])
    x = np.clip(np.rint(at[..., 0]), 0, w - 1).astype(np.intp)
    y = np.clip(np.rint(at[..., 1]), 0, h - 1).astype(np.intp)
    strips = np.median(frame[y, x, :3].reshape(4, 2, -1, 3), axis=2)  # side, outside or inside, channel
    light = np.maximum(strips.sum(axis=2), 1.0)
    ratio = light[:, 0] / light[:, 1]
    tint = np.abs(strips[:, 0] / light[:, :1] - strips[:, 1] / light[:, 1:]).max(axis=1)
    return bool(np.any((ratio >= SHADED[0]) & (ratio <= SHADED[1]) & (tint < SAME_PAPER)))
