"""A dark or flat moment of the camera never becomes the empty window a card is judged by.

Found by a review (2026-12-07): two seconds of dark (or flat grey) frames over the empty window settled as
the window; a card laid in the dark and read once the light was back took the dark for its reference, and
the next dark moment, four frames, passed for its empty window: the card was dealt twice, silently. The
camera is OpenCV's own capture opened on a video (the ``device`` path a real camera takes); a live stretch
carries a sensor's noise, so the frozen check does not see the dark frames.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.felt import blank, look, reference
from vision.synth import DESIGNS, STUDIO, scene

CLASSIC = DESIGNS["classic"]
EMPTY = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
CARD = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
ENDED = (False, "no frames for 0.6 s")


@pytest.mark.timeout(150)
@pytest.mark.parametrize("level", [0, 30, 128])
def test_a_card_laid_in_a_dark_spell_is_not_dealt_again_after_the_next(tmp_path: Path, level: int) -> None:
    dark = np.full((SIZE[1], SIZE[0], 3), level, np.uint8)
    video = tmp_path / "camera.avi"
    write_video(video, [(EMPTY, 3 * FPS, True), (dark, 3 * FPS, True), (CARD, 2 * FPS, True), (dark, 4, True),
                        (CARD, 2 * FPS, True), (EMPTY, FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=3.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: ENDED in camera_statuses(config), "the video never ended", timeout=90)
    # With no window to judge the card by, the dark moment does not clear it: read again, it goes to the
    # dealer (``?``, a repeat_card tilt), never dealt again (it was: 2C, 2C).
    assert dealt(config) == ["2C", "2C?"]


def test_a_flat_or_far_darker_window_is_no_reference_and_an_exposure_is_one() -> None:
    lamp = np.linspace(0, 80, SIZE[0], dtype=np.float32)[None, :, None]  # a felt lit from one side
    lit = np.clip(EMPTY + lamp, 0, 255).astype(np.uint8)
    now = look(lit, None)
    for level in (0, 30, 128):  # a flat frame: no felt to judge by
        assert blank(look(np.full_like(lit, level), None), now)
    dim = np.clip(lit.astype(np.float32) * 0.2, 0, 255).astype(np.uint8)  # the felt, the lamp gone
    assert blank(look(dim, None), now)
    exposed = np.clip(lit.astype(np.float32) * 0.62, 0, 255).astype(np.uint8)  # an automatic exposure
    assert not blank(look(lit, None), look(exposed, None))
    assert not blank(now, now)
    corners = np.array([[250, 150], [390, 150], [390, 350], [250, 350]], np.float32)
    assert reference([], now, corners, lit.shape, look(dim, None)) is None
    kept = look(lit, None)
    assert reference([], look(exposed, None), corners, lit.shape, kept) is kept
