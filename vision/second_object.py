"""One card at a time after a card is read, whichever search read it: the looks for a second object that
the search's own regions did not show.

Why a module of its own: the card found by its outline (:mod:`vision.one_card`) and the card found by its
indices (:mod:`vision.by_index`) ask the same three questions of the same half-size frame
(:func:`vision.by_index.halved`): a dark card-sized rectangle (:func:`vision.face_down.face_down`), a
second card's grey paper however dim (:func:`vision.second_paper.dim_second`), three sides of a second
object's outline (:func:`vision.second_outline.second_outline`), a second card's large pip on its paper
(:func:`vision.second_pip.large_pip`: last, so the outline's words stay where both find the object). One
function keeps their order (the first that finds an object ends the look) and their words the same for both.
"""

from __future__ import annotations

import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.face_down import face_down
from vision.levels import tint_of
from vision.second_outline import second_outline
from vision.second_paper import dim_second
from vision.second_pip import large_pip
from vision.window import Bounds


def second_object(half: MatLike, quad: NDArray[np.float32], win: Bounds, glyph: float,
                  most_area: float | None = None, placed: bool = False) -> str | None:
    """Why the window (``win``, in the half-size frame ``half``) holds a second object besides the card
    read at ``quad`` (pixels of ``half``), or None. ``glyph``: the deck's tallest index glyph as a share of
    the card's short side (:func:`vision.second_pip.glyph_share`). ``most_area``: a dark rectangle larger
    than that many of the card's areas is no back (:func:`vision.face_down.face_down`; None: no bound).
    ``placed``: the card's corners were placed from its indices, not found on its outline
    (:func:`vision.second_outline.second_outline` then judges the frame as seen too)."""
    if face_down(half, quad, win, most_area):
        return ("a dark rectangle of a card's size in the window: a back, or a card in shadow "
                "(one card at a time)")
    seen = tint_of(half)  # blurred once for the looks at a dim card's paper and at an outline as seen
    if dim_second(half, quad, win, seen):
        return "a second card's paper in the window, however dim (one card at a time)"
    if second_outline(half, quad, win, placed, seen):
        return "a second object's outline in the window (one card at a time)"
    if large_pip(half, quad, win, glyph):
        return "a second card's large pip on its paper in the window (one card at a time)"
    return None
