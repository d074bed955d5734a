"""Whether an index that did not read was washed out by a glare on the card's paper, so that the other
index may be read alone (:func:`vision.recognise.read_indices`).

Why both paper and ink: a glare lifts the paper and its ink towards white, so a washed-out index shows
the card's own paper (as bright, of the same colour) and little ink. Paper alone was the first test, and
it let two cards through as one: two overlapping cards nearly in line make one card-shaped outline,
whose first index is the covered card's and reads, while the other corner is the upper card's paper
with *its* index in view, at another scale, so it fails to read; its paper is the first card's paper, and
the covered card was read (vision.synth's two-card negatives, 7 of 300 seeds, among them the 4D under a
10D, 2026-12-04). A second card's index, or anything else that does not read, keeps its ink; only a
crop with at most :data:`MOST_INK` of the read index's ink is washed out. A thumb or a chip over the
index is darker or coloured, and fails the paper test as before.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from cv2.typing import MatLike

from vision.levels import grey_percentile, least_channel, median_under

#: The unread index's paper is at least this share as bright as the read index's...
PAPER_BRIGHTNESS: Final = 0.75
#: ...and differs from it in chroma by at most this: a glare lifts the paper towards white.
PAPER_CHROMA: Final = 0.1
#: The unread index holds at most this share of the read index's ink: the pixels darker (in their least
#: channel, where red ink is as dark as black) than halfway from the read index's paper to its ink.
MOST_INK: Final = 0.25


def washed_out(unread: MatLike, read: MatLike) -> bool:
    """The unread index crop shows the read one's paper (washed out, not covered) and next to no ink."""

    def paper(crop: MatLike) -> tuple[float, float]:
        med = _medians(crop)
        top = max(med)
        return top, (top - min(med)) / max(top, 1.0)

    (bright, chroma), (ref_bright, ref_chroma) = paper(unread), paper(read)
    if bright < PAPER_BRIGHTNESS * ref_bright or abs(chroma - ref_chroma) > PAPER_CHROMA:
        return False
    least_read, least_unread = least_channel(read), least_channel(unread)
    level = (_medians(least_read)[0] + grey_percentile(least_read, None, 2)) / 2
    ink = float(np.mean(least_read < level))
    return float(np.mean(least_unread < level)) <= MOST_INK * ink


def _medians(crop: MatLike) -> list[float]:
    """``numpy.median`` of each channel of the 8-bit ``crop`` (one or three channels), exactly numpy's values,
    from each channel's histogram (:func:`vision.levels.median_under`): numpy's partition of an index crop's
    pixels cost 0.1 ms a median. An empty crop has numpy's (NaN) medians."""
    pixels = np.asarray(crop)
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    found = [median_under(pixels, None, k) for k in range(channels)]
    if any(v is None for v in found):
        return [float(v) for v in np.median(pixels.reshape(-1, channels), axis=0)]
    return [float(v) for v in found if v is not None]
