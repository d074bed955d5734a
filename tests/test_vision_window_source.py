"""The simulated camera's window file is decoded once per scene, and a frame handed over again is read once.

Why: the window is read at the camera's rate (15 to 30 frames a second) while the scene changes a few
times a card, and decoding a 640 x 480 PNG and reading a card in it cost 8 and 5 to 20 ms a frame: the
demo's daemon spent most of a core on pictures it had already read (vision.sources).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.daemon.private import write_atomic
from vision.recognise import Reading
from vision.sources import ReadOnce, ReplaySource, WindowSource


def _png(level: int) -> bytes:
    ok, encoded = cv2.imencode(".png", np.full((48, 64, 3), level, np.uint8))
    assert ok
    return encoded.tobytes()


def test_an_unchanged_window_gives_its_frame_again_read_only_and_a_new_scene_a_new_frame(
        tmp_path: Path) -> None:
    window = tmp_path / "window.png"
    source = WindowSource(window)
    assert source.read() is None  # no file: no frame (the camera unplugged)
    write_atomic(window, _png(10))
    first = source.read()
    assert first is not None and int(first[0, 0, 0]) == 10
    assert source.read() is first  # the same scene: not decoded again
    with pytest.raises(ValueError):
        first[0, 0, 0] = 99  # handed out again, so nobody may draw on it
    write_atomic(window, _png(20))  # the dealer's next scene: a new file by a rename
    second = source.read()
    assert second is not None and second is not first and int(second[0, 0, 0]) == 20
    window.write_bytes(b"not a picture")
    assert source.read() is None
    window.unlink()
    assert source.read() is None


def test_a_frame_handed_over_again_is_read_once_and_every_other_frame_is_read() -> None:
    calls: list[int] = []

    def read(frame: np.ndarray) -> Reading:
        calls.append(id(frame))
        return Reading("empty", reason=f"read {len(calls)}")

    once = ReadOnce(read)
    frame = np.zeros((4, 4, 3), np.uint8)
    frame.flags.writeable = False  # as the window hands it over
    assert once(frame).reason == "read 1"
    assert once(frame).reason == "read 1"  # the same object: the same picture, the same reading
    equal = frame.copy()  # a camera's next frame may be equal to the last, but it is a new one: read
    assert once(equal).reason == "read 2"
    assert once(frame).reason == "read 3"
    buffer = np.zeros((4, 4, 3), np.uint8)  # a driver filling the same buffer again: writeable, each read
    assert once(buffer).reason == "read 4"
    assert once(buffer).reason == "read 5"
    assert len(calls) == 5


def test_a_replay_folder_emptied_under_it_ends_without_a_warning_per_missing_file(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A review (2026-12-07): files removed from a replay folder after it was listed each made OpenCV print
    a warning on stderr (about 500 at once for an emptied folder) beside the daemon's one clear line."""
    for k in range(5):
        (tmp_path / f"f{k}.png").write_bytes(_png(40 * k))
    source = ReplaySource(tmp_path)
    for k in (0, 1, 3, 4):
        (tmp_path / f"f{k}.png").unlink()
    frame = source.read()
    assert frame is not None and int(frame[0, 0, 0]) == 80  # f2, the one left
    assert source.read() is None
    assert "imread" not in capfd.readouterr().err
