"""Under a tilted camera a second object turned against the card read is still found by its outline, judged
on the table's plane (:mod:`vision.table_view`); the card alone is still read.

The scenes are drawn from above (a top view of the table, 2.4 px a millimetre) and seen by a camera pitched
``pitch`` degrees and turned ``yaw`` about the table's normal. Before the view, a pale object beside the card
(its far side joined to a pale wall, so only its outline shows it) turned 45 degrees under a 40-degree pitch,
or 30 under 50, was read as the card: its corners were seen far from square.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from vision_support import profile
from vision_tables import FELT, H, W, at

from controller.cards import parse_card
from vision.recognise import recognise
from vision.synth import DESIGNS, FACE_CORNERS, render_face
from vision.table_view import LARGEST, SPAN, seen_square, table_view
from vision.window import ScanWindow, bounds

#: The top view's size (px) and scale.
TOP_W, TOP_H, PX_PER_MM = 900, 700, 2.4
PALE = (236, 236, 236)


def top_view(turn: float | None, wall: bool) -> np.ndarray:
    """The table from above: the 9C upright left of centre and, with ``turn``, a pale object of a card's size
    turned ``turn`` degrees to its right (a big dark pip on it, as a prop card), its far side joined by a
    pale wall to the view's right edge; without, a pale wall alone, far wider than a card, to the right."""
    top = np.full((TOP_H, TOP_W, 3), FELT, np.uint8)
    if turn is None and wall:
        cv2.rectangle(top, (520, 120), (TOP_W, 600), PALE, -1)
    if turn is not None:
        cx = 330 + 151 / 2 + 12 + 120
        obj = np.array(at(cx, 350, 151, turn), np.float32)
        right = obj[np.argsort(obj[:, 0])[-2:]]
        poly = np.array([right[0], right[1], (TOP_W, right[1][1]), (TOP_W, right[0][1])], np.float32)
        cv2.fillConvexPoly(top, np.round(poly).astype(np.int32), PALE)
        cv2.fillConvexPoly(top, np.round(obj).astype(np.int32), PALE)
        cv2.circle(top, (int(cx), 350), 45, (30, 30, 30), -1)
    face = render_face(parse_card("9C"), DESIGNS["classic"])
    m = cv2.getPerspectiveTransform(FACE_CORNERS, np.array(at(330, 350, 151, 0), np.float32))
    seen = cv2.warpPerspective(np.full(face.shape[:2], 255, np.uint8), m, (TOP_W, TOP_H)) > 127
    top[seen] = cv2.warpPerspective(face, m, (TOP_W, TOP_H))[seen]
    return top


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


def shot(pitch: float, turn: float | None, wall: bool = True, yaw: float = 0.0
         ) -> tuple[np.ndarray, np.ndarray]:
    """The frame of :func:`top_view` seen by :func:`camera`, and the camera's homography."""
    m = camera(pitch, yaw)
    return cv2.warpPerspective(top_view(turn, wall), m, (W, H), borderValue=FELT), m


@pytest.mark.parametrize("calibrated", [False, True], ids=["the card's own plane", "calibrated"])
@pytest.mark.parametrize(("pitch", "turn", "yaw"), [(40, 45, 0), (50, 30, 0), (50, 45, 0), (45, 60, 30)])
def test_an_object_turned_against_the_card_under_a_tilted_camera_is_a_second_object(
    pitch: float, turn: float, yaw: float, calibrated: bool
) -> None:
    frame, m = shot(pitch, turn, yaw=yaw)
    reading = recognise(frame, profile(), window=plane_of(m) if calibrated else None)
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


@pytest.mark.parametrize("calibrated", [False, True], ids=["the card's own plane", "calibrated"])
@pytest.mark.parametrize(("pitch", "yaw"), [(30, 0), (50, 0), (55, 20), (50, 40)])
@pytest.mark.parametrize("wall", [False, True], ids=["felt", "a pale wall cut by the frame"])
def test_the_card_alone_under_a_tilted_camera_is_read(pitch: float, yaw: float, wall: bool,
                                                      calibrated: bool) -> None:
    """The view's own edges (where the frame ends, warped) part no region: a wall running past the frame's
    edge is no object there (before the frame's border pixels were carried on, its dark band was)."""
    frame, m = shot(pitch, None, wall, yaw)
    reading = recognise(frame, profile(), window=plane_of(m) if calibrated else None)
    assert reading.card is parse_card("9C"), reading


def test_a_card_seen_square_is_judged_as_seen_and_a_tilted_one_on_the_plane() -> None:
    upright = np.array([(75, 50), (160, 50), (160, 169), (75, 169)], np.float32)
    assert seen_square(upright)
    assert table_view(np.zeros((180, 240, 3), np.uint8), upright, bounds(None, (240, 180))) is None
    m = camera(50, 20)
    top = np.array(at(330, 350, 151, 0), np.float32).reshape(-1, 1, 2)
    seen = (cv2.perspectiveTransform(top, m).reshape(4, 2) / 2).astype(np.float32)  # at half size
    assert not seen_square(seen)
    for window in (None, plane_of(m)):
        view = table_view(np.zeros((240, 320, 3), np.uint8), seen, bounds(window, (320, 240)))
        assert view is not None
        card = view[1]
        sides = np.linalg.norm(card - card[[1, 2, 3, 0]], axis=1)
        assert sides[0] / sides[1] == pytest.approx(63 / 88, rel=0.01)
        assert sides[0] == pytest.approx(sides[2], rel=0.01) and sides[1] == pytest.approx(sides[3], rel=0.01)
        h, w = view[0].shape[:2]
        assert w * h <= LARGEST * 320 * 240 * 1.02  # its cost bounded, whatever the tilt (a pixel's rounding)
        share = cv2.contourArea(card) / cv2.contourArea(seen)  # the card's detail: the same, or made smaller
        assert LARGEST / SPAN**2 <= share <= 1.01
