"""A suit between one colour's two (club and spade, heart and diamond) judged at the index's own sharpness and
tone, as the rank beside it, already read, measures them.

Why: a soft (out-of-focus) club correlates almost as well with the spade as with the club (C 0.98,
S 0.97 on the composed photo sets), because blur removes exactly the detail that parts them: the
club's three lobes and the spade's point. Letting the suit's margin widen until such clubs read was
withdrawn: a club blurred harder moves across any fixed limit towards the spade. Here the templates
are brought to the glyph's sharpness instead. The rank beside the suit, already read, measures it:
the Gaussian sigma that best turns the enrolled rank template into the observed rank glyph (a
measurement, not a free fit per suit candidate: the one sigma is found before the suits are looked
at). Both candidate suit templates are blurred by that same sigma, and the glyph is compared with
them where they still differ, with the usual half-ratio margin. Blur only removes detail, so a soft
club against an equally soft club template beats an equally soft spade template; a glyph blurred
past telling them apart leaves them alike there, and the suit stays unknown.

The tone too (2026-12-06). A camera exposed darker than at enrolment, or with a steeper tone curve,
darkens the half-inked pixels round every stroke: the ink spreads, a club's gaps between its lobes fill,
and a soft club becomes a spade's blob. Correlation forgives a change of brightness and contrast, not
that. Drawn clubs blurred 1.5 to 3.5 face pixels and darkened (each level to the power 1.8 to 3.5) read
as spades, both indices agreeing: 43 of 1,664 drawn index pairs of the four drawn designs; the composed
photo set 2026 darkened to the power 2.2 read 12 of its 520 clubs and spades as the other, 44 at 2.8,
martinabeleda's real webcam deck blurred 1.5 and darkened 1.8 three (``bench/vision_conditions.py``).
So the rank measures the index's tone as well as its sharpness: the monotone map that takes the rank
glyph's levels to its template's at that sharpness, level by level of their quantiles (:func:`tone`),
is applied to the suit glyph before it is compared. A suit the sharp comparison read (by its margins)
is then confirmed the same way against the other suit of its colour: when, at the index's sharpness
and tone (judged at the largest blur measured when blurred past it), the other is the nearer where the
two differ, or the better as a whole, the suit is no read (:attr:`vision.matching.Match.doubt`):
unknown, never the other card. The map only doubts; it settles nothing alone: a suit left between its
colour's two is settled only where the glyph as seen settles the same way, since the map of levels also
takes another deck's bolder or thinner strokes for a tone (a review: the classic deck's clubs shown
sharp to the serif enrolment settled as spades once mapped). What it costs: on the real sets, as they
are, no read; composed 2026 blurred 2 pixels at 640 x 480 reads 11 of 520 fewer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Final, TypeVar, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.colour import RED_SUITS
from vision.compare import correlations, distances
from vision.matching import RANK_FILL, SPLIT_RATIO, SUIT_FILL, Match
from vision.profile import RANK_SIZE, SUIT_SIZE, DeckProfile, Glyph
from vision.stack import Stack

T = TypeVar("T")

#: The quantiles of the rank's levels and its template's paired to map the index's tone (:func:`tone`).
TONE_LEVELS: Final = 65
#: The Gaussian sigmas (rank template pixels) tried for the index's blur relative to the enrolled
#: templates, in steps fine enough that the suits' comparison does not hinge on the step.
SIGMAS: Final = tuple(0.25 * i for i in range(17))

def blurred(template: Glyph, sigma: float) -> Glyph:
    """``template`` blurred by a Gaussian of ``sigma`` pixels (itself at 0), read-only once blurred: kept
    for the next index, as every index read blurs the deck's same few dozen templates at the same few
    sigmas (1 ms a frame, uncached, since every suit read is judged so: 2026-12-06). One deck keeps about
    300 of 4.5 KB and 13 ladders of 150 KB; the bounds keep a few decks' worth. A read-only template's
    are found by its identity (:func:`_made_once`) before its bytes: copying and hashing them cost 2 us a
    look, six looks an index read."""
    if sigma <= 0:
        return template
    return _made_once(f"blurred {sigma!r}", (template,),
                      lambda: _blurred(template.tobytes(), template.shape, template.dtype.str, sigma))


@lru_cache(maxsize=1024)
def _blurred(data: bytes, shape: tuple[int, ...], dtype: str, sigma: float) -> Glyph:
    template = np.frombuffer(data, np.dtype(dtype)).reshape(shape)
    out: Glyph = cv2.GaussianBlur(template, (0, 0), sigma, borderType=cv2.BORDER_CONSTANT)
    out.setflags(write=False)
    return out


#: What :func:`tone` and :func:`at_sharpness` make from the kept blurred templates (read-only arrays, made
#: once by :func:`blurred`), by the arrays' identity: their sorted levels, a pair of them stacked.
_MADE: dict[tuple[object, ...], tuple[tuple[Glyph, ...], object]] = {}
#: Entries kept before :data:`_MADE` is emptied: a few decks' worth (a deck makes about 300, at most 20 KB
#: each with the arrays it holds, and about 300 more that find :func:`blurred`'s templates).
_MOST_MADE: Final = 1024


def _made_once(kind: str, arrays: tuple[Glyph, ...], make: Callable[[], T]) -> T:
    """``make()`` for read-only ``arrays``, made once and kept by their identity (the entry holds them, so
    an identity is never another array's while kept); for arrays that can change, made each time. Why:
    every suit read is judged at its index's sharpness (:func:`at_sharpness`), which sorted the same
    blurred rank template's levels and stacked the same two blurred suit templates at every read, 0.03 ms
    of the 0.14 ms the judgement takes; the values are the same arrays' same arithmetic."""
    if not all(map(_frozen, arrays)):
        return make()
    key = (kind, *map(id, arrays))
    hit = _MADE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], arrays, strict=True)):
        return cast(T, hit[1])
    if len(_MADE) >= _MOST_MADE:
        _MADE.clear()
    value = make()
    _MADE[key] = (arrays, value)
    return value


