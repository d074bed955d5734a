"""Whether a window that reads empty shows the table's felt: a hand over the lens is no cleared window.

Why: a card is reported once and not again until the window has been seen empty (:mod:`vision.stable`),
and "empty" is what the detector says of a window with no contrast or nothing card-sized in it. A hand or
a sleeve passing right over the lens, out of focus, fills the window with a blur that has neither, and so
did a camera's dark frames while its exposure settled: seen so for a few frames, the card lying under the
hand was taken for gone and dealt a second time when the hand moved away (a second reading, 2026-12-06).

A truly empty window shows the felt, and the felt was in view around the card when the card was read: the
scan window's border band, outside any card wholly inside it. So the colour of that band is remembered
when a card is reported (:func:`felt_around`), and a frame that reads empty clears the card only when the
whole window's median colour is that felt's (:func:`unlike`): the same hue within :data:`CHROMA`, and a
lightness within :data:`LIGHT` of it (an automatic exposure brightens the felt once the white card has
gone; a hand over the lens darkens it, or is skin, or a sleeve's colour). Medians, so a dealer's arm
across part of the band when the card was read, or a printed line on the felt, moves nothing.

What it cannot tell: a hand or cloth of the felt's own colour and lightness over the lens. What it costs:
the frame shrunk to :data:`WIDTH` pixels and two medians, only for the frame a card is reported from and
for empty frames while a card is in the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.window import ScanWindow, bounds, rim_of

Image = MatLike

#: The width (pixels) the frame is looked at: colours, not detail.
WIDTH: Final = 96
#: The border band's width, as a share of the window's shorter side at that size.
BAND: Final = 0.08
#: The largest distance of the window's median a*b* from the felt's (OpenCV's 8-bit Lab, where a* and b*
#: run about one unit per CIE unit): a light's tint and a camera's white balance move the felt by a few.
CHROMA: Final = 10.0
#: The window's median lightness over the felt's (each plus :data:`DARK`) must lie in this range.
LIGHT: Final = (0.7, 1.43)
#: Added to both lightnesses before their ratio: a dark felt's noise is no change of light.
DARK: Final = 10.0


@dataclass(frozen=True)
class Look:
    """A median colour in OpenCV's 8-bit Lab: lightness 0 to 255, a* and b* about 128 for grey."""

    lightness: float
    a: float
    b: float

    def __str__(self) -> str:
        return f"L {self.lightness:.0f}, a {self.a - 128:+.0f}, b {self.b - 128:+.0f}"


def _lab(frame: Image, window: ScanWindow | None) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """The frame at :data:`WIDTH` pixels in Lab, and the window's mask at that size."""
    h, w = frame.shape[:2]
    step = max(1, w // (4 * WIDTH))  # a 12 MP frame is first thinned: its colour is in any pixel
    thin = np.ascontiguousarray(frame[::step, ::step])
    size = (WIDTH, max(1, round(WIDTH * h / w)))
    small = cv2.resize(thin, size, interpolation=cv2.INTER_AREA)
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    elif small.shape[2] == 4:
        small = cv2.cvtColor(small, cv2.COLOR_BGRA2BGR)
    inside = bounds(window, size).inside
    mask = np.full((size[1], size[0]), 255, np.uint8) if inside is None else inside
    return np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), np.uint8), mask


def _median(lab: NDArray[np.uint8], mask: NDArray[np.uint8]) -> Look:
    pixels = lab[mask > 0]
    if len(pixels) == 0:
        raise ValueError("the scan window holds no pixel at the felt's working size")
    lightness, a, b = (float(v) for v in np.median(pixels, axis=0))
    return Look(lightness, a, b)


def felt_around(frame: Image, window: ScanWindow | None) -> Look:
    """The felt's colour in ``frame``, a card wholly inside the window: the median of its border band."""
    lab, mask = _lab(frame, window)
    width = max(2, round(BAND * min(mask.shape)))
    return _median(lab, rim_of(mask, width))


def unlike(felt: Look, frame: Image, window: ScanWindow | None) -> str | None:
    """Why the window in ``frame`` is not ``felt`` (None: it is, the window shows the felt)."""
    now = _median(*_lab(frame, window))
    chroma = math.hypot(now.a - felt.a, now.b - felt.b)
    ratio = (now.lightness + DARK) / (felt.lightness + DARK)
    if chroma <= CHROMA and LIGHT[0] <= ratio <= LIGHT[1]:
        return None
    return f"the window is not the felt seen around the card ({now}; the felt {felt})"
