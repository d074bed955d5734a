"""Card recognition on synthetic scan-window frames: right cards, explicit unknowns, never a wrong card."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vision_support import profile

from controller.cards import DECK, parse_card
from vision.dataset import held_out_set
from vision.detect import find_card
from vision.evaluate import evaluate
from vision.recognise import recognise, recognise_face
from vision.synth import DESIGNS, FLOOR, NEGATIVES, Conditions, negative_scene, render_face, scene


@pytest.mark.parametrize("design", ["classic", "serif", "lefty"])
def test_held_out_frames_read_right_or_unknown_never_wrong(design: str) -> None:
    """Floor conditions (rotation, perspective, blur, noise, gradient, glare, JPEG), seeds never enrolled.
    ``lefty`` has its indices in the top-right and bottom-left corners; ``serif``'s 6 and 8 differ by
    a notch of two pixels."""
    report = evaluate(held_out_set(DESIGNS[design], seed=4242, count=104, negatives=25), profile(design))
    assert report["wrong"] == 0, report["wrong_frames"]
    assert report["false_cards"] == 0, report["wrong_frames"]
    assert report["accuracy"] >= 0.99, report["unknown_reasons"]  # bench/ measures the large set
    assert report["card_frames"] == 104 and report["negative_frames"] == 25
    assert sum(row["frames"] for row in report["per_card"].values()) == 104


@pytest.mark.parametrize("kind", NEGATIVES)
def test_no_card_back_joker_two_cards_or_hand_is_ever_a_card(kind: str) -> None:
    deck = profile()
    for seed in range(12):
        reading = recognise(negative_scene(kind, DESIGNS["classic"], 900 + seed), deck)
        assert reading.status in ("empty", "unknown"), (kind, seed, reading.card)
        assert reading.card is None
        if kind == "empty":
            assert reading.status == "empty"
        else:
            assert reading.reason  # an unknown always says why


def test_either_way_up_is_the_same_card() -> None:
    deck = profile()
    for code in ("QH", "6S", "9D", "TC", "AS"):
        card = parse_card(code)
        face = cv2.resize(render_face(card, DESIGNS["classic"]), deck.spec.face, interpolation=cv2.INTER_AREA)
        for turned in (face, cv2.rotate(face, cv2.ROTATE_180)):
            reading = recognise_face(turned, deck)
            assert reading.status == "card" and reading.card is card, reading.reason
            assert 0.8 <= reading.confidence <= 1.0


@pytest.mark.parametrize("design", ["serif", "lefty"])
def test_blurred_sixes_and_eights_of_every_design_read_as_themselves(design: str) -> None:
    """The closest pair, on a smaller card slightly out of focus: placed by its bounding box, a glyph
    whose box came out a pixel wider was scaled 4 % smaller and a serif 8 matched a 6 about as well
    as an 8 (unknown). Placed by its ink's centroid at the deck's one scale, it reads as itself."""
    deck = profile(design)
    misread = []
    for code in ("6C", "6D", "6H", "6S", "8C", "8D", "8H", "8S"):
        card = parse_card(code)
        for scale in (0.74, 0.8, 0.86):
            for sigma in (0.6, 0.8):
                small = cv2.resize(render_face(card, DESIGNS[design]), None, fx=scale, fy=scale,
                                   interpolation=cv2.INTER_AREA)
                face = cv2.resize(cv2.GaussianBlur(small, (0, 0), sigma), deck.spec.face)
                reading = recognise_face(face, deck)
                if reading.card is not card:
                    misread.append((code, scale, sigma, reading.card, reading.reason))
    assert misread == []


def test_an_index_covered_on_one_corner_is_unknown_with_two_index_agreement() -> None:
    """The default profile wants both indices to agree: cover one and the card is not read."""
    deck = profile()
    face = cv2.resize(render_face(parse_card("8C"), DESIGNS["classic"]), deck.spec.face)
    x0, y0, x1, y1 = deck.spec.index.box
    covered = face.copy()
    cv2.rectangle(covered, (x0, y0), (x1, y1), (140, 170, 220), -1)  # a thumb over the top index
    reading = recognise_face(covered, deck)
    assert reading.status == "unknown" and "only one index" in reading.reason
    one_index = deck.spec.accept.model_copy(update={"indices": 1})
    lenient = type(deck)(deck.spec.model_copy(update={"accept": one_index}), deck.ranks, deck.suits,
                         aspects=deck.aspects)
    assert recognise_face(covered, lenient).card is parse_card("8C")


def test_another_manufacturers_deck_is_never_read_as_a_wrong_card() -> None:
    """Templates of one design against photographs of another: unknowns are fine, a wrong card is not."""
    deck = profile("classic")
    rng = random.Random(3)
    wrong = []
    for i in range(52):
        card = DECK[i]
        reading = recognise(scene(card, DESIGNS["serif"], rng.randrange(1 << 30)), deck)
        if reading.status == "card" and reading.card is not card:
            wrong.append((card.code, reading.card))
    assert wrong == []


def test_red_ink_on_a_black_suit_shape_is_unknown() -> None:
    """The colour check: a club printed in red is no card of this deck."""
    deck = profile()
    face = render_face(parse_card("7C"), DESIGNS["classic"])
    red = face.copy()
    ink = face.min(axis=2) < 120
    red[ink] = (30, 30, 200)
    reading = recognise_face(cv2.resize(red, deck.spec.face, interpolation=cv2.INTER_AREA), deck)
    assert reading.status == "unknown" and "ink is red" in reading.reason


def test_a_card_cut_by_the_window_edge_is_refused() -> None:
    frame = scene(parse_card("KD"), DESIGNS["classic"], 5, cond=Conditions(scale=(0.7, 0.7)))
    shifted = np.roll(frame, frame.shape[1] // 2, axis=1)  # half the card off one side, on the other
    detection = find_card(shifted, profile().spec.face)
    assert detection.status != "card"


def test_scenes_are_the_same_for_the_same_seed_and_differ_otherwise() -> None:
    a = scene(parse_card("2H"), DESIGNS["bold"], 11, cond=FLOOR)
    b = scene(parse_card("2H"), DESIGNS["bold"], 11, cond=FLOOR)
    c = scene(parse_card("2H"), DESIGNS["bold"], 12, cond=FLOOR)
    assert a.shape == (480, 640, 3) and np.array_equal(a, b) and not np.array_equal(a, c)
    assert scene(parse_card("2H"), DESIGNS["bold"], 11, size=(1280, 720)).shape == (720, 1280, 3)


def test_grey_and_bgra_frames_are_read_safely() -> None:
    spade = scene(parse_card("QS"), DESIGNS["classic"], 77, cond=Conditions(glare=0.0))
    heart = scene(parse_card("QH"), DESIGNS["classic"], 77, cond=Conditions(glare=0.0))
    grey = recognise(cv2.cvtColor(heart, cv2.COLOR_BGR2GRAY), profile())
    assert grey.status == "unknown" and "ink is black" in grey.reason  # a heart needs red ink
    assert recognise(cv2.cvtColor(spade, cv2.COLOR_BGR2GRAY), profile()).card is parse_card("QS")
    assert recognise(cv2.cvtColor(spade, cv2.COLOR_BGR2BGRA), profile()).card is parse_card("QS")


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=16 * 12 * 3, max_size=16 * 12 * 3), st.integers(0, 255))
def test_arbitrary_pixels_never_crash_and_never_read_as_a_card(data: bytes, offset: int) -> None:
    frame = cv2.resize(np.frombuffer(data, np.uint8).reshape(12, 16, 3), (320, 240),
                       interpolation=cv2.INTER_NEAREST)
    frame = cv2.add(frame, np.full_like(frame, offset % 64))
    reading = recognise(frame, profile())
    assert reading.status in ("empty", "unknown")


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 40), st.integers(1, 5000), st.sampled_from([None, 1, 3, 4]),
    st.sampled_from(["black", "white", "noise"]), st.booleans(),
)
def test_frames_of_any_shape_are_read_without_an_exception(
    short: int, long: int, channels: int | None, fill: str, across: bool
) -> None:
    """A camera's odd frame (a single pixel, a line, a strip thousands of pixels long, one channel or
    four, all black or all white) is empty or unknown: an exception would stop the camera's thread.
    Before: a strip a few pixels high was shrunk to no pixels at all (OpenCV's resize assertion)."""
    h, w = (long, short) if across else (short, long)
    shape = (h, w) if channels is None else (h, w, channels)
    if fill == "noise":
        frame = np.random.default_rng(h * 7919 + w).integers(0, 256, shape, dtype=np.uint8)
    else:
        frame = np.full(shape, 0 if fill == "black" else 255, np.uint8)
    if channels == 1:
        frame = frame[:, :, :1]
    first, again = recognise(frame, profile()), recognise(frame.copy(), profile())
    assert first.status in ("empty", "unknown") and first.reason
    assert (again.status, again.reason) == (first.status, first.reason)


def test_the_report_names_each_unknown_frame_and_the_slowest() -> None:
    """Which frames came out unknown, and why, and which frames the p99 is made of: named in the report,
    so a house (and the photo bench) can look at them without a script of its own."""
    design, deck = DESIGNS["classic"], profile()
    frames = [(scene(parse_card(code), design, 500 + i), parse_card(code), f"{code}.png")
              for i, code in enumerate(["2C", "QH", "TS", "AD", "7S", "KC"])]
    frames.append((negative_scene("empty", design, 3), parse_card("9D"), "felt.png"))  # labelled a card
    report = evaluate(frames, deck)
    assert report["card_frames"] == 7 and report["unknown"] >= 1
    unknown = report["unknown_frames"]
    assert len(unknown) == report["unknown"] and any(u.startswith("felt.png: 9D: ") for u in unknown)
    slowest = report["slowest_cpu_ms"]
    assert len(slowest) == 5 and {s["frame"] for s in slowest} <= {name for _, _, name in frames}
    assert [s["ms"] for s in slowest] == sorted((s["ms"] for s in slowest), reverse=True)
