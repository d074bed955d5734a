"""The frame as a camera straight above the table would see it, for the looks that judge shapes by angle.

Why: :mod:`vision.second_outline` finds a second object by three sides of a rectangle of the card's size
and proportions whose corners are square. Under a tilted camera a rectangle on the table is seen as a
trapezoid: a second card lying square to the card read keeps it near enough, but one turned against it is
seen with corners far from square and sides foreshortened unlike the card's, and was missed (a review,
2026-12-05; ``bench/vision_tilted_pairs.py``: 136 of 378 drawn pairs read as one card, from a 20-degree
tilt on). So when the card read is
itself seen out of square, the frame is warped onto the table's plane first, and an object there has the
card's shape whatever its turn.

The plane is the calibrated one (``croupier vision calibrate``, exact) when the table file has it, else the
card read's own: the card is a 63 x 88 rectangle lying on the table, so its four corners give the table's
homography up to where the card lies (less exact far from the card, where an error in its corners grows;
the looks' tolerances absorb a few degrees). The view keeps the card's area in pixels (the same detail
where the card lies; less in a view larger than :data:`LARGEST` frames) and spans at most one frame
each way round the card: what lies further along a steep table is cut by the view's edge, as a neighbour
cut by the window is. The card's own plane is only as good as its corners: corners placed from the
indices may be a few pixels off (see :func:`vision.second_outline.second_outline`'s ``placed``).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.detect import CARD_ASPECT
from vision.window import Bounds, filled, rim_of

#: The card read is seen square (the frame is judged as it is) when every corner is within this many
#: degrees of a right angle and its sides' proportions within :data:`ASPECT_SLACK` of a card's.
SQUARE_SLACK: Final = 6.0
ASPECT_SLACK: Final = 0.08
#: The view spans at most this many times the frame's width and height, centred on the card.
SPAN: Final = 2.0
#: A view larger than this many times the frame's area is made smaller to it (its cost grows with its
#: area; on GuilleX7's phone photographs views reached 4 frames, on the composed set 2): the card then
#: keeps at least ``sqrt(LARGEST / SPAN**2)`` of its size, 0.61. At 1.0 the outline check cost 0.35 to
#: 0.45 ms less a view on kentdoan's and composed 2026's frames, but the drawn sweep of two objects
#: (``bench/vision_two_objects.py``) read 3 more scenes as one card, a back on felt among them.
LARGEST: Final = 1.5
#: A point mapped further than this many pixels from the view's origin is taken as on the horizon.
LIMIT: Final = 1e5


def seen_square(quad: NDArray[np.float32]) -> bool:
    """Whether the card at ``quad`` (corners in the face's order: its top, a short side, first) is seen as
    a card lying square to the camera: corners near right angles, the card's proportions."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    d = q[[1, 2, 3, 0]] - q
    lengths = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)
    cos = -(d * d[[3, 0, 1, 2]]).sum(axis=1) / (lengths * lengths[[3, 0, 1, 2]])
    if float(np.degrees(np.abs(np.arcsin(np.clip(cos, -1.0, 1.0)))).max()) > SQUARE_SLACK:
        return False
    aspect = float(lengths[0] + lengths[2]) / float(lengths[1] + lengths[3])
    return abs(aspect / CARD_ASPECT - 1.0) <= ASPECT_SLACK


