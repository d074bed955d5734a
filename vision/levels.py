"""Working frames and their levels: the detector's working frame (:func:`shrink`), a grey level's
percentile read from its histogram, each pixel's least channel, block means.

Why: the detector's brighter looks need the brightest paper's level (the 99th percentile of the
window's grey levels) once per frame that reaches them; :func:`numpy.percentile` partly sorts the whole
frame for it, which cost more than those looks' own thresholding and contours. An 8-bit frame has 256
levels, so its histogram gives every order statistic; where the percentile falls between two equal
order statistics (almost always, with thousands of pixels per level) that level is the exact answer,
and otherwise numpy's own interpolation is used, so the value is always numpy's. The least of a
pixel's three channels makes red ink as dark as black (the search by indices, :mod:`vision.by_index`);
OpenCV's channels and channel minimum give it for a fraction of numpy's ``min``'s cost, contiguous.
A frame shrunk by a whole factor where no detail is needed (:func:`block_mean`) is cut to whole blocks
first: OpenCV area-averages by an exact factor some twenty times faster than by a fraction (an
odd-sized 433 x 586 crop cost 1 ms per resize). The detector's working frame is area-averaged from
the frame as it comes, or from a decimated copy of a very large one (:func:`shrink`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import cv2
import numpy as np
from cv2.typing import MatLike


def least_channel(frame: MatLike) -> MatLike:
    """The least of blue, green and red per pixel of the 8-bit BGR ``frame``, as a contiguous image: OpenCV's
    split and channel minimum. The erosion along each row of interleaved channels it replaced cost less
    itself but left a strided view, which every look after it paid for (the ink search's paper and ink on a
    480 x 360 frame, 0.29 ms from the view, 0.18 ms from a contiguous image); the values are the same."""
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"least_channel takes an 8-bit BGR frame, not one of shape {frame.shape}")
    frame = np.ascontiguousarray(frame)
    # Channel by channel, the same bytes: within a frame's read cv2.split of the 480 x 360 working frame was
    # timed at 0.44 ms against 0.11 (in a loop of its own, with warm caches, 0.12 to 0.15 against 0.11).
    b, g, r = (cv2.extractChannel(frame, k) for k in range(3))
    return cv2.min(cv2.min(b, g), r)


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


def median_under(grey: MatLike, mask: MatLike | None, channel: int = 0) -> float | None:
    """``numpy.median`` of the 8-bit ``grey`` pixels where ``mask`` is set (all if None; of its ``channel``
    for a colour image), or None where none is: from their histogram, the middle order statistic (the mean
    of the two middle ones for an even count, as numpy takes it), exactly numpy's value. Why: ``numpy.median``
    of the masked pixels (their copy, then a partition) cost four times as much; the look at a washed-out
    index (:mod:`vision.washed_out`) took eight such medians of two crops, and the looks at a dim second
    card's paper and at a large pip (:mod:`vision.second_paper`, :mod:`vision.second_pip`) take theirs too
    (the faded look at an index, :func:`vision.index_split.with_faded`, counts its own histogram)."""
    return median_of(cv2.calcHist([grey], [channel], mask, [256], [0, 256]).ravel())


def median_of(histogram: MatLike) -> float | None:
    """``numpy.median`` of the 8-bit levels counted by ``histogram`` (256 counts), or None where it counts
    none: :func:`median_under`'s, for a caller that made or changed the histogram itself
    (:func:`vision.index_split.with_faded` clears the levels up to Otsu's instead of masking them)."""
    counts = np.cumsum(histogram.astype(np.int64))
    n = int(counts[-1])
    if n == 0:
        return None
    low, high = np.searchsorted(counts, [(n - 1) // 2, n // 2], side="right")
    return (float(low) + float(high)) / 2


def block_mean(frame: MatLike, k: int) -> MatLike:
    """``frame`` averaged over k x k blocks, the rows and columns short of a whole block left out."""
    h, w = frame.shape[:2]
    whole = frame if h < k or w < k else frame[: h - h % k, : w - w % k]
    return cv2.resize(whole, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)


def shrink_grey(frame: MatLike, width: int) -> tuple[MatLike, float]:
    """The grey of the BGR ``frame`` at ``width`` pixels wide (never larger), and the factor applied: as
    :func:`shrink`. By a fraction, the grey is taken before the area-averaging (after a very large
    photograph's decimation): averaging one channel instead of three halves the cost of an odd-sized
    frame (a 603 x 510 photograph: 1.3 ms to 0.66 ms), and both steps being linear, it differs from the
    grey of the shrunk colour frame only by rounding (a level at most). By a whole factor (a 640 x 480
    camera's frame to 320), OpenCV's exact block average of the colour frame costs less than the grey of
    the whole frame, so the grey is taken after it, as it always was."""
    inverse = frame.shape[1] / width
    if inverse > 1.0 and abs(inverse - round(inverse)) < 1e-9:
        small, scale = shrink(frame, width)
        return cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), scale
    return shrink(frame, width, lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2GRAY))


def shrink(
    frame: MatLike, width: int, first: Callable[[MatLike], MatLike] = lambda f: f,
) -> tuple[MatLike, float]:
    """``frame`` at ``width`` pixels wide (never larger), and the factor applied; ``first``: what is done
    to the frame before it is area-averaged (and after a very large one's decimation).

    A 12-megapixel photograph is first decimated (nearest pixel) to about twice the working width,
    which is nearly free, and only that is area-averaged: area-averaging the whole photograph cost
    most of the frame's time, and the outline needs no more than the working width.
    """
    w = frame.shape[1]
    scale = min(1.0, width / w)
    if scale >= 1.0:
        return first(frame), 1.0
    if w > 4 * width:
        f = 2 * width / w
        frame = first(cv2.resize(frame, None, fx=f, fy=f, interpolation=cv2.INTER_NEAREST))
        return cv2.resize(frame, None, fx=scale / f, fy=scale / f, interpolation=cv2.INTER_AREA), scale
    return cv2.resize(first(frame), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), scale


def ink_on_paper(least: MatLike, block: int, reach: int, share: float, floor: int) -> tuple[MatLike, MatLike]:
    """The paper's level around every pixel of ``least`` (a frame's least channel) and the ink on it: the
    least channel at ``1 / block`` of the size closed over ``reach`` pixels there (closed, not dilated:
    never a brighter thing beside a glyph), and every pixel darker than ``share`` of that level where the
    level is at least ``floor``. One way for the looks that find ink (the search by indices' glyphs, a
    second card's large pip)."""
    closed = cv2.morphologyEx(block_mean(least, block), cv2.MORPH_CLOSE, np.ones((reach, reach), np.uint8))
    paper = cv2.resize(closed, (least.shape[1], least.shape[0]), interpolation=cv2.INTER_LINEAR)
    dark = cv2.compare(least, cv2.convertScaleAbs(paper, alpha=share), cv2.CMP_LT)
    return paper, cv2.bitwise_and(dark, cv2.threshold(paper, floor - 1, 255, cv2.THRESH_BINARY)[1])


class Tinted(NamedTuple):
    """A BGR frame blurred (5 x 5 Gaussian), its greatest channel per pixel and its chroma (the greatest
    channel less the least): the looks for a dim second card's paper (:func:`vision.second_paper.grey_paper`)
    and for a second object's outline as seen (:mod:`vision.second_outline`) both start from these, on the
    same half-size frame. Made once, a card judged as seen (seen square, or placed from its indices) costs
    0.1 to 0.17 ms less (a 240 x 180 or 240 x 320 half frame); the table's view is another frame."""

    blurred: MatLike
    most: MatLike
    chroma: MatLike


def tint_of(frame: MatLike) -> Tinted:
    """:class:`Tinted` of the 8-bit BGR ``frame`` (OpenCV's channel max and min: numpy's cost 2 ms)."""
    blurred = cv2.GaussianBlur(frame, (5, 5), 0)
    b, g, r = (cv2.extractChannel(blurred, k) for k in range(3))  # as least_channel's, cheaper than split
    most = cv2.max(cv2.max(b, g), r)
    return Tinted(blurred, most, cv2.subtract(most, cv2.min(cv2.min(b, g), r)))