def _frozen(array: Glyph) -> bool:
    """Whether ``array``'s bytes can never change: it and every array it is a view of are read-only, down to
    memory of its own or immutable bytes. A read-only view of a writeable array shows new bytes when that
    array is written (a review, 2026-12-07), so it is not kept by its identity."""
    seen: object = array
    while isinstance(seen, np.ndarray):
        if seen.flags.writeable:
            return False
        seen = seen.base
    return seen is None or isinstance(seen, bytes)


@lru_cache(maxsize=64)
def _places(size: int) -> NDArray[np.int64]:
    """The places of :data:`TONE_LEVELS` quantiles (nearest below) among ``size`` sorted levels."""
    at = np.linspace(0, size - 1, TONE_LEVELS).astype(np.int64)
    at.setflags(write=False)
    return at


def index_blur(rank: Glyph, template: Glyph) -> float | None:
    """The sigma (rank template pixels) that best turns the rank's enrolled ``template`` into the
    observed, normalised ``rank`` glyph by the reader's own correlation; None when the best is the
    largest tried (blurred past what is measured here: nothing is settled from it)."""
    ladder = _made_once("ladder", (template,), lambda: _ladder(template.tobytes(), template.shape,
                                                                template.dtype.str))
    scores = correlations(rank, ladder)
    best = int(np.argmax(scores))
    return None if best == len(SIGMAS) - 1 else SIGMAS[best]


@lru_cache(maxsize=64)
def _ladder(data: bytes, shape: tuple[int, ...], dtype: str) -> Stack:
    """The template at every sigma of :data:`SIGMAS`, stacked once (the same correlations, to the bit)."""
    template = np.frombuffer(data, np.dtype(dtype)).reshape(shape)
    return Stack.of([blurred(template, s) for s in SIGMAS])


def settle(glyph: Glyph, first: Glyph, second: Glyph, sigma: float, ratio: float) -> tuple[int, float] | None:
    """(0, its distance ratio) when ``glyph`` is at most ``ratio`` as far from ``first`` as from
    ``second`` where the two, both blurred by ``sigma``, differ (:func:`vision.compare.distances`);
    (1, ...) the other way round; None when neither is (or they no longer differ at that blur)."""
    apart = distances(glyph, blurred(first, sigma), blurred(second, sigma))
    if apart is None:
        return None
    to_a, to_b = apart
    if to_a <= ratio * to_b:
        return 0, to_a / to_b
    if to_b <= ratio * to_a:
        return 1, to_b / to_a
    return None