def table_view(frame: MatLike, quad: NDArray[np.float32], win: Bounds
               ) -> tuple[MatLike, NDArray[np.float32], Bounds] | None:
    """``frame`` (with the window ``win`` and the card read at ``quad``, its pixels, in the face's order)
    warped onto the table's plane: the view, the card there and the window's bounds there; None when the
    card is seen square (:func:`seen_square`: the frame is the view)."""
    card = np.asarray(quad, np.float32).reshape(4, 2)
    if seen_square(card) or not cv2.isContourConvex(card) or cv2.contourArea(card) < 1.0:
        return None  # square, or no card's outline to take a plane from (judged as seen, as before the view)
    h, w = frame.shape[:2]
    to_table = _to_table(card, win, (w, h))
    on_table = cv2.perspectiveTransform(card.reshape(-1, 1, 2).astype(np.float64), to_table).reshape(4, 2)
    scale = float(np.sqrt(cv2.contourArea(card) / max(cv2.contourArea(on_table.astype(np.float32)), 1e-9)))
    # Turned back as the card is seen (its top side's direction in the frame): the view of a frame of a
    # turned card, kept upright, would be a larger canvas round the same pixels.
    top, seen = on_table[1] - on_table[0], card[1] - card[0]
    turn = float(np.arctan2(seen[1], seen[0]) - np.arctan2(top[1], top[0]))
    c, s = np.cos(turn) * scale, np.sin(turn) * scale
    scaled = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ to_table
    centre = cv2.perspectiveTransform(card.mean(axis=0).reshape(1, 1, 2).astype(np.float64), scaled)[0, 0]
    frame_corners = np.array([(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)], np.float64)
    outline = win.polygon.astype(np.float64) if win.polygon is not None else frame_corners
    mapped = _mapped(outline, scaled)
    lo, hi = centre - SPAN / 2 * np.array([w, h]), centre + SPAN / 2 * np.array([w, h])
    if mapped is not None:  # the horizon is not in view: the window's outline bounds the view
        lo, hi = np.maximum(lo, mapped.min(axis=0)), np.minimum(hi, mapped.max(axis=0))
    if not (np.isfinite(scaled).all() and np.isfinite(centre).all() and (hi - lo >= 2).all()):
        return None  # the card lies past the window's outline on the plane: no view round it
    fit = min(1.0, float(np.sqrt(LARGEST * w * h / max(float(np.prod(hi - lo)), 1.0))))
    size = (int(np.ceil(fit * (hi[0] - lo[0]))) + 1, int(np.ceil(fit * (hi[1] - lo[1]))) + 1)
    shifted = np.array([[fit, 0, -fit * lo[0]], [0, fit, -fit * lo[1]], [0, 0, 1]], np.float64) @ scaled
    # The frame's border pixels carried on past it: no step of light at the frame's edge (nor its edges).
    view = cv2.warpPerspective(frame, shifted, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    polygon = None if mapped is None else fit * (mapped - lo)  # the outline through ``shifted``
    # The window in the view is where the window and the frame both are (its mask; its outline, traced from
    # the mask, is what a placed side must lie within: a window reaching past the frame is cut by it).
    if polygon is None:  # the horizon in view: the window's pixels warped (a warp costs more than a fill)
        window = win.inside if win.inside is not None else np.full((h, w), 255, np.uint8)
        inside = np.asarray(cv2.warpPerspective(window, shifted, size, flags=cv2.INTER_NEAREST), np.uint8)
    else:
        inside = filled(polygon, size)
        if win.polygon is not None:  # a window reaching past the frame is cut by it
            frame_view = _mapped(frame_corners, shifted)
            if frame_view is not None:
                inside = np.asarray(cv2.bitwise_and(inside, filled(frame_view, size)), np.uint8)
    at = cv2.perspectiveTransform(card.reshape(-1, 1, 2).astype(np.float64), shifted).reshape(4, 2)
    # The rim two pixels wide: the warped window's edge is ragged by a pixel.
    return view, at.astype(np.float32), Bounds(inside, rim_of(inside, 2), _outline_of(inside), None, size)


def _to_table(card: NDArray[np.float32], win: Bounds, size: tuple[int, int]) -> NDArray[np.float64]:
    """The homography from the frame's pixels to the table's plane: the calibrated one (millimetres), else
    the card's own (the card a 63 x 88 rectangle at the origin), its sign such that the card's weight is
    positive."""
    if win.window is not None and win.window.plane is not None:
        w, h = size
        m = np.array(win.window.plane, np.float64) @ np.diag([1.0 / w, 1.0 / h, 1.0])
    else:
        flat = np.array([(0, 0), (CARD_ASPECT, 0), (CARD_ASPECT, 1), (0, 1)], np.float32)
        m = np.asarray(cv2.getPerspectiveTransform(card, flat), np.float64)
    x, y = card.mean(axis=0)
    return m if float(m[2] @ np.array([x, y, 1.0])) > 0 else -m  # the card's side of the horizon weighs > 0


def _mapped(points: NDArray[np.float64], m: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """``points`` through the homography ``m``, or None when one lies on or past the horizon (its mapped
    weight not positive: the view of it is unbounded) or nearly (beyond :data:`LIMIT`)."""
    homogeneous = np.hstack([points, np.ones((len(points), 1))]) @ m.T
    if (homogeneous[:, 2] <= 1e-9).any():
        return None
    mapped = np.asarray(homogeneous[:, :2] / homogeneous[:, 2:], np.float64)
    return mapped if bool((np.abs(mapped) < LIMIT).all()) else None


def _outline_of(inside: NDArray[np.uint8]) -> NDArray[np.float32] | None:
    """The outline of the mask's largest region (the window in the view), or None when it is empty."""
    contours, _ = cv2.findContours(inside, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    return np.asarray(max(contours, key=cv2.contourArea), np.float32).reshape(-1, 2)
