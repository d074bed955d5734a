"""Bright things in the window that are not a card (a white box alone, a lamp's glare on the card) are
not read as a card; a second card beside the card, even one that shows no ink (a plain pale back, a
back under the dealer's hand) or a red one whose pips are brighter than the detector's level, still
refuses the window: two cards are never read as one."""

from __future__ import annotations

import cv2
import numpy as np
from test_vision_detect import H, W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from vision.detect import find_card
from vision.recognise import recognise

FELT = (40, 90, 30)


def white_box(frame: np.ndarray) -> np.ndarray:
    """A white plastic box (a mouse's case) beside the card, wholly inside the frame: lit on top, its
    front in shadow, with a seam across it, the shape of a loaf, as large as the card's third."""
    out = frame.copy()
    cv2.ellipse(out, (120, 330), (85, 60), 0, 0, 360, (215, 218, 220), -1)
    cv2.ellipse(out, (120, 350), (85, 45), 0, 0, 180, (170, 172, 175), -1)  # its shaded front
    cv2.line(out, (50, 345), (190, 345), (150, 150, 152), 1)  # the lid's seam
    return np.asarray(cv2.GaussianBlur(out, (3, 3), 0), np.uint8)


def test_a_white_box_alone_is_not_a_card() -> None:
    frame = white_box(np.full((H, W, 3), FELT, np.uint8))
    reading = recognise(frame, profile())
    assert reading.status != "card" and reading.card is None


def beside(frame: np.ndarray, code: str, quad: list[tuple[float, float]]) -> np.ndarray:
    other = table_with_card(code, quad)
    return np.where(other != FELT, other, frame).astype(np.uint8)


def test_a_second_card_beside_the_card_still_refuses_the_window() -> None:
    """The safety rule: a second card counts, whatever its face."""
    frame = table_with_card("7C", [(330.0, 110.0), (510.0, 110.0), (510.0, 361.0), (330.0, 361.0)])
    for code in ("2D", "AH", "KS"):
        both = beside(frame, code, [(60.0, 120.0), (240.0, 120.0), (240.0, 371.0), (60.0, 371.0)])
        detection = find_card(both, profile().spec.face)
        assert detection.status == "refused", (code, detection.reason)


def test_a_pale_red_card_on_dark_felt_still_counts() -> None:
    """A red two lit brightly on dark felt: its pink pips are brighter than Otsu's level, so they are
    no holes in the mask, yet it is a second card and the window is refused. On f3ed196 (inkless regions
    set aside, ink told as holes in the mask alone) it was blank and the seven of clubs beside it was
    read: two cards as one."""
    quad = [(60.0, 120.0), (240.0, 120.0), (240.0, 371.0), (60.0, 371.0)]
    frame = beside(table_with_card("7C", [(330.0, 110.0), (510.0, 110.0), (510.0, 361.0), (330.0, 361.0)]),
                   "2D", quad)
    felt = np.all(frame == FELT, axis=2)
    pale = np.zeros((H, W), np.uint8)
    cv2.fillConvexPoly(pale, np.array(quad, np.int32), 255)
    lifted = 255 - (255 - frame.astype(np.float32)) * 0.45  # the two's ink washed to pink
    frame = np.where(pale[..., None] > 0, lifted, frame).astype(np.uint8)
    frame[felt] = (45, 18, 8)  # dark navy felt
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "refused", detection.reason


def glare_on_corner(frame: np.ndarray, quad: list[tuple[float, float]]) -> np.ndarray:
    """A lamp's glare washing the card's lower-left corner to white: sharp where the card's sides
    bound it, fading softly into the paper inward, brighter than the paper."""
    (x0, _), _, (x1, y1), _ = quad
    spot = np.zeros((H, W), np.float32)
    cv2.rectangle(spot, (int(x0) - 30, int(y1) - 190), (int(x0) + 130, int(y1) + 30), 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), 9)
    card = np.zeros((H, W), np.uint8)
    cv2.fillConvexPoly(card, np.array(quad, np.int32), 255)
    spot[card == 0] = 0
    return np.clip(frame + spot[..., None] * 120, 0, 255).astype(np.uint8)


