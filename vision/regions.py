"""The 8-connected regions of a binary mask: one way for every stage that labels ink, paper or a back.

Why not :func:`cv2.connectedComponentsWithStats` as it is: its default for 8-connectivity
(Spaghetti, 32-bit labels) cost 0.8 ms on the ink search's 480 x 360 working frame, mostly
sparse ink, where the same algorithm writing 16-bit labels took 0.3 ms (OpenCV 4.14, one
thread, this project's development machine; ``bench/vision_profile.py`` ranks the stages). The
labels, the statistics and the centroids are exactly the default's (the same algorithm; only
the label image's type differs, and its values are the same numbers), which a test checks on
masks of every density. Every label, final or provisional, is given at a set pixel, so a mask
with fewer set pixels than 16 bits count gets 16-bit labels whatever its size: a portrait
frame's 480 x 563 ink search (33,000 ink pixels in 253 pieces) paid 1.1 ms for 32-bit labels
against 0.7 ms. Only a mask that could hold more regions than 16 bits count (more set pixels,
over about 262,000 pixels in all) is labelled with 32-bit labels, as before: OpenCV before 4.13
overflowed a 16-bit label image silently, corrupting memory, so that is never tried and caught.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

#: The most labels a 16-bit label image holds (the background is label 0).
MOST_16BIT: Final = 65535


def labelled(binary: MatLike) -> tuple[int, MatLike]:
    """:func:`components`' count and label image without the statistics and centroids, for a caller that
    counts its own (:func:`vision.index_split.with_faded`): on an index crop OpenCV's statistics cost twice
    the labelling itself (6 us labelled, 22 us with statistics, a 49 x 107 crop). The same algorithm and
    label type as :func:`components`, so the same labels."""
    n, labels = cv2.connectedComponentsWithAlgorithm(binary, 8, _label_type(binary), cv2.CCL_SPAGHETTI)
    return n, labels


def _label_type(binary: MatLike) -> int:
    """16-bit labels where every region the mask could hold fits, else 32-bit (see the module)."""
    h, w = binary.shape[:2]
    most = ((h + 1) // 2) * ((w + 1) // 2)  # 8-connected regions are at least a pixel apart both ways
    fits = most < MOST_16BIT or cv2.countNonZero(binary) < MOST_16BIT
    return cv2.CV_16U if fits else cv2.CV_32S


def components(binary: MatLike) -> tuple[int, MatLike, MatLike, MatLike]:
    """The 8-connected regions of ``binary``: their count (the background included, as OpenCV's), the
    label image (16-bit where every region the mask could hold fits, else 32-bit), the statistics (x, y, w, h,
    pixels per label) and the centroids, exactly as :func:`cv2.connectedComponentsWithStats` gives them."""
    n, labels, stats, centroids = cv2.connectedComponentsWithStatsWithAlgorithm(
        binary, 8, _label_type(binary), cv2.CCL_SPAGHETTI)
    return n, labels, stats, centroids


def areas(labels: MatLike, n: int) -> NDArray[np.int64]:
    """Each of the ``n`` labels' pixel count in the label image ``labels`` (:func:`labelled`'s): the
    statistics' ``CC_STAT_AREA``, exactly (a histogram of the labels, counts far below float32's exact
    integers). Why: OpenCV's statistics cost a few nanoseconds a set pixel, so on a dense mask (a dark
    frame's closing, three quarters set) they cost five times the labelling; a caller that needs only the
    sizes, and the boxes of a few, counts them so (:func:`vision.face_down.face_down`)."""
    counts = cv2.calcHist([labels], [0], None, [n], [0, n]).ravel()
    return np.asarray(counts, np.float64).astype(np.int64)
