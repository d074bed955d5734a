"""A second object beside the card whose region joins something else is still found by three sides of its
outline (:mod:`vision.second_outline`); straight lines that are not an object's sides (a printed box, a
striped cloth) leave the card read."""

from __future__ import annotations

import cv2
import numpy as np
from test_vision_detect import W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from vision.recognise import recognise

#: The card read, upright on the felt, and the second object's place to its right (x0, y0, x1, y1).
CARD = [(150.0, 100.0), (320.0, 100.0), (320.0, 337.0), (150.0, 337.0)]
BESIDE = (326, 100, 496, 337)


def test_a_pale_object_whose_far_side_is_lost_in_a_pale_wall_is_a_second_object() -> None:
    """A plain pale object beside the card, its far side and the top of it lost in a wall as pale as it
    that runs to the frame's edge: the object's region is the wall's, its outline shows on three sides
    (the seam, its top on the felt, its bottom). Before, the card was read with the object beside it."""
    frame = table_with_card("9C", CARD)
    x0, y0, x1, y1 = BESIDE
    frame[y0:y1, x0:x1] = 236  # the object
    frame[60:y1 - 80, x1:] = 236  # the wall, joined to its far side, to the frame's right edge
    cv2.circle(frame, ((x0 + x1) // 2, (y0 + y1) // 2), 45, (30, 30, 30), -1)  # a big pip, as a prop card
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


def test_a_dim_object_on_grey_cloth_beside_the_card_is_a_second_object() -> None:
    """A back-grey object on a grey cloth beside the card, dimmer than the card and brighter than the
    cloth, its outline closed all round: the card read is held to one card at a time."""
    frame = table_with_card("9C", CARD)
    grey = frame[:, :, 0] == 40
    frame[grey] = 110  # the cloth, where the felt was
    x0, y0, x1, y1 = BESIDE
    frame[y0:y1, x0:x1] = 150
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


def test_an_empty_printed_box_beside_the_card_is_no_second_object() -> None:
    """A card-sized box printed on the felt beside the card: its sides are lines (the felt on both sides of
    each), not an object's steps, so the card is read."""
    frame = table_with_card("9C", CARD)
    x0, y0, x1, y1 = BESIDE
    cv2.rectangle(frame, (x0 + 8, y0), (x1, y1), (70, 150, 90), 3)  # a lighter print, dimmer than paper
    reading = recognise(frame, profile())
    assert reading.card is parse_card("9C"), reading


def test_stripes_of_cloth_beside_the_card_are_no_second_object() -> None:
    """Pale stripes on the cloth a card's width apart, running to the frame's edges beside the card: lines,
    not steps, so the card is read."""
    frame = table_with_card("9C", CARD)
    felt = frame[:, :, 0] == 40
    stripes = np.zeros(frame.shape[:2], bool)
    for x in range(330, W, 60):
        stripes[:, x:x + 3] = True
    for y in range(20, 480, 70):
        stripes[y:y + 3, 330:] = True
    frame[felt & stripes] = (150, 170, 140)
    reading = recognise(frame, profile())
    assert reading.card is parse_card("9C"), reading
