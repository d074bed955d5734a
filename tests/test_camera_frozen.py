"""A camera that gives the very same frame again is not read again, and after ``frozen_after`` it is offline:
a frozen camera stops play and says so. A camera whose reads stop is opened again until it is back.

A USB camera's driver can hand back its last buffer forever (a stalled pipeline), and nothing else
notices: frames keep coming, so the camera looked online, and the table waited with the last card it
saw. A camera that doubles frames hands one picture over twice: counted as two agreeing reads, one
misread picture could be dealt. The camera here is OpenCV's own capture (the ``device`` path a real
camera takes) opened on a video file, the simulated hardware; a live stretch carries a sensor's noise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, journal_inputs, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.synth import DESIGNS, STUDIO, scene

FROZEN = "the same frames again, unchanged to the last bit, for 0.5 s (a frozen camera, or its lens covered)"


@pytest.mark.timeout(120)
def test_a_frozen_camera_goes_offline_until_its_frames_change_and_one_whose_reads_stop_is_opened_again(
        tmp_path: Path) -> None:
    video = tmp_path / "camera.avi"
    felt = scene(None, DESIGNS["classic"], 5, SIZE, STUDIO, felt=0)  # a felt: a flat colour sees nothing
    write_video(video, [(felt, 2 * FPS, False), (felt, 3 * FPS, True)])  # frozen 2 s, live 3 s, then none
    config = video_table(tmp_path, video)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        # The video ends (reads return nothing): offline; opened again, it plays from its start: frozen
        # through its warm-up, which brings nothing online (offline still, the cause now frozen: status),
        # then live again: online, then it ends again.
        wait_for(lambda: len(camera_statuses(config)) >= 3, "the video never ended", timeout=60)
        wait_for(lambda: client.call("status")["camera"]["cause"] == FROZEN, "never frozen again", timeout=60)
        assert camera_statuses(config)[2:] == [(False, "no frames for 0.6 s")]
        wait_for(lambda: len(camera_statuses(config)) >= 5, "the camera never opened again", timeout=60)
        assert client.call("status")["camera"]["frames"] < 2 * 3 * FPS + 2 * 3  # the repeats were not read
    # (Online at the first frame is not journaled: the table starts with no device offline.)
    assert camera_statuses(config)[:5] == [(False, FROZEN), (True, "frames"), (False, "no frames for 0.6 s"),
                                           (True, "frames"), (False, "no frames for 0.6 s")]


@pytest.mark.timeout(120)
def test_one_picture_handed_over_again_is_not_read_again(tmp_path: Path) -> None:
    """The card's picture three times (``stable_frames`` 3) from a camera, between stretches of the empty
    felt, live: three reads of one picture are not three agreeing reads, so no card is dealt (it was)."""
    card = parse_card("2C")
    picture = scene(card, DESIGNS["classic"], 11, SIZE, STUDIO, felt=0)
    felt = scene(None, DESIGNS["classic"], 5, SIZE, STUDIO, felt=0)  # a felt: a flat colour sees nothing
    video = tmp_path / "camera.avi"
    # The picture comes after the warm-up.
    write_video(video, [(felt, 2 * FPS, True), (picture, 3, False), (felt, 2 * FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=5.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["offline"].get("camera") == "no frames for 0.6 s",
                 "the video never ended", timeout=60)
    assert [i for i in journal_inputs(config) if i.get("input") == "card"] == []


@pytest.mark.timeout(120)
def test_a_card_still_in_the_window_is_not_dealt_again_when_the_camera_opens_again_in_the_dark(
        tmp_path: Path) -> None:
    """A camera opened again (unplugged and back) gives dark frames while its exposure settles: read, they
    were an empty window, the card lying there was forgotten and dealt a second time (a second reading,
    2026-12-06). The video plays twice: dark frames, then 2C lying in the window."""
    card = parse_card("2C")
    picture = scene(card, DESIGNS["classic"], 11, SIZE, STUDIO, felt=0)
    dark = np.zeros((SIZE[1], SIZE[0], 3), np.uint8)
    video = tmp_path / "camera.avi"
    write_video(video, [(dark, 5, True), (picture, 2 * FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=5.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: camera_statuses(config).count((False, "no frames for 0.6 s")) >= 2,
                 "the video did not play twice", timeout=60)
    assert dealt(config) == ["2C"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("buffers", [6, 10, 30])
def test_a_driver_cycling_through_its_ring_of_old_buffers_deals_nothing_again_and_is_frozen(
        tmp_path: Path, buffers: int) -> None:
    """A stalled driver that cycles through its ring of buffers hands over frames each unlike the one
    before: half of them of an empty window, half of 2C, again and again. Each turn read the window empty
    (K 3) and then 2C three times: 2C was dealt at every turn, and the camera looked live. Rings of 10
    (OpenCV's V4L2 capture at most) and 30 buffers too: at 8 remembered frames, 9 or 10 dealt 2C at
    every turn (a review, 2026-12-07)."""
    rng = np.random.default_rng(3)
    felt = scene(None, DESIGNS["classic"], 5, SIZE, STUDIO, felt=0)
    card = scene(parse_card("2C"), DESIGNS["classic"], 11, SIZE, STUDIO, felt=0)
    ring = [np.clip(p.astype(np.int64) + rng.integers(-6, 7, p.shape), 0, 255).astype(np.uint8)
            for p in [felt] * (buffers // 2) + [card] * (buffers - buffers // 2)]
    video = tmp_path / "camera.avi"
    # Live felt after the ring: the camera is back online, and then the video's end is said.
    turns = [(frame, 1, False) for frame in ring * max(3, 60 // buffers)]
    write_video(video, [(felt, 2 * FPS, True), *turns, (felt, FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: (False, "no frames for 0.6 s") in camera_statuses(config), "the video never ended",
                 timeout=60)
    assert dealt(config) == ["2C"]  # the ring's first turn is new frames: 2C is dealt once
    assert camera_statuses(config)[:3] == [(False, FROZEN), (True, "frames"), (False, "no frames for 0.6 s")]
