"""Find the one card in the scan window and warp it flat, upright, to a fixed size.

Why this shape: the scan window is dark felt and a card face is the brightest
large thing in it, so Otsu's threshold on the blurred grey frame separates
them under any overall exposure; the card's outline is then one external
contour that :func:`cv2.approxPolyDP` reduces to four corners, and
:func:`cv2.getPerspectiveTransform` undoes the camera's angle. Anything that
is not exactly one clean card-shaped quadrilateral (two cards, a hand
reaching over the card, a card half out of the window) is refused here with
a reason, so the recogniser never guesses from a partial view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

Image = MatLike

#: Width / height of a poker-size card (63 x 88 mm); bridge size is 57 x 88 (0.65).
CARD_ASPECT: Final = 63 / 88


@dataclass(frozen=True)
class DetectParams:
    """Geometry limits of a card in the window, as fractions of the frame."""

    min_area: float = 0.04
    max_area: float = 0.85
    #: Accepted width/height of the outline against the card's own.
    aspect_tolerance: float = 0.18
    #: Contour area over its 4-corner polygon's area: a notch (a finger, a second card) lowers it.
    min_fill: float = 0.96
    #: Working width of the frame: larger frames are shrunk first (the outline needs no more).
    work_width: int = 320


@dataclass(frozen=True)
class Detection:
    """The outcome of looking for a card: its warped face, or why there is none."""

    #: ``card`` (one clean card), ``empty`` (nothing card-sized), or ``refused`` (something, not one card).
    status: str
    reason: str = ""
    face: Image | None = None
    corners: NDArray[np.float32] | None = None


def _order(quad: NDArray[np.float32]) -> NDArray[np.float32]:
    """Corners clockwise on screen, starting so that the first edge is a short side (top or bottom)."""
    c = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(angles)]
    if np.linalg.norm(q[0] - q[1]) > np.linalg.norm(q[1] - q[2]):
        q = np.roll(q, -1, axis=0)
    return q


def _refine(contour: NDArray[np.int32], quad: NDArray[np.int32]) -> NDArray[np.float32]:
    """The card's true corners: a line fitted to the middle of each side, intersected with the next.

    The corners of a card are rounded, so the polygon's vertices sit a few pixels inside the corner of
    the rectangle the printing is laid out on; fitted sides do not, and are sub-pixel accurate.
    """
    at = [int(np.argmin(((contour - v) ** 2).sum(axis=1))) for v in quad]
    n = len(contour)
    lines = []
    for k in range(4):
        a, b = at[k], at[(k + 1) % 4]
        seg = np.roll(contour, -a, axis=0)[: (b - a) % n + 1]
        trim = len(seg) // 5
        seg = seg[trim : len(seg) - trim] if len(seg) - 2 * trim >= 2 else seg
        if len(seg) < 2:
            return quad.astype(np.float32)
        fit = cv2.fitLine(seg.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((float(fit[0]), float(fit[1]), float(fit[2]), float(fit[3])))
    out = []
    for k in range(4):
        (ux, uy, ax, ay), (vx, vy, bx, by) = lines[k - 1], lines[k]
        cross = ux * (-vy) - uy * (-vx)
        if abs(cross) < 1e-6:
            return quad.astype(np.float32)
        t = ((bx - ax) * (-vy) - (by - ay) * (-vx)) / cross
        out.append((ax + t * ux, ay + t * uy))
    return np.array(out, np.float32)


def find_card(frame: Image, size: tuple[int, int], params: DetectParams = DetectParams()) -> Detection:
    """The card face in ``frame`` warped to ``size`` (w, h), upright or upside down; else why not."""
    h, w = frame.shape[:2]
    scale = min(1.0, params.work_width / w)
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else frame
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    level, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if float(grey.max()) - float(grey.min()) < 60:
        return Detection("empty", "no contrast in the window")
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    area_total = float(small.shape[0] * small.shape[1])
    big = [c for c in contours if cv2.contourArea(c) >= params.min_area * area_total]
    if not big:
        return Detection("empty", "nothing card-sized")
    if len(big) > 1:
        return Detection("refused", f"{len(big)} separate objects in the window (one card at a time)")
    contour = big[0]
    x, y, bw, bh = cv2.boundingRect(contour)
    if x <= 0 or y <= 0 or x + bw >= small.shape[1] or y + bh >= small.shape[0]:
        return Detection("refused", "the card is not wholly inside the window")
    area = cv2.contourArea(contour)
    if area > params.max_area * area_total:
        return Detection("refused", "the bright area fills the window (glare or a card too close)")
    peri = cv2.arcLength(contour, True)
    quad = cv2.approxPolyDP(contour, 0.03 * peri, True)
    if len(quad) != 4 or not cv2.isContourConvex(quad):
        return Detection("refused", f"the outline has {len(quad)} corners, not a single card's 4")
    fill = area / max(cv2.contourArea(quad), 1.0)
    if fill < params.min_fill:
        return Detection("refused", f"the outline is notched ({fill:.2f} of its corners' area)")
    q = _order(
        _refine(np.asarray(contour, np.int32).reshape(-1, 2), np.asarray(quad, np.int32).reshape(4, 2))
        / scale
    )
    short = float(np.linalg.norm(q[0] - q[1]) + np.linalg.norm(q[2] - q[3])) / 2
    long = float(np.linalg.norm(q[1] - q[2]) + np.linalg.norm(q[3] - q[0])) / 2
    aspect = short / max(long, 1.0)
    if not math.isclose(aspect, CARD_ASPECT, rel_tol=params.aspect_tolerance):
        return Detection("refused", f"the outline's sides are {aspect:.2f} wide to tall, not a card's")
    fw, fh = size
    dst = np.array([(0, 0), (fw - 1, 0), (fw - 1, fh - 1), (0, fh - 1)], np.float32)
    m = cv2.getPerspectiveTransform(q, dst)
    face = cv2.warpPerspective(frame, m, (fw, fh), flags=cv2.INTER_LINEAR)
    _blank_corners(face)
    return Detection("card", face=face, corners=q)


def _blank_corners(face: Image) -> None:
    """Paint the rounded corners (felt seen past the card's curve) in the card's own paper colour,
    so that a glyph printed near a corner is not joined to a dark triangle of felt."""
    fh, fw = face.shape[:2]
    r = max(3, fw // 16)
    paper = cv2.mean(face[r : 2 * r, fw // 2 - r : fw // 2 + r])[:3]
    for cx, cy, sx, sy in ((0, 0, 1, 1), (fw - 1, 0, -1, 1), (fw - 1, fh - 1, -1, -1), (0, fh - 1, 1, -1)):
        tri = np.array([(cx, cy), (cx + sx * r, cy), (cx, cy + sy * r)], np.int32)
        cv2.fillConvexPoly(face, tri, paper)
