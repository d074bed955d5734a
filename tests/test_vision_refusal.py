"""What follows the detector's refusal hangs on its kind (vision.refusal.Refusal), never on its message's
words: the search by indices (vision.by_index) runs after a bright region reaching or filling the window
and never after two objects or an odd outline, however those refusals are worded.

Frames are drawn: tests/test_vision_by_index.py's card on a sheet of its own paper, vision.synth scenes.
"""

from __future__ import annotations

import pytest

from tests.test_vision_by_index import finish, lay, sheet
from tests.test_vision_detect import table_with_card
from tests.vision_support import profile
from vision.by_index import SEARCHED, find_by_indices
from vision.detect import Detection, DetectParams, find_card
from vision.recognise import Image, read_index, read_indices
from vision.refusal import Refusal
from vision.synth import DESIGNS, FLOOR, NEGATIVES, negative_scene

#: Each kind of refusal, worded as the other sort: a searched kind in an odd outline's words, a kind
#: never searched in the words the old rule looked for ("not wholly inside the window").
WORDED: dict[Refusal, str] = {
    kind: ("the outline has 7 corners, not a single card's 4" if kind in SEARCHED
           else "the card is not wholly inside the window; the bright area fills the window")
    for kind in Refusal
}


def card_on_sheet() -> Image:
    """A 7H whose outline is invisible on a sheet of its own paper: readable only by its indices."""
    frame = sheet(1)
    lay(frame, "7H", (320, 240), 330, 8.0)
    return finish(frame)


def by_indices(frame: Image, refused: Detection) -> tuple[str | None, str]:
    """The card vision.by_index reads after ``refused`` (its code, or None) and what its search found,
    with the read functions vision.recognise gives it."""
    deck = profile("classic")
    found = find_by_indices(
        frame, deck, None, DetectParams(), refused,
        lambda pair: r if (r := read_indices(pair, deck, one_index=False)).status == "card" else None,
        lambda crop: not isinstance(read_index(crop, deck), str))
    return (None if found.reading is None or found.reading.card is None else found.reading.card.code,
            found.summary)


def test_only_the_cut_and_filling_refusals_are_searched() -> None:
    assert {Refusal.CUT, Refusal.FILLS} == SEARCHED


@pytest.mark.parametrize("kind", list(Refusal), ids=[k.value for k in Refusal])
def test_the_search_by_indices_follows_the_refusals_kind_whatever_its_words(kind: Refusal) -> None:
    frame = card_on_sheet()
    refusal = find_card(frame, profile("classic").spec.face, warp=False)
    assert refusal.refusal in SEARCHED, refusal  # as the detector refuses it: searched, and read
    assert by_indices(frame, refusal)[0] == "7H"
    code, summary = by_indices(frame, Detection("refused", WORDED[kind], kind))
    if kind in SEARCHED:  # an odd outline's words: searched all the same, and read
        assert code == "7H" and "by its indices" in summary, summary
    else:  # the old rule's words: never searched
        assert code is None and summary == "", summary


def test_every_refusal_of_the_detector_names_its_kind() -> None:
    """Each negative scene (empty felt, a back, a joker, two overlapping cards, a hand), a card cut by the
    frame and two cards apart: a detection that is no card says what it was about; two cards, apart or
    overlapping, are never a searched kind."""
    face = profile("classic").spec.face
    seen: set[Refusal] = set()
    for k, negative in enumerate(NEGATIVES):
        det = find_card(negative_scene(negative, DESIGNS["classic"], 7_001 + k, cond=FLOOR), face, warp=False)
        if det.status == "card":
            continue  # a back or a joker is one card-shaped object: the reader refuses it later
        assert det.refusal is not None, det
        assert (det.status == "empty") == (det.refusal is Refusal.EMPTY), det
        if negative == "two_cards":
            assert det.refusal not in SEARCHED, det
        seen.add(det.refusal)
    left = table_with_card("7H", [(60.0, 110.0), (240.0, 110.0), (240.0, 361.0), (60.0, 361.0)])
    right = table_with_card("QS", [(400.0, 110.0), (580.0, 110.0), (580.0, 361.0), (400.0, 361.0)])
    left[:, 320:] = right[:, 320:]  # two cards well apart
    det = find_card(left, face, warp=False)
    assert det.status == "refused" and det.refusal is Refusal.SEPARATE, det
    cut = [(-90.0, 110.0), (90.0, 110.0), (90.0, 361.0), (-90.0, 361.0)]  # half out of the frame
    det = find_card(table_with_card("7H", cut), face, warp=False)
    assert det.status == "refused" and det.refusal is Refusal.CUT, det
    assert Refusal.EMPTY in seen and Refusal.SHAPE in seen, seen  # two overlapping cards: one odd outline
