"""The daemon's camera reads on one OpenCV thread, as the benches and ``croupier vision test`` measure it
(vision.recognise.READ_THREADS: on two, a fifth more CPU per frame for reads no shorter)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import cv2
import pytest
from test_daemon_support import write_table

from controller.cards import parse_card
from controller.daemon.camera_link import CameraLink
from controller.daemon.config import FIRMWARE_CONFIGS, load_table
from controller.inputs import Input
from vision.camera_sim import SimulatedCamera
from vision.recognise import READ_THREADS


@pytest.mark.timeout(60)
def test_the_camera_link_reads_its_frames_on_one_opencv_thread(tmp_path: Path) -> None:
    deck = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
    config = load_table(write_table(tmp_path, camera={"deck": deck, "window": "window.png", "fps": 30}))
    assert config.camera is not None
    window = config.camera.window_path(config.state_dir)
    assert window is not None
    window.parent.mkdir(parents=True)
    SimulatedCamera(window, decks=1, seed=3, fps=30, stable_frames=3).show(parse_card("QH"))
    got: list[Input] = []
    before = cv2.getNumThreads()
    cv2.setNumThreads(2)  # OpenCV's default on this machine: a thread per core

    async def run() -> CameraLink:
        loop = asyncio.get_running_loop()
        link = CameraLink(config.camera, config.state_dir, loop, lambda inp, ref: got.append(inp),
                          lambda: {}, in_window=None, gone=lambda: None)
        link.start()
        for _ in range(200):
            await asyncio.sleep(0.05)
            if link.frames:
                break
        await link.stop()
        return link

    try:
        link = asyncio.run(run())
        threads = cv2.getNumThreads()
    finally:
        cv2.setNumThreads(before)
    assert READ_THREADS == 1 and threads == 1
    assert link.frames >= 1 and link.last is not None and link.last.status == "card", link.last
