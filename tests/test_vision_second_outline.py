"""A second object beside the card whose region joins something else is still found by three sides of its
outline (:mod:`vision.second_outline`); straight lines that are not an object's sides (a printed box, a
striped cloth) leave the card read. The check's own limits are pinned where a scene turns on them: Canny
20/60 (a faint outline), square corners (a slanted parallelogram), the steps of light (printed stripes) and
the scan window (an object outside it)."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from test_vision_detect import H, W, table_with_card
from vision_support import profile

import vision.second_outline as second_outline_module
from controller.cards import parse_card
from vision.recognise import recognise
from vision.second_outline import second_outline
from vision.synth import render_back
from vision.window import ScanWindow, bounds

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


def test_a_back_whose_border_joins_a_pale_wall_is_a_second_object() -> None:
    """A face-down back beside the card on a dark table (both turned a quarter), a pale wall running from
    the back's top side to the frame's top edge (a sweep's scene, bench/vision_side_by_side.py's family):
    the back's white border joins the wall, and its fine lattice is all edges, so its outline bounds a blob
    of edges more than a region of paper. Before, the card was read."""
    frame = table_with_card("QD", [(37.4, 410.8), (22.0, 198.6), (318.4, 177.0), (333.9, 389.3)])
    frame[frame[:, :, 0] == 40] = (30, 30, 34)  # a dark table, where the felt was
    back = render_back(random.Random(7))
    quad = np.array([(615.6, 113.3), (630.8, 321.9), (339.4, 343.2), (324.2, 134.5)], np.float32)
    src = np.array([(0, 0), (back.shape[1] - 1, 0), (back.shape[1] - 1, back.shape[0] - 1),
                    (0, back.shape[0] - 1)], np.float32)
    warp = cv2.getPerspectiveTransform(src, quad)
    seen = cv2.warpPerspective(np.full(back.shape[:2], 255, np.uint8), warp, (W, frame.shape[0])) > 127
    wall = np.array([(324, 134), (615, 113), (615, 0), (324, 0)], np.int32)
    cv2.fillConvexPoly(frame, wall, (183, 176, 192))
    frame[seen] = (cv2.warpPerspective(back, warp, (W, frame.shape[0]))[seen] * 0.9).astype(np.uint8)
    frame = cv2.GaussianBlur(frame, (0, 0), 0.8)
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


def test_an_object_whose_face_is_all_edges_is_found_by_its_blob_of_edges() -> None:
    """At the working size: a card and, beside it on a dark table, an object whose face is fine diagonal
    stripes (a back's lattice seen small): no region of paper lies inside its outline, which bounds a blob of
    edges, and that blob's outline has the card's size and shape."""
    small = np.full((180, 240, 3), 30, np.uint8)
    card = np.array([(40, 50), (100, 50), (100, 134), (40, 134)], np.float32)
    cv2.fillConvexPoly(small, card.astype(np.int32), (235, 235, 235))
    lattice = (np.indices((84, 60)).sum(axis=0) // 3 % 2 * 200 + 30).astype(np.uint8)
    small[50:134, 110:170] = lattice[..., None]
    assert second_outline(small, card, bounds(None, (240, 180)))
    small[50:134, 110:170] = 30  # the object gone: only the card's own outline
    assert not second_outline(small, card, bounds(None, (240, 180)))


def test_an_object_whose_blob_of_edges_joins_many_long_lines_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The object of all edges above with five thin pale lines joining its far side to the frame's edge (a
    wall's seams, a stripe of cloth): each line's two sides are straight runs longer than the object's top
    and bottom, and the ten of them crowded those out of the ten longest the detector keeps (a drawn sweep's
    back on felt, walls touching it on three sides, read as one card). At
    :data:`vision.second_outline.MOST_RUNS` (14) the object is found; at 10 it was not."""
    small = np.full((180, 240, 3), 30, np.uint8)
    card = np.array([(40, 50), (100, 50), (100, 134), (40, 134)], np.float32)
    cv2.fillConvexPoly(small, card.astype(np.int32), (235, 235, 235))
    lattice = (np.indices((84, 60)).sum(axis=0) // 3 % 2 * 200 + 30).astype(np.uint8)
    small[50:134, 112:172] = lattice[..., None]
    for y in (58, 75, 92, 109, 126):
        small[y, 172:] = 200
    assert second_outline(small, card, bounds(None, (240, 180)))
    monkeypatch.setattr(second_outline_module, "MOST_RUNS", 10)
    assert not second_outline(small, card, bounds(None, (240, 180)))


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


def test_white_paper_against_a_pale_tinted_wall_is_a_second_object() -> None:
    """A white object beside the card, its top and far side against a pale wall of a slight colour that
    runs to the frame's top and right edges: in light the wall is within a few tens of levels of the paper
    (its sides no strong edge), in tint it is far from it, so the object's outline shows there."""
    frame = table_with_card("9C", CARD)
    x0, y0, x1, y1 = BESIDE
    frame[:y0, x0 - 20:] = (205, 230, 245)  # the wall, over the object to the frame's top edge
    frame[:y1 - 60, x1:] = (205, 230, 245)  # and beside it to the frame's right edge
    frame[y0:y1, x0:x1] = 248
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


#: At the working size's half (240 x 180): the card read, upright, and where an object beside it lies.
HALF = (240, 180)
HALF_CARD = np.array([(40, 50), (100, 50), (100, 134), (40, 134)], np.float32)


def half_frame(table: tuple[int, int, int]) -> np.ndarray:
    """The half-size frame: ``table`` with the card read on it."""
    small = np.full((HALF[1], HALF[0], 3), table, np.uint8)
    cv2.fillConvexPoly(small, HALF_CARD.astype(np.int32), (235, 235, 235))
    return small


def test_a_faint_outline_is_found_at_the_checks_own_canny_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object 30 levels brighter than a grey table, softly focused: its outline is found at Canny 20/60,
    and lost at the detector's 30/90 (the thresholds are what finds it)."""
    small = half_frame((110, 110, 110))
    small[50:134, 110:170] = 140
    small = cv2.GaussianBlur(small, (0, 0), 1.0)
    assert second_outline(small, HALF_CARD, bounds(None, HALF))
    monkeypatch.setattr(second_outline_module, "EDGE_LOW", 30)
    monkeypatch.setattr(second_outline_module, "EDGE_HIGH", 90)
    assert not second_outline(small, HALF_CARD, bounds(None, HALF))


def test_a_slanted_parallelogram_is_no_card_shaped_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """The felt between two cards lying at an angle to each other is a slanted parallelogram of about a
    card's size (a real frame of martinabeleda's): its corners are 20 degrees off square, under
    :data:`vision.second_outline.SQUARE`; let 40 degrees pass and it would be an object."""
    small = half_frame((30, 30, 30))
    dx = 84 * np.tan(np.radians(20))
    slanted = np.array([(115, 50), (175, 50), (175 + dx, 134), (115 + dx, 134)], np.float32)
    cv2.fillConvexPoly(small, np.round(slanted).astype(np.int32), (200, 200, 200))
    assert not second_outline(small, HALF_CARD, bounds(None, HALF))
    monkeypatch.setattr(second_outline_module, "SQUARE", 40.0)
    assert second_outline(small, HALF_CARD, bounds(None, HALF))


def test_printed_stripes_a_card_apart_make_a_rectangle_that_the_steps_refuse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stripes on the felt a card's width apart, crossed by one a card's length above the card's foot:
    three sides of a card-sized rectangle, each a line with the felt on both sides. Only the steps of light
    refuse it (with no step asked, it is an object)."""
    small = np.full((HALF[1], HALF[0], 3), (40, 90, 30), np.uint8)
    for x in (110, 170, 230):
        small[:, x:x + 2] = (150, 170, 140)
    small[30:32, 110:] = (150, 170, 140)
    cv2.fillConvexPoly(small, HALF_CARD.astype(np.int32), (235, 235, 235))
    small = cv2.GaussianBlur(small, (0, 0), 0.7)
    assert not second_outline(small, HALF_CARD, bounds(None, HALF))
    monkeypatch.setattr(second_outline_module, "STEP", 0)
    assert second_outline(small, HALF_CARD, bounds(None, HALF))


def window_box(x0: float, y0: float, x1: float, y1: float) -> ScanWindow:
    """A scan window, the frame's box from (x0, y0) to (x1, y1) in pixels."""
    return ScanWindow(corners=((x0 / W, y0 / H), (x1 / W, y0 / H), (x1 / W, y1 / H), (x0 / W, y1 / H)))


def test_an_object_outside_the_scan_window_is_no_second_object() -> None:
    """The pale object of the first test, with the scan window drawn round the card only: what lies outside
    the window is not looked at, so the card is read; the window widened over the object, it is unknown."""
    frame = table_with_card("9C", CARD)
    x0, y0, x1, y1 = BESIDE
    frame[y0:y1, x0:x1] = 236
    frame[60:y1 - 80, x1:] = 236
    cv2.circle(frame, ((x0 + x1) // 2, (y0 + y1) // 2), 45, (30, 30, 30), -1)
    assert recognise(frame, profile(), window=window_box(100, 50, 323, 400)).card is parse_card("9C")
    reading = recognise(frame, profile(), window=window_box(100, 50, 560, 400))
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


def test_a_dim_object_a_shade_darker_than_a_tinted_wall_is_a_second_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A neutral grey object on a wall of a slight colour, 13 levels paler than it in its palest channel
    (6 in grey; the wall's tint gives its outline), its top against the felt: its sides on the wall are steps
    of 13, found at :data:`vision.second_outline.STEP` (8) and read past at the 15 it was. After a drawn
    sweep's scene whose wall differed by 13 and 14 grey levels, made paler in one channel only: judged in
    colour, that scene's wall differs by 26 and would not pin the step."""
    card = np.array([(40, 60), (100, 60), (100, 144), (40, 144)], np.float32)
    small = np.full((HALF[1], HALF[0], 3), (159, 153, 146), np.uint8)
    small[:60] = (40, 90, 30)
    cv2.fillConvexPoly(small, card.astype(np.int32), (235, 235, 235))
    small[60:144, 110:170] = 146
    small = cv2.GaussianBlur(small, (0, 0), 0.8)
    assert second_outline(small, card, bounds(None, HALF))
    monkeypatch.setattr(second_outline_module, "STEP", 15)
    assert not second_outline(small, card, bounds(None, HALF))


def test_a_back_in_shadow_as_grey_as_the_felt_is_a_second_object() -> None:
    """A face-down back beside the card on the felt, at half the card's light: its dim border is darker
    than the card's paper (the back look's threshold takes it for table) and too thin to be a card's grey
    paper, and its field and border together are within 7 grey levels of the felt, so the sides of its
    outline were no steps of light and the card was read (a drawn grid's scene, 69 of 144 frames read).
    In colour the back's red or blue field is far from the green felt: each side is a step."""
    frame = table_with_card("9C", CARD)
    back = render_back(random.Random(7))
    x0, y0, x1, y1 = BESIDE
    frame[y0:y1, x0:x1] = (cv2.resize(back, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA) * 0.5).astype(
        np.uint8)
    reading = recognise(frame, profile())
    assert reading.status == "unknown" and "second object's outline" in reading.reason, reading


def test_a_side_is_a_step_in_colour_when_its_grey_is_the_same() -> None:
    """At the working size's half: an object of the felt's grey but another colour (a red field on green
    felt, grey 69 against 66) beside the card: its sides are steps in colour (over 100 levels in red), not in
    grey (3 levels, under :data:`vision.second_outline.STEP`), and it is an object."""
    small = half_frame((40, 90, 30))
    small[50:134, 110:170] = (30, 30, 160)
    blurred = cv2.GaussianBlur(small, (5, 5), 0)
    sides = np.array([(110, 134), (110, 50), (169, 50), (169, 134)], np.float32)  # its left, top and right
    in_grey = second_outline_module._steps(sides, cv2.cvtColor(blurred, cv2.COLOR_BGR2GRAY))
    in_colour = second_outline_module._steps(sides, blurred)
    assert max(in_grey[:3]) < second_outline_module.STEP <= min(in_colour[:3]), (in_grey, in_colour)
    assert second_outline(small, HALF_CARD, bounds(None, HALF))
