"""A hand or a sleeve right over the lens is no empty window: the card lying under it is not dealt again.

Out of focus, a hand filling the lens has no contrast and nothing card-sized, which is what the detector
calls an empty window; seen so for ``stable_frames`` frames, it cleared the card in the window, and the
card was dealt a second time when the hand moved away (a second reading, 2026-12-06). An empty window now
clears the card only when it shows the felt seen around that card (vision.felt).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.config import FIRMWARE_CONFIGS
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.felt import felt_around, unlike
from vision.profile import load_profile
from vision.recognise import recognise
from vision.synth import DESIGNS, FELTS, FLOOR, STUDIO, over_lens, scene

PROFILE = load_profile(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
CLASSIC = DESIGNS["classic"]


def _read_empty(felt: int, count: int) -> list[int]:
    """The first ``count`` seeds of :func:`over_lens` on ``felt`` that the recogniser reads as empty."""
    seeds = [s for s in range(60) if recognise(over_lens(s, SIZE, felt), PROFILE).status == "empty"]
    assert len(seeds) >= count, f"only {len(seeds)} frames over the lens read empty on felt {felt}"
    return seeds[:count]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("felt", range(len(FELTS)))
def test_an_empty_window_clears_a_card_only_when_it_shows_the_felt_seen_around_the_card(felt: int) -> None:
    card = scene(parse_card("KH"), CLASSIC, 3, SIZE, FLOOR, felt)
    seen = felt_around(card, None)
    for seed in range(12):  # the felt again, under another light's tint and gradient: the window is empty
        assert unlike(seen, scene(None, CLASSIC, 100 + seed, SIZE, FLOOR, felt), None) is None
    for seed in _read_empty(felt, 8):  # a hand or a sleeve: read empty, but not the felt
        why = unlike(seen, over_lens(seed, SIZE, felt), None)
        assert why is not None and why.startswith("the window is not the felt seen around the card")


@pytest.mark.timeout(120)
def test_a_card_under_a_hand_over_the_lens_is_dealt_once_and_again_after_the_window_is_seen_empty(
        tmp_path: Path) -> None:
    felt = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
    card = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    hands = [(over_lens(seed, SIZE, felt=0), FPS // 2, True) for seed in _read_empty(0, 3)]
    video = tmp_path / "camera.avi"
    write_video(video, [(felt, 2 * FPS, True), (card, FPS, True), *hands, (card, FPS, True),
                        (felt, FPS, True), (card, FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: (False, "no frames for 0.6 s") in camera_statuses(config), "the video never ended",
                 timeout=60)
    # Dealt, the hand over the lens, still lying there: not again; the window empty, dealt again: a new 2C.
    assert dealt(config) == ["2C", "2C"]
