"""The scan window of a table file: a mask (what lies outside it is not seen, its outline cuts like the
frame's edge) and a calibrated plane (a tilted camera's card has its true proportions), and
``croupier vision calibrate``, which measures both from one frame of the table."""

from __future__ import annotations

import math
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from test_daemon_support import write_table
from test_vision_detect import UPRIGHT, H, W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import FIRMWARE_CONFIGS, TableFileError, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.tools.ctl import format_reply
from vision.detect import find_card
from vision.recognise import recognise
from vision.window import ScanWindow, bounds, side_lengths, widest_side

#: The card of UPRIGHT, and a window drawn around it with room to spare.
AROUND = ((200 / W, 80 / H), (480 / W, 80 / H), (480 / W, 400 / H), (200 / W, 400 / H))
#: A second whole card beside the window, as bright as the first.
BESIDE = [(20.0, 110.0), (180.0, 110.0), (180.0, 333.0), (20.0, 333.0)]


def with_neighbour(code: str) -> np.ndarray:
    frame = table_with_card(code, UPRIGHT)
    other = table_with_card("KS", BESIDE)
    frame[:, :195] = other[:, :195]
    return frame


def test_a_card_outside_the_mask_is_not_seen() -> None:
    frame = with_neighbour("7H")
    unmasked = recognise(frame, profile())
    assert unmasked.status == "unknown" and "2 separate objects" in unmasked.reason
    reading = recognise(frame, profile(), window=ScanWindow(corners=AROUND))
    assert reading.card is parse_card("7H"), reading.reason


def test_a_card_crossing_the_masks_outline_is_refused_never_empty() -> None:
    """As at the frame's edge: "empty" would clear the window and let the card be dealt again."""
    right_half = ((300, 80), (600, 80), (600, 400), (300, 400))
    narrow = ScanWindow(corners=tuple((x / W, y / H) for x, y in right_half))
    detection = find_card(table_with_card("7H", UPRIGHT), profile().spec.face, window=narrow)
    assert detection.status == "refused" and "not wholly inside" in detection.reason


def seen_by_a_long_lens(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points on the table (mm, origin under the lens) through a camera with a focal length of three
    frame widths, tilted 45 degrees about the frame's horizontal axis: where they are in the frame."""
    focal, tilt = 3 * W, math.radians(45)
    distance = focal * 88 * math.cos(tilt) / 200  # a card 200 px tall, about
    return [(W / 2 + focal * x / (distance + y * math.sin(tilt)),
             H / 2 + focal * y * math.cos(tilt) / (distance + y * math.sin(tilt))) for x, y in points]


CARD_MM = [(-31.5, -44.0), (31.5, -44.0), (31.5, 44.0), (-31.5, 44.0)]


def marker_frame(side_mm: float) -> np.ndarray:
    """The empty table with a printed ArUco marker (a white sheet around it) lying flat at its centre."""
    sheet_px, border = 400, 60
    sheet = np.full((sheet_px, sheet_px), 255, np.uint8)
    marker = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 7,
                                           sheet_px - 2 * border)
    sheet[border:-border, border:-border] = marker
    mm_per_px = side_mm / (sheet_px - 2 * border)
    half = sheet_px / 2 * mm_per_px
    corners = seen_by_a_long_lens([(-half, -half), (half, -half), (half, half), (-half, half)])
    src = np.array([(0, 0), (sheet_px - 1, 0), (sheet_px - 1, sheet_px - 1), (0, sheet_px - 1)], np.float32)
    m = cv2.getPerspectiveTransform(src, np.array(corners, np.float32))
    frame = np.full((H, W, 3), (40, 90, 30), np.uint8)
    warped = cv2.warpPerspective(cv2.cvtColor(sheet, cv2.COLOR_GRAY2BGR), m, (W, H))
    inside = cv2.warpPerspective(np.full((sheet_px, sheet_px), 255, np.uint8), m, (W, H)) > 127
    frame[inside] = warped[inside]
    return frame


