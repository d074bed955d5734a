"""A daemon whose camera is OpenCV's own capture opened on a video file: the ``device`` path a real
camera takes, with the simulated hardware a video file is (its live stretches carry a sensor's noise)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from test_daemon_support import write_table

from controller.daemon.camera_frames import RECENT
from controller.daemon.config import FIRMWARE_CONFIGS, TableConfig, load_table
from controller.daemon.journal import JOURNAL_NAME

DECK = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
FPS = 15
SIZE = (640, 480)


#: A live stretch's noise is this many frames of a sensor's noise, cycled: more than the frames a camera's
#: new frame is compared with (an old buffer is one of the last RECENT), so no live frame is taken for an
#: old one. One field of noise is drawn, NOISE_FRAMES rows taller than a frame, and each frame takes it
#: from another row: drawn for every frame it took 13 ms of CPU a frame, and kept whole per frame, 60 MB.
NOISE_FRAMES = 2 * RECENT + 1


def write_video(path: Path, pictures: list[tuple[np.ndarray, int, bool]]) -> None:
    """Each (picture, frames, live): ``frames`` frames of it, with a sensor's noise (-6 to +6 levels a
    channel, seeded) if ``live``."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, SIZE)
    assert writer.isOpened()
    up, down = _noise((SIZE[1] + NOISE_FRAMES, SIZE[0], 3))
    shown = 0
    for picture, frames, live in pictures:
        for _ in range(frames):
            if live:
                row = shown % NOISE_FRAMES
                shown += 1
                rows = slice(row, row + SIZE[1])  # saturating: clipped to 0..255
                writer.write(cv2.subtract(cv2.add(picture, up[rows]), down[rows]))
            else:
                writer.write(picture)
    writer.release()


def _noise(shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A field of noise as the levels to add and the levels to take away."""
    drawn = np.random.default_rng(7).integers(-6, 7, shape, dtype=np.int16)
    return np.clip(drawn, 0, None).astype(np.uint8), np.clip(-drawn, 0, None).astype(np.uint8)


def video_table(tmp_path: Path, video: Path, **camera: Any) -> TableConfig:
    """A table whose camera ``device`` is ``video`` (15 fps, offline after 0.6 s, frozen after 0.5 s)."""
    spec = {"deck": DECK, "device": str(video), "width": SIZE[0], "height": SIZE[1], "fps": FPS,
            "offline_after": 0.6, "frozen_after": 0.5, **camera}
    return load_table(write_table(tmp_path, camera=spec))


def journal_inputs(config: TableConfig) -> list[dict[str, Any]]:
    """Every input the table's journal holds, oldest first."""
    conn = sqlite3.connect(f"file:{config.state_dir / JOURNAL_NAME}?mode=ro", uri=True)
    try:
        return [json.loads(text) for (text,) in conn.execute("SELECT input FROM inputs ORDER BY id")]
    finally:
        conn.close()


def camera_statuses(config: TableConfig) -> list[tuple[bool, str]]:
    """The camera's journaled statuses: (online, detail)."""
    return [(i["online"], i["detail"]) for i in journal_inputs(config)
            if i.get("input") == "device" and i.get("device") == "camera"]


def dealt(config: TableConfig) -> list[str]:
    """The cards the camera delivered, in order; one held for the dealer as maybe the card already dealt
    (``repeat``) with a ``?``."""
    cards = [i for i in journal_inputs(config) if i.get("input") == "card"]
    return [i["card"] + ("?" if i.get("repeat") else "") for i in cards]
