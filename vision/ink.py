"""Whether a bright region of the detector's mask carries ink: a card face always does, a sheet of
paper, a screen's white, a plastic box or a glare patch does not.

Why: the detector finds the card as a bright region, and a second bright region in the window is
refused as "another object" (two cards must never be read as one). But a white mouse beside the card,
a lit monitor behind it or a glare patch on it is bright too. A card face always prints ink: two
indices and the pips or the court's picture (at least a twentieth of an ace's area, far more on every
other card), and a card back prints its pattern or a dark field inside a white border; all of it is
darker than the paper, so it shows as dark pixels inside the region's outline in the same mask. A
region whose outline holds almost none of them (:data:`BLANK_INK`) is therefore no card face, no card
back and no part of one that shows its index: it is set aside, neither read nor counted. The rule is
one-sided: any ink at all keeps a region counted, so a second card, a back or a corner showing its
index still refuses the window.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

#: A region whose dark pixels inside its outline are under this share of its area is blank. An ace's
#: indices and pip are about 4 % of the card; a sheet's grain or a box's seams are well under 0.5 %.
BLANK_INK: Final = 0.005


def ink_share(binary: MatLike, outline: NDArray[np.int32] | NDArray[np.float32]) -> float:
    """The share of the area inside ``outline`` (a contour or a convex polygon, N x 1 x 2 or N x 2, in
    ``binary``'s pixels) that ``binary`` (255 for paper) holds dark: the region's ink."""
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
    dark = cv2.countNonZero(cv2.bitwise_and(inside, cv2.bitwise_not(binary[y0:y1, x0:x1])))
    return dark / area


def is_blank(binary: MatLike, outline: NDArray[np.int32] | NDArray[np.float32]) -> bool:
    """``outline``'s inside in ``binary`` holds no card's ink (:data:`BLANK_INK`)."""
    return ink_share(binary, outline) < BLANK_INK
