"""A camera that sees nothing (its lens covered, a lamp off, an exposure gone wrong) is no empty window:
its frames are not read, and when it lasts the camera is offline, saying why. And a dark spell never
becomes the empty window a card is judged by.

Found by a review (2026-12-07): two seconds of dark frames over the empty window settled as the window; a
card laid in the dark and read once the light was back took the dark for its reference, and the next dark
second passed for its empty window: the card was dealt twice. And a covered lens read as an empty window
("no contrast") stalled the deal with no fault said. The camera is OpenCV's own capture opened on a video
(the ``device`` path a real camera takes); a live stretch carries a sensor's noise, so the frozen check
does not see the dark frames.
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
from vision.felt import look, unseen
from vision.synth import DESIGNS, STUDIO, scene

CLASSIC = DESIGNS["classic"]
EMPTY = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
CARD = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
BLACK = np.zeros((SIZE[1], SIZE[0], 3), np.uint8)
ENDED = (False, "no frames for 0.6 s")


Pictures = list[tuple[np.ndarray, int, bool]]


def _play(tmp_path: Path, pictures: Pictures) -> tuple[list[str], list[tuple[bool, str]]]:
    """The cards dealt and the camera's statuses, from 3 s of the empty window and then ``pictures``."""
    video = tmp_path / "camera.avi"
    write_video(video, [(EMPTY, 3 * FPS, True), *pictures])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=3.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: ENDED in camera_statuses(config), "the video never ended", timeout=90)
    return dealt(config), camera_statuses(config)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("level", [0, 30])
def test_a_card_laid_in_a_dark_spell_is_not_dealt_again_after_the_next(tmp_path: Path, level: int) -> None:
    dark = np.full((SIZE[1], SIZE[0], 3), level, np.uint8)
    cards, _ = _play(tmp_path, [(dark, 3 * FPS, True), (CARD, 2 * FPS, True), (dark, 4, True),
                                (CARD, 2 * FPS, True), (EMPTY, FPS, True)])
    # A dark spell is no reading of the window, and a card under it is doubted as under a hand: read
    # again, it goes to the dealer (``?``, a repeat_card tilt), never dealt again (it was: 2C, 2C).
    assert cards == ["2C", "2C?"]


@pytest.mark.timeout(150)
def test_a_covered_lens_takes_the_camera_offline_saying_so_and_back_when_it_sees(tmp_path: Path) -> None:
    cards, statuses = _play(tmp_path, [(BLACK, 3 * FPS, True), (EMPTY, FPS, True), (CARD, 2 * FPS, True)])
    assert cards == ["2C"]
    blind = [(online, why) for online, why in statuses if not online and "sees nothing" in why]
    assert blind and "the window is flat, one colour (lightness 1 of 255)" in blind[0][1], statuses
    assert statuses[statuses.index(blind[0]) + 1] == (True, "frames"), statuses


def test_what_sees_nothing_and_what_does() -> None:
    empty = look(EMPTY, None)
    assert "flat" in str(unseen(empty, look(BLACK, None)))
    lamp = np.linspace(0, 80, SIZE[0], dtype=np.float32)[None, :, None]  # a felt lit from one side
    lit = np.clip(EMPTY + lamp, 0, 255).astype(np.uint8)
    dim = np.clip(lit.astype(np.float32) * 0.2, 0, 255).astype(np.uint8)  # the same, the lamp gone
    assert unseen(look(lit, None), look(lit, None)) is None
    assert "far darker than when last seen empty" in str(unseen(look(lit, None), look(dim, None)))
    assert unseen(empty, look(np.full_like(EMPTY, 255), None)) is not None
    assert unseen(empty, look(CARD, None)) is None  # a white card over a tenth of the window
    assert unseen(empty, look(EMPTY, None)) is None
    assert unseen(None, look(BLACK, None)) is not None  # no window settled yet: black is nothing
    assert unseen(None, look(EMPTY, None)) is None