def tone(rank: Glyph, template: Glyph) -> Callable[[Glyph], Glyph] | None:
    """The index's tone: the monotone map of levels that takes the normalised ``rank`` glyph's to its
    ``template``'s (blurred to the index's sharpness; the same size), quantile by quantile
    (:data:`TONE_LEVELS`, each the nearest-below sample of both sorted); None when the rank has a single
    level (no ink to measure a tone by)."""
    if rank.shape != template.shape:
        raise ValueError(f"a rank glyph of {rank.shape} against a template of {template.shape}")
    at = _places(rank.size)
    seen = np.sort(rank, axis=None)[at].astype(np.float64)
    wanted = _made_once("levels", (template,), lambda: np.sort(template, axis=None)[at].astype(np.float64))
    # Each level's first quantile: where the level rises (over -inf, the first), as numpy's diff with -inf
    # before it finds it (a - b > 0 is a > b for any two floats), without its wrapper (both: 5 us of 21).
    rises = np.empty(len(seen), bool)
    rises[0] = seen[0] > -np.inf
    np.greater(seen[1:], seen[:-1], out=rises[1:])
    first = np.flatnonzero(rises)
    if len(first) < 2:
        return None
    counts = np.empty(len(first), np.int64)
    np.subtract(first[1:], first[:-1], out=counts[:-1])
    counts[-1] = len(seen) - first[-1]
    levels, mapped = seen[first], np.add.reduceat(wanted, first) / counts  # a level at several: their mean
    return lambda glyph: np.asarray(np.interp(glyph, levels, mapped), np.float32)


def at_sharpness(
    glyph: Glyph, suit: Match, scores: dict[str, float], rank_glyph: Glyph, rank: str, profile: DeckProfile,
    settles: bool = True,
) -> Match:
    """``suit`` judged against the other suit of its colour at the index's own sharpness and tone (see
    the module). ``scores``: the glyph's correlation with each suit template.

    A suit the sharp comparison leaves between its colour's two (the third out by the usual margin) is
    settled between them, when the nearer where they differ is also the better as a whole and the glyph
    as seen, unmapped, settles the same way; not at all without ``settles`` (a rank read only once
    aligned, whose glyph as cut measures no sharpness or tone). A suit the
    sharp comparison read is kept, or doubted (:attr:`vision.matching.Match.doubt`) when the other of its
    colour is nearer or better: a confident one is never turned into another. Across colours it stays as
    it is: a club blurred until a spade and a diamond fit it alike settled as the spade (7C and JC of
    ``vision.synth``'s classic and bold decks, blurred 4 and 4.5 face pixels, shown to a serif
    enrolment). The settled match keeps the sharp scores, so its lead never lets it stand in for the
    other index (:data:`vision.recognise.ONE_INDEX_LEAD`)."""
    accept = profile.spec.accept
    if suit.score < accept.min_score:
        return suit
    read = suit.why_not("suit", accept.min_score, accept.max_ratio) is None
    red = suit.name in RED_SUITS
    rival = max((name for name in scores if name != suit.name and (name in RED_SUITS) == red),
                key=scores.__getitem__, default=None)
    third = sorted(scores.values(), reverse=True)[2:3]
    third_near = bool(third) and (1 - suit.score) > accept.max_ratio * (1 - third[0])
    if rival is None or (not read and (suit.runner != rival or third_near or not settles)):
        # No rival in the deck; or left between two colours (a spade as near as a diamond: the shape is gone),
        # or with a third suit near, or with a rank that cannot measure: not settled.
        return suit
    template = profile.ranks[rank]
    sigma = index_blur(rank_glyph, template)
    if sigma is None and not read:
        return suit
    # Blurred past the scale: judged at the least blur it has (the largest measured).
    sigma = SIGMAS[-1] if sigma is None else sigma
    toned = tone(rank_glyph, blurred(template, sigma))
    if toned is None:
        return replace(suit, doubt="with no tone to measure by its rank") if read else suit
    index = profile.spec.index
    # The rank's sigma in face pixels, then in the suit template's pixels (each has its own scale).
    sigma *= (SUIT_FILL * SUIT_SIZE[1] / index.suit_height) / (RANK_FILL * RANK_SIZE[1] / index.rank_height)
    mine, other = profile.suits[suit.name], profile.suits[rival]
    seen = toned(glyph)
    settled = settle(seen, mine, other, sigma, SPLIT_RATIO)
    both = (blurred(mine, sigma), blurred(other, sigma))
    whole = correlations(seen, _made_once("pair", both, lambda: Stack.of(both)))
    if read:
        if (settled is not None and settled[0] == 1) or whole[0] <= whole[1]:
            return replace(suit, doubt=f"nearer {rival} at the index's own sharpness and tone")
        return suit
    # Settled only where the glyph as seen settles the same way: the map of levels also takes another
    # deck's stroke weight for a tone (a review: the classic deck's 4C, sharp, shown to the serif
    # enrolment, settled as the spade once mapped).
    plain = settle(glyph, mine, other, sigma, SPLIT_RATIO)
    agree = settled is not None and plain is not None and plain[0] == settled[0]
    if settled is None or not agree or (whole[0] > whole[1]) != (settled[0] == 0):
        return suit
    won, split = settled
    pair = [(suit.name, suit.score), (rival, scores[rival])]
    (name, score), (runner, runner_score) = pair[won], pair[1 - won]
    return Match(name, score, runner, runner_score, split)
