"""A second card shown by its large pip alone (vision/second_pip.py): a dim card beside the card read, as
grey as the table, shows no region, no side and no readable index, only its pip on plain paper.

The scenes are drawn on a grey table (the drawn sweep of two objects, bench/vision_two_objects.py, read
26 such scenes as one card): the 6S upright on the right, a card-sized sheet of the table's own grey on
the left with a large dark print in its middle."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from test_vision_detect import table_with_card
from test_vision_one_card import paste
from vision_support import profile

from controller.cards import parse_card
from vision.by_index import halved, working
from vision.recognise import recognise
from vision.second_pip import glyph_share, large_pip

H, W = 480, 640
CARD = [(330.0, 90.0), (500.0, 90.0), (500.0, 327.0), (330.0, 327.0)]  # the 6S, 170 px wide
OTHER = [(110.0, 100.0), (280.0, 100.0), (280.0, 337.0), (110.0, 337.0)]  # the second card's place
TABLE = 142
LIGHT_FELT = (60, 130, 50)  # its least channel 50: under LEAST_PAPER, but 45 levels over a black chip
PIP_AT, PIP_RADIUS = (195, 218), 45  # a disc of about half the card's width, in the sheet's middle


Colour = tuple[int, int, int]


def scene(table: Colour | np.ndarray = (TABLE,) * 3, pip: Colour | None = (40,) * 3,
          sheet: Colour | None = (TABLE,) * 3) -> np.ndarray:
    """The 6S on ``table`` (a colour, or a whole frame to draw on), with a sheet of ``sheet``'s colour on
    the left (None: none) holding a disc of ``pip``'s colour (None: none)."""
    frame = table.copy() if isinstance(table, np.ndarray) else np.full((H, W, 3), table, np.uint8)
    if sheet is not None:
        cv2.fillConvexPoly(frame, np.array(OTHER, np.int32), sheet)
    if pip is not None:
        cv2.circle(frame, PIP_AT, PIP_RADIUS, pip, -1, cv2.LINE_AA)
    paste(frame, "6S", CARD)
    return frame


def look(frame: np.ndarray) -> bool:
    """:func:`large_pip` as the reader asks it: on the working frame halved, with the 6S as the card read."""
    small, shrink = working(frame)
    quad = np.array(CARD, np.float32) * np.float32(shrink)
    half, at_half, win = halved(small, quad, None)
    return large_pip(half, at_half, win, glyph_share(profile()))


def test_a_large_pip_on_a_sheet_as_grey_as_the_table_leaves_the_window_unknown() -> None:
    reading = recognise(scene(), profile())
    assert reading.status == "unknown", reading
    assert reading.reason == "a second card's large pip on its paper in the window (one card at a time)"


def test_without_its_pip_the_same_sheet_is_not_seen_and_the_card_is_read() -> None:
    """What the look finds is the pip: the sheet alone, the table's own grey, shows nothing."""
    assert not look(scene(pip=None))
    assert recognise(scene(pip=None), profile()).card is parse_card("6S")


@pytest.mark.parametrize("colour", [(40, 40, 40), (30, 30, 170)], ids=["black", "red"])
@pytest.mark.parametrize("edge", [0, 160], ids=["even light", "a vignette"])
def test_a_pip_black_or_red_under_even_light_or_a_vignette_is_found(colour: Colour,
                                                                     edge: int) -> None:
    """A vignette's smooth gradient across the sheet is still plain paper (the plane fitted to the
    ring's levels takes it out)."""
    ramp = np.clip(TABLE + edge * np.linspace(1.0, 0.0, W)[None, :, None] ** 2, 0, 255)
    table = np.broadcast_to(ramp, (H, W, 3)).astype(np.uint8).copy()
    assert look(scene(table=table, pip=colour, sheet=None))


