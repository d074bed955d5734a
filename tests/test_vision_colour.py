"""The suit's colour judged against the card's own paper: a coloured light neither turns a red suit black
nor stops enrolment, and coloured ink is still no suit of the deck (vision/colour.py)."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest
from vision_support import profile

from controller.cards import DECK, parse_card
from vision.colour import ink_colour, out_of_line, thresholds
from vision.enroll import enrol
from vision.recognise import recognise, recognise_face
from vision.synth import DESIGNS, FLOOR, STUDIO, render_face, scene

#: Gains on blue, green and red: a phone's bluish light and a warm lamp, strong enough that the ink's
#: colour alone ((max - min) / max) called black clubs red or "neither", and a red diamond black.
Light = tuple[float, float, float]
BLUISH: Light = (1.0, 0.9, 0.45)
WARM: Light = (0.5, 0.8, 1.0)


@pytest.mark.parametrize("light", [BLUISH, WARM], ids=["bluish", "warm"])
def test_a_coloured_light_keeps_red_suits_red_and_black_suits_black(light: Light) -> None:
    """A deck enrolled under white light reads red and black cards under a strong cast (the paper takes
    the cast too, so the ink's colour against it does not change)."""
    deck = profile()
    cond = dataclasses.replace(FLOOR, light=light, glare=0.0)
    got = {}
    for i, code in enumerate(("7D", "2H", "QH", "AD", "5C", "9S", "KS", "TC")):
        card = parse_card(code)
        reading = recognise(scene(card, DESIGNS["classic"], 900 + i, cond=cond), deck)
        got[code] = reading.card.code if reading.card else reading.reason
    assert got == {code: code for code in got}


def test_a_deck_photographed_under_a_bluish_light_is_enrolled_and_read_under_white_light() -> None:
    """Enrolment under a phone's bluish light: black ink came out bluer than the red ink was red, and the
    deck was refused ("not told apart by colour"); against the paper the two are far apart."""
    cond = dataclasses.replace(STUDIO, light=(1.0, 0.9, 0.5))
    shots = [(scene(card, DESIGNS["classic"], 7000 + i, (400, 300), cond), card, card.code)
             for i, card in enumerate(DECK)]
    result = enrol(shots, "bluish")
    assert result.ok and result.profile is not None, result.problems
    colour = result.profile.spec.colour
    assert 0 < colour.black_max < colour.red_min < 0.5
    for i, code in enumerate(("3D", "JC", "8H", "4S")):
        frame = scene(parse_card(code), DESIGNS["classic"], 950 + i, (400, 300), STUDIO)
        assert recognise(frame, result.profile).card is parse_card(code)


def test_blue_or_green_ink_is_no_suit_of_the_deck() -> None:
    """A card printed in blue (a back's colour) or green: against the paper its ink is far from grey and
    not red-led, so neither red nor black, under white light and under a warm one."""
    deck = profile()
    face = render_face(parse_card("7C"), DESIGNS["classic"])
    ink = face.min(axis=2) < 120
    for colour in ((170, 60, 20), (40, 140, 30)):
        printed = face.copy()
        printed[ink] = colour
        for gains in ((1.0, 1.0, 1.0), WARM):
            lit = np.clip(printed * np.array(gains), 0, 255).astype(np.uint8)
            reading = recognise_face(cv2.resize(lit, deck.spec.face, interpolation=cv2.INTER_AREA), deck)
            assert reading.status == "unknown" and "neither red nor black" in reading.reason, (colour, gains)


def test_ink_against_its_paper_cancels_the_light() -> None:
    """Black ink under a warm light: dark brown alone, grey against the paper; red ink stays red-led."""
    crop = np.full((40, 40, 3), (235, 240, 245), np.uint8)
    ink = np.zeros((40, 40), np.uint8)
    ink[10:30, 10:30] = 255
    for ink_bgr, spread, red in (((25, 25, 25), (0.0, 0.05), None), ((40, 35, 200), (0.6, 0.8), True)):
        crop[ink > 0] = ink_bgr
        lit = np.clip(crop * np.array(WARM), 0, 255).astype(np.uint8)
        colour = ink_colour(lit, ink, 255 - ink)
        assert spread[0] <= colour.spread <= spread[1]
        assert red is None or colour.red is red


def test_enrolment_refuses_only_when_red_and_black_truly_overlap() -> None:
    """A narrow gap still gives thresholds (black's side nearer, red fading more under blur and glare);
    only an overlap is refused."""
    learned = thresholds([0.30, 0.35, 0.6], [0.02, 0.10, 0.26])
    assert isinstance(learned, tuple)
    red_min, black_max = learned
    assert 0.26 < black_max < red_min < 0.30
    assert "not told apart by colour" in str(thresholds([0.25, 0.6], [0.05, 0.3]))


def _photos(red_lows: np.ndarray, black_highs: np.ndarray) -> list[tuple[bool, list[float]]]:
    """``out_of_line``'s input: each photograph's colour and its two indices' spreads (both the same)."""
    return [(True, [float(v)] * 2) for v in red_lows] + [(False, [float(v)] * 2) for v in black_highs]


def test_a_light_that_takes_the_colour_from_red_ink_is_not_peeled_into_a_pass() -> None:
    """Red ink measuring 0.13 to 0.21 against the paper and black 0.05 to 0.135 (a colourless light: no
    photograph is odd, the colours are). Before: one photograph of each colour peeled, leaving red_min
    0.1321 over black_max 0.1319, and the deck enrolled with a colour check that checks nothing. The
    light's refusal stands."""
    photos = _photos(np.linspace(0.13, 0.21, 26), np.linspace(0.05, 0.135, 26))
    assert isinstance(thresholds(*[[s for red, ss in photos if red is want for s in ss]
                                   for want in (True, False)]), str)
    assert out_of_line(photos) == {}


def test_one_red_photograph_with_black_ink_is_still_peeled() -> None:
    """Its ink 0.01 against its colour's 0.6 to 0.8: far outside the red photographs' own scatter."""
    photos = _photos(np.r_[np.linspace(0.6, 0.8, 25), 0.01], np.linspace(0.02, 0.08, 26))
    assert list(out_of_line(photos)) == [25]
