"""Read one frame: the card, with a confidence, or an explicit "unknown" / "empty" and the reason.

How: :func:`vision.detect.find_card` finds the card's corners; the index box
of the deck profile is warped flat from the face as it lies and from the face
turned half a turn (so a card read either way up, and a deck with indices in
the top-right corner, are the same case); each index is split into the rank
glyph(s) above and the suit glyph below by their connected components; each
glyph is scaled to its template size and compared with every template of
the enrolled deck by normalised correlation (:func:`vision.compare.correlations`).

Why it never guesses: a read is a card only when the rank and the suit each
beat their threshold *and* their runner-up by a margin, the glyphs have the
enrolled sizes and shapes, the suit's colour agrees with the suit (red
hearts and diamonds, black clubs and spades), and the two indices, when both
are readable, say the same card. Anything else is "unknown": the dealer
shows the card again, which costs a second; a wrong card costs a misdeal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from controller.cards import Card, parse_card
from vision.align import FLOOR
from vision.by_index import find_by_indices
from vision.colour import RED_SUITS
from vision.compare import correlations
from vision.detect import Detection, DetectParams, find_card
from vision.glyphs import Glyphs, glyph_area, split_index, split_local
from vision.matching import RANK_FILL, SUIT_FILL, UNLIKE, Match, aspect_of, match, normalise, realigned
from vision.one_card import second_card
from vision.profile import RANK_SIZE, SUIT_SIZE, DeckProfile
from vision.reread import index_again
from vision.sharpness import at_sharpness
from vision.suit_guard import why_not_by_shape
from vision.warp import index_crops, warp_indices
from vision.washed_out import washed_out
from vision.window import ScanWindow

Image = MatLike

#: OpenCV's threads for reading a frame where the reading is a service (the daemon's camera), as the benches
#: and ``croupier vision test`` measure it: one. At 640 x 480 a second thread cost a fifth more CPU for no
#: shorter reads (composed 2026 on 2 cores, by turns: CPU p50 7.96 and 8.26 ms on one thread, 9.61 and 10.60
#: on two, wall p50 the same on one, 7.84 and 8.73 on two; ``bench/vision_profile.py --threads 2``): CPU the
#: daemon's loop and its shoe, panel and display links share on the Pi.
READ_THREADS: Final = 1
#: A glyph whose height is off the enrolled median by more than this fraction is not an index glyph.
HEIGHT_TOLERANCE: Final = 0.35
#: A rank whose centre sits further than this (a share of its height) from where the deck's rank of
#: that name sits over the suit is not that rank: a 10 whose 1 is under a hand leaves a 0 that fits J.
OFFSET_TOLERANCE: Final = 0.2


@dataclass(frozen=True)
class Reading:
    """One frame's result: ``card`` (with ``card`` set), ``unknown`` or ``empty`` (no card in the window)."""

    status: str
    card: Card | None = None
    confidence: float = 0.0
    reason: str = ""
    #: The warped face read by :func:`recognise_face`; None from :func:`recognise`, which warps only the
    #: index boxes (:mod:`vision.warp`).
    face: Image | None = None
    #: Where the card found lies in the frame (4 x 2 pixels), from :func:`recognise` (vision.felt judges
    #: its place in an empty window by it); not compared.
    corners: NDArray[np.float32] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "card": self.card.code if self.card else None,
            "confidence": round(self.confidence, 4),
            "reason": self.reason,
        }


def read_index(crop: Image, profile: DeckProfile, align: bool = False, split: Glyphs | str | None = None
               ) -> tuple[Card, float, float] | str:
    """One index crop to a card, its confidence and its lead (the larger of the rank's and the suit's
    distance to the best template over that to the runner-up), or the reason it is not one. With
    ``align``, a rank unlike any template is compared again once aligned (:mod:`vision.align`).
    ``split``: the crop's glyphs as :func:`_split` makes them, when the caller has (:func:`read_indices`)."""
    matched = _matches(crop, profile, align, split)
    if isinstance(matched, str):
        return matched
    glyphs, rank, suit, suits = matched
    spec = profile.spec
    accept = spec.accept
    why = suit.why_not("suit", accept.min_score, accept.max_ratio)  # the rank's was _matches'
    if why is not None:
        return why
    shape = why_not_by_shape(suits, suit.name, accept.max_ratio)
    if shape is not None:  # the ink's colour is never the only guard between the colours
        return shape
    if not _in_place(glyphs, rank.name, profile):
        return f"rank {rank.name} out of place over its suit (part of the index covered?)"
    colour = spec.colour
    red = glyphs.red_dominant and glyphs.chroma >= colour.red_min
    black = glyphs.chroma <= colour.black_max
    if (suit.name in RED_SUITS and not red) or (suit.name not in RED_SUITS and not black):
        ink = "red" if red else "black" if black else "neither red nor black"
        return f"suit {suit.name} but the ink is {ink}"
    lead = max((1 - m.score) / max(1 - m.runner_score, 1e-6) for m in (rank, suit))
    return parse_card(rank.name + suit.name), min(rank.score, suit.score), lead


