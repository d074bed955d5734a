"""``croupier vision test`` streams its frames: its peak memory does not grow with the number of frames.

Issue 28: the command used to load every frame before reading any (13 GB for 436 twelve-megapixel
photographs). Measured with :mod:`tracemalloc` (which sees every NumPy array, so every frame OpenCV
decodes) as the peak traced while ``croupier vision test`` reads 4 and then 16 frames larger than the
reading width: every frame held at once would add about 7 MB each (shrunk to 1,600 px as read);
streamed, the two peaks are alike.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import cv2
import pytest

from controller.cards import parse_card
from controller.cli import main
from controller.daemon.config import FIRMWARE_CONFIGS
from vision.synth import DESIGNS, STUDIO, scene

DECK = FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml"
#: Larger than vision.image_file.READ_WIDTH, so the shrink-as-read path is the one measured.
SIZE = (1800, 1350)
#: About two frames' worth: what streaming may hold at once (the frame being read, the one shrunk).
ALLOWED_GROWTH = 16_000_000


def peak_bytes(folder: Path, frames: int, photo: Path, capsys: pytest.CaptureFixture[str]) -> int:
    """The peak traced while ``croupier vision test`` reads ``frames`` links to ``photo`` (all 7H)."""
    folder.mkdir()
    rows = ["file,card"]
    for i in range(frames):
        os.link(photo, folder / f"{i:03d}.jpg")
        rows.append(f"{i:03d}.jpg,7H")
    (folder / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        assert main(["vision", "test", str(folder), "--deck", str(DECK)]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    report = capsys.readouterr().out
    assert f"read correctly {frames} (100.00%)" in report, report  # real work: every frame read as 7H
    return peak


def test_vision_test_memory_is_flat_in_the_number_of_frames(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "7H.jpg"
    small = scene(parse_card("7H"), DESIGNS["classic"], 11, (640, 480), STUDIO)
    assert cv2.imwrite(str(photo), cv2.resize(small, SIZE, interpolation=cv2.INTER_CUBIC))
    frame_bytes = SIZE[0] * SIZE[1] * 3
    few = peak_bytes(tmp_path / "few", 4, photo, capsys)
    assert few >= frame_bytes  # the measure sees a decoded frame (else it would prove nothing)
    many = peak_bytes(tmp_path / "many", 16, photo, capsys)
    assert many - few < ALLOWED_GROWTH, (few, many)
