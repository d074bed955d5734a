"""A card seen by a tilted camera: whether an outline has a card's proportions once the perspective is
undone, which of its two quarter turns is the card's, and which turn's reading to keep.

Why: the outline alone does not fix the camera. Zhang and He's whiteboard method gives a rectangle's
true proportions from its image once the principal point is known, and the focal length too when both
pairs of sides converge; but a camera tilted about one axis leaves one pair parallel (the focal length
is then unknown), and a camera's digital zoom or region of interest puts the principal point off the
frame's centre and the focal length at several frame widths, where the vanishing points' own estimate
is wrong. So an outline is card-shaped when some camera of a plausible range (lenses from 90 down to
7 degrees wide, :data:`FOCALS`) makes it a card's rectangle. Parallel sides carry no perspective, so
a head-on outline is held to its proportions as seen whatever the focal length: only an outline whose
sides visibly converge is corrected, and by no more than its convergence allows. Foreshortening can make
a portrait card look landscape; when both quarter turns fit a card under some plausible camera, the
better fit is read first and the other only when that reads nothing, and then on both its indices.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import NDArray

from vision.window import Bounds

#: Focal lengths tried, as multiples of the frame's width, where the outline's vanishing points do not
#: tell it (any length between two of them counts): 0.5 is a 90-degree lens (the widest webcam), 0.75 a
#: phone's main camera at 4:3 (26 mm equivalent), 1 the Raspberry Pi HQ camera's 6 mm lens, up to 8 (its
#: 50 mm lens, or a digital zoom to an eighth of a phone's frame: a 7-degree view).
FOCALS: Final = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)

Vec3 = tuple[float, float, float]
Quad = NDArray[np.float32]


def true_aspect(
    q: Quad, centre: tuple[float, float], focal: float, estimate: bool = True
) -> float | None:
    """Width over height of the rectangle whose perspective image is the quadrilateral ``q`` (corners
    clockwise, its first side the rectangle's top), for a camera whose optical axis meets the frame at
    ``centre``.

    Zhang and He's whiteboard method: the quadrilateral's two vanishing points give the focal length,
    and with it the rectangle's true proportions. A camera tilted about one axis only leaves one pair
    of sides parallel, which does not fix the focal length: ``focal`` (in pixels) is assumed then, and
    always without ``estimate``.
    """
    cx, cy = centre
    m1, m2, m4, m3 = ((float(x) - cx, float(y) - cy, 1.0) for x, y in q)
    d2 = _triple(m2, m4, m3)
    d3 = _triple(m3, m4, m2)
    if abs(d2) < 1e-9 or abs(d3) < 1e-9:
        return None
    k2 = _triple(m1, m4, m3) / d2
    k3 = _triple(m1, m4, m2) / d3
    n2 = tuple(k2 * b - a for a, b in zip(m1, m2, strict=True))
    n3 = tuple(k3 * b - a for a, b in zip(m1, m3, strict=True))
    f2 = focal**2
    if estimate and abs(n2[2] * n3[2]) > 1e-6 * max(abs(n2[2]), abs(n3[2]), 1e-12):
        found = -(n2[0] * n3[0] + n2[1] * n3[1]) / (n2[2] * n3[2])
        if (0.25 * focal) ** 2 < found < (4 * focal) ** 2:
            f2 = found
    num = (n2[0] ** 2 + n2[1] ** 2) / f2 + n2[2] ** 2
    den = (n3[0] ** 2 + n3[1] ** 2) / f2 + n3[2] ** 2
    return math.sqrt(num / den) if den > 0 else None


def _triple(a: Vec3, b: Vec3, c: Vec3) -> float:
    """(a x b) . c, in plain floats: called for every candidate outline, where numpy's call overhead
    on three-element arrays cost more than the arithmetic."""
    x, y, z = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    return x * c[0] + y * c[1] + z * c[2]


def _fits(q: Quad, win: Bounds, aspect: float, tolerance: float, focal: float) -> int:
    """How ``q`` (its first side the card's top) fits a card of ``aspect``: 2 as seen (on the table when
    the window's plane is calibrated) or after the perspective its vanishing points imply with the
    principal point at the frame's centre (focal ``focal`` frame widths where they do not tell it);
    1 only under some other camera of :data:`FOCALS`; 0 not at all."""
    short, long = win.sides(q)
    if math.isclose(short / max(long, 1e-6), aspect, rel_tol=tolerance):
        return 2
    if win.calibrated:
        return 0
    w, h = win.size
    centre = ((w - 1) / 2, (h - 1) / 2)

    def fits(true: float | None) -> bool:
        return true is not None and math.isclose(true, aspect, rel_tol=tolerance)

    if fits(true_aspect(q, centre, focal * w)):
        return 2
    # The vanishing points' own focal length is no sure guide: a pixel's error in a small or steeply
    # seen outline's corners moves them far, and a cropped frame's principal point is not its centre.
    # The aspect varies continuously with the focal length: a card's is reached between two focal
    # lengths tried when one gives a squatter rectangle and the next a slimmer one (or one fits).
    low, high = aspect * (1 - tolerance), aspect / (1 - tolerance)
    sides = [None if a is None else (a > high) - (a < low)
             for a in (true_aspect(q, centre, f * w, estimate=False) for f in FOCALS)]
    pairs = zip(sides, sides[1:], strict=False)
    return int(0 in sides or any(a is not None and b is not None and a * b < 0 for a, b in pairs))


def card_turns(q: Quad, win: Bounds, aspect: float, tolerance: float, focal: float) -> list[Quad]:
    """The quarter turns of ``q`` (corners clockwise) that have a card's proportions, the better fit
    first: one for an outline seen head-on or whose turn is clear, two when foreshortening leaves the
    card's orientation open (the recogniser then tries the second when the first reads nothing)."""
    turns = [(fit, k, t) for k, t in enumerate((q, np.roll(q, -1, axis=0)))
             if (fit := _fits(t, win, aspect, tolerance, focal))]
    return [t for _, _, t in sorted(turns, key=lambda s: (-s[0], s[1]))]