def rank_reads(crop: Image, profile: DeckProfile) -> bool:
    """Whether the index crop reads as a card but for its suit's margin: both glyphs of the enrolled sizes,
    the rank within the accept margins and in its place over the suit, the suit like an enrolled one (at
    least ``accept.min_score``) but perhaps as like a second. The look for a second card's index beside a
    card read (:mod:`vision.one_card`) takes such an index as a card's: placed from its pieces beside a dim
    or washed-out card, an index often left its club between a diamond and a club while its rank was plain
    (a drawn sweep read the card beside such a card in 9 of 4,000 scenes). A suit like none (a crop placed
    off the index) or a rank out of its place (a card's own index, placed wrong beside it) is no card's."""
    matched = _matches(crop, profile, False)
    if isinstance(matched, str):
        return False
    glyphs, rank, suit, _ = matched  # the rank reads (_matches)
    return suit.score >= profile.spec.accept.min_score and _in_place(glyphs, rank.name, profile)


def _matches(crop: Image, profile: DeckProfile, align: bool, split: Glyphs | str | None = None
             ) -> tuple[Glyphs, Match, Match, dict[str, float]] | str:
    """The index crop's glyphs, its rank's and suit's matches and the suit glyph's correlation with each
    suit (:func:`read_index`'s first steps), or why there are none: no rank and suit, a glyph not of the
    enrolled size, or a rank that does not read (its :meth:`Match.why_not`). The suit is matched only for a
    rank that reads: neither caller looks at it otherwise (a crop placed on a neighbour's ink beside the card
    read, an index whose rank is covered). ``split``: the crop's :func:`_split`, if made already."""
    index = profile.spec.index
    glyphs = _split(crop, profile) if split is None else split
    if isinstance(glyphs, str):
        return glyphs
    why = _off_size(glyphs.rank_height, glyphs.suit_height, profile)  # _split's own check, for any split
    if why is not None:
        return why
    accept = profile.spec.accept
    rank_glyph = normalise(glyphs.rank, RANK_SIZE, index.rank_height, RANK_FILL)
    rank = match(rank_glyph, profile, "rank", aspect_of(glyphs.rank))
    plain = rank
    if align and FLOOR <= rank.score < accept.min_score:
        rank = realigned(rank_glyph, profile, aspect_of(glyphs.rank)) or rank
    why = rank.why_not("rank", accept.min_score, accept.max_ratio)
    if why is not None:
        return why
    suit_glyph = normalise(glyphs.suit, SUIT_SIZE, index.suit_height, SUIT_FILL)
    suits = dict(zip(profile.suits, correlations(suit_glyph, profile.stack("suit")), strict=True))
    suit = match(suit_glyph, profile, "suit", aspect_of(glyphs.suit), list(suits.values()))
    # A rank read once aligned measures no sharpness or tone as cut: it may doubt, never settle.
    suit = at_sharpness(suit_glyph, suit, suits, rank_glyph, rank.name, profile, settles=rank is plain)
    return glyphs, rank, suit, suits


