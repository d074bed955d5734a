"""A card whose outline cannot be told from what it lies on is found and read by its two indices
(vision.by_index), and only when nothing else in the window could be a card.

Frames are drawn here: vision.synth faces laid on a sheet of the faces' own white paper, so the card's
outline is invisible and vision.detect.find_card refuses the frame (the bright region is the sheet).
"""

from __future__ import annotations

import math
import random

import cv2
import numpy as np
import pytest

from controller.cards import parse_card
from tests.vision_support import profile
from vision.detect import find_card
from vision.recognise import Image, recognise
from vision.synth import DESIGNS, FACE_H, FACE_W, Conditions, draw_suit, negative_scene, render_face
from vision.window import ScanWindow

PAPER = 250
SIZE = (640, 480)


def sheet(seed: int) -> Image:
    """A white sheet of the faces' paper filling the frame, lit a little unevenly."""
    w, h = SIZE
    rng = np.random.default_rng(seed)
    ramp = np.linspace(-8, 4, w, dtype=np.float32)[None, :, None]
    img = np.full((h, w, 3), PAPER, np.float32) + ramp + rng.normal(0, 2.5, (h, w, 3)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def lay(frame: Image, code: str, centre: tuple[float, float], height: float, angle: float) -> None:
    """Lay the face of ``code`` on ``frame``, ``height`` pixels tall, turned by ``angle`` degrees; its
    thin printed border is painted out, so nothing but its ink tells it from the sheet."""
    face = render_face(parse_card(code), DESIGNS["classic"])
    cv2.rectangle(face, (3, 3), (FACE_W - 4, FACE_H - 4), (PAPER, PAPER, PAPER), 1)
    s = height / FACE_H
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * s
    src = np.array([(0, 0), (FACE_W - 1, 0), (FACE_W - 1, FACE_H - 1)], np.float32)
    dst = np.array([rot @ (p - (FACE_W / 2, FACE_H / 2)) + centre for p in src], np.float32)
    m = cv2.getAffineTransform(src, dst)
    h, w = frame.shape[:2]
    warped = cv2.warpAffine(face, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    mask = cv2.warpAffine(np.full((FACE_H, FACE_W), 255, np.uint8), m, (w, h))
    frame[mask > 127] = warped[mask > 127]


def finish(frame: Image) -> Image:
    """A camera's softness."""
    out: Image = cv2.GaussianBlur(frame, (3, 3), 0.8)
    return out


@pytest.mark.parametrize(("code", "angle"), [("7H", 8.0), ("QS", -20.0), ("TC", 175.0), ("4D", 95.0)])
def test_a_card_on_a_sheet_of_its_own_paper_is_read_by_its_indices(code: str, angle: float) -> None:
    frame = sheet(1)
    lay(frame, code, (320, 240), 330, angle)
    frame = finish(frame)
    deck = profile("classic")
    assert find_card(frame, deck.spec.face, warp=False).status == "refused"  # its outline is not seen
    reading = recognise(frame, deck)
    assert reading.status == "card" and reading.card is parse_card(code), reading.reason


def test_a_second_face_up_card_on_the_sheet_leaves_the_frame_unknown() -> None:
    frame = sheet(2)
    lay(frame, "7H", (180, 240), 300, 5)
    lay(frame, "QS", (470, 240), 300, -8)
    reading = recognise(finish(frame), profile("classic"))
    assert reading.status == "unknown", reading
    assert "by its indices: two cards read" in reading.reason


def test_a_second_card_partly_out_of_the_window_leaves_the_frame_unknown() -> None:
    """Only one index of the second card is in the frame: it still reads as a card, so no read. Its large
    pip on the sheet (whose paper runs on past the window: no outline of its own) is seen first since the
    look for one (vision/second_pip.py); without that look, its index."""
    frame = sheet(3)
    lay(frame, "7H", (230, 240), 320, 0)
    lay(frame, "KD", (560, 300), 320, 0)  # its bottom index is past the frame's edge
    frame = finish(frame)
    reading = recognise(frame, profile("classic"))
    assert reading.status == "unknown", reading
    assert reading.reason.endswith("by its indices: a second card's large pip on its paper in the window "
                                   "(one card at a time)"), reading.reason
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("vision.second_object.large_pip", lambda *_: False)
        reading = recognise(frame, profile("classic"))
    assert "another index in the window reads as a card" in reading.reason


def test_scattered_glyph_ink_on_an_empty_sheet_is_never_a_card() -> None:
    deck = profile("classic")
    rng = random.Random(5)
    for seed in range(4):
        frame = sheet(10 + seed)
        for _ in range(24):
            x, y = rng.uniform(20, 600), rng.uniform(30, 460)
            colour = rng.choice([(30, 30, 200), (25, 25, 25)])
            if rng.random() < 0.5:
                cv2.putText(frame, rng.choice("A234567890JQK"), (int(x), int(y)), cv2.FONT_HERSHEY_SIMPLEX,
                            rng.uniform(0.8, 1.2), colour, 3, cv2.LINE_AA)
            else:
                draw_suit(frame, rng.choice("CDHS"), x, y, rng.uniform(18, 28), 1.0, colour)
        reading = recognise(finish(frame), deck)
        assert reading.status in ("empty", "unknown"), reading


def test_a_card_with_one_index_covered_is_not_read_by_its_indices() -> None:
    frame = sheet(4)
    lay(frame, "9S", (320, 240), 330, 10)
    deck = profile("classic")
    assert recognise(finish(frame.copy()), deck).card is parse_card("9S")  # both indices: read
    # A thumb over the bottom index (the face is turned 10 degrees about the frame's centre).
    cv2.ellipse(frame, (395, 355), (45, 60), 10, 0, 360, (120, 150, 200), -1)
    reading = recognise(finish(frame), deck)
    assert reading.status == "unknown", reading
    assert "by its indices" in reading.reason


def test_a_card_whose_index_lies_outside_the_scan_window_is_not_read_by_its_indices() -> None:
    frame = sheet(6)
    lay(frame, "7H", (320, 240), 330, 0)
    frame = finish(frame)
    deck = profile("classic")
    assert recognise(frame, deck).card is parse_card("7H")
    # The window's right edge runs between the card's two indices: its bottom index is outside.
    window = ScanWindow(corners=((0.0, 0.0), (0.6, 0.0), (0.6, 1.0), (0.0, 1.0)))
    reading = recognise(frame, deck, window=window)
    assert reading.status == "unknown", reading


def test_two_overlapping_cards_refused_for_their_odd_outline_are_never_searched_by_index() -> None:
    """Two overlapping cards make one odd outline ("the outline's sides are 0.58 wide to tall"): the
    top card's indices are plain, the other's hidden, so only the refusal's kind keeps them unread."""
    frame = negative_scene("two_cards", DESIGNS["classic"], 41 * 1_000_003 + 258, SIZE,
                           Conditions(blur=2.6, noise=6.0))
    reading = recognise(frame, profile("classic"))
    assert reading.status == "unknown", reading
    assert "by its indices" not in reading.reason
