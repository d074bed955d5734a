"""Levels of a working frame: a grey level's percentile read from its histogram, each pixel's least channel.

Why: the detector's brighter looks need the brightest paper's level (the 99th percentile of the
window's grey levels) once per frame that reaches them; :func:`numpy.percentile` partly sorts the whole
frame for it, which cost more than those looks' own thresholding and contours. An 8-bit frame has 256
levels, so its histogram gives every order statistic; where the percentile falls between two equal
order statistics (almost always, with thousands of pixels per level) that level is the exact answer,
and otherwise numpy's own interpolation is used, so the value is always numpy's. The least of a
pixel's three channels makes red ink as dark as black (the search by indices, :mod:`vision.by_index`);
an erosion along each row of interleaved channels gives it for a fraction of numpy's ``min``'s cost.
A frame shrunk by a whole factor where no detail is needed (:func:`block_mean`) is cut to whole blocks
first: OpenCV area-averages by an exact factor some twenty times faster than by a fraction (an
odd-sized 433 x 586 crop cost 1 ms per resize).
"""

from __future__ import annotations

import cv2
import numpy as np
from cv2.typing import MatLike


def least_channel(frame: MatLike) -> MatLike:
    """The least of blue, green and red per pixel of the 8-bit BGR ``frame``: a 1 x 3 erosion along each
    row of interleaved channels, every third column kept."""
    h, w = frame.shape[:2]
    return cv2.erode(np.ascontiguousarray(frame).reshape(h, w * 3), np.ones((1, 3), np.uint8))[:, 1::3]


def grey_percentile(grey: MatLike, mask: MatLike | None, q: float) -> float:
    """``numpy.percentile`` (linear) of the 8-bit ``grey`` pixels where ``mask`` is set (all if None)."""
    counts = np.cumsum(cv2.calcHist([grey], [0], mask, [256], [0, 256]).ravel().astype(np.int64))
    n = int(counts[-1])
    at = int(q / 100 * (n - 1))
    # The order statistics either side of the percentile's place, one further each way so that the
    # rounding of the place cannot matter: all one level, and that level is the percentile.
    ranks = np.clip(np.array([at - 1, at + 2]), 0, max(n - 1, 0))
    low, high = np.searchsorted(counts, ranks, side="right")
    if n and low == high:
        return float(low)
    seen = np.asarray(grey) if mask is None else np.asarray(grey)[np.asarray(mask) > 0]
    return float(np.percentile(seen, q))


def block_mean(frame: MatLike, k: int) -> MatLike:
    """``frame`` averaged over k x k blocks, the rows and columns short of a whole block left out."""
    h, w = frame.shape[:2]
    whole = frame if h < k or w < k else frame[: h - h % k, : w - w % k]
    return cv2.resize(whole, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)
