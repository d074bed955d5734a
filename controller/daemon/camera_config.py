"""The ``camera`` section of a table file: a card-reading camera instead of (or beside) a shoe.

Kept apart from ``config.py`` and free of OpenCV: a table file is validated
(and a daemon without a camera runs) on a machine without the ``vision``
extra; OpenCV is imported only by the camera link, when a camera is
configured. Exactly one frame source is named: ``device`` (a camera through
OpenCV), ``replay`` (a folder of images or a video file, for tests and
demos) or ``window`` (the simulated camera: one image file re-read for each
frame, which ``croupier demo --camera-sim`` paints).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

_Row = tuple[float, float, float]


class ScanWindowSpec(BaseModel):
    """Where the card may lie in the frame (``corners``) and the table's plane (``plane``); see
    docs/vision.md, "The scan window". ``croupier vision calibrate`` prints both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The window's outline: 3 to 16 points (x, y), fractions (0..1) of the frame's width and height.
    corners: tuple[tuple[float, float], ...] | None = Field(default=None, min_length=3, max_length=16)
    #: The homography (3 rows of 3) from frame fractions to millimetres on the table.
    plane: tuple[_Row, _Row, _Row] | None = None

    @model_validator(mode="after")
    def _sane(self) -> ScanWindowSpec:
        if self.corners is None and self.plane is None:
            raise ValueError("give corners (the window's outline), plane (croupier vision calibrate) "
                             "or both")
        if self.corners is not None:
            if any(not (0.0 <= v <= 1.0) for point in self.corners for v in point):
                raise ValueError("corners are fractions of the frame: every x and y between 0 and 1")
            pts = self.corners
            area = abs(sum(x0 * y1 - x1 * y0
                           for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1], strict=True))) / 2
            if area < 0.01:
                raise ValueError(f"the outline covers {area:.1%} of the frame: a card cannot lie in it")
            if _crosses(pts):
                raise ValueError("the outline crosses itself: give its points in order round the window")
        if self.plane is not None:
            if not all(math.isfinite(v) for row in self.plane for v in row):
                raise ValueError("plane holds a value that is not a finite number (nan or inf)")
            (a, b, c), (d, e, f), (g, h, i) = self.plane
            if abs(a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)) < 1e-12:
                raise ValueError("plane is not a homography (its determinant is 0)")
        return self


def _crosses(pts: tuple[tuple[float, float], ...]) -> bool:
    """Whether two sides of the closed outline ``pts`` that do not share a corner cross: points given out
    of order round the window (a bow tie) make a mask of two triangles, not the window."""
    def side(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    sides = list(zip(pts, pts[1:] + pts[:1], strict=True))
    n = len(sides)
    for i in range(n):
        for j in range(i + 2, n - (i == 0)):  # not the side itself, nor its neighbours
            (a, b), (c, d) = sides[i], sides[j]
            if side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0:
                return True
    return False


class CameraSpec(BaseModel):
    """Where frames come from, the deck they are read against, and when a read counts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The enrolled deck profile (``croupier vision enroll``), relative to the table file or
    #: firmware_configs/.
    deck: str = Field(min_length=1)
    #: A camera: its index (0) or device path (/dev/video0).
    device: int | str | None = None
    #: A folder of images (name order) or a video file, played once, relative to the table file.
    replay: str | None = None
    #: The simulated camera's image file, relative to the state directory.
    window: str | None = None
    width: int = Field(default=640, ge=64, le=4096)
    height: int = Field(default=480, ge=48, le=4096)
    #: Manual exposure (the driver's units; V4L2: 100 us steps); None leaves automatic exposure on.
    exposure: float | None = None
    #: Manual focus (the driver's units, 0 = infinity on most UVC cameras); None leaves autofocus on.
    focus: float | None = None
    #: Frames per second asked for (replay and window sources are paced to it).
    fps: float = Field(default=15.0, gt=0, le=120)
    #: A card is reported after this many consecutive frames read it the same.
    stable_frames: int = Field(default=3, ge=1, le=60)
    #: Seconds without a frame before the camera is offline (a tilt, as an unplugged shoe).
    offline_after: float = Field(default=2.0, gt=0, le=600)
    #: Seconds a camera (``device``) may give only old frames (one of its last 8 again, unchanged to the last
    #: bit) before it is offline: a driver handing back its last buffer or cycling through its ring of
    #: them, a frozen pipeline, a lens covered in the dark. A live sensor's noise changes every frame, so
    #: an old frame is never read again (controller.daemon.camera_frames). None: no check
    #: (replay and window sources are not checked: they repeat frames by design).
    frozen_after: float | None = Field(default=3.0, gt=0, le=600)
    #: Where the frame of each reported card is kept, relative to the state directory.
    audit_dir: str = "camera-audit"
    #: The scan window's outline and the table's plane (optional; ``croupier vision calibrate``).
    scan_window: ScanWindowSpec | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CameraSpec:
        named = [k for k in ("device", "replay", "window") if getattr(self, k) is not None]
        if len(named) != 1:
            raise ValueError(
                "name exactly one frame source: device (a camera), replay (a folder or video) "
                f"or window (the simulated camera); got {', '.join(named) or 'none'}"
            )
        return self


@dataclass(frozen=True)
class CameraSettings:
    """A validated camera section with its paths resolved (the state-relative ones at start)."""

    spec: CameraSpec
    deck_path: Path
    replay_path: Path | None

    def window_path(self, state_dir: Path) -> Path | None:
        if self.spec.window is None:
            return None
        window = Path(self.spec.window)
        return window if window.is_absolute() else state_dir / window

    def audit_path(self, state_dir: Path) -> Path:
        audit = Path(self.spec.audit_dir)
        return audit if audit.is_absolute() else state_dir / audit

    def describe(self, window: Path | None) -> str:
        """Where frames come from (``window``: the simulated one's file), for the self-test and the log."""
        spec = self.spec
        if spec.device is not None:
            return f"camera {spec.device!r} at {spec.width}x{spec.height}"
        if self.replay_path is not None:
            return f"replaying {self.replay_path}"
        return f"simulated window {window}"


def resolve_camera(
    spec: CameraSpec,
    table_path: Path,
    find: Callable[[Path, str, str], Path | None],
    problems: list[tuple[str | None, str]],
) -> CameraSettings | None:
    """Check the deck profile and the replay source exist; problems name ``camera.<key>``."""
    deck = find(table_path, spec.deck, "decks")
    if deck is None:
        problems.append(
            (
                "camera.deck",
                f"no deck profile {spec.deck!r} next to the table file or in "
                "firmware_configs/decks (enrol one: croupier vision enroll)",
            )
        )
    replay = None
    if spec.replay is not None:
        replay = Path(spec.replay)
        if not replay.is_absolute():
            replay = (table_path.parent / replay).resolve()
        if not replay.exists():
            problems.append(("camera.replay", f"no folder or video file {replay}"))
    if deck is None or problems:
        return None
    return CameraSettings(spec, deck, replay)
