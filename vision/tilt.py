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
from functools import cache
from typing import Final

import numpy as np
from numpy.typing import NDArray

from vision.window import Bounds

#: Focal lengths tried, as multiples of the frame's width, when the outline fits a card neither as seen
#: nor by its vanishing points (any length between two of them counts): 0.5 is a 90-degree lens (the
#: widest webcam), 0.75 a phone's main camera at 4:3 (26 mm equivalent), 1 the Raspberry Pi HQ camera's
#: 6 mm lens, up to 8 (its 50 mm lens, or a digital zoom to an eighth of a phone's frame: 7 degrees).
FOCALS: Final = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)

Vec3 = tuple[float, float, float]
Quad = NDArray[np.float32]


def true_aspect(q: Quad, centre: tuple[float, float], focal: float) -> float | None:
    """Width over height of the rectangle whose perspective image is the quadrilateral ``q`` (corners
    clockwise, its first side the rectangle's top), for a camera whose optical axis meets the frame at
    ``centre``.

    Zhang and He's whiteboard method: the quadrilateral's two vanishing points give the focal length,
    and with it the rectangle's true proportions. A camera tilted about one axis only leaves one pair
    of sides parallel, which does not fix the focal length: ``focal`` (in pixels) is assumed then.
    """
    n = _normals(q, centre)
    return None if n is None else _aspect(n, _focal2(n, focal))


Normals = tuple[Vec3, Vec3]


def _normals(q: Quad, centre: tuple[float, float]) -> Normals | None:
    """The rectangle's two side directions, up to scale, as Zhang and He recover them (the focal length
    still to divide their first two terms)."""
    cx, cy = centre
    m1, m2, m4, m3 = ((x - cx, y - cy, 1.0) for x, y in q.tolist())  # floats: numpy scalars cost more
    d2 = _triple(m2, m4, m3)
    d3 = _triple(m3, m4, m2)
    if abs(d2) < 1e-9 or abs(d3) < 1e-9:
        return None
    k2 = _triple(m1, m4, m3) / d2
    k3 = _triple(m1, m4, m2) / d3
    n2 = (k2 * m2[0] - m1[0], k2 * m2[1] - m1[1], k2 - 1.0)
    n3 = (k3 * m3[0] - m1[0], k3 * m3[1] - m1[1], k3 - 1.0)
    return n2, n3


def _focal2(n: Normals, focal: float) -> float:
    """The squared focal length the vanishing points give, where they give one near ``focal``."""
    n2, n3 = n
    if abs(n2[2] * n3[2]) > 1e-6 * max(abs(n2[2]), abs(n3[2]), 1e-12):
        found = -(n2[0] * n3[0] + n2[1] * n3[1]) / (n2[2] * n3[2])
        if (0.25 * focal) ** 2 < found < (4 * focal) ** 2:
            return found
    return focal**2


def _aspect(n: Normals, f2: float) -> float | None:
    """The card's true proportions under a camera of squared focal length ``f2`` (:func:`_curve`'s)."""
    return _curve(n, (f2,))[0]


def _triple(a: Vec3, b: Vec3, c: Vec3) -> float:
    """(a x b) . c, in plain floats: called for every candidate outline, where numpy's call overhead
    on three-element arrays cost more than the arithmetic."""
    x, y, z = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    return x * c[0] + y * c[1] + z * c[2]


def card_turns(
    q: Quad, win: Bounds, aspect: float, tolerance: float, focal: float,
    sides: tuple[float, float] | None = None,
) -> list[Quad]:
    """The quarter turns of ``q`` (corners clockwise) that have a card's proportions, the better fit
    first: one for an outline seen head-on or whose turn is clear, two when foreshortening leaves the
    card's orientation open (the recogniser then tries the second when the first reads nothing).

    A turn fits well when its first side is the card's top as seen (on the table when the window's
    plane is calibrated) or after the perspective its vanishing points imply with the principal point
    at the frame's centre (``focal`` frame widths where they do not tell the focal length), and fits
    at all when some other camera of :data:`FOCALS` makes it a card. The quarter turn swaps the
    rectangle's sides: its proportions are the inverse of the first turn's, under every camera.
    ``sides``: ``q``'s side lengths as seen (:func:`vision.window.side_lengths`) when the caller has them
    (the detector measures every outline's): the window's sides, but on a calibrated table.
    """
    short, long = win.sides(q) if sides is None or win.calibrated else sides
    seen: list[float | None] = [short / max(long, 1e-6)]
    curve: list[float | None] = []
    w, h = win.size
    n = None if win.calibrated else _normals(q, ((w - 1) / 2, (h - 1) / 2))
    if n is not None:
        seen.append(_aspect(n, _focal2(n, focal * w)))
        # The vanishing points' own focal length is no sure guide: a pixel's error in a small or steeply
        # seen outline's corners moves them far, and a cropped frame's principal point is not its centre.
        curve = _curve(n, _squares(w))
    low, high = aspect * (1 - tolerance), aspect / (1 - tolerance)
    first, second = _fit(seen, curve, low, high), _fit(_inverse(seen), _inverse(curve), low, high)
    if not second:
        return [q] if first else []
    turned = q[[1, 2, 3, 0]]  # the quarter turn (np.roll cost more than the rest of the fit)
    if not first:
        return [turned]
    return [q, turned] if first >= second else [turned, q]  # the better fit first, the seen turn on a tie


@cache
def _squares(w: int) -> tuple[float, ...]:
    """The squared focal lengths of :data:`FOCALS` for a frame ``w`` pixels wide (the same every frame)."""
    return tuple((f * w) ** 2 for f in FOCALS)


def _curve(n: Normals, squares: tuple[float, ...]) -> list[float | None]:
    """:func:`_aspect` at each of the squared focal lengths ``squares``: the same arithmetic, its
    focal-free terms taken once (nine calls of it cost more than their arithmetic)."""
    n2, n3 = n
    a2, b2 = n2[0] ** 2 + n2[1] ** 2, n2[2] ** 2
    a3, b3 = n3[0] ** 2 + n3[1] ** 2, n3[2] ** 2
    out: list[float | None] = []
    for f2 in squares:
        den = a3 / f2 + b3
        out.append(math.sqrt((a2 / f2 + b2) / den) if den > 0 else None)
    return out


def _inverse(values: list[float | None]) -> list[float | None]:
    return [None if v is None or v <= 0 else 1 / v for v in values]


def _fit(seen: list[float | None], curve: list[float | None], low: float, high: float) -> int:
    """2 when a proportion ``seen`` lies in [low, high], 1 when the ``curve`` over the focal lengths
    reaches it (it varies continuously: a card's is reached between two focal lengths when one gives a
    squatter rectangle and the next a slimmer one), else 0."""
    for v in seen:
        if v is not None and low <= v <= high:
            return 2
    last = None  # the side of [low, high] the previous focal length's proportion lies on (-1 or 1)
    for v in curve:
        if v is None:
            last = None
            continue
        side = (v > high) - (v < low)
        if side == 0 or (last is not None and last * side < 0):
            return 1
        last = side
    return 0
