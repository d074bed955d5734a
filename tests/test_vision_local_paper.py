"""A card whose far corner lies in a shadow (a hand's, a lamp's at one side) on dark felt: one brightness
level for the frame loses the shaded margin between the index and the border, the outline gets a fifth
corner and was refused; the paper found against the paper near it (vision.local_paper) gives the card.
The shaded index is then read against its own paper (vision.warp). Two overlapping cards in the same
shadow, whose union passes for one card's outline, stay unread."""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np
import pytest
from vision_support import card_at, corners_off, profile

from controller.cards import parse_card
from vision.detect import DetectParams, find_card
from vision.enrol_photo import SHADE_EDGE, photo_face
from vision.levels import shrink
from vision.local_paper import MIN_CORNER, corner_paper, shaded_side
from vision.recognise import recognise
from vision.synth import DESIGNS, render_face

W, H = 640, 480


def in_shadow(cards: list[tuple[str, list[tuple[float, float]]]], at: tuple[float, float], depth: float,
              felt: float, radius: float, under: float = 1.0,
              grey: tuple[list[tuple[float, float]], float] | None = None) -> np.ndarray:
    """The classic ``cards`` (the last on top) on grey felt ``felt`` levels bright, a soft round shadow of
    ``radius`` pixels centred ``at`` darkening everything to ``depth`` of its light; blurred as a lens.
    Every card but the top one is lit at ``under`` of the light (in the top card's shade). ``grey``: a
    neutral patch (its corners, its level) on the felt under the cards, a grey sheet or paper."""
    frame = np.full((H, W, 3), felt, np.float32)
    if grey is not None:
        cv2.fillConvexPoly(frame, np.rint(grey[0]).astype(np.int32), (grey[1],) * 3, lineType=cv2.LINE_AA)
    for k, (code, quad) in enumerate(cards):
        light = 0.8 * (1.0 if k == len(cards) - 1 else under)
        face = render_face(parse_card(code), DESIGNS["classic"]).astype(np.float32) * light
        fh, fw = face.shape[:2]
        src = np.array([(0, 0), (fw - 1, 0), (fw - 1, fh - 1), (0, fh - 1)], np.float32)
        m = cv2.getPerspectiveTransform(src, np.array(quad, np.float32))
        on = cv2.warpPerspective(np.full((fh, fw), 255, np.uint8), m, (W, H)) > 127
        frame[on] = cv2.warpPerspective(face, m, (W, H))[on]
    shade = np.zeros((H, W), np.float32)
    cv2.circle(shade, (round(at[0]), round(at[1])), round(radius), 1.0, -1)
    frame *= (1 - (1 - depth) * cv2.GaussianBlur(shade, (0, 0), radius / 4))[..., None]
    return np.clip(cv2.GaussianBlur(frame, (0, 0), 1.2), 0, 255).astype(np.uint8)


#: The shadow's centre is moved about the card's corner by these (pixels): no result hangs on one pixel.
JITTER: Final = [(dx, dy) for dx in (-3, 0, 3) for dy in (-3, 0, 3)]


@pytest.mark.parametrize(("turn", "radius", "depth"),
                         [(-0.3, 90.0, 0.55), (0.2, 75.0, 0.55), (0.6, 90.0, 0.5), (1.2, 75.0, 0.5)])
def test_a_card_with_a_corner_in_shadow_is_found_and_read(turn: float, radius: float, depth: float) -> None:
    """Before 2026-12-04: "the outline has 5 corners, not a single card's 4" (as kentdoan's Cards_7-QS).
    The shaded corner's index still reads, so the card is read on both indices."""
    quad = card_at(turn)
    for dx, dy in JITTER:
        frame = in_shadow([("KS", quad)], (quad[2][0] + dx, quad[2][1] + dy), depth, 40.0, radius)
        detection = find_card(frame, (300, 420), warp=False)
        assert detection.status == "card" and detection.corners is not None, (dx, dy, detection.reason)
        assert corners_off(detection.corners, turn) < 6, (dx, dy)
        assert recognise(frame, profile()).card is parse_card("KS"), (dx, dy)


