"""One card at a time for a card found by its outline: a second card its bright regions did not show.

Why: the detector counts every bright region wholly inside the window ("2 separate objects"), but a
second card is not always bright. A face-down back is a dark printed field; a face-up card in a
shadow, under the far side of a lamp or on a surface as pale as the paper is no brighter than what it
lies on, while the card beside it stands out. The detector then sees one card and the reader reads it,
with another card in the window: which of the two was dealt is not known. So, after the outline's card
is read, the window is looked at once more with the search by indices' own checks
(:mod:`vision.by_index`, :mod:`vision.face_down`): a dark card-sized rectangle wholly inside the window
apart from the card (at most :data:`vision.face_down.MOST_AREA` card areas: a dark mat, a tablet or a
felt whose rail shows all round is no back), or a candidate index outside the card, on paper at least
:data:`DIM_PAPER` as bright as the card's, whose card would lie wholly inside the window (within
:data:`SLACK`: a card placed from one index comes out a little large) which reads as a card alone but for
its suit's margin (:func:`vision.recognise.rank_reads`: a dim or blurred club left as near a diamond);
or a second card's grey paper, however dim, apart from the card or showing from under it
(:func:`vision.second_paper.dim_second`: a dim 10's index does not read alone), or three sides of a second
object's outline among the frame's edges (:mod:`vision.second_outline`: an object whose region joins a
pale wall or the table). Any leaves the frame unknown.
The search's looser "a rank over a suit of the deck's sizes" is not used: on martinabeleda's felt it
took a neighbour's index for a card lying across the one read.

What it leaves alone, as the detector does: a neighbouring card half out of the window (its region and
its card reach the window's edge), and a back mostly under the card (less field than
:data:`vision.face_down.LEAST_AREA`). What it costs: a dark object of a card's size and shape beside
the card (a wallet, a banknote, a phone touching it) leaves the frame unknown too, a read lost, never a
wrong one; and one ink search, one look at the grey pixels and one at the edges per card read (about
4.5 to 5 ms at 640 x 480), which frames without a card never pay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.by_index import halved, level, other_index, working
from vision.candidates import candidates, ink_pieces
from vision.face_down import MOST_AREA
from vision.index_glyphs import anchors, face_corners, to_frame
from vision.profile import DeckProfile
from vision.second_object import second_object
from vision.second_pip import glyph_share
from vision.window import ScanWindow, bounds

#: A second card's index is looked at when its paper is at least this share as bright as the card's:
#: far dimmer than the search by indices allows (:data:`vision.by_index.OTHER_PAPER`), since the card
#: here stood out by its brightness and a second card may not. The ink search's own floor
#: (:data:`vision.candidates.MIN_PAPER`, 80 of 255) still holds, and it is the higher of the two for any
#: card: a card at 0.4 of a dim room's light is not looked at (a floor that follows the card's paper
#: found it, and raised the CPU p99 on yuchenrao's set over 10 ms).
DIM_PAPER: Final = 0.3
#: A card placed from one of its indices comes out up to a tenth too large: its corners may lie this
#: share of the card's size past the window's rim and it still counts as wholly inside.
SLACK: Final = 0.1


def second_card(
    frame: MatLike, profile: DeckProfile, window: ScanWindow | None, area: tuple[float, float],
    corners: NDArray[np.float32], rank_reads: Callable[[MatLike], bool],
) -> str | None:
    """Why the window holds a second card besides the one read at ``corners`` (frame pixels, in the order
    the face's corners are warped from), or None. ``area``: the least and greatest card area, shares of
    the frame; ``rank_reads``: whether one index crop alone reads as a card but for its suit's margin."""
    small, shrink = working(frame)
    quad = np.asarray(corners, np.float32).reshape(4, 2) * np.float32(shrink)
    win = bounds(window, (small.shape[1], small.shape[0]))
    half, at_half, win_half = halved(small, quad, window)
    second = second_object(half, at_half, win_half, glyph_share(profile), MOST_AREA)
    if second is not None:
        return second
    centres, stats, scales, paper = ink_pieces(small, profile, *area)
    found = candidates(centres, stats, profile, scales)
    face = np.array(face_corners(profile), np.float32)
    plane = cv2.getPerspectiveTransform(face, quad).astype(np.float64)
    suits = to_frame(plane, [anchors(profile)[k] for k in (1, 3)])
    slack = SLACK * float(np.sqrt(cv2.contourArea(quad)))
    card_paper = max(level(paper, np.clip(s, 0, [small.shape[1] - 1, small.shape[0] - 1])) for s in suits)
    return other_index(frame, quad, found, paper, card_paper, profile, shrink, rank_reads,
                       within=lambda q: win.within(q, slack), least_paper=DIM_PAPER, shown=False,
                       reads="reads as a card by its rank")
