"""Where frames come from: a camera through OpenCV, a replayed folder or video, or a simulated window.

Every source has the same two calls, :meth:`FrameSource.read` (a BGR frame,
or None when there is none right now) and :meth:`FrameSource.close`, so the
daemon's camera link treats a USB camera, a recorded session and the demo's
simulated camera alike, and a source that stops giving frames is noticed
the same way for all of them (the camera goes ``device_offline``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from vision.recognise import Image, Reading

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


class SourceError(RuntimeError):
    """A source that cannot be opened; the message names the device or path."""


class FrameSource(Protocol):
    def read(self) -> Image | None: ...

    def close(self) -> None: ...


class CaptureSource:
    """A camera through :class:`cv2.VideoCapture`: a device index (0) or path (/dev/video0).

    Resolution, exposure and focus are asked of the driver; a camera may ignore
    what it cannot do, so the size it really gives is read back and logged by
    the caller (``actual_size``).
    """

    def __init__(
        self,
        device: int | str,
        width: int,
        height: int,
        exposure: float | None = None,
        focus: float | None = None,
    ) -> None:
        self.device = device
        self.cap = cv2.VideoCapture(device)
        if not self.cap.isOpened():
            raise SourceError(f"cannot open camera {device!r}")
        self.cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        self.cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        if exposure is not None:
            self.cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2: 1 = manual
            self.cap.set(cv2.CAP_PROP_EXPOSURE, exposure)
        if focus is not None:
            self.cap.set(cv2.CAP_PROP_AUTOFOCUS, 0)
            self.cap.set(cv2.CAP_PROP_FOCUS, focus)

    @property
    def actual_size(self) -> tuple[int, int]:
        return int(self.cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(self.cap.get(cv2.CAP_PROP_FRAME_HEIGHT))

    def read(self) -> Image | None:
        ok, frame = self.cap.read()
        return frame if ok else None

    def close(self) -> None:
        self.cap.release()


class ReplaySource:
    """A folder of images (in name order) or a video file, played once: then no more frames."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: list[Path] = []
        self.cap: cv2.VideoCapture | None = None
        if path.is_dir():
            self.files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not self.files:
                raise SourceError(f"{path}: no images ({', '.join(IMAGE_SUFFIXES)}) to replay")
        elif path.is_file():
            self.cap = cv2.VideoCapture(str(path))
            if not self.cap.isOpened():
                raise SourceError(f"{path}: OpenCV cannot open this video")
        else:
            raise SourceError(f"{path}: no such folder or video file")
        self._next = 0

    def read(self) -> Image | None:
        if self.cap is not None:
            ok, frame = self.cap.read()
            return frame if ok else None
        while self._next < len(self.files):
            path = self.files[self._next]
            self._next += 1
            # A file gone since the folder was listed is skipped without asking OpenCV, which printed a
            # warning on stderr for each one (hundreds at once for an emptied folder: a review, 2026-12-07).
            image = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
            if image is not None:
                return image
        return None

    def close(self) -> None:
        if self.cap is not None:
            self.cap.release()


class WindowSource:
    """The simulated camera: one image file, read again for every frame (no file: no frame).

    Whoever plays the dealer (``croupier demo --camera-sim``) writes the scene
    the camera should see into the file, replacing it atomically; deleting the
    file is unplugging the camera.

    A file unchanged since the last read (the same inode, size and modification time: the dealer
    replaces it by a rename, so every new scene is a new inode) gives the same frame object again, not
    decoded again, and read-only: decoding a 640 x 480 PNG took 8 ms of the 30 frames a second the
    simulated camera runs at, and the camera link reads a frame it has just read only once
    (:class:`ReadOnce`), so a demo on a Pi pays for each scene once.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int] | None = None
        self._frame: Image | None = None

    def read(self) -> Image | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key == self._key and self._frame is not None:
            return self._frame
        frame = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
        if frame is None:
            self._key = self._frame = None
            return None
        frame.flags.writeable = False  # handed out again: nobody may draw on it
        self._key, self._frame = key, frame
        return frame

    def close(self) -> None:
        pass


class ReadOnce:
    """``read(frame)``, not repeated for the read-only frame just read: the simulated window's unchanged
    frame is handed over again as the same read-only object (:class:`WindowSource`), and the same picture
    gives the same reading, recognition being deterministic. A camera's or a replay's frames are new
    objects every time (the last frame is held, so no new one can take its identity), each read; and a
    writeable frame is read every time, so a driver filling one buffer again (``cap.read(buffer)``) is
    never taken for an unchanged window."""

    def __init__(self, read: Callable[[Image], Reading]) -> None:
        self._read = read
        self._last: tuple[Image, Reading] | None = None

    def __call__(self, frame: Image) -> Reading:
        if self._last is None or self._last[0] is not frame or np.asarray(frame).flags.writeable:
            self._last = (frame, self._read(frame))
        return self._last[1]
