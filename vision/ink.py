"""Whether a bright region of the detector's mask carries ink: a card face always does, a sheet of
paper, a screen's white, a plastic box or a glare patch does not.

Why: the detector finds the card as a bright region, and a second bright region in the window is
refused as "another object" (two cards must never be read as one). But a white mouse beside the card,
a lit monitor behind it or a glare patch on it is bright too. A card face always prints ink: two
indices and the pips or the court's picture (at least a twentieth of an ace's area, far more on every
other card), and a card back prints its pattern or a dark field inside a white border; all of it is
darker than the paper around it or coloured (a red pip), so it shows as marks inside the region's
outline. An odd-shaped region whose outline holds almost none of them (:data:`BLANK_INK`) is
therefore no card face and no part of one that shows its index: it is set aside, neither read nor
counted. The rule is one-sided: any ink at all keeps a region counted, so a second card or a corner
showing its index still refuses the window. A back need not print ink (a plain pale back, or any
card washed out by glare, shows none), so a card-shaped region always counts, inked or not
(:func:`vision.detect._choose`): only odd shapes are set aside for want of ink.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

#: A region whose ink covers under this share of its area is blank. An ace's indices and pip are
#: 2.5 to 4 % of the card as the detector sees it (the least of 736 card regions of real photographs
#: and composed scenes: 2.5 %; of 500 synthetic backs, jokers and card pairs: 3.1 %); a sheet, a
#: screen's white or a glare patch has none, a white box's seams and logo 0.8 %.
BLANK_INK: Final = 0.01
#: A mark is ink when it is darker than its surroundings by this share of the region's paper (its
#: 90th percentile of grey): a black pip by four fifths, a red one (grey 0.3 R + 0.6 G + 0.1 B) by
#: half; a sheet's grain and the soft shading across a box by a few hundredths.
INK_DEPTH: Final = 0.25
#: ... or more coloured than the paper by this much (max - min of B, G, R): red ink, a coloured back.
INK_CHROMA: Final = 40
#: Marks up to this wide (working pixels) are found by their depth against the paper around them; wider
#: dark fields (a back's, a court's robe) are holes in the detector's mask or coloured.
MARK: Final = 9


class Ink:
    """The working frame's grey and colour, to tell a region's ink from its paper (:meth:`blank`)."""

    def __init__(self, grey: MatLike, colour: MatLike) -> None:
        self.grey, self.colour = grey, colour

    def share(self, binary: MatLike, outline: NDArray[np.int32] | NDArray[np.float32]) -> float:
        """The share of the area inside ``outline`` (N x 1 x 2 or N x 2 points of the working frame)
        that is ink: a hole in the detector's mask ``binary`` (darker than its level), a mark deeper
        than :data:`INK_DEPTH` against the paper around it, or colour beyond the paper's by
        :data:`INK_CHROMA`. Not a fixed level alone: on dark felt the mask's level is low and a red pip
        is brighter than it; nor the region's brightest paper alone: a box's shaded side is dark."""
        pts = np.round(outline).astype(np.int32).reshape(-1, 1, 2)
        x, y, w, h = cv2.boundingRect(pts)
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + w, binary.shape[1]), min(y + h, binary.shape[0])
        if x1 <= x0 or y1 <= y0:
            return 0.0
        inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.drawContours(inside, [pts - np.array([x0, y0], np.int32)], -1, 255, -1)
        area = cv2.countNonZero(inside)
        if area == 0:
            return 0.0
        grey = np.ascontiguousarray(self.grey[y0:y1, x0:x1])
        counts = cv2.calcHist([grey], [0], inside, [256], [0, 256]).ravel()
        paper = int(np.searchsorted(np.cumsum(counts), 0.9 * area))
        colour = self.colour[y0:y1, x0:x1]
        chroma = cv2.subtract(cv2.max(cv2.max(colour[..., 0], colour[..., 1]), colour[..., 2]),
                              cv2.min(cv2.min(colour[..., 0], colour[..., 1]), colour[..., 2]))
        white = (inside > 0) & (grey >= paper)
        tint = float(np.median(chroma[white])) if white.any() else 0.0
        deep = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, np.ones((MARK, MARK), np.uint8)) > INK_DEPTH * paper
        ink = (binary[y0:y1, x0:x1] == 0) | deep | (chroma > tint + INK_CHROMA)
        return int(np.count_nonzero(ink & (inside > 0))) / area

    def blank(self, binary: MatLike, outline: NDArray[np.int32] | NDArray[np.float32]) -> bool:
        """``outline``'s inside holds no card's ink (:data:`BLANK_INK`)."""
        return self.share(binary, outline) < BLANK_INK
