"""A camera that sees nothing (its lens covered, the table lamp off, or washed out) stops play and says so.

Found by a review (2026-12-07): a covered lens gave new, noisy, all-dark frames; they passed the frozen
check and read as an empty window ("no contrast"), so the table waited for a card with no fault said. Now
a window all but black or all but white is not read, a card lying there is doubted as under a hand, and
after ``offline_after`` seconds the camera is offline, naming the cause (a ``device_offline`` tilt mid-deal,
a WARNING line), until the first frame that sees. An absolute test of each frame (vision.unseen): a plain
felt in a small window, a dim table and a lasting change of light are never taken for it (a first fix
judged frames against the settled window and misfired there). The camera is OpenCV's own capture opened
on a video (the ``device`` path a real camera takes); a live stretch carries a sensor's noise.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.camera_frames import Blind
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.synth import DESIGNS, FELTS, FLOOR, STUDIO, scene
from vision.unseen import BLACK, WHITE, levels, unseen
from vision.window import ScanWindow

CLASSIC = DESIGNS["classic"]
EMPTY = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
CARD = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
OTHER = scene(parse_card("5H"), CLASSIC, 12, SIZE, STUDIO, felt=0)
ENDED = (False, "no frames for 0.6 s")
#: A window a tenth of the frame's sides, on the plain felt.
SMALL = ((0.05, 0.05), (0.15, 0.05), (0.15, 0.15), (0.05, 0.15))
BLIND = {"black": ("the frame is all but black for 0.6 s: the camera sees nothing (lens covered, table "
                   "lamp off?)"),
         "white": ("the frame is all but white for 0.6 s: the camera sees nothing (washed out: a lamp into "
                   "the lens, or the exposure at its end?)")}


def _noisy(level: int, seed: int = 1, amp: int = 6) -> np.ndarray:
    """A flat frame at ``level`` with a sensor's noise (-amp to +amp a channel)."""
    rng = np.random.default_rng(seed)
    return np.clip(level + rng.integers(-amp, amp + 1, (SIZE[1], SIZE[0], 3)), 0, 255).astype(np.uint8)


def _spell(kind: str, seconds: float) -> list[tuple[np.ndarray, int, bool]]:
    """``seconds`` of frames that see nothing, their level wandering (black 0 to 10, white 250 to 255)."""
    levels_ = (0, 4, 10, 7, 2) if kind == "black" else (255, 250, 253)
    each = max(1, round(seconds * FPS / len(levels_)))
    return [(np.full((SIZE[1], SIZE[0], 3), level, np.uint8), each, True) for level in levels_]


