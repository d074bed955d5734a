"""Old frames from a camera: a frame handed over again is not read, and a camera giving only those is frozen.

Why: a live sensor's noise changes every frame, so a frame equal to one the camera gave a moment ago is
an old buffer: a stalled driver handing back its last one, or cycling through its ring of them (V4L2
keeps a few, each unlike the one before), or a camera doubling frames. One picture handed over three
times is no three agreeing reads of the window (a misread picture would be dealt), and a ring of old
frames of an empty window and of a card would deal the card again at every turn. After ``frozen_after``
seconds of nothing but old frames the camera is offline, as an unplugged one is. Only a camera
(``device``) is checked: a replay or the simulated window may repeat a frame by design.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Final

import numpy as np
from cv2.typing import MatLike

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
    """Feed each frame of a camera to :meth:`old`; :attr:`fresh` counts the new ones in a row."""

    def __init__(self, frozen_after: float, stable_frames: int) -> None:
        self.frozen_after = frozen_after
        self.stable_frames = stable_frames
        self._recent: deque[bytes] = deque(maxlen=RECENT)
        #: Since when the frames have all been old ones.
        self._old_since = 0.0
        #: New frames in a row, and how many bring the camera back online (``stable_frames`` after a
        #: frozen spell: a dark scene with a rare noisy pixel would flap it online and offline).
        self.fresh = 0
        self.back_after = 1

    def old(self, frame: MatLike, now: float) -> bool:
        """Whether ``frame`` is one of the last :data:`RECENT` frames again (not to be read)."""
        mark = fingerprint(frame)
        seen = mark in self._recent
        self._recent.append(mark)
        if not seen:
            self._old_since = now
            self.fresh += 1
            return False
        self.fresh = 0
        return True

    def frozen(self, now: float) -> str | None:
        """Why the camera is frozen (only old frames for ``frozen_after`` seconds), or None. Once frozen,
        the camera is back after ``stable_frames`` new frames in a row."""
        if self.fresh or now - self._old_since < self.frozen_after:
            return None
        self.back_after = self.stable_frames
        return (f"the same frames again, unchanged to the last bit, for {self.frozen_after:g} s "
                "(a frozen camera, or its lens covered)")

    def back(self) -> bool:
        """Whether enough new frames came in a row to bring an offline camera back (then counted anew)."""
        if self.fresh < self.back_after:
            return False
        self.back_after = 1
        return True
