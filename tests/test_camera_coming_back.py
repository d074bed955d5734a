"""When a camera comes back online, as a second reading found it (2026-12-07): a camera doubling frames never
came back after a stall (new frames were counted in a row), and a restarted daemon brought a covered lens
online on a warm-up frame no one judged. Each fails before its fix."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.camera_frames import OldFrames
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.synth import DESIGNS, STUDIO, scene

FROZEN = "the same frames again, unchanged to the last bit, for 0.5 s (a frozen camera, or its lens covered)"


def _live(count: int, seed: int = 1) -> list[np.ndarray]:
    """``count`` frames of a live sensor: each unlike every other."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(count)]


def test_a_camera_doubling_frames_comes_back_online_after_a_frozen_spell() -> None:
    """A camera doubling frames (each picture handed over twice: docs/vision.md names it among the old
    frames that are simply not read) is live and never frozen; after a frozen spell (its last picture for
    ``frozen_after`` seconds) it comes back doubling as before. Each new frame is fed as the reader thread
    does (``_repeated``, then ``_back`` while offline): it must come back once ``stable_frames`` new frames
    came, but new frames were counted in a row, zeroed by every doubled frame, never past 1: the camera stayed
    offline for good (only a restart brings it back)."""
    old = OldFrames(frozen_after=3.0, stable_frames=3)
    frames = _live(60)
    now, step = 100.0, 1 / 30
    for picture in frames[:10]:  # live, doubled: never frozen
        for _ in range(2):
            now += step
            if old.old(picture, now):
                assert old.frozen(now) is None
    frozen = None
    while now < 104.0:  # the driver stalls: its last picture again for 4 s
        now += step
        assert old.old(frames[9], now)
        frozen = frozen or old.frozen(now)
    assert frozen is not None
    back_at = None
    for i, picture in enumerate(frames[10:]):  # live again, doubled as before: 50 new pictures, 3.3 s
        for _ in range(2):
            now += step
            if old.old(picture, now):
                assert old.frozen(now) is None  # never frozen again
            elif back_at is None and old.back():
                back_at = i
    assert back_at is not None, f"never back online after {len(frames) - 10} new pictures"


def _doubled(
        picture: np.ndarray, pictures: int, rng: np.random.Generator) -> list[tuple[np.ndarray, int, bool]]:
    """``pictures`` live pictures (a sensor's noise, each its own), each handed over twice."""
    out = []
    for _ in range(pictures):
        noise = rng.integers(-6, 7, picture.shape)
        out.append((np.clip(picture.astype(np.int64) + noise, 0, 255).astype(np.uint8), 2, False))
    return out


@pytest.mark.timeout(120)
def test_a_camera_doubling_frames_deals_again_after_a_frozen_spell(tmp_path: Path) -> None:
    """The same through the daemon and OpenCV's capture: a camera doubling frames, frozen 1 s
    (``frozen_after`` 0.5), then doubling again with 2C laid in the window. Expected: back online, 2C
    dealt. Found: offline as frozen for good, 2C never dealt (the table waits, saying a frozen camera)."""
    rng = np.random.default_rng(5)
    felt = scene(None, DESIGNS["classic"], 5, SIZE, STUDIO, felt=0)
    card = scene(parse_card("2C"), DESIGNS["classic"], 11, SIZE, STUDIO, felt=0)
    video = tmp_path / "camera.avi"
    write_video(video, [*_doubled(felt, 2 * FPS, rng), (felt, FPS, False), *_doubled(felt, FPS, rng),
                        *_doubled(card, 2 * FPS, rng), *_doubled(felt, FPS, rng)])
    config = video_table(tmp_path, video, stable_frames=3)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        try:
            wait_for(lambda: client.call("status")["camera"]["cause"] == "no frames for 0.6 s",
                     "the video never ended", timeout=60)
        finally:
            client.close()
    statuses, cards = camera_statuses(config), dealt(config)
    assert (statuses[:2], cards) == ([(False, FROZEN), (True, "frames")], ["2C"]), (statuses, cards)


BLACK = ("the frame is all but black for 0.6 s: the camera sees nothing (lens covered, table lamp off?)")


@pytest.mark.timeout(120)
def test_a_covered_lens_stays_offline_across_a_restart(tmp_path: Path) -> None:
    """The lens covered: offline as blind. The daemon restarts (an upgrade, a crash) with the lens still
    covered. docs/vision.md: frames in the camera's first second are not judged and change nothing, a
    camera offline as blind stays offline through them when its capture is opened again. Found: the
    restarted link brings the camera online ("frames", journaled: the device_offline tilt ends) on a
    warm-up frame no one looked at, and takes it offline again ~1.6 s later."""
    rng = np.random.default_rng(2)
    dark = [(np.clip(rng.integers(0, 11, (SIZE[1], SIZE[0], 3)), 0, 255).astype(np.uint8), 1, False)
            for _ in range(3 * FPS)]  # new every frame (a sensor's noise), all but black
    video = tmp_path / "camera.avi"
    write_video(video, dark)
    config = video_table(tmp_path, video, frozen_after=3.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: (False, BLACK) in camera_statuses(config), "never offline", timeout=30)
    before = len(camera_statuses(config))
    online: list[bool] = []
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=5, key=local_key(config))
        try:
            deadline = time.monotonic() + 4.0  # the warm-up (1 s), then offline_after (0.6 s) and more
            while time.monotonic() < deadline:
                online.append(client.call("status")["camera"]["online"])
                time.sleep(0.05)
        finally:
            client.close()
    after = camera_statuses(config)[before:]
    assert after == [] and not any(online), (after, f"status online {online.count(True)} of {len(online)}")
