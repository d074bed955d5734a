"""Old frames from a camera: a frame handed over again is not read, and a camera giving only those is frozen.

Why: a live sensor's noise changes every frame, so a frame equal to one the camera gave a moment ago is
an old buffer: a stalled driver handing back its last one, or cycling through its ring of them (V4L2
keeps a few, each unlike the one before), or a camera doubling frames. One picture handed over three
times is no three agreeing reads of the window (a misread picture would be dealt), and a ring of old
frames of an empty window and of a card would deal the card again at every turn. After ``frozen_after``
seconds of nothing but old frames the camera is offline, as an unplugged one is. Only a camera
(``device``) is checked: a replay or the simulated window may repeat a frame by design.

Also here: frames that see nothing (:class:`Blind`, any source), and the writer of a card's audit frame.
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

from controller.cards import Card
from vision.image_file import write_image
from vision.unseen import Unseen, unseen
from vision.window import ScanWindow

#: How many of a camera's last frames a new one is checked against: more than any capture keeps buffers
#: (OpenCV's V4L2 capture up to 10; GStreamer and libcamera pools a few more). At 8, a driver cycling
#: through a ring of 9 or 10 old buffers dealt the card at every turn (a review, 2026-12-07). A live
#: sensor never repeats a frame, so a longer memory costs a lookup, never a live frame.
RECENT: Final = 32


def fingerprint(frame: MatLike) -> bytes:
    """A frame's fingerprint: its shape and some 30 to 48 of its rows (every 16th, fewer at 12 MP: 0.6 MB
    to hash, not 2.3). Two frames of a live sensor differ in every such row; only an old buffer matches."""
    step = max(16, frame.shape[0] // 48)
    digest = hashlib.blake2b(repr(frame.shape).encode(), digest_size=16)
    digest.update(np.ascontiguousarray(frame[::step]).data)
    return digest.digest()


class OldFrames:
    """Feed each frame of a camera to :meth:`old`; after an old one, :meth:`frozen` says if it is frozen."""

    def __init__(self, frozen_after: float, stable_frames: int) -> None:
        self.frozen_after = frozen_after
        self.stable_frames = stable_frames
        self._recent: deque[bytes] = deque(maxlen=RECENT)
        #: Since when the frames have all been old ones.
        self._old_since = 0.0
        #: New frames with no two old ones in a row among them (nor a frozen verdict), and how many bring the
        #: camera back online (``stable_frames`` after a frozen spell: a dark scene with a rare noisy pixel
        #: would flap it online and offline, a second reading found it so). Not new frames in a row: a camera
        #: doubling frames never gives two, and stayed offline for good after a stall (a review, 2026-12-07).
        self._new = 0
        self._olds = 0
        self.back_after = 1

    def old(self, frame: MatLike, now: float) -> bool:
        """Whether ``frame`` is one of the last :data:`RECENT` frames again (not to be read)."""
        mark = fingerprint(frame)
        seen = mark in self._recent
        self._recent.append(mark)
        if not seen:
            self._old_since = now
            self._new += 1
            self._olds = 0
            return False
        self._olds += 1
        if self._olds > 1:  # a doubled frame is one old frame between new ones; a stall is more
            self._new = 0
        return True

    def frozen(self, now: float) -> str | None:
        """Why the camera is frozen (only old frames for ``frozen_after`` seconds), or None. Once frozen,
        the camera is back after ``stable_frames`` new frames, no two old ones in a row among them."""
        if now - self._old_since < self.frozen_after:
            return None
        self.back_after = self.stable_frames
        self._new = 0
        return (f"the same frames again, unchanged to the last bit, for {self.frozen_after:g} s "
                "(a frozen camera, or its lens covered)")

    def back(self) -> bool:
        """Whether enough new frames came to bring an offline camera back (then counted anew)."""
        if self._new < self.back_after:
            return False
        self.back_after = 1
        return True


class Blind:
    """How long a camera's frames have seen nothing (:func:`vision.unseen.unseen`: all but black or all but
    white): such frames are not read, and after ``after`` seconds of them the camera is offline, saying
    why, until the first frame that sees. Why: a covered lens or a dead lamp gives dark frames with a
    sensor's noise, new every time, so the frozen check passes them; read as an empty window, the deal
    waited for a card with no fault said (a review, 2026-12-07). No memory of earlier frames but how long
    this has lasted: a test against the window seen before took the camera offline after a lasting change
    of light (a first fix, withdrawn)."""

    def __init__(self, after: float, window: ScanWindow | None) -> None:
        self.after = after
        self.window = window
        self._since: float | None = None
        self._found: Unseen | None = None  # what the newest frame judged showed (None: it sees)

    @property
    def why(self) -> str | None:
        """The newest frame's verdict: why it sees nothing (no reading of the window), or None: it sees."""
        return None if self._found is None else f"{self._found.what} ({self._found.measure})"

    def see(self, frame: MatLike | None, now: float) -> str | None:
        """Judge ``frame``: why it sees nothing, or None. None for ``frame``: not judged (a camera warming up
        after it was opened again), which changes nothing: a camera offline as blind is not back online by
        frames no one looked at (a review, 2026-12-07: a lens covered, opened again and again, came back at
        each opening)."""
        if frame is not None:
            self._found = unseen(frame, self.window)
            self._since = None if self._found is None else now if self._since is None else self._since
        return self.why

    def lasted(self, now: float) -> str | None:
        """The camera's reason to be offline once its frames have seen nothing for ``after`` s, else None."""
        found = self._found
        if found is None or self._since is None or now - self._since < self.after:
            return None
        return f"{found.what} for {self.after:g} s: the camera sees nothing ({found.cause})"


def save_audit(audit_dir: Path, state_dir: Path, frame: MatLike, card: Card, number: int) -> str:
    """The frame ``card`` was read from, kept for audit (its path is the journal row's ref); the name is
    unique across restarts (the time, and ``number``: the link's count of saved frames)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = audit_dir / f"{stamp}-{time.time_ns() % 1_000_000_000:09d}-{number:05d}-{card.code}.jpg"
    write_image(path, frame, [cv2.IMWRITE_JPEG_QUALITY, 90])  # whole before the journal names it
    try:
        return str(path.relative_to(state_dir))
    except ValueError:
        return str(path)
