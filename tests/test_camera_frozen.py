"""A camera that gives the very same frame again and again is offline: a frozen camera stops play and says so.

A USB camera's driver can hand back its last buffer forever (a stalled pipeline), and nothing else
notices: frames keep coming, so the camera looks online, and the table waits with the last card it saw.
The camera here is OpenCV's own capture (the ``device`` path a real camera takes) opened on a video
file, the simulated hardware: first a frozen stretch (one frame, bit for bit, for 2 s at 15 fps), then
a live one (every frame carries its sensor's noise), then its end (no frames). The journal must hold,
in order: offline for the frozen frame, online again, offline for want of frames.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_daemon_support import write_table
from wait_support import wait_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import FIRMWARE_CONFIGS, load_table
from controller.daemon.journal import JOURNAL_NAME
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

DECK = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
FPS = 15


def _video(path: Path, frozen: int, live: int) -> None:
    """``frozen`` copies of one frame of an empty felt, then ``live`` frames of it with sensor noise."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (320, 240))
    assert writer.isOpened()
    felt = np.full((240, 320, 3), (40, 90, 30), np.uint8)
    rng = np.random.default_rng(7)
    for _ in range(frozen):
        writer.write(felt)
    for _ in range(live):
        noise = rng.integers(-6, 7, felt.shape)
        writer.write(np.clip(felt.astype(np.int64) + noise, 0, 255).astype(np.uint8))
    writer.release()


def _camera_statuses(journal: Path) -> list[tuple[bool, str]]:
    conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT input FROM inputs ORDER BY id").fetchall()
    finally:
        conn.close()
    out = []
    for (text,) in rows:
        inp = json.loads(text)
        if inp.get("input") == "device" and inp.get("device") == "camera":
            out.append((inp["online"], inp["detail"]))
    return out


@pytest.mark.timeout(120)
def test_a_camera_giving_one_frame_unchanged_goes_offline_until_its_frames_change(tmp_path: Path) -> None:
    video = tmp_path / "camera.avi"
    _video(video, frozen=2 * FPS, live=3 * FPS)
    spec = {"deck": DECK, "device": str(video), "width": 320, "height": 240, "fps": FPS,
            "offline_after": 0.6, "frozen_after": 0.5}
    config = load_table(write_table(tmp_path, camera=spec))
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["offline"].get("camera") == "no frames for 0.6 s",
                 "the video never ended", timeout=60)
        frames = client.call("status")["camera"]["frames"]
    frozen = "the same frame, unchanged to the last bit, for 0.5 s (a frozen camera, or its lens covered)"
    # (Online at the first frame is not journaled: the table starts with no device offline.)
    assert _camera_statuses(config.state_dir / JOURNAL_NAME) == [
        (False, frozen), (True, "frames"), (False, "no frames for 0.6 s")]
    # Read: the frozen stretch until it was found frozen (about 0.5 s of it), and every live frame.
    assert 3 * FPS < frames < 5 * FPS