def test_a_glare_on_the_card_is_not_taken_for_the_card() -> None:
    """kentdoan's Cards_6-4H: a dim exposure, the card joined to a table top as pale as its paper that
    runs to the frame's edge (no edge between them to cut along), a lamp's glare on the card's corner.
    Only the brightest look parts anything, and there the glare alone stands out, card-shaped by two of
    the card's own sides. Before: the glare patch was read ("blank index"); its inner rim is no edge in
    the frame, so it is not the card, and the card is found by its own sides."""
    quad = [(200.0, 110.0), (380.0, 110.0), (380.0, 361.0), (200.0, 361.0)]
    frame = table_with_card("4H", quad)
    frame[:200, :201] = frame[200, 290]  # a table top as pale as the paper, joined to the card
    frame = glare_on_corner((frame * 0.75).astype(np.uint8), quad)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "card" and detection.corners is not None, detection.reason
    want = np.array(quad, np.float32)
    assert min(np.abs(np.roll(detection.corners, k, axis=0) - want).max() for k in range(4)) < 4
    assert recognise(frame, profile()).card is parse_card("4H")


def test_a_pale_back_beside_the_card_still_counts() -> None:
    """A second card face down, its back a plain pale colour to the edge (no white border, no lattice):
    it shows no ink at all, yet it is a card, the card's size and shape. Before, it was set aside as
    blank and the seven of clubs beside it was read: two cards as one. A card-shaped region always
    counts; only odd shapes (a box, a mouse) are set aside for want of ink."""
    quad = [(60.0, 120.0), (240.0, 120.0), (240.0, 371.0), (60.0, 371.0)]
    frame = table_with_card("7C", [(330.0, 110.0), (510.0, 110.0), (510.0, 361.0), (330.0, 361.0)])
    for pale in ((215, 215, 215), (235, 220, 200), (200, 230, 245)):
        both = frame.copy()
        cv2.fillConvexPoly(both, np.array(quad, np.int32), pale)
        detection = find_card(both, profile().spec.face)
        assert detection.status == "refused", (pale, detection.reason)


def test_a_pale_back_joined_to_the_window_edge_still_counts() -> None:
    """The same pale back and the card each joined to a bright streak running to the window's top edge
    (a white sleeve, a lamp's reflection): neither is whole on its own, both are recovered from their
    sides' runs (:mod:`vision.sides`), so two cards are found and the window is refused. Before, the
    back's quadrilateral was dropped as blank and the seven of clubs was read."""
    frame = table_with_card("7C", [(330.0, 110.0), (510.0, 110.0), (510.0, 361.0), (330.0, 361.0)])
    back = np.array([(60, 120), (240, 120), (240, 371), (60, 371)], np.int32)
    cv2.fillConvexPoly(frame, back, (215, 215, 215))
    cv2.rectangle(frame, (140, 0), (160, 120), (235, 235, 235), -1)
    cv2.rectangle(frame, (410, 0), (430, 110), (235, 235, 235), -1)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "refused", detection.reason


def test_a_pale_back_under_the_dealers_hand_still_counts() -> None:
    """The pale back beside the card with the dealer's hand over one of its corners: its outline is no
    longer a card's (odd), and it shows no ink. It is still a second card: the window is refused, as
    on main. With inkless odd regions set aside (vision/ink.py: 426e4e1, fdc7746) the seven of clubs
    was read: two cards as one."""
    frame = table_with_card("7C", [(330.0, 110.0), (510.0, 110.0), (510.0, 361.0), (330.0, 361.0)])
    back = np.array([(60, 120), (240, 120), (240, 371), (60, 371)], np.int32)
    for corner in ((240, 371), (60, 120)):
        both = frame.copy()
        cv2.fillConvexPoly(both, back, (215, 215, 215))
        cv2.ellipse(both, corner, (70, 90), 0, 0, 360, (90, 120, 170), -1)  # the hand, skin-coloured
        detection = find_card(both, profile().spec.face)
        assert detection.status == "refused", (corner, detection.reason)


def test_a_second_whole_card_joined_to_the_window_edge_by_a_streak_still_counts() -> None:
    """A whole 2D beside the 7C, joined to the window's top edge by a white streak (a sleeve, a
    reflection): its region reaches the edge, and such regions were set aside once a card was found, so
    the 7C was read with a second card in the window (rev7). Two cards refuse it however joined."""
    frame = beside(table_with_card("7C", [(300.0, 110.0), (480.0, 110.0), (480.0, 361.0), (300.0, 361.0)]),
                   "2D", [(100.0, 115.0), (280.0, 115.0), (280.0, 366.0), (100.0, 366.0)])
    cv2.rectangle(frame, (160, 0), (190, 118), (235, 235, 235), -1)
    found = find_card(frame, (250, 350))
    assert found.status == "refused" and "2 separate objects" in found.reason, found.reason
    assert recognise(frame, profile()).status == "unknown"
