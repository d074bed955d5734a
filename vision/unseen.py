"""Whether a frame sees anything at all: a window all but black or all but white is no window.

Why: a covered lens or a dead table lamp gives frames all but black, a lens facing a lamp or an exposure
run to its end frames all but white; a sensor's noise makes each one new, so the frozen-frame check
(controller.daemon.camera_frames) passes them, and the detector read them as an empty window ("no
contrast"): the table waited for a card with no fault said (a review, 2026-12-07). No camera that can read
a card gives such a frame: a card needs paper lighter than the felt and ink darker than the paper.

An absolute test of the frame alone, never against the window seen before: judging a frame by how flat it
is, or how much darker or lighter than the settled empty window, misfired (a first fix, withdrawn: a plain
felt in a small window read as flat, and after a lasting change of light every empty window took the
camera offline). The window (the whole frame without one) is shrunk to vision.felt's working width (96
pixels) by averaging, in grey: a pixel is the mean of some 7 x 7 of a 640 x 480 frame, so a sensor's noise
(a covered sensor's at a high gain too) averages out, and a lit scene's percentiles are its felt's, paper's
and ink's.
About 0.9 ms a frame at 640 x 480 and 1.8 ms at 12 megapixels, CPU on one OpenCV thread as the camera
reads (2026-12-07, 200 composed frames each the least of 5 reads; on OpenCV's default threads a shrink's
threads cost 1.6 ms of CPU at 640 x 480).
"""

from __future__ import annotations

from typing import Final, NamedTuple

import cv2
from cv2.typing import MatLike

from vision.felt import thinned
from vision.levels import grey_percentile
from vision.window import ScanWindow, bounds

#: A window whose 99th percentile of grey (0..255) is under this is all but black. Measured with
#: :func:`levels` (2026-12-07): black frames with a sensor's noise (levels 0 to 10, -6 to +6 a channel) 2 to
#: 11, level 10 at -20 to +20 (a covered sensor at a high gain) 14, at -25 to +25 15, at -30 to +30 16; a dim
#: but lit flat table at 30, 31. Lit windows, never under 17: the
#: simulated camera (vision.synth, both conditions, all five felts, empty, with a card, the negatives; the
#: whole frame and a window a tenth of its sides) 33 at the least (a brown felt on the floor), 24 at half
#: its light (linear), 17 at half its grey levels; the real sets' photographs (/tmp/data/*/test, 1,860
#: files; the whole frame, its middle, a window a tenth of its sides) 39 at the least with a card (126 where
#: the window holds it), 24 of no card. 16, not halfway (14, first chosen): a covered sensor at a high gain is
#: the case this test is for, and at 14 level 10 with -20 to +20 of noise read as a lit window (a review,
#: 2026-12-07); the darkest lit window drawn (a felt at half its grey levels) is 1 level over it, the
#: darkest real photograph of a lit table 8. (One photograph of no card, taken in the dark, is at 10 to 16:
#: it sees nothing.)
BLACK: Final = 16
#: A window whose 1st percentile of grey is over this is all but white (washed out): saturated frames with
#: noise (levels 250 to 255) 249 and more. Lit windows, never over 236: a simulated white card filling a
#: window a tenth of the frame's sides 236 (9 under), the real sets' photographs 218 at most, the whole frame
#: 123 at most.
WHITE: Final = 245


class Unseen(NamedTuple):
    """What a frame that sees nothing shows (``what``: "the window is all but black"), the measure that
    says so (``measure``), and its likely cause (``cause``)."""

    what: str
    measure: str
    cause: str


def levels(frame: MatLike, window: ScanWindow | None) -> tuple[float, float]:
    """The 1st and 99th percentiles of grey (0..255) in ``frame``'s window, shrunk to
    :data:`vision.felt.WIDTH` wide (:func:`vision.felt.thinned`)."""
    thin, size = thinned(frame)  # as vision.felt.look
    if thin.ndim == 3:  # grey before shrinking: a third of the pixels to average (a mean's grey is the same)
        thin = cv2.cvtColor(thin, cv2.COLOR_BGRA2GRAY if thin.shape[2] == 4 else cv2.COLOR_BGR2GRAY)
    small = cv2.resize(thin, size, interpolation=cv2.INTER_AREA)
    mask = bounds(window, size).inside
    if mask is not None and not cv2.countNonZero(mask):
        return 0.0, 0.0
    return grey_percentile(small, mask, 1), grey_percentile(small, mask, 99)


def unseen(frame: MatLike, window: ScanWindow | None) -> Unseen | None:
    """Why ``frame``'s window sees nothing (all but black, or all but white), or None: it sees."""
    low, high = levels(frame, window)
    where = "the frame" if window is None else "the window"
    if high < BLACK:
        return Unseen(f"{where} is all but black", f"99 % of it under {BLACK} of 255",
                      "lens covered, table lamp off?")
    if low > WHITE:
        return Unseen(f"{where} is all but white", f"99 % of it over {WHITE} of 255",
                      "washed out: a lamp into the lens, or the exposure at its end?")
    return None
