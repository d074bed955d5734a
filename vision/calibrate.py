"""``croupier vision calibrate``: the scan window's outline and the table's plane, from one camera frame.

Why a calibration: a camera mounted at an angle sees a card foreshortened, and the detector can only
estimate the perspective from the card's own outline (which fails for a long lens tilted about one
axis). Measured once from the table itself it is exact: the four corners of a marked scan window of
known size, or a printed square marker lying flat in the window, give the homography from the frame
to millimetres on the table (:mod:`vision.window`). The result is printed as the ``scan_window``
entry of the table file's ``camera`` section (docs/vision.md, "The scan window").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from controller.configfile import validation_problems
from controller.daemon.camera_config import ScanWindowSpec
from vision.detect import CARD_ASPECT
from vision.window import plane_from_corners, plane_from_marker, tilt_of

#: The printed marker's dictionary: ArUco 4 x 4 (50 ids); any id is taken, the first one found.
MARKER_DICT: Final = cv2.aruco.DICT_4X4_50
#: A poker card's height on the table, for the report of how large a card will look.
CARD_MM: Final = 88.0
#: The least length of a card in the frame the reader is measured at (docs/vision.md, "Mounting and
#: lighting"): a calibration that shows a card shorter says so.
LEAST_CARD_PX: Final = 170


class CalibrationError(ValueError):
    """The frame or the options cannot give a calibration; the message says what to change."""


@dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found: the outline (fractions), the plane (fractions to mm), and its report."""

    corners: list[tuple[float, float]] | None
    plane: NDArray[np.float64] | None
    frame: tuple[int, int]

    def snippet(self) -> str:
        """The ``scan_window`` entry for the table file's ``camera`` section."""
        lines = [f"  scan_window:   # croupier vision calibrate, frame {self.frame[0]}x{self.frame[1]}"]
        if self.corners is not None:
            points = ", ".join(f"[{x:.4f}, {y:.4f}]" for x, y in self.corners)
            lines.append(f"    corners: [{points}]")
        if self.plane is not None:
            rows = ", ".join("[" + ", ".join(f"{v:.9g}" for v in row) + "]" for row in self.plane)
            lines.append(f"    plane: [{rows}]")
        return "\n".join(lines)

    def report(self) -> list[str]:
        """How a card will look in this frame (the index must be 20 px tall or more, docs/vision.md)."""
        if self.plane is None:
            return ["no plane: the proportions are checked as seen (give --size-mm or --marker to calibrate)"]
        w, h = self.frame
        inv = np.linalg.inv(self.plane)
        centre = cv2.perspectiveTransform(np.array([[[0.5, 0.5]]], np.float64), self.plane)[0, 0]
        x, y = centre
        card = np.array([[[x, y - CARD_MM / 2], [x, y + CARD_MM / 2]]], np.float64)
        ends = cv2.perspectiveTransform(card, inv)[0] * np.array([w, h])
        tall = float(np.linalg.norm(ends[0] - ends[1]))
        small = [] if tall >= LEAST_CARD_PX else [
            f"too small: a card must be at least {LEAST_CARD_PX} px tall to be read as measured; bring the "
            "camera nearer, use a longer lens or a larger frame (--camera-size, the table file's width and "
            "height)"]
        return [
            f"a card at the frame's centre is about {tall:.0f} px tall ({tall * CARD_ASPECT:.0f} px wide)",
            *small,
            f"scale across the frame differs by {tilt_of(self.plane, self.frame):.0%} (0 %: straight down)",
        ]


def parse_points(text: str) -> list[tuple[float, float]]:
    """``"x,y x,y x,y x,y"`` (pixels) as points."""
    try:
        points = [(float(x), float(y)) for x, y in (p.split(",") for p in text.split())]
    except ValueError:
        raise CalibrationError(f"--corners {text!r}: expected pixel positions 'x,y x,y x,y x,y'") from None
    return points


def find_marker(frame: NDArray[np.uint8]) -> NDArray[np.float32]:
    """The corners (pixels, clockwise from its top-left) of the printed ArUco marker in ``frame``."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(MARKER_DICT),
                                       cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None or len(corners) == 0:
        raise CalibrationError("no ArUco marker (4x4, any id) found: print one with a white margin, lay it "
                               "flat in the window, light it evenly, and photograph it again")
    return np.asarray(corners[0], np.float32).reshape(4, 2)


def calibrate(frame: NDArray[np.uint8], corners_px: list[tuple[float, float]] | None,
              size_mm: tuple[float, float] | None, marker_mm: float | None) -> Calibration:
    """The calibration of ``frame``: an outline from ``corners_px``; a plane from the outline and its
    ``size_mm``, or from a printed marker of side ``marker_mm``."""
    h, w = frame.shape[:2]
    corners = None
    if corners_px is not None:
        if len(corners_px) < 3 or (size_mm is not None and len(corners_px) != 4):
            raise CalibrationError("--corners: give the window's 4 corners, clockwise from its top-left "
                                   "(or 3 or more points of an outline, without --size-mm)")
        if any(not (0 <= x < w and 0 <= y < h) for x, y in corners_px):
            raise CalibrationError(f"--corners: every point must lie in the {w}x{h} frame")
        corners = [(x / w, y / h) for x, y in corners_px]
    if size_mm is not None and marker_mm is not None:
        raise CalibrationError("give --size-mm (the window's own size) or --marker, not both")
    if (size_mm is not None and min(size_mm) <= 0) or (marker_mm is not None and marker_mm <= 0):
        raise CalibrationError("--size-mm and --marker are lengths on the table in mm: above 0")
    plane = None
    if size_mm is not None:
        if corners is None:
            raise CalibrationError("--size-mm needs --corners: the window's 4 corners in the frame")
        plane = plane_from_corners(corners, size_mm)
    elif marker_mm is not None:
        plane = plane_from_marker(find_marker(frame), marker_mm, (w, h))
    if corners is None and plane is None:
        raise CalibrationError("nothing to calibrate: give --corners, --marker, or both")
    try:  # the table file's own check: what is printed is what it takes
        entry = {"corners": corners, "plane": None if plane is None else plane.tolist()}
        ScanWindowSpec.model_validate(entry)
    except ValidationError as exc:
        why = "; ".join(f"{key}: {reason}" for key, reason in validation_problems(exc, "scan_window"))
        raise CalibrationError(f"the table file would refuse this entry ({why})") from None
    return Calibration(corners, plane, (w, h))
