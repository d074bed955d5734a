"""A table drawn from above and seen by a tilted camera: a card read and a pale object turned against it.

Why a module of its own: tests/test_vision_table_view.py and bench/vision_tilted_pairs.py draw the same
scenes, and a bench must not import a test module. The top view (900 x 700 px, 2.4 px a millimetre) holds
the 9C upright and, to its right, a pale object of a card's size turned ``turn`` degrees (a big dark pip on
it, as a prop card) whose far side a pale wall joins to the view's edge, so that only its outline shows it;
a camera pitched ``pitch`` degrees over the view's centre, turned ``yaw`` about the table's normal, sees it at
640 x 480.
"""

from __future__ import annotations

import math
import random

import cv2
import numpy as np
from vision_tables import FELT, H, W, at

from controller.cards import parse_card
from vision.synth import DESIGNS, FACE_CORNERS, render_back, render_face
from vision.window import ScanWindow

__all__ = ["FELT", "H", "PALE", "TOP_H", "TOP_W", "W", "at", "camera", "card_corners", "object_corners",
           "plane_of", "shot", "top_view", "with_card"]

#: The top view's size (px) and scale.
TOP_W, TOP_H, PX_PER_MM = 900, 700, 2.4
PALE = (236, 236, 236)


def top_view(turn: float | None, wall: bool, back: float | None = None) -> np.ndarray:
    """The table from above: the 9C upright left of centre and, with ``turn``, a pale object of a card's size
    turned ``turn`` degrees to its right (a big dark pip on it, as a prop card), its far side joined by a
    pale wall to the view's right edge; without, a pale wall alone, far wider than a card, to the right.
    With ``back`` (and ``turn``): a face-down back there instead, lit ``back`` times the card's light, on the
    felt alone (no wall)."""
    top = np.full((TOP_H, TOP_W, 3), FELT, np.uint8)
    if turn is not None and back is not None:
        _lay(top, render_back(random.Random(7)), object_corners(turn), back)
        return with_card(top)
    if turn is None and wall:
        cv2.rectangle(top, (520, 120), (TOP_W, 600), PALE, -1)
    if turn is not None:
        obj = object_corners(turn)
        cx = float(obj[:, 0].mean())
        right = obj[np.argsort(obj[:, 0])[-2:]]
        poly = np.array([right[0], right[1], (TOP_W, right[1][1]), (TOP_W, right[0][1])], np.float32)
        cv2.fillConvexPoly(top, np.round(poly).astype(np.int32), PALE)
        cv2.fillConvexPoly(top, np.round(obj).astype(np.int32), PALE)
        cv2.circle(top, (int(cx), 350), 45, (30, 30, 30), -1)
    return with_card(top)


def with_card(top: np.ndarray) -> np.ndarray:
    """``top`` (a top view) with the 9C laid on it at :func:`card_corners`."""
    _lay(top, render_face(parse_card("9C"), DESIGNS["classic"]), card_corners())
    return top


def _lay(top: np.ndarray, face: np.ndarray, corners: np.ndarray, gain: float = 1.0) -> None:
    """``face`` warped onto ``corners`` of the top view ``top``, its light times ``gain``."""
    m = cv2.getPerspectiveTransform(FACE_CORNERS, corners)
    seen = cv2.warpPerspective(np.full(face.shape[:2], 255, np.uint8), m, (TOP_W, TOP_H)) > 127
    top[seen] = (cv2.warpPerspective(face, m, (TOP_W, TOP_H))[seen] * gain).astype(np.uint8)


def card_corners() -> np.ndarray:
    """The 9C's corners in the top view (upright, left of centre)."""
    return np.array(at(330, 350, 151, 0), np.float32)


def object_corners(turn: float) -> np.ndarray:
    """The pale object's corners in the top view, turned ``turn`` degrees."""
    return np.array(at(330 + 151 / 2 + 12 + 120, 350, 151, turn), np.float32)


def camera(pitch: float, yaw: float = 0.0, focal: float = 640.0) -> np.ndarray:
    """The homography from the top view to a 640 x 480 camera pitched ``pitch`` degrees over its centre."""
    a, c, s = math.radians(pitch), math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    distance = focal * 1.15

    def seen(x: float, y: float) -> tuple[float, float]:
        x, y = (x - TOP_W / 2) * c - (y - TOP_H / 2) * s, (x - TOP_W / 2) * s + (y - TOP_H / 2) * c
        z = distance + y * math.sin(a)
        return W / 2 + focal * x / z, H / 2 + focal * y * math.cos(a) / z

    src = np.array([(100, 100), (800, 100), (800, 600), (100, 600)], np.float32)
    return cv2.getPerspectiveTransform(src, np.array([seen(x, y) for x, y in src], np.float32))


def plane_of(m: np.ndarray) -> ScanWindow:
    """The calibrated plane of camera ``m``: frame fractions to the top view's millimetres."""
    plane = np.diag([1 / PX_PER_MM, 1 / PX_PER_MM, 1.0]) @ np.linalg.inv(m) @ np.diag([W, H, 1.0])
    return ScanWindow(plane=tuple(tuple(float(v) for v in row) for row in plane / plane[2, 2]))


def shot(pitch: float, turn: float | None, wall: bool = True, yaw: float = 0.0, back: float | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    """The frame of :func:`top_view` seen by :func:`camera`, and the camera's homography."""
    m = camera(pitch, yaw)
    return cv2.warpPerspective(top_view(turn, wall, back), m, (W, H), borderValue=FELT), m
