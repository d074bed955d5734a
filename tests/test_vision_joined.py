"""A card joined to something bright at the window's edge (a glare over its corner, a neighbouring card
touching it) is found by its own sides, never guessed; and a card whose one index is washed out by a
glare is read from the other only by a wide margin, never when that index is covered."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from test_vision_detect import UPRIGHT, H, W, table_with_card
from vision_support import profile

from controller.cards import parse_card
from vision.detect import find_card
from vision.recognise import read_index, recognise, recognise_face
from vision.synth import DESIGNS, FLOOR, negative_scene, render_face
from vision.washed_out import washed_out


def glare(frame: np.ndarray, centre: tuple[int, int], radius: int) -> np.ndarray:
    """A lamp's white glare, bright to its rim, centred at ``centre``."""
    spot = np.zeros((H, W), np.float32)
    cv2.circle(spot, centre, radius, 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), 6)
    return np.clip(frame + spot[..., None] * 230, 0, 255).astype(np.uint8)


def test_a_glare_over_the_cards_corner_running_to_the_edge_is_parted_by_the_cards_sides() -> None:
    """The glare covers the card's top-right corner and runs on to the frame's right edge, so the bright
    region is the card and the glare together. Before: "the card is not wholly inside the window"."""
    frame = glare(table_with_card("7H", UPRIGHT), (640, 40), 235)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "card", detection.reason
    assert detection.corners is not None
    want = np.array(UPRIGHT, np.float32)
    got = detection.corners
    assert min(np.abs(np.roll(got, k, axis=0) - want).max() for k in range(4)) < 4
    assert recognise(frame, profile()).card is parse_card("7H")


def test_a_neighbouring_card_touching_the_card_is_parted_by_the_cards_sides() -> None:
    """A neighbour cut by the frame's left edge lies against the card's left side, lower down: one
    bright region. Before: "the card is not wholly inside the window"."""
    card = [(150.0, 60.0), (330.0, 60.0), (330.0, 311.0), (150.0, 311.0)]
    frame = table_with_card("9S", card)
    neighbour = table_with_card("KD", [(-30.0, 200.0), (151.0, 200.0), (151.0, 451.0), (-30.0, 451.0)])
    frame[:, :152] = np.where(neighbour[:, :152] != (40, 90, 30), neighbour[:, :152], frame[:, :152])
    reading = recognise(frame, profile())
    assert reading.card is parse_card("9S"), reading.reason


def test_a_card_cut_by_the_edge_and_joined_to_a_glare_is_still_refused() -> None:
    """The card's left side is outside the frame: its sides cannot close a whole card, so it is
    refused as before, never read from a guessed side."""
    cut = [(-90.0, 110.0), (90.0, 110.0), (90.0, 361.0), (-90.0, 361.0)]
    frame = glare(table_with_card("7H", cut), (0, 420), 120)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "refused" and "not wholly inside" in detection.reason


def test_two_touching_whole_cards_joined_to_a_glare_are_two_objects() -> None:
    """Two whole cards side by side, joined to each other and to a glare at the frame's edge: both are
    found by their sides, so the window holds two cards and is refused."""
    frame = table_with_card("7H", [(90.0, 110.0), (270.0, 110.0), (270.0, 361.0), (90.0, 361.0)])
    right = table_with_card("KS", [(269.0, 150.0), (449.0, 150.0), (449.0, 401.0), (269.0, 401.0)])
    frame[:, 269:] = np.where(right[:, 269:] != (40, 90, 30), right[:, 269:], frame[:, 269:])
    frame = glare(frame, (0, 0), 150)
    detection = find_card(frame, profile().spec.face)
    assert detection.status == "refused", detection.reason


