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
    pixels per label) and the centroids, exactly as :func:`cv2.connectedComponentsWithStats` gives them.

    A large mask whose set pixels lie in a box well short of it is labelled within that box only
    (:func:`_boxed`): OpenCV's statistics visit every pixel, the background's too, and the ink search's
    480 x 360 mask holds its ink in a third to a half of the frame (0.27 ms whole, 0.15 ms boxed)."""
    ltype = _label_type(binary)
    h, w = binary.shape[:2]
    if h * w >= BOX_FROM:
        x, y, bw, bh = cv2.boundingRect(binary)  # of the set pixels: the mask is 8-bit
        box = (x - x % 2, y - y % 2, x + bw, y + bh)
        if bw and (box[2] - box[0]) * (box[3] - box[1]) <= BOX_SHARE * h * w:
            return _boxed(binary, ltype, box)
    n, labels, stats, centroids = cv2.connectedComponentsWithStatsWithAlgorithm(
        binary, 8, ltype, cv2.CCL_SPAGHETTI)
    return n, labels, stats, centroids


#: A mask of at least this many pixels is labelled within its set pixels' box (:func:`components`) when
#: that box is at most :data:`BOX_SHARE` of it: finding the box costs a tenth of labelling the mask.
BOX_FROM: Final = 20_000
BOX_SHARE: Final = 0.7


def _boxed(
    binary: MatLike, ltype: int, box: tuple[int, int, int, int],
) -> tuple[int, MatLike, MatLike, MatLike]:
    """:func:`components` of ``binary`` labelled within ``box`` (x0, y0, x1, y1: every set pixel, its
    origin at even columns and rows), exactly the whole mask's.

    Why the same: the labelling scans the mask in 2 x 2 blocks, row of blocks after row, and numbers
    the regions in the order their first block is met; a box on the same grid of blocks (an even
    origin) meets them in that order, and past it lies only background. The regions' boxes move by the
    box's origin; their centroids are their pixels' coordinates summed (integers, exact in float64 below
    2**51, recovered from the box's centroids times the areas) and divided by the area, as OpenCV
    divides; the background's are the whole mask's less the regions'."""
    h, w = binary.shape[:2]
    x0, y0, x1, y1 = box
    n, part, stats, centroids = cv2.connectedComponentsWithStatsWithAlgorithm(
        binary[y0:y1, x0:x1], 8, ltype, cv2.CCL_SPAGHETTI)
    labels = np.zeros((h, w), part.dtype)
    labels[y0:y1, x0:x1] = part
    area = stats[1:, cv2.CC_STAT_AREA].astype(np.float64)[:, None]
    sums = np.rint(centroids[1:] * area) + np.array([x0, y0], np.float64) * area
    centroids[1:] = sums / area
    stats[1:, :2] += np.array([x0, y0], np.int32)
    # The background: the pixels outside the box (a whole row or column of the mask, or a band past the box
    # at one side) and the box's own, if any.
    rows, cols = y0 > 0 or y1 < h, x0 > 0 or x1 < w
    left, right = (0 if rows or x0 > 0 else x1), (w - 1 if rows or x1 < w else x0 - 1)
    top, bottom = (0 if cols or y0 > 0 else y1), (h - 1 if cols or y1 < h else y0 - 1)
    inside = int(stats[0, cv2.CC_STAT_AREA])
    if inside:
        bx, by, bw, bh = (int(v) for v in stats[0, :4])
        left, top = min(left, bx + x0), min(top, by + y0)
        right, bottom = max(right, bx + x0 + bw - 1), max(bottom, by + y0 + bh - 1)
    pixels = h * w - int(area.sum())
    stats[0] = (left, top, right - left + 1, bottom - top + 1, pixels)
    sx, sy = sums.sum(axis=0) if n > 1 else (0.0, 0.0)
    centroids[0] = ((h * (w * (w - 1) // 2) - int(sx)) / pixels, (w * (h * (h - 1) // 2) - int(sy)) / pixels)
    return n, labels, stats, centroids


def areas(labels: MatLike, n: int, mask: MatLike | None = None) -> NDArray[np.int64]:
    """Each of the ``n`` labels' pixel count in the label image ``labels`` (:func:`labelled`'s), of those
    where ``mask`` is set (all if None): without a mask the statistics' ``CC_STAT_AREA``, exactly (a
    histogram of 16-bit labels, counts far below float32's exact integers; numpy's count of 32-bit ones,
    which OpenCV's histogram does not take). Why: OpenCV's statistics cost a few nanoseconds a set pixel,
    so on a dense mask (a dark frame's closing, three quarters set) they cost five times the labelling; a
    caller that needs only the sizes, and the boxes of a few, counts them so
    (:func:`vision.face_down.face_down`), or a piece's pixels of one kind (:mod:`vision.index_split`)."""
    if labels.dtype == np.uint16:
        counts = cv2.calcHist([labels], [0], mask, [n], [0, n]).ravel()
        return np.asarray(counts, np.float64).astype(np.int64)
    flat = labels.ravel()
    return np.bincount(flat if mask is None else flat[mask.ravel() > 0], minlength=n)
