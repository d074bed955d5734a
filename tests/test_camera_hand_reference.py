"""A hand over the spot where a card is then laid never becomes the card's reference through `healed`.

A fourth reading (2026-12-06): a box-shaped hand over the spot, 45 px larger than a card of the least size
on every side, covers the card's place and the thin ring round it while leaving 93 to 96 % of the window
outside alike the card's frame; `healed` took the ring (the hand) for the felt round the card, the hand's
frame became the card's reference, and a like hand over the card later passed for its empty window: the
card dealt twice, at start (no settled window) and in play (an arm along the window's edge). The ring is
now judged in the card's own frame too, where it is the felt: the card was just read there.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from camera_video import FPS
from test_camera_covered_lens import _play
from test_camera_reference import CLASSIC, EMPTY, PROFILE

from controller.cards import parse_card
from vision.felt import before, healed, look, unlike
from vision.recognise import recognise
from vision.synth import _place, render_face


def _hand(frame: np.ndarray, box: tuple[int, int, int, int], blur: float = 8.0) -> np.ndarray:
    """A hand out of focus over ``box`` (x0, y0, x1, y1): skin lit from one side, its edge blurred."""
    h, w = frame.shape[:2]
    mask = np.zeros((h, w), np.float32)
    cv2.rectangle(mask, box[:2], box[2:], 1.0, -1)
    cover = np.clip(cv2.GaussianBlur(mask, (0, 0), blur) * 1.2, 0, 1)[..., None]
    skin = np.array((120, 150, 200), np.float32) * np.linspace(0.5, 0.8, w, dtype=np.float32)[None, :, None]
    return np.clip(frame * (1 - cover) + skin * cover, 0, 255).astype(np.uint8)


def _scene() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """5S of the least size mid-window, the hand over its spot, and the hand over it."""
    card = EMPTY.copy()
    _place(card, render_face(parse_card("5S"), CLASSIC),
           np.float32([[250, 276], [393, 276], [393, 476], [250, 476]]))
    at = recognise(card, PROFILE).corners
    assert at is not None and recognise(card, PROFILE).card == parse_card("5S")
    m = 45
    box = (int(at[:, 0].min()) - m, int(at[:, 1].min()) - m, int(at[:, 0].max()) + m, int(at[:, 1].max()) + m)
    hover, over = _hand(EMPTY, box), _hand(card, box)
    assert recognise(hover, PROFILE).status == "empty" and recognise(over, PROFILE).status == "empty"
    return card, hover, over


def test_a_hand_over_the_spot_is_not_the_felt_round_the_card() -> None:
    card, hover, over = _scene()
    at = recognise(card, PROFILE).corners
    assert at is not None
    assert unlike(before(look(hover, None), at, card.shape), look(over, None)) is None  # why it matters
    assert healed([look(hover, None)], look(card, None), at, card.shape, None) is None
    empty = look(EMPTY, None)
    assert healed([empty], look(card, None), at, card.shape, None) is empty  # the felt still heals
    assert healed([empty, look(hover, None)], look(card, None), at, card.shape, None) is empty  # past a hand


@pytest.mark.timeout(120)
def test_at_start_a_hand_over_the_spot_then_over_the_card_does_not_deal_it_twice(tmp_path: Path) -> None:
    card, hover, over = _scene()
    pictures = [(EMPTY, 2 * FPS, True), (hover, 2, True), (card, FPS, True), (over, FPS // 2, True),
                (card, FPS, True)]
    assert _play(tmp_path, pictures, empty_first=False) == ["5S", "5S?"]


@pytest.mark.timeout(120)
def test_in_play_an_arm_at_the_edge_does_not_let_a_hand_over_the_spot_into_the_reference(
        tmp_path: Path) -> None:
    card, hover, over = _scene()

    def arm(frame: np.ndarray) -> np.ndarray:
        return _hand(frame, (0, 0, 90, 479))

    assert all(recognise(arm(f), PROFILE).status == "empty" for f in (hover, over))
    pictures = [(arm(hover), 2, True), (arm(card), FPS, True), (arm(over), FPS // 2, True),
                (arm(card), FPS, True)]
    assert _play(tmp_path, pictures) == ["5S", "5S?"]


@pytest.mark.timeout(240)
def test_after_a_restart_a_hand_over_the_spot_before_each_card_leaves_it_a_reference(tmp_path: Path) -> None:
    """A fourth reading: after a restart with the journal's card (no settled window), only the last empty
    read was tried as a new card's reference; with a hand over the spot in it before each card, every
    card had none, and every identical next card went to the dealer. The last half second is tried,
    newest first."""
    from camera_video import SIZE, camera_statuses, dealt, video_table, write_video
    from test_camera_reference import _card, _palm
    from wait_support import wait_for

    from controller.daemon.runner import DaemonThread
    from controller.daemon.server import Daemon
    from vision.synth import STUDIO, scene

    end = (False, "no frames for 0.6 s")
    empty = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
    two, five, seven = (_card(c, 6) for c in ("2C", "5S", "7H"))
    at = recognise(five, PROFILE).corners
    assert at is not None
    hover = _palm(empty, at, 1.0, 6)
    assert recognise(hover, PROFILE).status == "empty"
    video = tmp_path / "camera.avi"
    config = video_table(tmp_path, video, stable_frames=3)
    gap = [(empty, FPS, True), (hover, 2, True)]
    for n, pictures in enumerate([[(empty, 4 * FPS, True), (two, FPS, True)],  # stops with 2C there
                                  [(empty, 3 * FPS, True), *gap, (five, FPS, True), *gap, (five, FPS, True),
                                   *gap, (seven, FPS, True), *gap, (seven, FPS, True)]], 1):
        write_video(video, pictures)
        with DaemonThread(Daemon(config, use_shoe=False)):
            wait_for(lambda n=n: camera_statuses(config).count(end) >= n, "the video never ended", timeout=60)
    assert dealt(config) == ["2C", "5S", "5S", "7H", "7H"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("between", [3, 0])
def test_an_arm_beside_the_card_does_not_let_a_hand_over_the_spot_become_its_reference(
        tmp_path: Path, between: int) -> None:
    """A fifth reading: an arm resting beside the spot, over more than half the ring round the card, made
    the ring's median skin; the clean reads' place was then unlike it, and an older read with a hand over
    the spot passed `healed`: a like hand over the card later cleared it, dealt twice (``between`` clean
    reads with the arm came after the hand's; with none, the hole was older than the recent reads). The
    felt is now the window's own, outside the card in the card's frame."""
    card = EMPTY.copy()
    _place(card, render_face(parse_card("5S"), CLASSIC),
           np.float32([[250, 276], [393, 276], [393, 476], [250, 476]]))
    at = recognise(card, PROFILE).corners
    assert at is not None
    x0, y0, x1, y1 = int(at[:, 0].min()), int(at[:, 1].min()), int(at[:, 0].max()), int(at[:, 1].max())

    def arm(frame: np.ndarray) -> np.ndarray:  # beside the spot, left of it and above it
        return _hand(_hand(frame, (120, 160, 236, 479)), (120, 160, 400, 262))

    def palm(frame: np.ndarray) -> np.ndarray:  # over the spot only
        return _hand(frame, (x0 - 12, y0 - 12, x1 + 12, y1 + 12), 4.0)

    assert recognise(arm(card), PROFILE).card == parse_card("5S")
    assert all(recognise(f, PROFILE).status == "empty" for f in (arm(palm(EMPTY)), arm(palm(card))))
    pictures = [(arm(palm(EMPTY)), 2, True), (arm(EMPTY), between, True), (arm(card), FPS, True),
                (arm(palm(card)), FPS // 2, True), (arm(card), FPS, True)]
    assert _play(tmp_path, [p for p in pictures if p[1]]) == ["5S", "5S?"]