def calibrated(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> ScanWindow:
    """Run ``croupier vision calibrate`` on the marker frame; the scan window it prints."""
    image = tmp_path / "calibration.png"
    cv2.imwrite(str(image), marker_frame(60.0))
    assert main(["vision", "calibrate", "--image", str(image), *options]) == 0
    printed = capsys.readouterr().out
    entry = yaml.safe_load(printed)["scan_window"]
    corners = entry.get("corners")
    return ScanWindow(None if corners is None else tuple(map(tuple, corners)),
                      tuple(map(tuple, entry["plane"])))


def test_a_long_lens_tilted_camera_reads_once_calibrated_from_a_printed_marker(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Tilted about one axis, a long lens leaves the outline's own perspective undetermined (its sides
    0.99 wide to tall as seen: read only by trying a range of lenses, tests/test_vision_tilt.py); on the
    calibrated table it is 63:88, exactly."""
    frame = table_with_card("7H", seen_by_a_long_lens(CARD_MM))
    window = calibrated(tmp_path, capsys, "--marker", "60")
    assert window.corners is None
    reading = recognise(frame, profile(), window=window)
    assert reading.card is parse_card("7H"), reading.reason


def test_calibrate_from_the_windows_corners_and_size(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    window_mm = [(-60.0, -50.0), (60.0, -50.0), (60.0, 50.0), (-60.0, 50.0)]
    corners = " ".join(f"{x:.1f},{y:.1f}" for x, y in seen_by_a_long_lens(window_mm))
    window = calibrated(tmp_path, capsys, "--corners", corners, "--size-mm", "120x100")
    assert window.corners is not None and len(window.corners) == 4
    frame = table_with_card("7H", seen_by_a_long_lens(CARD_MM))
    reading = recognise(frame, profile(), window=window)
    assert reading.card is parse_card("7H"), reading.reason


def test_calibrate_says_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = tmp_path / "felt.png"
    cv2.imwrite(str(image), np.full((H, W, 3), (40, 90, 30), np.uint8))
    assert main(["vision", "calibrate", "--image", str(image), "--marker", "60"]) == 2
    assert "no ArUco marker" in capsys.readouterr().err
    assert main(["vision", "calibrate", "--image", str(image), "--size-mm", "200x150"]) == 2
    assert "--size-mm needs --corners" in capsys.readouterr().err


def test_calibrate_takes_the_corners_in_the_frames_own_pixels_whatever_its_size(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 1080p camera's frame (wider than the 1,600 px the photographs of enrolment and tests are shrunk
    to): the window's middle half is 0.25 to 0.75 of the frame. Before, the frame was shrunk first and
    the corners, still its pixels, came out as 0.3 to 0.9, with exit 0 (a review, 2026-12-07)."""
    image = tmp_path / "frame1080.png"
    cv2.imwrite(str(image), np.full((1080, 1920, 3), (40, 90, 30), np.uint8))
    corners = "480,270 1440,270 1440,810 480,810"
    options = ["--corners", corners, "--size-mm", "320x180"]
    assert main(["vision", "calibrate", "--image", str(image), *options]) == 0
    printed = capsys.readouterr().out
    entry = yaml.safe_load(printed)["scan_window"]
    assert entry["corners"] == [[0.25, 0.25], [0.75, 0.25], [0.75, 0.75], [0.25, 0.75]]
    assert "frame 1920x1080" in printed
    assert "a card at the frame's centre is about 264 px tall" in printed and "too small" not in printed


@pytest.mark.parametrize(("options", "why"), [
    (["--corners", "10,10 10,10 10,10 10,10"], "covers 0.0% of the frame"),
    (["--corners", "320,10 500,470 10,170 630,170 140,470"], "crosses itself"),
    (["--corners", " ".join(f"{10 + 30 * k},{10 + k}" for k in range(17))], "at most 16"),
    (["--corners", "10,10 630,10 630,470 10,470", "--size-mm", "0x0"], "above 0"),
])
def test_calibrate_refuses_what_the_table_file_would_refuse(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], why: str) -> None:
    """An outline of one point, one whose sides cross, one of 17 points, a window of no size: before, each
    was printed (exit 0) for the table file to refuse at the daemon's start."""
    image = tmp_path / "felt.png"
    cv2.imwrite(str(image), np.full((480, 640, 3), (40, 90, 30), np.uint8))
    assert main(["vision", "calibrate", "--image", str(image), *options]) == 2
    err = capsys.readouterr().err
    assert why in err, err


