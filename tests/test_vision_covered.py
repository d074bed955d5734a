"""A card recovered from its sides is refused when another card lies over it (vision/covered.py): the card
on top is the one dealt last. The same two cards in the same places are read when the stacking is the
other way round, so the decision comes from which card is on top, not from the two being there."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from test_vision_detect import table_with_card
from test_vision_one_card import paste
from vision_support import profile

from controller.cards import parse_card
from vision.covered import MIN_EDGE, Grey, edge_along
from vision.detect import find_card
from vision.recognise import recognise
from vision.refusal import Refusal
from vision.synth import DESIGNS, negative_scene

#: A nine of spades wholly in the window, and a king of diamonds cut by the frame's top edge whose lower
#: left corner lies over the nine's upper right corner (a third of the nine's top side, a quarter of its
#: right side).
WHOLE = ("9S", [(150.0, 120.0), (330.0, 120.0), (330.0, 371.0), (150.0, 371.0)])
CUT = ("KD", [(250.0, -60.0), (430.0, -80.0), (458.0, 170.0), (278.0, 190.0)])


Placed = tuple[str, list[tuple[float, float]]]


def stack(lower: Placed, upper: Placed) -> np.ndarray:
    """``upper`` laid over ``lower`` on the felt (each drawn as :func:`table_with_card` draws a card)."""
    frame = table_with_card(*lower)
    paste(frame, *upper)
    return frame


def test_the_card_under_a_card_cut_by_the_edge_is_refused() -> None:
    """Before vision/covered.py the nine was recovered from its sides and read: the card dealt last, on
    top, was not."""
    frame = stack(WHOLE, CUT)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "refused" and detection.refusal is Refusal.COVERED, detection.reason
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "another card lies over this one" in reading.reason


def test_the_card_over_a_card_cut_by_the_edge_is_read() -> None:
    frame = stack(CUT, WHOLE)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "card" and detection.joined, detection.reason
    assert recognise(frame, profile()).card is parse_card("9S")


#: vision.synth's two-card negatives whose lower card was read before (the upper card, placed second, is
#: cut by the frame's edge, and the lower one recovered from its sides with both indices in view).
UNDER = [("classic", 18), ("serif", 18), ("bold", 18), ("lefty", 205), ("lefty", 257)]


@pytest.mark.parametrize(("design", "seed"), UNDER)
def test_the_lower_of_two_synthetic_cards_is_not_read(design: str, seed: int) -> None:
    frame = negative_scene("two_cards", DESIGNS[design], seed)
    detection = find_card(frame, profile(design).spec.face)
    assert detection.refusal is Refusal.COVERED, detection.reason
    assert recognise(frame, profile(design)).status != "card"


def test_an_edge_between_two_papers_counts_and_an_inks_does_not() -> None:
    """A card's edge over another card's paper is a faint line with paper on both sides; a pip's border
    is a strong step to ink. Along the pip's border the gradient is far stronger, but it is no edge
    between two papers, so it does not count as another card's edge (composed seed 7's 5H, where a
    neighbour's side carried on along the border of a heart)."""
    image = np.full((100, 200), 200, np.uint8)
    image[30, :] = 150  # a card's edge over paper: a thin, faint shadow line
    image[60:90, 60:140] = 90  # a pip: ink below the line y = 60
    g = Grey.of(cv2.GaussianBlur(image, (5, 5), 0))  # blurred as the detector blurs its grey frame
    way = np.array([1.0, 0.0])
    faint = edge_along(g, np.array([50.0, 30.0]), way, 40.0, paper=160.0)
    assert faint >= MIN_EDGE
    assert edge_along(g, np.array([70.0, 59.5]), way, 40.0) > 4 * faint  # strong without the paper rule
    assert edge_along(g, np.array([70.0, 59.5]), way, 40.0, paper=160.0) == 0.0