def test_two_cards_side_by_side_seen_apart_in_one_look_are_never_one_card() -> None:
    """Two whole cards side by side (a plain one with a dark blob, as a prop card's big pip, and a 10D):
    a pale wall joins the plain card's left and top sides to the frame's edges, and their seam is open
    but for its bottom sixth, where it is only a faint line. The first look sees one region at the
    edge, the second (cut along the frame's edges) two whole cards. The joined-card search of the first
    look's region recovered the 10D alone (its sides are all on the region's outline) and read it, two
    cards in the window (a public photograph of two prop cards did the same). A card the search finds
    is taken only when no look saw another object in the window apart from it."""
    top, height, width, seam = 40, 380, 270, 6
    right = 40 + width + seam
    x0, x1 = float(right), float(right + width)
    frame = table_with_card("TD", [(x0, 46.0), (x1, 46.0), (x1, 426.0), (x0, 426.0)])
    frame[:, :42] = 205  # the wall, to the frame's top and left edges
    frame[28:42, : 40 + width - 20] = 205
    frame[top : top + height, 40 : 40 + width] = 240  # the plain card
    cv2.circle(frame, (40 + width // 2, top + height // 2), 60, (20, 20, 20), -1)
    frame[top + height - 60 : top + height, 40 + width : right] = 170  # the seam closed, faintly
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "2 separate objects" in reading.reason, reading


def washed_face(code: str) -> np.ndarray:
    """The classic face of ``code`` with a glare washing out its top-left index (lifted to white)."""
    deck = profile()
    face = cv2.resize(render_face(parse_card(code), DESIGNS["classic"]), deck.spec.face)
    x0, y0, x1, y1 = deck.spec.index.box
    lift = np.zeros(face.shape[:2], np.float32)
    cv2.rectangle(lift, (x0, y0), (x1, y1), 1.0, -1)
    lift = cv2.GaussianBlur(lift, (0, 0), 4)
    return np.clip(face + lift[..., None] * 235, 0, 255).astype(np.uint8)


def test_an_index_washed_out_by_a_glare_is_read_from_the_other_by_a_wide_margin() -> None:
    """Two indices wanted: the washed-out index lies on the paper, the other reads with twice the
    usual lead, so the card is read. Before: "only one index readable"."""
    reading = recognise_face(washed_face("8C"), profile())
    assert reading.card is parse_card("8C"), reading.reason


def test_a_single_index_without_twice_the_lead_is_not_read() -> None:
    """The same face with a profile whose ratio test sits just above the read index's lead: that index
    still reads, but not by twice the margin, so two indices are needed and the card is unknown."""
    deck = profile()
    face = washed_face("8C")
    turned = cv2.rotate(face, cv2.ROTATE_180)
    x0, y0, x1, y1 = deck.spec.index.box
    read = read_index(turned[y0:y1, x0:x1], deck)
    assert not isinstance(read, str), read
    strict = deck.spec.accept.model_copy(update={"max_ratio": 1.5 * read[2]})
    harsh = type(deck)(deck.spec.model_copy(update={"accept": strict}), deck.ranks, deck.suits,
                       aspects=deck.aspects)
    assert not isinstance(read_index(turned[y0:y1, x0:x1], harsh), str)
    reading = recognise_face(face, harsh)
    assert reading.status == "unknown" and "only one index" in reading.reason


def test_an_index_under_a_thumb_is_not_paper() -> None:
    """A thumb (skin-coloured, darker than the paper) over an index is covered, not washed out."""
    deck = profile()
    face = cv2.resize(render_face(parse_card("8C"), DESIGNS["classic"]), deck.spec.face)
    x0, y0, x1, y1 = deck.spec.index.box
    read = face[y0:y1, x0:x1].copy()
    thumb = np.full_like(read, (140, 170, 220))
    assert not washed_out(thumb, read)
    assert washed_out(washed_face("8C")[y0:y1, x0:x1], read)


def test_a_card_lying_over_another_and_cut_by_the_edge_is_not_the_lower_card() -> None:
    """vision.synth's two-card negative (the bench's classic frame 568, seed 2026): the upper card is
    cut by the frame's top edge and covers two thirds of the lower card's top side. The lower card's
    sides are not seen along enough of their length, so it is not read: two cards are never one."""
    frame = negative_scene("two_cards", DESIGNS["classic"], 2026 * 1_000_003 + 520 + 48, (W, H), FLOOR)
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and reading.card is None, reading.reason


#: vision.synth's two-card negatives (classic, floor conditions) read as a card before the washed-out
#: index had to be free of ink: two overlapping cards nearly in line make one card-shaped outline, one
#: index read (the covered card's, at 3, 49 and 84: a wrong card) and the other corner, the other card's
#: index at another scale, failed to read but lay on paper. Seed 18 (the 4H under the 5S, whose edge lies
#: 2 px inside the frame's) is refused by the card-under-a-card check: tests/test_vision_covered.py.
#: Bold 127: the AS recovered from its sides by the joined-card search, a 3D over its lower corner (the
#: 3D's edge 2 px inside the frame's); the AS's other index, under the 3D's blank paper, had no ink, so
#: it passed as washed out: a card recovered from its sides is now read on both indices.
TWO_AS_ONE = [("classic", s) for s in (3, 49, 80, 84, 257, 279)] + [("bold", 127)]


@pytest.mark.parametrize(("design", "seed"), TWO_AS_ONE)
def test_two_overlapping_cards_are_never_read_from_one_index(design: str, seed: int) -> None:
    reading = recognise(negative_scene("two_cards", DESIGNS[design], seed), profile(design))
    assert reading.status != "card", (seed, reading.card, reading.confidence)


def test_an_unread_index_with_ink_is_not_washed_out() -> None:
    """The other card's index, at another scale, on the same paper: ink, so not washed out; the same
    corner lifted to white by a glare is."""
    deck = profile()
    x0, y0, x1, y1 = deck.spec.index.box
    face = cv2.resize(render_face(parse_card("8C"), DESIGNS["classic"]), deck.spec.face)
    read = face[y0:y1, x0:x1].copy()
    small = cv2.resize(render_face(parse_card("KD"), DESIGNS["classic"]), None, fx=0.6, fy=0.6)
    other = small[: y1 - y0, : x1 - x0].copy()
    assert not washed_out(other, read)
    assert washed_out(washed_face("8C")[y0:y1, x0:x1], read)


#: rev4's misdeals (before the rank's place was checked): vision.synth's hand negative tilted past the
#: bench's 0.06 covers the 1 of a 10 at both indices, and the 0's visible part (an arc, or a 0 cut at its
#: foot by the hand's edge, which is paper-bright to the split) matched the J template. At 5059 one index
#: read JH and the other, half skin, had the paper's median, so on_paper took it for washed out; at 20025
#: both indices read JD and agreed. The 0 sits right of where the deck's J sits over its suit.
HAND_MISREADS = [(5059, 0.2, "TH"), (20025, 0.12, "TD")]


@pytest.mark.parametrize(("seed", "tilt", "truth"), HAND_MISREADS)
def test_a_hand_over_both_indices_is_never_read_as_another_card(seed: int, tilt: float, truth: str) -> None:
    """The dealer's hand over both indices of a 10 (its 1 hidden): never the J the 0 resembles."""
    frame = negative_scene("hand", DESIGNS["classic"], seed, (W, H), replace(FLOOR, max_tilt=tilt),
                           partial_hand=True)
    reading = recognise(frame, profile())
    assert reading.status != "card" or reading.card == parse_card(truth), reading.card