def test_calibrate_says_when_a_card_would_be_too_small_to_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = tmp_path / "felt.png"
    cv2.imwrite(str(image), np.full((480, 640, 3), (40, 90, 30), np.uint8))
    assert main(["vision", "calibrate", "--image", str(image), "--corners", "10,10 630,10 630,470 10,470",
                 "--size-mm", "480x360"]) == 0
    printed = capsys.readouterr().out
    assert "about 112 px tall" in printed and "too small: a card must be at least 170 px tall" in printed


DECK = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")


def test_the_table_files_scan_window_is_checked_and_names_the_key(tmp_path: Path) -> None:
    camera = {"deck": DECK, "window": "w.png"}
    outside = {"corners": [[0, 0], [1.5, 0], [1, 1]]}
    with pytest.raises(TableFileError, match="camera.scan_window"):
        load_table(write_table(tmp_path, camera={**camera, "scan_window": outside}))
    with pytest.raises(TableFileError, match="camera.scan_window"):
        load_table(write_table(tmp_path, camera={**camera, "scan_window": {}}))
    star = {"corners": [[0.5, 0.0], [0.8, 1.0], [0.0, 0.35], [1.0, 0.35], [0.2, 1.0]]}
    with pytest.raises(TableFileError, match="camera.scan_window.*crosses itself"):
        load_table(write_table(tmp_path, camera={**camera, "scan_window": star}))
    nan = {"plane": [[float("nan")] * 3] * 3}  # YAML's .nan: a plane that reads every card as no card
    with pytest.raises(TableFileError, match="camera.scan_window.*not a finite number"):
        load_table(write_table(tmp_path, camera={**camera, "scan_window": nan}))


@pytest.mark.timeout(120)
def test_the_daemons_camera_reads_through_the_table_files_mask(tmp_path: Path) -> None:
    """The replayed frames hold a second card beside the window: without the mask nothing is dealt."""
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(4):
        cv2.imwrite(str(frames / f"{i:02d}.png"), with_neighbour("7H"))
    camera = {"deck": DECK, "replay": str(frames), "fps": 40, "stable_frames": 2, "offline_after": 0.5,
              "scan_window": {"corners": [list(p) for p in AROUND]}}
    config = load_table(write_table(tmp_path, camera=camera))
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        deadline = time.monotonic() + 30
        while "camera" not in client.call("status")["offline"]:
            assert time.monotonic() < deadline, "the replay never ended"
            time.sleep(0.05)
        reply = client.call("status")
        client.close()
    status = reply["camera"]
    assert status["cards"] == 1 and status["last"]["card"] == "7H", status
    text = format_reply({"cmd": "status"}, reply, config.limits.money)  # what `ctl status` prints
    assert f"  camera: {frames}, deck sim_classic, OFFLINE; " in text and "1 cards dealt; last read: " in text


def test_no_quadrilateral_within_the_frame_has_sides_longer_than_widest_side() -> None:
    """The detector calls a region cut by the frame without fitting its sides when more of it lies on
    the rim than any whole card could put there (:func:`vision.window.widest_side`): the bound must hold
    for every quadrilateral the fitted check would let through, up to ones filling the widened frame."""
    size, share = (320, 240), 0.06
    win, bound = bounds(None, size), widest_side(size, share)
    rng = np.random.default_rng(28)
    quads = rng.uniform(-40, 360, (20000, 4, 2)).astype(np.float32)
    passing = [q for q in quads if win.within(q, share * side_lengths(q)[0])]
    assert len(passing) > 1000
    assert max(side_lengths(q)[0] for q in passing) <= bound
    # The bound is reached: a quadrilateral whose two sides are the widened frame's diagonals.
    m = share * bound
    corners = [(-m, -m), (319 + m, 239 + m), (-m, 239 + m), (319 + m, -m)]
    assert win.within(np.array(corners, np.float32), m + 1e-3)
    assert math.isclose(math.hypot(319 + 2 * m, 239 + 2 * m), bound, rel_tol=1e-9)
    assert widest_side(size, 0.5) == math.inf
