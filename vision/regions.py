"""The 8-connected regions of a binary mask: one way for every stage that labels ink, paper or a back.

Why not :func:`cv2.connectedComponentsWithStats` as it is: its default for 8-connectivity
(Spaghetti, 32-bit labels) cost 0.8 ms on the ink search's 480 x 360 working frame, mostly
sparse ink, where the same algorithm writing 16-bit labels took 0.3 ms (OpenCV 4.14, one
thread, this project's development machine; ``bench/vision_profile.py`` ranks the stages). The
labels, the statistics and the centroids are exactly the default's (the same algorithm; only
the label image's type differs, and its values are the same numbers), which a test checks on
masks of every density. A mask that could hold more regions than 16 bits count (over about
262,000 pixels: every other pixel of every other row a region of its own) is labelled with
32-bit labels, as before.
"""

from __future__ import annotations

from typing import Final

import cv2
from cv2.typing import MatLike

#: The most labels a 16-bit label image holds (the background is label 0).
MOST_16BIT: Final = 65535


def components(binary: MatLike) -> tuple[int, MatLike, MatLike, MatLike]:
    """The 8-connected regions of ``binary``: their count (the background included, as OpenCV's), the
    label image (16-bit where every possible region fits, else 32-bit), the statistics (x, y, w, h,
    pixels per label) and the centroids, exactly as :func:`cv2.connectedComponentsWithStats` gives them."""
    h, w = binary.shape[:2]
    most = ((h + 1) // 2) * ((w + 1) // 2)  # 8-connected regions are at least a pixel apart both ways
    ltype = cv2.CV_16U if most < MOST_16BIT else cv2.CV_32S
    n, labels, stats, centroids = cv2.connectedComponentsWithStatsWithAlgorithm(
        binary, 8, ltype, cv2.CCL_SPAGHETTI)
    return n, labels, stats, centroids