@pytest.mark.parametrize(("turn", "code"), [(0.2, "KS"), (1.2, "7H"), (-0.3, "7H"), (-0.3, "KS")])
def test_an_index_in_deeper_shadow_is_read_against_its_own_paper(turn: float, code: str) -> None:
    """At 0.45 of the light the shaded index's paper is darker than the face's: before 2026-12-04 its
    crop's cut-off corner and edge band were painted in the face's paper colour, brighter than all else
    in the crop, Otsu's level fell between that paint and the rest, and the index was refused ("no rank
    and suit in the index"; 0 to 2 of these 9 frames read). The paint is now the crop's own paper."""
    quad = card_at(turn)
    for dx, dy in JITTER:
        frame = in_shadow([(code, quad)], (quad[2][0] + dx, quad[2][1] + dy), 0.45, 40.0, 90.0)
        detection = find_card(frame, (300, 420), warp=False)
        assert detection.status == "card" and detection.corners is not None, (dx, dy, detection.reason)
        assert corners_off(detection.corners, turn) < 6, (dx, dy)
        assert recognise(frame, profile()).card is parse_card(code), (dx, dy)


def across_shadow(code: str, turn: float, angle: float, off: float, depth: float,
                  beside: tuple[tuple[str, list[tuple[float, float]]], ...] = ()) -> np.ndarray:
    """The classic card ``code`` at ``turn`` on felt 40 levels bright, beyond a straight soft shadow edge
    (a sleeve's, the shoe's lip) whose normal points at ``angle`` (radians) and which lies ``off``
    pixels past the card's middle, darkening that side to ``depth`` of the light; ``beside``: other
    cards (code, corners) under it."""
    lit = in_shadow([*beside, (code, card_at(turn))], (0.0, 0.0), 1.0, 40.0, 1.0)  # 1.0: no round shadow
    frame = lit.astype(np.float32)
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float32)
    beyond = ((xs - 300) * math.cos(angle) + (ys - 220) * math.sin(angle) > off).astype(np.float32)
    frame *= (1 - (1 - depth) * cv2.GaussianBlur(beyond, (0, 0), 6))[..., None]
    return np.clip(frame, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("turn", [0.2, -0.3])
@pytest.mark.parametrize("angle", [math.pi / 2, 3 * math.pi / 2])
def test_a_card_across_a_shadow_edge_is_found_and_read(turn: float, angle: float) -> None:
    """A shadow's straight edge across the card's length, a fifth of its width past the middle: the
    first look keeps the lit part (about 0.62 to 0.8 of the card) and refuses its shape; the look by
    local paper finds the whole card. Until 2026-12-04 the refused region's hull had to span 0.85 of
    the card found (vision.local_paper.MIN_HELD), and none of these frames was read."""
    for off in (20.0, 30.0, 40.0):
        frame = across_shadow("KS", turn, angle, off, 0.5)
        detection = find_card(frame, (300, 420), warp=False)
        assert detection.status == "card" and detection.corners is not None, (off, detection.reason)
        assert corners_off(detection.corners, turn) < 6, off
        assert recognise(frame, profile()).card is parse_card("KS"), off
        for other in ("7H", "TC"):  # read seldom at this depth (their shaded index), never as another card
            assert recognise(across_shadow(other, turn, angle, off, 0.5), profile()).card in (
                None, parse_card(other)), (other, off)


@pytest.mark.parametrize("code", ["7H", "TC"])
@pytest.mark.parametrize("turn", [0.2, 1.2])
@pytest.mark.parametrize("side", [0, 1])
def test_a_card_beyond_a_shadow_edge_parallel_to_its_end_is_found_and_read(code: str, turn: float,
                                                                           side: int) -> None:
    """The shadow's edge parallel to the card's short side, 40 or 60 px past its middle: the first look
    keeps the lit part, a clean rectangle too short for a card, refused for its proportions; before
    2026-12-04 the look by local paper followed only an odd outline, and these frames were unknown."""
    for off in (40.0, 60.0):
        frame = across_shadow(code, turn, turn + math.pi / 2 + side * math.pi, off, 0.5)
        detection = find_card(frame, (300, 420), warp=False)
        assert detection.status == "card" and detection.corners is not None, (off, detection.reason)
        assert corners_off(detection.corners, turn) < 6, off
        assert recognise(frame, profile()).card is parse_card(code), off


@pytest.mark.parametrize(("code", "turn", "angle"), [
    ("7H", 0.2, math.pi / 2), ("7H", 0.2, 3 * math.pi / 2), ("7H", -0.3, math.pi / 4), ("7H", 1.2, 0.0),
    ("TC", 0.2, math.pi / 2), ("TC", -0.3, math.pi / 2),
])
def test_a_lit_part_taken_for_a_card_lying_across_is_grown_to_the_whole_card(code: str, turn: float,
                                                                              angle: float) -> None:
    """A shadow's edge 20 or 30 px past the card's middle, across its length: the lit part is a clean
    outline with a card's proportions turned a quarter, so the first look takes it for a card lying across
    and is refused by nothing; its index boxes fall on blank paper ("blank index"). Before 2026-12-04
    none of these frames was read; the side with shaded paper beyond it now sends the look by local
    paper, which finds the whole card (the detection's ``whole``, asked by the reader once the lit part
    has not read)."""
    for off in (20.0, 30.0):
        frame = across_shadow(code, turn, angle, off, 0.5)
        assert_lit_part_grown(frame, turn, off)
        assert recognise(frame, profile()).card is parse_card(code), off


def assert_lit_part_grown(frame: np.ndarray, turn: float, off: float) -> None:
    """The detector finds the card drawn at ``turn`` only as its lit part, and offers the whole card."""
    detection = find_card(frame, (300, 420), warp=False)
    assert detection.corners is not None and corners_off(detection.corners, turn) > 20, off  # lit part
    whole = detection.whole_card()
    assert whole is not None and corners_off(whole, turn) < 6, off


def test_a_card_grown_over_its_shade_is_held_to_one_card_at_a_time() -> None:
    """The 7H's lit part does not read and the whole card is read in its place; a 5D at the frame's edge
    beside it shows an index, so the frame is refused as the lit part's would be: the one-card rule
    (vision.one_card) looks about the grown card's corners."""
    for off in (20.0, 30.0):
        frame = across_shadow("7H", 0.2, math.pi / 2, off, 0.5, beside=(("5D", card_at(0.0, 255.0, 0.0)),))
        assert_lit_part_grown(frame, 0.2, off)
        reading = recognise(frame, profile())
        assert reading.card is None and reading.reason.startswith("another index in the window reads"), off


@pytest.mark.parametrize("bgra", [False, True])
def test_an_enrolment_photo_of_a_card_across_a_shadow_edge_is_refused(bgra: bool) -> None:
    """Enrolment has no deck yet to read the lit part's indices with, so it cannot tell the lit part from
    the whole card as the live reader does: the photograph is refused, saying why (a BGRA photograph,
    as a capture gives, the same)."""
    for off in (20.0, 30.0):
        frame = across_shadow("7H", 0.2, math.pi / 2, off, 0.5)
        found = photo_face(cv2.cvtColor(frame, cv2.COLOR_BGR2BGRA) if bgra else frame)
        assert found.face is None and found.reason == SHADE_EDGE, off


@pytest.mark.parametrize(("code", "turn", "angle"), [
    ("KS", 0.2, 5 * math.pi / 6), ("KS", -0.3, math.pi / 6), ("QD", 0.2, 5 * math.pi / 6),
    ("QD", -0.3, 2 * math.pi / 3),
])
def test_a_card_across_a_shadow_edge_is_found_with_a_wider_block(code: str, turn: float,
                                                                 angle: float) -> None:
    """A shadow's edge slanting across the card 40 or 60 px past its middle: the look by local paper with
    a block a fifth of the frame wide straddles the edge, the shaded paper beside it is darker than the
    block's mean and the card found there is notched ("the outline has 5 corners"). Before 2026-12-04
    these frames were refused; the second, wider block (vision.local_paper.BLOCKS) finds the whole card."""
    for off in (40.0, 60.0):
        frame = across_shadow(code, turn, angle, off, 0.5)
        detection = find_card(frame, (300, 420), warp=False)
        assert detection.corners is not None and corners_off(detection.corners, turn) < 6, off
        assert recognise(frame, profile()).card is parse_card(code), off


@pytest.mark.parametrize("turn", [0.2, 1.2, -0.3])
def test_a_card_on_a_pale_grey_cloth_is_not_grown(turn: float) -> None:
    """A neutral cloth at half the paper's brightness looks beside every side like paper in shadow, so
    the look by local paper runs when asked; it finds the same card, no larger (vision.local_paper.GROWN),
    so no whole card is offered, and the card is read."""
    frame = in_shadow([("KS", card_at(turn))], (0.0, 0.0), 1.0, 100.0, 1.0)  # depth 1.0: no round shadow
    detection = find_card(frame, (300, 420), warp=False)
    assert detection.corners is not None and corners_off(detection.corners, turn) < 6
    working, scale = shrink(frame, DetectParams().work_width)  # the detector's own working frame
    assert shaded_side(detection.corners * scale, working)  # the look by local paper runs when asked
    assert detection.whole is not None and detection.whole() is None
    assert recognise(frame, profile()).card is parse_card("KS")


def test_the_strip_test_sees_the_same_colours_in_a_bgra_frame() -> None:
    """Paper on a green felt at about half its light: as bright as paper in shadow, but of another colour,
    so no side passes; the same in the BGRA frame an enrolment capture passes (its alpha was taken for a
    fourth colour, and the green felt passed for shaded paper)."""
    frame = np.full((H // 2, W // 2, 3), (60, 110, 60), np.uint8)
    quad = np.array([(110, 50), (200, 50), (200, 175), (110, 175)], np.float32)
    cv2.fillConvexPoly(frame, quad.astype(np.int32), (200, 200, 200))
    assert not shaded_side(quad, frame)
    assert not shaded_side(quad, cv2.cvtColor(frame, cv2.COLOR_BGR2BGRA))


@pytest.mark.parametrize(("turn", "grown", "level"), [
    (0.2, 1.16, 110.0), (0.0, 1.16, 105.0), (-0.3, 1.16, 110.0), (-0.3, 1.2, 110.0),
])
def test_a_card_on_a_grey_sheet_a_little_larger_is_read(turn: float, grown: float, level: float) -> None:
    """A KS on a neutral sheet of a card's proportions, 1.16 or 1.2 times its size, at about half the
    paper's light: the sheet beyond each side passes for paper in shadow, and the look by local paper
    takes the sheet's outline for the whole card. Asked of every card found (2026-12-04), that look
    replaced the KS by the sheet and the frame was unknown; asked only of a card that does not read, it
    leaves the KS, which reads."""
    sheet = [(300 + (x - 300) * grown, 220 + (y - 220) * grown) for x, y in card_at(turn)]
    frame = in_shadow([("KS", card_at(turn))], (0.0, 0.0), 1.0, 40.0, 1.0, grey=(sheet, level))
    assert recognise(frame, profile()).card is parse_card("KS")


@pytest.mark.parametrize("turn", [0.0, 0.2])
@pytest.mark.parametrize("gap", [120.0, 150.0])
def test_a_card_beside_grey_paper_is_not_grown_over_it(turn: float, gap: float) -> None:
    """A KS with a card-sized piece of neutral paper at about half its light beside it, overlapping it or
    not: every side passes for paper in shadow beyond, and the card grown over the grey was taken in the
    KS's place ("blank index", 2026-12-04). The KS reads, so nothing is grown: the KS is what is read. The
    grey paper is then a second card's, however blank (a plain back at half the light is one), so the
    window is unknown (vision.second_paper, since 2026-12-05), one card at a time."""
    beside = card_at(turn, gap * math.cos(turn), gap * math.sin(turn))
    frame = in_shadow([("KS", card_at(turn))], (0.0, 0.0), 1.0, 40.0, 1.0, grey=(beside, 100.0))
    detection = find_card(frame, (300, 420), warp=False)
    assert detection.corners is not None and corners_off(detection.corners, turn) < 6
    reading = recognise(frame, profile())
    assert reading.card is None and reading.reason.startswith("a second card's paper"), reading


@pytest.mark.parametrize("turn", [0.0, 0.2])
@pytest.mark.parametrize("gap", [120.0, 160.0])
def test_two_cards_side_by_side_one_in_shade_stay_one_card_at_a_time(turn: float, gap: float) -> None:
    """A KS over a 5D beside it, the 5D at half the light: the detection keeps the KS's outline (not the
    pair's, as when the grown card was taken before any read, 2026-12-04), the KS reads, and the 5D's
    index beside it, or its grey paper (vision.second_paper), refuses the frame (one card at a time,
    vision.one_card)."""
    beside = card_at(turn, gap * math.cos(turn), gap * math.sin(turn))
    frame = in_shadow([("5D", beside), ("KS", card_at(turn))], (0.0, 0.0), 1.0, 40.0, 1.0, under=0.5)
    detection = find_card(frame, (300, 420), warp=False)
    assert detection.corners is not None and corners_off(detection.corners, turn) < 6
    reading = recognise(frame, profile())
    assert reading.card is None and reading.reason in BY_ITS_INDEX_OR_ITS_PAPER, reading


#: The two looks that see the shaded 5D beside the KS: its index, or its grey paper.
BY_ITS_INDEX_OR_ITS_PAPER: Final = (
    "another index in the window reads as a card by its rank (one card at a time)",
    "a second card's paper in the window, however dim (one card at a time)",
)


@pytest.mark.parametrize(("code", "depth"), [("TC", 0.35), ("TC", 0.45), ("QD", 0.35), ("QD", 0.45)])
def test_an_index_in_shadow_is_never_read_as_another_card(code: str, depth: float) -> None:
    """A 10 and a court card in shadow read seldom or not at all (the QD at 0.45 on about half its
    frames, the others on none: a shaded club stays ambiguous with the spade), and never as another card
    (before the shadow blanking, a shaded club read as a spade on one index, refused by the other's
    disagreement)."""
    for turn in (0.2, 1.2, -0.3):
        quad = card_at(turn)
        for dx, dy in JITTER:
            frame = in_shadow([(code, quad)], (quad[2][0] + dx, quad[2][1] + dy), depth, 40.0, 90.0)
            assert recognise(frame, profile()).card in (None, parse_card(code)), (turn, dx, dy)


@pytest.mark.parametrize(("turn", "code", "felt", "radius", "under"), [
    (0.2, "TC", 40.0, 60.0, (30.0, 30.0, 0.1)),
    (0.2, "KS", 80.0, 90.0, (-40.0, 0.0, -0.2)),
    (1.2, "TC", 80.0, 90.0, (30.0, 30.0, 0.1)),
    (0.2, "KS", 40.0, 60.0, (30.0, 30.0, 0.1)),
])
def test_two_overlapping_cards_in_shadow_are_no_card(
    turn: float, code: str, felt: float, radius: float, under: tuple[float, float, float],
) -> None:
    """A 5D under the card, offset and turned a little: the two make one region, refused for its shape.
    Found by local paper, the union passes every check of one card's outline but one: table shows at
    two of its corners (without that check, each of these was detected as one card)."""
    dx, dy, dturn = under
    quad = card_at(turn)
    frame = in_shadow([("5D", card_at(turn + dturn, dx, dy)), (code, quad)], quad[2], 0.5, felt, radius)
    assert find_card(frame, (300, 420), warp=False).status == "refused"
    assert recognise(frame, profile()).card is None


def test_corner_paper_sees_table_at_a_corner() -> None:
    """A whole rectangle's corners are all paper; one with a bite out of a corner (another card's corner
    missing from a union) is short there, below the least share."""
    quad = np.array([(10, 10), (100, 10), (100, 140), (10, 140)], np.float32)
    whole = np.array([(10, 10), (100, 10), (100, 140), (10, 140)], np.int32)
    bitten = np.array([(10, 10), (80, 10), (80, 30), (100, 30), (100, 140), (10, 140)], np.int32)
    assert min(corner_paper(quad, whole)) > 0.95
    shares = corner_paper(quad, bitten)
    assert shares[1] < MIN_CORNER and min(shares[0], shares[2], shares[3]) > 0.95


@pytest.mark.parametrize("turn", [0.0, 1.2])
@pytest.mark.parametrize("depth", [1.0, 0.5])
def test_a_card_squarely_on_another_reads_as_the_card_on_top(turn: float, depth: float) -> None:
    """Known and documented (vision.local_paper, "what it does not guard"): a 5D under the KS, offset only
    along the card's length, makes a rectangle near a card's proportions with paper at every corner; the
    first look finds it without a shadow, the look by local paper with one. Only the card on top shows
    both indices, so the card read is the KS, never the 5D; the second card goes unremarked."""
    quad = card_at(turn)
    for off in (10.0, 20.0):
        under = card_at(turn, -off * math.sin(turn), off * math.cos(turn))
        frame = in_shadow([("5D", under), ("KS", quad)], quad[2], depth, 40.0, 90.0)
        assert find_card(frame, (300, 420), warp=False).status == "card", off
        assert recognise(frame, profile()).card is parse_card("KS"), off


@pytest.mark.parametrize("dturn", [0.15, -0.15])
def test_a_card_over_another_turned_a_little_stays_refused(dturn: float) -> None:
    """A 5D under the KS, turned a little, showing slivers beyond its sides and in its shade (0.85 of
    the light): the local paper parts the KS from the slivers (too small to count as an object), but
    the refused region is both cards', which the KS's outline does not hold, so the window stays
    refused (without that check, each of these frames was found as the KS)."""
    quad = card_at(0.2)
    for dx, dy in ((0.0, 0.0), (10.0, 0.0)):
        cards = [("5D", card_at(0.2 + dturn, dx, dy)), ("KS", quad)]
        frame = in_shadow(cards, quad[2], 0.5, 40.0, 90.0, under=0.85)
        assert find_card(frame, (300, 420), warp=False).status == "refused", (dx, dy)
        assert recognise(frame, profile()).card is None, (dx, dy)