def _split(crop: Image, profile: DeckProfile, local: bool = False) -> Glyphs | str:
    """The index crop split into the deck's rank and suit glyphs (:func:`vision.glyphs.split_index`; with
    ``local``, its ink cut by its local contrast, :func:`vision.glyphs.split_local`), or why not, glyphs
    of other heights than the deck's among the reasons (:func:`_off_size`): their images and ink colour
    are not made. Why: most candidate indices looked at beside a card read are no index's, and every
    caller refuses such glyphs (the split of an index refused is never used again: the aligned read
    follows only a rank unlike any template, the look again only the split of an index read)."""
    index = profile.spec.index
    area = glyph_area(index.box, index.glyphs)
    sized = lambda rank, suit: _off_size(rank, suit, profile)  # noqa: E731
    if local:
        return split_local(crop, area, index.rank_height, index.suit_height, sized)
    return split_index(crop, area, index.rank_height, sized)


def _off_size(rank: int, suit: int, profile: DeckProfile) -> str | None:
    """Why rank and suit glyphs ``rank`` and ``suit`` pixels tall are not the deck's, or None."""
    index = profile.spec.index
    for what, got, want in (("rank", rank, index.rank_height), ("suit", suit, index.suit_height)):
        if abs(got - want) > HEIGHT_TOLERANCE * want:
            return f"{what} glyph {got} px tall, enrolled {want:.0f}"
    return None


def _in_place(glyphs: Glyphs, rank: str, profile: DeckProfile) -> bool:
    """Whether the rank glyph lies over the suit where the deck's ``rank`` does (its enrolled offset)."""
    placed = profile.aspects.get(f"offset:{rank}", glyphs.rank_offset)
    return abs(glyphs.rank_offset - placed) <= OFFSET_TOLERANCE


#: The unread index ``k`` warped once more where the read one's print, split into its glyphs (or why it
#: is not), is found (:func:`vision.reread.index_again`).
Again = Callable[[int, Glyphs | str], Image | None]

#: The detection limits used unless a caller passes others.
DEFAULT_DETECT = DetectParams()


def recognise(
    frame: Image, profile: DeckProfile, params: DetectParams = DEFAULT_DETECT,
    window: ScanWindow | None = None,
) -> Reading:
    """Read ``frame``: a card only when it is certain (see the module's docstring); ``window``: the
    table's scan window (:mod:`vision.window`), if its table file has one.

    A grey (one channel, with or without a channel axis) or BGRA frame, as some cameras give, is read
    as BGR; a grey frame has no colour, so its red cards fail the colour check (unknown) and only black
    cards can be read. A card read by its outline is held to one card at a time (:mod:`vision.one_card`).
    """
    if frame.ndim == 2 or frame.shape[2] == 1:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    elif frame.shape[2] == 4:
        frame = cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    det: Detection = find_card(frame, profile.spec.face, params, window, warp=False)
    if det.status == "empty":
        return Reading("empty", reason=det.reason)
    alone = lambda crop: not isinstance(read_index(crop, profile), str)  # noqa: E731 (one index)
    if det.status != "card" or det.corners is None:
        found = find_by_indices(  # the outline refused: the card by its two indices (vision.by_index)
            frame, profile, window, params, det,
            lambda pair: r if (r := read_indices(pair, profile, one_index=False)).status == "card" else None,
            alone)
        if found.reading is None:
            return Reading("unknown", reason=det.reason + found.summary)
        return replace(found.reading, corners=found.corners)
    face, box = profile.spec.face, profile.spec.index.box

    def again(corners: NDArray[np.float32], crops: list[Image]) -> Again:
        return lambda k, read: index_again(frame, corners, profile, crops[1 - k], k == 1, read)

    # A card recovered from its sides (a corner unseen, perhaps under a second card's blank paper) is
    # read on both indices: the one-index exception could read the covered card (vision.detect._joined).
    crops, corners = warp_indices(frame, det.corners, face, box), det.corners
    read = read_indices(crops, profile, one_index=not det.joined, again=again(corners, crops))
    if read.status != "card" and det.other is not None:
        # Foreshortening left the card's quarter turn open (vision.tilt): the other, on both its indices.
        crops = warp_indices(frame, det.other, face, box)
        other = read_indices(crops, profile, one_index=False, again=again(det.other, crops))
        read, corners = (other, det.other) if other.status == "card" else (read, corners)
    if read.status != "card" and (whole := det.whole_card()) is not None:
        # The card found may be only its part lit beyond a shadow's edge: the whole card's indices, and
        # its reason if they fail too (the lit part's would be "blank index" for a shaded index).
        crops, corners = warp_indices(frame, whole, face, box), whole
        read = read_indices(crops, profile, one_index=True, again=again(whole, crops))
    why = read.status == "card" and second_card(frame, profile, window, params.area, corners,
                                                lambda crop: rank_reads(crop, profile))
    return Reading("unknown", reason=why) if why else replace(read, corners=corners)


