"""A hand over the window is no empty window: the card lying under it is not dealt again.

Out of focus, a hand filling the lens has no contrast and nothing card-sized, which is what the detector
calls an empty window, and so has a palm held over the card; seen so for ``stable_frames`` frames, it
cleared the card in the window, and the card was dealt a second time when the hand moved away (a second
reading, 2026-12-06). An empty window now clears the card only when it is as the window was empty before
the card (vision.felt); K empty reads refused make the card doubted: read again, it goes to the dealer.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest
from camera_video import FPS, SIZE, camera_statuses, dealt, video_table, write_video
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.config import FIRMWARE_CONFIGS
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from vision.felt import SHARE, Before, before, look, share_alike, unlike, widened
from vision.profile import load_profile
from vision.recognise import recognise
from vision.synth import DESIGNS, FELTS, STUDIO, over_lens, photograph, render_face, scene

PROFILE = load_profile(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
CLASSIC = DESIGNS["classic"]


def _read_empty(felt: int, count: int, *, palm: bool = False) -> list[np.ndarray]:
    """The first ``count`` frames of a hand over the lens (``palm``: over a card) that read as empty."""
    face = render_face(parse_card("5S"), CLASSIC) if palm else None
    frames = (over_lens(seed, SIZE, felt, face) for seed in range(80))
    empty = list(itertools.islice((f for f in frames if recognise(f, PROFILE).status == "empty"), count))
    assert len(empty) == count, f"only {len(empty)} frames over the window read empty on felt {felt}"
    return empty


def _play(tmp_path: Path, pictures: list[tuple[np.ndarray, int, bool]], *, empty_first: bool = True
          ) -> list[str]:
    """The cards a daemon deals from a camera showing ``pictures`` (after 4 s of the empty window unless
    not ``empty_first``: the camera's first second is not read, and the first window settles in two, as
    at a table opening; a second to spare), until the video ends."""
    video = tmp_path / "camera.avi"
    empty = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)
    write_video(video, [(empty, 4 * FPS, True)] * empty_first + pictures)
    config = video_table(tmp_path, video, stable_frames=3)
    with DaemonThread(Daemon(config, use_shoe=False)):
        wait_for(lambda: (False, "no frames for 0.6 s") in camera_statuses(config), "the video never ended",
                 timeout=60)
    return dealt(config)


def _light(picture: np.ndarray, gain: float) -> np.ndarray:
    """``picture`` under ``gain`` times the light (an exposure, a lamp), in linear light."""
    linear = (picture.astype(np.float32) / 255) ** 2.2 * gain
    return np.clip(linear ** (1 / 2.2) * 255, 0, 255).astype(np.uint8)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("felt", range(len(FELTS)))
def test_an_empty_window_is_told_from_a_hand_over_the_lens_or_the_card(felt: int) -> None:
    before = Before(look(scene(None, CLASSIC, 5, SIZE, STUDIO, felt), None), None)
    for seed in range(12):  # empty again, under another light's tint and gradient: the window is empty
        assert unlike(before, look(scene(None, CLASSIC, 100 + seed, SIZE, STUDIO, felt), None)) is None
    for frame in _read_empty(felt, 6) + _read_empty(felt, 6, palm=True):  # read empty, but not empty
        why = unlike(before, look(frame, None))
        assert why is not None and why.endswith("of the window is as it was empty before the card (a hand "
                                                "or a sleeve over it, or the light changed?)"), why


@pytest.mark.timeout(120)
def test_a_card_under_a_hand_goes_to_the_dealer_when_read_again_and_is_dealt_after_the_window_is_empty(
        tmp_path: Path) -> None:
    card = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    hands = [(frame, FPS // 2, True) for frame in _read_empty(0, 2) + _read_empty(0, 2, palm=True)]
    empty = scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0)
    cards = _play(tmp_path, [(card, FPS, True), *hands, (card, FPS, True), (empty, FPS, True),
                             (card, FPS, True)])
    # Dealt; under the hands, then read again: held for the dealer (the card already dealt, or a new
    # one?), never dealt again by itself (it was: a second 2C); the window empty, the next 2C is new.
    assert cards == ["2C", "2C?", "2C"]


@pytest.mark.timeout(120)
def test_an_automatic_exposure_darkening_the_card_does_not_keep_the_empty_window_from_clearing_it(
        tmp_path: Path) -> None:
    """The reference is the window empty before the card, not the felt round the card: a camera's
    automatic exposure darkens the whole frame while a white card lies in it (a second reading: the
    window emptied was brighter than the felt remembered round the card, and an identical next card was
    never dealt)."""
    card = _light(scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0), 0.35)
    empty = scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0)
    assert _play(tmp_path, [(card, FPS, True), (empty, 2 * FPS, True), (card, 2 * FPS, True)]) == ["2C", "2C"]


@pytest.mark.timeout(120)
def test_a_light_switched_on_between_two_identical_cards_holds_the_second_for_the_dealer(
        tmp_path: Path) -> None:
    """The window emptied under another light is not taken for empty: the next identical card goes to the
    dealer, never dealt silently, never waited for forever."""
    card = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    brighter = [_light(scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0), 2.5), _light(card, 2.5)]
    assert _play(tmp_path, [(card, FPS, True), (brighter[0], 2 * FPS, True), (brighter[1], 2 * FPS, True)]
                 ) == ["2C", "2C?"]


@pytest.mark.timeout(120)
def test_a_hands_brief_passes_over_a_card_lying_still_do_not_add_up_to_a_doubt(tmp_path: Path) -> None:
    """Three one-frame passes, each followed by the card read again: no card in doubt, no tilt (a second
    reading: the refused reads added up over the card's stay and held it for the dealer mid-deal)."""
    card = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    pictures = [(card, FPS, True)]
    for hand in _read_empty(0, 3):
        pictures += [(hand, 1, True), (card, FPS, True)]
    assert _play(tmp_path, pictures) == ["2C"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("empty_first", [True, False])
def test_a_hands_frames_never_become_the_empty_window_a_card_is_judged_by(
        tmp_path: Path, empty_first: bool) -> None:
    """A second reading: the hand's frames refused over 2C became 5S's reference (5S came straight after),
    and a like hand over 5S later passed for its empty window: 5S dealt twice. With no empty window seen
    at all (a card lying there at start), the card read again after a hand took the hand's frame. Two
    black sleeves 92 % alike (seeds 7 and 10)."""
    first = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    card = scene(parse_card("5S"), CLASSIC, 12, SIZE, STUDIO, felt=0)
    sleeves = [over_lens(seed, SIZE, 0) for seed in (7, 10)]
    assert all(recognise(s, PROFILE).status == "empty" for s in sleeves)
    lead = [(first, 2 * FPS, True)] if empty_first else [(card, 2 * FPS, True)]
    pictures = [*lead, (sleeves[0], FPS // 2, True), (card, FPS, True), (sleeves[1], FPS // 2, True),
                (card, FPS, True)]
    cards = _play(tmp_path, pictures, empty_first=empty_first)
    assert cards == (["2C", "5S", "5S?"] if empty_first else ["5S", "5S?", "5S?"])


def _palm(frame: np.ndarray, corners: np.ndarray, reach: float, blur: float = 25) -> np.ndarray:
    """A palm over the card at ``corners``, out of focus: a disc of skin ``reach`` times the card's
    half-diagonal, blurred by ``blur`` px, lit from one side."""
    h, w = frame.shape[:2]
    centre = corners.mean(axis=0)
    radius = int(reach * float(np.linalg.norm(corners - centre, axis=1).max()))
    disc = np.zeros((h, w), np.float32)
    cv2.circle(disc, (int(centre[0]), int(centre[1])), radius, 1.0, -1)
    cover = np.clip(cv2.GaussianBlur(disc, (0, 0), blur) * 1.2, 0, 1)[..., None]
    light = np.linspace(0.5, 0.8, w, dtype=np.float32)[None, :, None]
    skin = np.array((120, 150, 200), np.float32) * light
    return np.clip(frame * (1 - cover) + skin * cover, 0, 255).astype(np.uint8)


@pytest.mark.timeout(120)
def test_a_palm_over_a_small_card_is_judged_by_the_cards_own_place() -> None:
    """A second reading: the share was of the whole window only, and a card a third of the frame high
    under a palm left 90 % of the window as it was (such a frame reads empty now and then): the card was
    dealt twice. Every palm here leaves 90 % of the window alike; the card's place is not."""
    small = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
    empty = look(scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0), None)
    judged = 0
    for seed in range(8):
        frame = photograph(render_face(parse_card("5S"), CLASSIC), seed, SIZE, small, felt=0)
        corners = recognise(frame, PROFILE).corners
        assert corners is not None  # the card is found (read, or not)
        for reach in (0.8, 0.9):
            palmed = look(_palm(frame, corners, reach), None)
            if share_alike(empty, palmed) < SHARE:
                continue
            judged += 1
            why = unlike(before(empty, corners, frame.shape), palmed)
            assert why is not None and "of the card's place is as it was empty" in why, why
    assert judged >= 8


@pytest.mark.timeout(120)
def test_a_card_moved_after_its_report_is_judged_where_it_lies_now() -> None:
    """A second reading: the card's place was fixed at its report, and a small card read again elsewhere,
    then palmed there, left both the window and its old place 90 % alike: dealt twice."""
    small = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
    face = render_face(parse_card("5S"), CLASSIC)
    empty = look(scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0), None)
    moved = 0
    for seed in range(0, 16, 2):
        first, then = (photograph(face, s, SIZE, small, felt=0) for s in (seed, seed + 1))
        at, now = recognise(first, PROFILE).corners, recognise(then, PROFILE).corners
        assert at is not None and now is not None
        palmed = look(_palm(then, now, 0.8), None)
        reported = before(empty, at, first.shape)
        if min(share_alike(empty, palmed), share_alike(empty, palmed, reported.place)) < SHARE:
            continue  # the palm reaches the old place too: its place at report is enough
        moved += 1
        why = unlike(widened(reported, now, then.shape), palmed)
        assert why is not None and "of the card's place" in why, why
    assert moved >= 2


@pytest.mark.timeout(120)
def test_after_a_light_switched_on_an_identical_card_goes_to_the_dealer_once_not_for_good(
        tmp_path: Path) -> None:
    """A second reading: after a light changed while a card lay there, every empty read was refused, no
    later card took a new reference, and every identical next card went to the dealer until a restart.
    The first new card under the new light takes the window read empty last: alike the felt round it."""
    bright = [_light(scene(c and parse_card(c), CLASSIC, s, SIZE, STUDIO, felt=0), 2.5)
              for c, s in ((None, 6), ("7H", 12), (None, 7))]
    card = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    pictures = [(card, FPS, True), (bright[0], 2 * FPS, True), (bright[1], 2 * FPS, True),
                (bright[2], 2 * FPS, True), (bright[1], 2 * FPS, True)]
    assert _play(tmp_path, pictures) == ["2C", "7H", "7H"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("light", [1.0, 2.0])
def test_a_palm_over_the_last_card_never_becomes_the_next_cards_reference(
        tmp_path: Path, light: float) -> None:
    """A third reading: a palm over 2C (read empty, refused), 5S laid where 2C lay with no empty read
    between, then a like palm over 5S: the first palm's frame had become 5S's reference (outside 5S's place
    it is the felt), and 5S was dealt twice. Under the same light, and with a light switched on first."""
    small = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
    first, card = (_light(photograph(render_face(parse_card(c), CLASSIC), 0, SIZE, small, felt=0), light)
                   for c in ("2C", "5S"))
    palms = []
    for frame in (first, card):
        corners = recognise(frame, PROFILE).corners
        assert corners is not None
        palms.append(_palm(frame, corners, 1.2))
    assert all(recognise(p, PROFILE).status == "empty" for p in palms)
    lead = [(photograph(render_face(parse_card("2C"), CLASSIC), 0, SIZE, small, felt=0), FPS, True)]
    pictures = [(first, FPS, True), (palms[0], FPS // 2, True), (card, FPS, True), (palms[1], FPS // 2, True),
                (card, FPS, True)]
    assert _play(tmp_path, lead * (light != 1.0) + pictures) == ["2C", "5S", "5S?"]


@pytest.mark.timeout(120)
def test_a_hand_over_the_empty_window_before_a_card_never_becomes_its_reference(tmp_path: Path) -> None:
    """A second reading: a sleeve over the empty window (nothing there to refuse it) right before 5S was
    dealt became 5S's reference, and a like sleeve over 5S later passed for its empty window: 5S dealt
    twice. The reference is now the window settled empty (vision.felt.Settled): the sleeve passes."""
    card = scene(parse_card("5S"), CLASSIC, 12, SIZE, STUDIO, felt=0)
    sleeves = [over_lens(seed, SIZE, 0) for seed in (7, 10)]
    assert all(recognise(s, PROFILE).status == "empty" for s in sleeves)
    pictures = [(sleeves[0], 4, True), (card, FPS, True), (sleeves[1], FPS // 2, True), (card, FPS, True)]
    assert _play(tmp_path, pictures) == ["5S", "5S?"]


@pytest.mark.timeout(120)
def test_a_card_dragged_across_the_window_is_judged_where_it_was_read_last() -> None:
    """A third reading: the card's place grew with every read of it, and a small card dragged across the
    window while read spread its place over most of it; a palm over the card where it came to rest then
    left 90 % of that place alike: dealt twice. The place is where it was reported and read last."""
    small = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
    frames = [photograph(render_face(parse_card("5S"), CLASSIC), s, SIZE, small, felt=0) for s in range(24)]
    read = [(f, c) for f in frames if (c := recognise(f, PROFILE).corners) is not None]
    assert len(read) == 24
    empty = look(scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0), None)
    rest, at = read.pop(15)  # where it comes to rest: a palm there reads empty
    card = before(empty, read[0][1], SIZE[::-1])
    for frame, corners in [*read[1:], (rest, at)]:
        card = widened(card, corners, frame.shape)
    palm = _palm(rest, at, 0.7)
    assert recognise(palm, PROFILE).status == "empty"
    palmed = look(palm, None)
    assert share_alike(empty, palmed) >= SHARE  # the window alone lets it pass: the place must not
    assert card is not None
    why = unlike(card, palmed)
    assert why is not None and "of the card's place" in why, why


@pytest.mark.timeout(120)
def test_a_small_card_moved_under_a_palm_is_not_taken_for_gone() -> None:
    """A second reading: a hand slid a small card across the felt while covering it, so it was never read
    where it came to rest; its place at report was bare felt again and 93 % of the window alike: taken
    for gone, dealt twice. What is not alike must be less than half the card's area."""
    small = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
    face = render_face(parse_card("5S"), CLASSIC)
    empty = look(scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0), None)
    (at, first), (rest, then) = ((recognise(f, PROFILE).corners, f)
                                 for f in (photograph(face, s, SIZE, small, felt=0) for s in (10, 8)))
    assert at is not None and rest is not None
    palm = _palm(then, rest, 0.8)
    assert recognise(palm, PROFILE).status == "empty"
    card = before(empty, at, first.shape)
    palmed = look(palm, None)
    assert share_alike(empty, palmed) >= SHARE and share_alike(empty, palmed, card.place) >= SHARE
    why = unlike(card, palmed)
    assert why is not None and "as much as 80% of the card" in why, why
    assert unlike(card, look(scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0), None)) is None


def _sleeves(*seeds: int) -> list[np.ndarray]:
    """Sleeves over the whole lens (``over_lens`` on felt 0) that read as an empty window."""
    frames = [over_lens(seed, SIZE, 0) for seed in seeds]
    assert all(recognise(f, PROFILE).status == "empty" for f in frames)
    return frames


@pytest.mark.timeout(120)
@pytest.mark.parametrize("exposure", [False, True])
def test_a_sleeve_moving_across_the_lens_for_half_a_second_never_becomes_a_reference(
        tmp_path: Path, exposure: bool) -> None:
    """A third reading: a sleeve over the whole lens is a smooth blur, alike from frame to frame while it
    moves (four black sleeves, 92 % alike or more): half a second of it settled and became 5S's reference,
    and a like sleeve over 5S dealt it twice; with the window seen empty between, the same under an
    automatic exposure darkening the card's frame (the empty read was not the felt round it)."""
    run = _sleeves(7, 26, 44, 10)
    assert all(share_alike(look(run[0], None), look(f, None)) >= SHARE for f in run)
    card = scene(parse_card("5S"), CLASSIC, 12, SIZE, STUDIO, felt=0)
    between: list[tuple[np.ndarray, int, bool]] = []
    if exposure:
        card = _light(card, 0.35)
        between = [(scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0), 3, True)]
    pictures = [*((s, 2, True) for s in run), *between, (card, FPS, True), (run[0], FPS // 2, True),
                (card, FPS, True)]
    assert _play(tmp_path, pictures) == ["5S", "5S?"]


@pytest.mark.timeout(180)
def test_with_no_empty_window_to_judge_by_a_sleeve_before_the_next_card_is_not_its_reference(
        tmp_path: Path) -> None:
    """A third reading: with a card in the window at start (or the journal's after a restart) every empty
    read was refused for want of a reference, and the last one, a sleeve's, became the next card's: a like
    sleeve over 5S then dealt it twice."""
    first = scene(parse_card("2C"), CLASSIC, 11, SIZE, STUDIO, felt=0)
    empty = scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0)
    card = scene(parse_card("5S"), CLASSIC, 12, SIZE, STUDIO, felt=0)
    sleeves = _sleeves(7, 10)
    pictures = [(first, 2 * FPS, True), (empty, 2 * FPS, True), (sleeves[0], 2, True), (card, FPS, True),
                (sleeves[1], FPS // 2, True), (card, FPS, True)]
    assert _play(tmp_path, pictures, empty_first=False) == ["2C", "5S", "5S?"]
