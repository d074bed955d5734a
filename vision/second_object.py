"""One card at a time after a card is read, whichever search read it: the looks for a second object that
the search's own regions did not show.

Why a module of its own: the card found by its outline (:mod:`vision.one_card`) and the card found by its
indices (:mod:`vision.by_index`) ask the same three questions of the same half-size frame
(:func:`vision.by_index.halved`): a dark card-sized rectangle (:func:`vision.face_down.face_down`), a
second card's grey paper however dim (:func:`vision.second_paper.dim_second`), three sides of a second
object's outline (:func:`vision.second_outline.second_outline`), a second card's large pip on its paper
(:func:`vision.second_pip.large_pip`: last, so the outline's words stay where both find the object). One
function keeps their order (the first that finds an object ends the look) and their words the same for both.

Why a plain window passes with the first look alone: the last three cost 2 to 10 ms a card read (the second
outline most), while on most frames the window beside the card holds nothing but the table. Every object they
find shows edges there: a second card's or a back's outline, a dim paper's step in tint from a coloured table,
a large pip's rim, and the second outline's own sides are steps of light or colour found by the same edge
test. So the window beside the card is looked at in 2 x 2 block means of the half frame first
(:func:`plain_beside`): with fewer edge pixels there than :data:`PLAIN` of the card's short side (an object's
outline is three or more short sides long, a large pip's rim about 0.6 of one), the three are not run. Not a
proof, a measure: on the five photo sets and the drawn sweeps (two objects, side by side, tilted pairs with a
second card or a back, the drawn designs; two objects again darkened, blurred and brightened), 2,343 of 5,708
windows looked at were plain, none of them where one of the three would have found an object, and no window
with a second object drawn in it was (2026-12-06). The dark back's look runs always: it is cheap, and a dark
back on a dark felt may show few edges. About 0.2 ms a card read (0.35 on a portrait photograph 640 wide); on
a plain window it saves 2 to 9 ms. On a cluttered frame (a monitor, a keyboard, wood's grain) the window is
never plain and every look runs, as before: the slowest frames are no faster.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.face_down import face_down
from vision.levels import block_mean, least_channel, tint_of
from vision.second_outline import light_edges, second_outline, tint_edges
from vision.second_paper import dim_second
from vision.second_pip import large_pip
from vision.window import Bounds, side_lengths

#: The window beside the card is plain when it holds fewer edge pixels (at a quarter of the working size)
#: than this share of the card's short side there: a large pip's rim, the least an object of the looks
#: shows, is about 0.6 of it (a disc 0.2 of the short side across).
PLAIN: Final = 0.5
#: The card's outline, widened by this many pixels at a quarter of the working size, is not beside it: its
#: own edge, and corners placed from the indices a few working pixels off.
CARD_MARGIN: Final = 2


def second_object(half: MatLike, quad: NDArray[np.float32], win: Bounds, glyph: float,
                  most_area: float | None = None, placed: bool = False) -> str | None:
    """Why the window (``win``, in the half-size frame ``half``) holds a second object besides the card
    read at ``quad`` (pixels of ``half``), or None. ``glyph``: the deck's tallest index glyph as a share of
    the card's short side (:func:`vision.second_pip.glyph_share`). ``most_area``: a dark rectangle larger
    than that many of the card's areas is no back (:func:`vision.face_down.face_down`; None: no bound).
    ``placed``: the card's corners were placed from its indices, not found on its outline
    (:func:`vision.second_outline.second_outline` then judges the frame as seen too)."""
    least = least_channel(half)  # for the looks at a back and at a large pip: one split of the half frame
    if face_down(half, quad, win, most_area, least):
        return ("a dark rectangle of a card's size in the window: a back, or a card in shadow "
                "(one card at a time)")
    if plain_beside(half, quad, win):
        return None  # no edges beside the card: nothing for the looks below to find
    seen = tint_of(half)  # blurred once for the looks at a dim card's paper and at an outline as seen
    if dim_second(half, quad, win, seen):
        return "a second card's paper in the window, however dim (one card at a time)"
    if second_outline(half, quad, win, placed, seen):
        return "a second object's outline in the window (one card at a time)"
    if large_pip(half, quad, win, glyph, least):
        return "a second card's large pip on its paper in the window (one card at a time)"
    return None


def plain_beside(half: MatLike, quad: NDArray[np.float32], win: Bounds) -> bool:
    """Whether the window (``win``, in the half-size frame ``half``) holds next to no edges beside the card
    at ``quad`` (pixels of ``half``), looked at in 2 x 2 block means of it: fewer edge pixels (Canny on the
    grey and the tint, as the second outline finds them) outside the card's widened outline and inside the
    window (its rim's own step left out) than :data:`PLAIN` of the card's short side there. Canny's: a
    plain gradient over its lower threshold marks a felt's or a paper's fine grain too (a trial found
    next to no frame plain so)."""
    small = block_mean(half, 2)
    rows, cols = small.shape[:2]
    at = np.asarray(quad, np.float32).reshape(4, 2) * np.float32(cols / half.shape[1])
    if win.inside is None:  # the whole frame, eroded from its edge: all set but the one-pixel border
        beside = np.zeros((rows, cols), np.uint8)
        beside[1:-1, 1:-1] = 255
    else:
        inside = block_mean(win.inside, 2)  # a block on the rim, partly outside, is outside
        beside = cv2.threshold(inside, 254, 255, cv2.THRESH_BINARY)[1]
        beside = cv2.erode(beside, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
    card = np.zeros_like(beside)
    cv2.fillConvexPoly(card, np.round(at).astype(np.int32), 255)
    card = cv2.dilate(card, np.ones((2 * CARD_MARGIN + 1, 2 * CARD_MARGIN + 1), np.uint8))
    beside = cv2.subtract(beside, card)  # cleared where the widened card (0 or 255) is set
    least = PLAIN * min(side_lengths(at))
    seen = tint_of(small)
    edges = cv2.bitwise_and(light_edges(seen), beside)
    if cv2.countNonZero(edges) >= least:
        return False  # a cluttered window: the tint's edges need not be found (most of the slowest frames)
    return cv2.countNonZero(cv2.bitwise_or(edges, cv2.bitwise_and(tint_edges(seen), beside))) < least
