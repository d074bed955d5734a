"""A tilted camera whose focal length the outline cannot tell (a long lens, a digital zoom): the card is
read in whichever quarter turn its indices read, and an outline with no perspective keeps its proportions."""

from __future__ import annotations

import math

import cv2
import numpy as np
from test_vision_detect import H, W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from vision.detect import CARD_ASPECT, DetectParams, find_card
from vision.recognise import recognise
from vision.tilt import card_turns
from vision.window import bounds


def under_long_lens(degrees: float, focal: float = 4 * W) -> list[tuple[float, float]]:
    """A 63 x 88 card lying on the optical axis of a camera with a ``focal`` pixel lens (4 frame widths:
    a 14-degree view, a long lens or a digital zoom), pitched by ``degrees``: its corners (tl, tr, br,
    bl) in the frame, the card about 200 px wide."""
    a, distance = math.radians(degrees), focal * 63 / 200
    out = []
    for x, y in ((-31.5, -44.0), (31.5, -44.0), (31.5, 44.0), (-31.5, 44.0)):
        z = distance + y * math.sin(a)
        out.append((W / 2 + focal * x / z, H / 2 + focal * y * math.cos(a) / z))
    return out


def seen(quad: list[tuple[float, float]]) -> float:
    """Width over height of the outline as seen."""
    q = np.array(quad, np.float32)
    return float((np.linalg.norm(q[0] - q[1]) + np.linalg.norm(q[2] - q[3])) /
                 (np.linalg.norm(q[1] - q[2]) + np.linalg.norm(q[3] - q[0])))


def test_a_card_foreshortened_to_a_square_under_a_long_lens_is_read() -> None:
    """At 45 degrees under a 4-frame-width lens the card looks square (neither quarter turn has a card's
    proportions as seen, nor after assuming a 53-degree lens): it was refused as "1.00 wide to tall"."""
    quad = under_long_lens(45)
    assert 0.95 < seen(quad) < 1.05
    reading = recognise(table_with_card("7H", quad), profile())
    assert reading.card is parse_card("7H"), reading.reason


def test_a_portrait_card_that_looks_landscape_is_read_in_its_own_quarter_turn() -> None:
    """At 56 degrees the card's long side is foreshortened below its short one: the outline turned a
    quarter has a card's proportions as seen, and the warp in that turn found a blank index."""
    quad = under_long_lens(56)
    assert math.isclose(1 / seen(quad), CARD_ASPECT, rel_tol=0.18)
    frame = table_with_card("QS", quad)
    det = find_card(frame, profile().spec.face, warp=False)
    assert det.status == "card" and det.other is not None  # both turns are possible
    reading = recognise(frame, profile())
    assert reading.card is parse_card("QS"), reading.reason


def test_the_other_quarter_turn_is_read_on_both_indices_only() -> None:
    """The other turn is a second guess: with one of its indices washed out by a glare it reads nothing,
    where the turn the outline gave would be read on its other index alone."""
    frame = table_with_card("QS", under_long_lens(56))
    det = find_card(frame, profile().spec.face, warp=False)
    assert det.other is not None
    q = np.asarray(det.other, np.float32)
    x, y = q[2] + 0.2 * (q.mean(axis=0) - q[2])  # over the other turn's second index, inside the card
    cv2.circle(frame, (round(float(x)), round(float(y))), 16, (250, 250, 250), -1)
    assert find_card(frame, profile().spec.face, warp=False).other is not None
    reading = recognise(frame, profile())
    assert reading.card is None, reading


def test_an_outline_without_perspective_keeps_its_proportions_whatever_the_lens() -> None:
    """Parallel sides carry no perspective: a head-on outline two cards wide is no card under any focal
    length, and a head-on card has one quarter turn only."""
    win = bounds(None, (320, 240))
    params = DetectParams()
    wide = np.array([(60, 80), (260, 80), (260, 160), (60, 160)], np.float32)  # 2.5 : 1
    assert card_turns(wide, win, CARD_ASPECT, params.aspect_tolerance, params.focal) == []
    card = np.array([(100, 40), (163, 40), (163, 128), (100, 128)], np.float32)
    turns = card_turns(card, win, CARD_ASPECT, params.aspect_tolerance, params.focal)
    assert len(turns) == 1 and np.array_equal(turns[0], card)
