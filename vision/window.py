"""The scan window as the table file describes it: where in the frame the card may lie, and the table's plane.

Why: a camera sees more than the scan window (a neighbouring card, a chip rack, a lamp's glare on
the felt). A *mask* (the window's outline, a polygon in fractions of the frame) makes everything
outside it invisible to the detector, and a card crossing its outline is "not wholly inside the
window", as a card crossing the frame's edge is. A *plane* (the homography from frame fractions to
millimetres on the table, ``croupier vision calibrate``) undoes a tilted camera's perspective
exactly, so a card's proportions are checked as they are on the table, not estimated from the
outline's own vanishing points. Both are optional; fractions keep them valid at any resolution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Protocol

import cv2
import numpy as np
from numpy.typing import NDArray


class WindowSpec(Protocol):
    """A table file's ``scan_window`` section (``controller.daemon.camera_config.ScanWindowSpec``), as
    far as the recogniser reads it: named by shape so this module needs nothing of the daemon."""

    @property
    def corners(self) -> tuple[tuple[float, float], ...] | None: ...

    @property
    def plane(self) -> tuple[tuple[float, float, float], ...] | None: ...


@dataclass(frozen=True)
class ScanWindow:
    """The window's outline (``corners``, fractions of the frame) and the table's plane (``plane``)."""

    #: The window's outline, at least 3 points (x, y) as fractions of the frame's width and height.
    corners: tuple[tuple[float, float], ...] | None = None
    #: Row-major 3 x 3 homography from frame fractions (x / width, y / height) to millimetres.
    plane: tuple[tuple[float, float, float], ...] | None = None

    def polygon(self, size: tuple[int, int]) -> NDArray[np.float32] | None:
        """The outline in the pixels of a frame ``size`` (w, h) wide and high, or None (the whole frame)."""
        if self.corners is None:
            return None
        w, h = size
        return np.array([(x * w, y * h) for x, y in self.corners], np.float32)

    @classmethod
    def of(cls, spec: WindowSpec | None) -> ScanWindow | None:
        """The window a table file's ``scan_window`` section describes (None: the whole frame): one
        reading of it for the daemon's camera and for ``croupier vision`` alike."""
        return None if spec is None else cls(spec.corners, spec.plane)

    def to_plane(self, points: NDArray[np.float32], size: tuple[int, int]) -> NDArray[np.float32] | None:
        """``points`` (pixels of a frame ``size`` wide and high) in millimetres on the table, or None."""
        if self.plane is None:
            return None
        w, h = size
        fractions = points.reshape(-1, 1, 2).astype(np.float64) / np.array([w, h], np.float64)
        mapped = cv2.perspectiveTransform(fractions, np.array(self.plane, np.float64))
        return mapped.reshape(-1, 2).astype(np.float32)


@dataclass(frozen=True)
class Bounds:
    """The window at the detector's working size: where a region may lie and where it is cut."""

    #: 255 inside the window (None: the whole frame).
    inside: NDArray[np.uint8] | None
    #: 255 on the window's rim: the frame's border, and the outline's inner edge.
    rim: NDArray[np.uint8]
    polygon: NDArray[np.float32] | None
    window: ScanWindow | None
    size: tuple[int, int]

    def within(self, q: NDArray[np.float32], margin: float) -> bool:
        """Every corner of ``q`` inside the window, allowing ``margin`` pixels past its rim."""
        w, h = self.size
        if not ((q[:, 0] >= -margin) & (q[:, 1] >= -margin)
                & (q[:, 0] <= w - 1 + margin) & (q[:, 1] <= h - 1 + margin)).all():
            return False
        if self.polygon is None:
            return True
        outline = self.polygon.reshape(-1, 1, 2)
        return all(cv2.pointPolygonTest(outline, (float(x), float(y)), True) >= -margin for x, y in q)

    def sides(self, q: NDArray[np.float32]) -> tuple[float, float]:
        """The mean of ``q``'s first and third sides and of its second and fourth: on the table when the
        plane is known, else as seen."""
        on_table = self.window.to_plane(q, self.size) if self.window is not None else None
        return side_lengths(q if on_table is None else on_table)

    @property
    def calibrated(self) -> bool:
        return self.window is not None and self.window.plane is not None


def side_lengths(q: NDArray[np.float32]) -> tuple[float, float]:
    """The mean length of quadrilateral ``q``'s first and third sides, and of its second and fourth."""
    d = edge_lengths(q)
    return float(d[0] + d[2]) / 2, float(d[1] + d[3]) / 2


def edge_lengths(q: NDArray[np.float32]) -> NDArray[np.float32]:
    """The lengths of quadrilateral ``q``'s four sides, first to fourth, in ``q``'s own precision (the
    same values as :func:`numpy.linalg.norm` of each side, in one call: the detector measures sides
    of every candidate outline, where four calls' overhead cost more than the arithmetic)."""
    d = q - q[[1, 2, 3, 0]]
    return np.asarray(np.sqrt((d * d).sum(axis=1)), q.dtype)


