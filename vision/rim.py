"""Whether a card found by a brightness level has a card's outline: a sharp edge in the frame all round,
not the soft rim of a glare.

Why: the detector's brighter looks part a card from a dimmer vignette or a glare's halo by raising the
brightness level; but a lamp's glare on the card is brighter than the card's paper, so at a high level
the glare alone can stand out as a card-shaped patch, and reading it reads a piece of the face. A card's
outline is a step from paper to table, sharp under any light; the rim of a glare fades over many
pixels. So a quadrilateral found that way is kept only when every side lies along the frame's edges
(Canny) over a good share of its length, as :mod:`vision.sides` asks of a card recovered from runs.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.sides import MIN_SIDE_SUPPORT, side_support

#: Why a card found by a brightness level is refused when :func:`sharp_outline` finds no card's outline.
GLARE: Final = "the brightest patch's outline is no edge in the frame (a glare)"


def edge_map(grey: MatLike, low: int, high: int) -> NDArray[np.uint8]:
    """The frame's strong edges (Canny on the blurred grey working frame), widened by a pixel."""
    return np.asarray(cv2.dilate(cv2.Canny(grey, low, high), np.ones((3, 3), np.uint8)), np.uint8)


def sharp_outline(quad: NDArray[np.float32], edges: NDArray[np.uint8]) -> bool:
    """Every side of ``quad`` (working pixels) runs along ``edges`` over :data:`MIN_SIDE_SUPPORT` of
    its middle 80 %, within two pixels (the fitted sides are sub-pixel, Canny's edge is not)."""
    near = np.asarray(cv2.dilate(edges, np.ones((3, 3), np.uint8)), np.uint8)
    return min(side_support(quad, near)) >= MIN_SIDE_SUPPORT
