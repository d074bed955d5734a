"""A card whose paper no brightness level parts from what it lies on is found by the region its outline's
edges enclose (vision.enclosed), and is then held to the search by indices' one-card checks.

The scene is kentdoan's QS on a laptop, drawn: a lamp on the left leaves the card's right half in
shadow, as pale as the grey laptop around it, and a white keyboard reaching in from the frame's edge
touches the card's left side. Every brightness level joins the card to the keyboard or cuts the card
in two; the card's outline is still an edge all round."""

from __future__ import annotations

import cv2
import numpy as np
from test_vision_detect import UPRIGHT, H, W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from vision.detect import find_card
from vision.recognise import recognise

FELT = (40, 90, 30)


def on_a_laptop(code: str = "QS") -> np.ndarray:
    shown = table_with_card(code, UPRIGHT).astype(np.float32)
    card = np.all(shown != FELT, axis=2)
    x = np.arange(W, dtype=np.float32)
    shown *= np.clip(1.0 - (x - 250) / 180 * 0.5, 0.5, 1.0)[None, :, None]  # the lamp on the left
    frame = np.full((H, W, 3), 150, np.uint8)  # the grey laptop
    frame[90:240, :262] = 200  # the keyboard, from the frame's edge to the card's left side
    x0, y0, x1, y1 = 248, 108, 432, 363  # the card's thin shadow just outside it, not on the keyboard
    cv2.polylines(frame, [np.array([(x0, y1), (x1, y1), (x1, y0), (262, y0)], np.int32)], False, (90,) * 3, 2)
    frame[card] = shown[card].astype(np.uint8)
    return frame


def test_a_card_as_pale_as_the_laptop_it_lies_on_is_found_by_its_outline() -> None:
    """Before: "the outline has 6 corners, not a single card's 4" (the card's lit half and the keyboard
    as one bright region at every level), and the search by indices is not run after an odd outline."""
    frame = on_a_laptop()
    detection = find_card(frame, profile().spec.face, warp=False)
    assert detection.status == "card", detection.reason
    assert detection.outlined and detection.corners is not None
    want = np.array(UPRIGHT, np.float32)
    assert min(np.abs(np.roll(detection.corners, k, axis=0) - want).max() for k in range(4)) < 6
    reading = recognise(frame, profile())
    assert reading.card is parse_card("QS"), reading.reason


def test_a_card_found_by_its_outline_is_refused_beside_another_cards_index() -> None:
    """A second card beside it, its paper as grey as the laptop (no outline, no bright region), shows
    its index: the card found by its outline is held to the one-card checks of the search by indices,
    as a card found by its indices is."""
    frame = on_a_laptop()
    second = table_with_card("4D", [(470.0, 150.0), (600.0, 150.0), (600.0, 331.0), (470.0, 331.0)])
    paper = np.all(second != FELT, axis=2)
    frame[paper] = (second[paper] * 0.62).astype(np.uint8)
    reading = recognise(frame, profile())
    assert reading.status == "unknown", reading
    assert "one card at a time" in reading.reason