def recognise_face(face: Image, profile: DeckProfile) -> Reading:
    """Read an already warped face (enrolment's self-check): without the look at an index's local
    contrast, since the deck's templates are cut at one level (a photograph only that look reads is
    re-shot, not enrolled)."""
    return read_indices(index_crops(face, profile.spec.index.box), profile, face, local=False)


#: The refusals of an index that its ink's local contrast may mend: ink cut wrong (a rank fallen apart or
#: cut short, no suit under it, a glyph unlike any template). Not an ambiguous match or a suit's colour
#: or shape: the glyph was cut whole there, and a second cut would only be a second try at the match.
CUT_WRONG: Final = ("rank glyph", "suit glyph", "no rank and suit", "no suit under", f"rank {UNLIKE}",
                    f"suit {UNLIKE}")


def read_indices(
    crops: list[Image], profile: DeckProfile, face: Image | None = None, one_index: bool = True,
    again: Again | None = None, local: bool = True,
) -> Reading:
    """Read a card's two index crops (:func:`vision.warp.index_crops`), which must agree when both are
    readable; without ``one_index``, both must be read whatever the profile accepts. ``again(k, read)``:
    the unread index ``k`` warped once more where the read one's print (its glyphs ``read``) is found
    (:mod:`vision.reread`). Each crop is split into its glyphs once (about 0.17 ms a split): the aligned
    second read and the look again take the split made for the first read, which they made again before.
    ``local``: an index whose ink was cut wrong (:data:`CUT_WRONG`) beside one read is cut again by its
    local contrast (:func:`vision.glyphs.split_local`), only where one index may stand alone
    (``one_index``): a card found by its indices, joined or turned is read on two plain reads."""
    splits = [_split(crop, profile) for crop in crops]
    reads = [read_index(crop, profile, split=split) for crop, split in zip(crops, splits, strict=True)]
    if sum(isinstance(r, str) for r in reads) == 1:  # one read: the other's rank aligned (vision.align)
        k = next(i for i, r in enumerate(reads) if isinstance(r, str))
        if str(reads[k]).startswith(f"rank {UNLIKE}"):
            reads[k] = read_index(crops[k], profile, align=True, split=splits[k])
        if local and one_index and str(reads[k]).startswith(CUT_WRONG):  # lit unevenly? (vision.glyphs)
            cut = read_index(crops[k], profile, split=_split(crops[k], profile, local=True))
            reads[k] = reads[k] if isinstance(cut, str) else cut
    cards = [r for r in reads if not isinstance(r, str)]
    if not cards:
        return Reading("unknown", reason="; ".join(str(r) for r in reads), face=face)
    if len(cards) == 1 and again is not None:
        k = next(i for i, r in enumerate(reads) if isinstance(r, str))
        moved = again(k, splits[1 - k])  # vision.reread
        second = None if moved is None else read_index(moved, profile)
        if second is not None and not isinstance(second, str):
            cards.append(second)  # disagreeing, it is refused below as any two indices are
    if len(cards) == 2 and cards[0][0] is not cards[1][0]:
        return Reading("unknown", reason=f"the indices disagree ({cards[0][0]} / {cards[1][0]})", face=face)
    accept = profile.spec.accept
    if len(cards) < (accept.indices if one_index else 2):
        why = next(r for r in reads if isinstance(r, str))
        read = next(i for i, r in enumerate(reads) if not isinstance(r, str))
        other, lead = crops[1 - read], cards[0][2]
        if (not one_index or lead > ONE_INDEX_LEAD * accept.max_ratio
                or not washed_out(other, crops[read])):
            return Reading("unknown", reason=f"only one index readable ({why})", face=face)
    card, conf, _ = min(cards, key=lambda c: c[1])
    return Reading("card", card, conf, face=face)


#: With two indices wanted, one is enough when the other is washed out on the paper (a glare) and the
#: one read leads its runner-up, for rank and suit alike, by this share of ``accept.max_ratio``: twice
#: the margin of a normal read stands in for the second, independent read.
ONE_INDEX_LEAD: Final = 0.5