def short_side_first(quad: NDArray[np.float32]) -> NDArray[np.float32]:
    """A quadrilateral's corners clockwise on screen, starting so that the first side is a short one (a
    card's top or bottom): the order the detector gives every outline in."""
    pts = quad.tolist()  # plain floats: four corners cost more in numpy's calls than in arithmetic
    cx, cy = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    q = quad[sorted(range(len(pts)), key=lambda i: math.atan2(pts[i][1] - cy, pts[i][0] - cx))]
    first, second = edge_lengths(q)[:2]
    return q[[1, 2, 3, 0]] if first > second else q


@cache
def widest_side(size: tuple[int, int], share: float) -> float:
    """The largest mean ``s`` of two sides of a quadrilateral whose corners all lie within a frame ``size``
    (w, h) allowing ``share`` of ``s`` past its edges (:meth:`Bounds.within`), infinite when none is:
    each side then spans at most the widened frame's diagonal, ``s**2 <= (w - 1 + 2 m)**2 + (h - 1 + 2 m)**2``
    with ``m = share * s``, whose largest root this is."""
    a, b, k = size[0] - 1, size[1] - 1, 2 * share
    quad = 1 - 2 * k * k
    if quad <= 0:
        return math.inf
    lin = -2 * k * (a + b)
    return (-lin + math.sqrt(lin * lin + 4 * quad * (a * a + b * b))) / (2 * quad)


def bounds(window: ScanWindow | None, size: tuple[int, int]) -> Bounds:
    """The window's :class:`Bounds` for a working frame ``size`` (w, h); cached (the same every frame)."""
    return _bounds(window, size)


@cache
def _bounds(window: ScanWindow | None, size: tuple[int, int]) -> Bounds:
    polygon = window.polygon(size) if window is not None else None
    if polygon is None:
        w, h = size
        rim: NDArray[np.uint8] = np.zeros((h, w), np.uint8)
        cv2.rectangle(rim, (0, 0), (w - 1, h - 1), 255, 1)
        return Bounds(None, rim, None, window, size)
    inside = filled(polygon, size)
    return Bounds(inside, rim_of(inside, 1), polygon, window, size)


def filled(polygon: NDArray[np.floating], size: tuple[int, int]) -> NDArray[np.uint8]:
    """A mask of a frame ``size`` (w, h): 255 inside ``polygon`` (pixels)."""
    mask = np.zeros((size[1], size[0]), np.uint8)
    cv2.fillPoly(mask, [np.round(polygon).astype(np.int32)], 255)
    return mask


def rim_of(inside: NDArray[np.uint8], width: int) -> NDArray[np.uint8]:
    """The rim of the window whose mask is ``inside``: its pixels within ``width`` of the mask's own edge or
    of the frame's border (a region reaching them is cut by the window)."""
    h, w = inside.shape[:2]
    kernel = np.ones((2 * width + 1, 2 * width + 1), np.uint8)
    edge = cv2.bitwise_and(inside, cv2.bitwise_not(cv2.erode(inside, kernel)))
    border = np.zeros_like(inside)
    cv2.rectangle(border, (0, 0), (w - 1, h - 1), 255, 1)
    return np.asarray(cv2.bitwise_and(cv2.bitwise_or(border, edge), inside), np.uint8)


def plane_from_corners(
    corners: list[tuple[float, float]], size_mm: tuple[float, float]
) -> NDArray[np.float64]:
    """The homography from frame fractions to millimetres that sends the window's four ``corners``
    (fractions, clockwise from the window's top-left) to a ``size_mm`` (width, height) rectangle."""
    w, h = size_mm
    src = np.array(corners, np.float32)
    dst = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32)
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


def plane_from_marker(
    corners_px: NDArray[np.float32], side_mm: float, frame: tuple[int, int]
) -> NDArray[np.float64]:
    """The homography from frame fractions to millimetres given a printed square marker of ``side_mm``
    lying flat on the table, its corners (pixels, clockwise from its top-left) seen in a ``frame``."""
    w, h = frame
    src = (corners_px.reshape(4, 2) / np.array([w, h], np.float32)).astype(np.float32)
    dst = np.array([(0, 0), (side_mm, 0), (side_mm, side_mm), (0, side_mm)], np.float32)
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


def tilt_of(plane: NDArray[np.float64], frame: tuple[int, int]) -> float:
    """How unequal the plane's scale is across the frame (0: a camera looking straight down), as the
    ratio of a millimetre's size in pixels at the frame's far and near edges, minus one; for the
    calibration's report."""
    w, h = frame
    inv = np.linalg.inv(plane)

    def px_per_mm(fy: float) -> float:
        centre = cv2.perspectiveTransform(np.array([[[0.5, fy]]], np.float64), plane)[0, 0]
        nudged = cv2.perspectiveTransform(np.array([[[centre[0] + 1.0, centre[1]]]], np.float64), inv)[0, 0]
        return math.hypot((nudged[0] - 0.5) * w, (nudged[1] - fy) * h)

    near, far = px_per_mm(0.9), px_per_mm(0.1)
    return max(near, far) / max(min(near, far), 1e-9) - 1.0