def test_a_black_chip_on_green_felt_is_no_pip() -> None:
    """Felt is too dark to be paper (its least channel under LEAST_PAPER), even a light green one against
    a black chip: a chip beside the card is not taken for a second card's pip."""
    frame = scene(table=LIGHT_FELT, pip=(5, 5, 5), sheet=None)
    assert not look(frame)
    assert recognise(frame, profile()).card is parse_card("6S")


def test_a_dark_print_amid_clutter_is_no_pip() -> None:
    """Round the print, a busy ground (a photograph, a keyboard) is not a card's plain paper."""
    clutter = np.random.default_rng(7).integers(90, 200, (H // 8, W // 8, 3), dtype=np.uint8)
    table = cv2.resize(clutter, (W, H), interpolation=cv2.INTER_NEAREST)
    assert not look(scene(table=table, sheet=None))


def test_a_print_smaller_than_a_pip_is_not_one() -> None:
    """An index's glyph, or a small mark, is under LEAST_PIP of the card's short side."""
    frame = np.full((H, W, 3), TABLE, np.uint8)
    cv2.circle(frame, PIP_AT, 12, (40, 40, 40), -1, cv2.LINE_AA)
    paste(frame, "6S", CARD)
    assert not look(frame)


@pytest.mark.parametrize("code", ["AS", "AH", "KC"])
def test_a_lone_card_with_a_large_pip_of_its_own_is_read(code: str) -> None:
    """The card read's own pips lie inside its corners: never a second card's."""
    frame = table_with_card(code, CARD)
    assert not look(frame)
    assert recognise(frame, profile()).card is parse_card(code)


@pytest.mark.parametrize(("right", "found"), [(W, False), (W - 20, True)],
                         ids=["cut by the frame's edge", "wholly inside"])
def test_a_neighbours_pip_is_left_alone_when_its_paper_runs_past_the_window(right: int, found: bool) -> None:
    """A neighbour on felt, its pale paper reaching past the frame's right edge, its large pip inside: a
    neighbour the window cuts, left alone as the detector leaves it; the same sheet ending inside the
    frame is a second card."""
    frame = np.full((H, W, 3), (60, 120, 50), np.uint8)  # a light felt: paper stands out from it
    paste(frame, "6S", CARD)
    cv2.rectangle(frame, (515, 100), (right, 380), (200, 200, 200), -1)
    cv2.circle(frame, (570, 240), 35, (40, 40, 40), -1, cv2.LINE_AA)
    assert look(frame) is found


@pytest.mark.parametrize("what", ["pen line", "blue chip", "fingertip"])
def test_a_pen_line_a_blue_chip_or_a_fingertip_beside_the_card_is_no_pip(what: str) -> None:
    """A stroke is not thick, a blue chip and skin are neither black nor red ink (a review, 2026-12-05: each
    refused a lone card on a pale table)."""
    frame = np.full((H, W, 3), 200, np.uint8)
    if what == "pen line":
        cv2.line(frame, (150, 160), (150, 280), (20, 20, 20), 3)
    else:
        cv2.circle(frame, PIP_AT, PIP_RADIUS, (170, 80, 40) if what == "blue chip" else (60, 90, 140), -1)
    paste(frame, "6S", CARD)
    assert not look(frame)
    assert recognise(frame, profile()).card is parse_card("6S")


@pytest.mark.parametrize("quality", [None, 80])
def test_the_card_beside_a_neighbour_cut_by_the_frame_is_read(quality: int | None) -> None:
    """The whole reader on the neighbour scene above, as a camera's JPEG too (a review, 2026-12-05: the
    flood started on the print's blurred edge and never reached the rim, so the lone 6S was refused)."""
    frame = np.full((H, W, 3), (60, 120, 50), np.uint8)
    paste(frame, "6S", CARD)
    cv2.rectangle(frame, (515, 100), (W, 380), (200, 200, 200), -1)
    cv2.circle(frame, (570, 240), 35, (40, 40, 40), -1, cv2.LINE_AA)
    if quality is not None:
        encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
        frame = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    assert recognise(frame, profile()).card is parse_card("6S")