def _light(picture: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(picture.astype(np.float32) * gain, 0, 255).astype(np.uint8)


# --- the test of a frame, alone --------------------------------------------------------------------------

def test_black_or_white_sees_nothing_and_a_lit_window_sees() -> None:
    for level in range(11):
        found = unseen(_noisy(level, level), None)
        assert found is not None and found.what == "the frame is all but black", level
    for level, amp in ((3, 20), (10, 20), (10, 25)):  # a covered sensor at a high gain
        assert unseen(_noisy(level, amp=amp), None) is not None, (level, amp)
    for level in (250, 253, 255):
        found = unseen(_noisy(level, level), None)
        assert found is not None and found.what == "the frame is all but white", level
    window = ScanWindow(SMALL)
    felt = np.full((SIZE[1], SIZE[0], 3), FELTS[0], np.uint8)
    assert unseen(_noisy(0), window) is not None and unseen(_light(EMPTY, 0.02), window) is not None
    lit = [EMPTY, CARD, OTHER, felt]
    lit += [scene(None, CLASSIC, seed, SIZE, cond, felt=i) for seed, cond in ((1, STUDIO), (2, FLOOR))
            for i in range(len(FELTS))]
    noise = _noisy(6).astype(np.int16) - 6
    for picture in lit:  # the plainest felt in a small window, a card, both lights, all felts, half the light
        for frame in (picture, _light(picture, 0.5), np.clip(picture + noise, 0, 255).astype(np.uint8)):
            for where in (None, window):
                assert unseen(frame, where) is None, levels(frame, where)
    for level in (30, 45, 60):  # a dim but lit table, flat
        assert unseen(_noisy(level), None) is None and unseen(_noisy(level), window) is None
    assert BLACK < 17 and WHITE > 236  # the measured margins (vision.unseen)


def test_blind_says_why_after_it_lasted_and_forgets_at_the_first_frame_that_sees() -> None:
    blind = Blind(2.0, None)
    assert blind.see(_noisy(3), 10.0) == "the frame is all but black (99 % of it under 16 of 255)"
    assert blind.lasted(11.9) is None
    blind.see(_noisy(5), 11.9)
    assert blind.lasted(12.0) == ("the frame is all but black for 2 s: the camera sees nothing (lens "
                                  "covered, table lamp off?)")
    assert blind.see(EMPTY, 12.1) is None and blind.why is None and blind.lasted(20.0) is None
    blind.see(_noisy(3), 13.0)
    assert blind.lasted(14.9) is None  # a new spell: counted from its own first frame
    assert blind.see(_noisy(3), 15.0) is not None
    assert blind.why is not None and blind.see(None, 15.1) == blind.why  # not judged: nothing changes
    assert blind.lasted(15.1) is not None
    assert blind.see(EMPTY, 15.2) is None and blind.lasted(15.2) is None
    assert blind.lasted(20.0) is None


# --- the daemon -------------------------------------------------------------------------------------------

def _call(client: CommandClient, cmd: str, **fields: Any) -> dict[str, Any]:
    reply = client.call(cmd, **fields)
    assert reply.get("ok"), (cmd, reply)
    return reply


def _open_round(config: TableConfig) -> CommandClient:
    """A bet on seat 1 and betting closed: the deal waits for the camera's first card."""
    client = CommandClient(config.spec.zeromq.command, timeout=5, key=local_key(config))
    _call(client, "credit_in", seat=1, amount=10_000_000)
    _call(client, "open")
    _call(client, "bet", seat=1, spot="banker", amount=100)
    _call(client, "close")
    assert client.call("status")["phase"] == "dealing"
    return client


@pytest.mark.timeout(150)
@pytest.mark.parametrize("kind", ["black", "white"])
def test_a_camera_that_sees_nothing_mid_deal_tilts_saying_why_and_play_goes_on_when_it_sees(
        tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    """2C read; the lens covered (or washed out) for 3 s: the camera is offline saying why, a
    device_offline tilt, a WARNING; 2C read again when it sees goes to the dealer (repeat_card, never
    dealt twice), who says it is the card already taken; 5H after an empty window is dealt."""
    video = tmp_path / "camera.avi"
    write_video(video, [(EMPTY, 5 * FPS, True), (CARD, 2 * FPS, True), *_spell(kind, 3.0),
                        (CARD, 3 * FPS, True), (EMPTY, 2 * FPS, True), (OTHER, 2 * FPS, True),
                        (EMPTY, FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=3.0)
    seen: dict[str, Any] = {}
    with caplog.at_level(logging.WARNING), DaemonThread(Daemon(config, use_shoe=False)):
        client = _open_round(config)
        try:
            def offline() -> bool:
                status = client.call("status")
                if "camera" in status["offline"]:
                    seen.update(offline=status["offline"]["camera"], tilt=status["tilt"],
                                last=status["camera"]["last"])
                return bool(seen)
            wait_for(offline, "the camera never went offline", timeout=60)
            assert seen["offline"] == BLIND[kind] and seen["tilt"]["reason"] == "device_offline", seen
            assert seen["tilt"]["held"] == [], seen  # nothing dealt or held while it saw nothing
            wait_for(lambda: (client.call("status")["tilt"] or {}).get("reason") == "repeat_card",
                     "2C read again never went to the dealer", timeout=60)
            assert client.call("status")["shoe"]["dealt"] == 1  # 2C held, not dealt again
            _call(client, "clear_tilt")  # the card already taken: nothing dealt
            wait_for(lambda: client.call("status")["shoe"]["dealt"] == 2, "5H was never dealt", timeout=60)
            wait_for(lambda: ENDED in camera_statuses(config), "the video never ended", timeout=60)
        finally:
            client.close()
    assert seen["last"]["status"] == "unknown" and "all but" in seen["last"]["reason"], seen
    statuses = camera_statuses(config)
    assert statuses[:2] == [(False, BLIND[kind]), (True, "frames")], statuses
    assert dealt(config) == ["2C", "2C?", "5H"]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"camera offline: {BLIND[kind]}" in warned, warned


@pytest.mark.timeout(150)
def test_a_plain_felt_in_a_small_window_a_dim_table_and_a_lasting_change_of_light_see(
        tmp_path: Path) -> None:
    """Never offline but at the video's end: a plain felt (one colour with a sensor's noise) in a window a
    tenth of the frame's sides, a dim but lit table, the whole frame at half its light for 6 s (a first fix
    took the camera offline at every empty window after it); a card laid under that light is dealt."""
    video = tmp_path / "camera.avi"
    felt = np.full((SIZE[1], SIZE[0], 3), FELTS[0], np.uint8)
    write_video(video, [(felt, 3 * FPS, True), (_noisy(30), 2 * FPS, True), (_noisy(60), 2 * FPS, True),
                        (felt, FPS, True)])
    config = video_table(tmp_path, video, stable_frames=3, frozen_after=3.0, scan_window={"corners": SMALL})
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: ENDED in camera_statuses(config), "the video never ended", timeout=90)
    assert camera_statuses(config) == [ENDED]
    video = tmp_path / "light.avi"
    write_video(video, [(EMPTY, 3 * FPS, True), (_light(EMPTY, 0.5), 6 * FPS, True),
                        (_light(CARD, 0.5), 2 * FPS, True), (_light(EMPTY, 0.5), FPS, True)])
    (tmp_path / "light").mkdir()
    config = video_table(tmp_path / "light", video, stable_frames=3, frozen_after=3.0)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: ENDED in camera_statuses(config), "the video never ended", timeout=90)
    assert camera_statuses(config) == [ENDED]
    assert dealt(config) == ["2C"]


@pytest.mark.timeout(90)
def test_a_covered_lens_opened_again_and_again_stays_offline_saying_why(tmp_path: Path) -> None:
    """A camera all but black from its start, whose capture ends and is opened again (a video at its end,
    a driver dropping the device): offline as blind once, and never back online by the frames of a camera
    warming up, which are not judged (a review, 2026-12-07: it came back, "frames", at every opening).
    ``ctl status`` says the cause as it is now, the journal the cause it went offline for: the status kept
    the lens covered while no frame came at all (a note, 2026-12-07)."""
    video = tmp_path / "camera.avi"
    write_video(video, _spell("black", 3.0))
    config = video_table(tmp_path, video)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: (False, BLIND["black"]) in camera_statuses(config), "never offline", timeout=30)
        first = camera_statuses(config).index((False, BLIND["black"]))
        client = CommandClient(config.spec.zeromq.command, timeout=5, key=local_key(config))
        try:
            causes: list[tuple[str, str | None]] = []

            def cause_is(cause: str) -> bool:
                status = client.call("status")
                causes.append((status["offline"].get("camera"), status["camera"]["cause"]))
                return status["camera"]["cause"] == cause

            wait_for(lambda: cause_is(ENDED[1]), "the frames stopped, never said", timeout=30)
            wait_for(lambda: cause_is(BLIND["black"]), "the lens covered again, never said", timeout=30)
        finally:
            client.close()
        assert {offline for offline, _ in causes} == {BLIND["black"]}, causes
        time.sleep(3 * (3.0 + 0.6 + 1.0))  # three more endings and openings of the capture
    statuses = camera_statuses(config)
    assert statuses[first:] == [(False, BLIND["black"])], statuses
