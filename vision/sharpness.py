"""Settle a suit the sharp comparison leaves between two templates by comparing at the index's own sharpness.

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
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.colour import RED_SUITS
from vision.compare import correlations, distances
from vision.matching import RANK_FILL, SPLIT_RATIO, SUIT_FILL, Match
from vision.profile import RANK_SIZE, SUIT_SIZE, DeckProfile, Glyph

#: The Gaussian sigmas (rank template pixels) tried for the index's blur relative to the enrolled
#: templates, in steps fine enough that the suits' comparison does not hinge on the step.
SIGMAS: Final = tuple(0.25 * i for i in range(17))

def blurred(template: Glyph, sigma: float) -> Glyph:
    """``template`` blurred by a Gaussian of ``sigma`` pixels (itself at 0)."""
    if sigma <= 0:
        return template
    out: Glyph = cv2.GaussianBlur(template, (0, 0), sigma, borderType=cv2.BORDER_CONSTANT)
    return out


def index_blur(rank: Glyph, template: Glyph) -> float | None:
    """The sigma (rank template pixels) that best turns the rank's enrolled ``template`` into the
    observed, normalised ``rank`` glyph by the reader's own correlation; None when the best is the
    largest tried (blurred past what is measured here: nothing is settled from it)."""
    scores = correlations(rank, [blurred(template, s) for s in SIGMAS])
    best = int(np.argmax(scores))
    return None if best == len(SIGMAS) - 1 else SIGMAS[best]


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


def at_sharpness(
    glyph: Glyph, suit: Match, scores: dict[str, float], rank_glyph: Glyph, rank: str, profile: DeckProfile
) -> Match:
    """``suit``, settled between its best two templates at the index's own sharpness
    (:mod:`vision.sharpness`) when the sharp comparison leaves it between exactly those two; else as is.
    ``scores``: the glyph's correlation with each suit template (the third's margin is from them).

    Only an ambiguous suit is looked at again (a confident one is never turned into another), only
    between two suits of one colour (club and spade, heart and diamond: the colour check then holds
    the other two out), and only when the third template is out of it by the usual margin. Across
    colours it stays ambiguous: a club blurred until a spade and a diamond fit it alike settled as
    the spade (7C and JC of ``vision.synth``'s classic and bold decks, blurred 4 and 4.5 face pixels,
    shown to a serif enrolment). The settled match keeps the sharp scores, so its lead never lets
    it stand in for the other index (:data:`ONE_INDEX_LEAD`)."""
    accept = profile.spec.accept
    if suit.score < accept.min_score or suit.why_not("suit", accept.min_score, accept.max_ratio) is None:
        return suit
    if (suit.name in RED_SUITS) != (suit.runner in RED_SUITS):
        return suit  # a spade as near as a diamond: the shape is gone, and the ink's colour has a third suit
    third = sorted(scores.values(), reverse=True)[2:3]
    if third and (1 - suit.score) > accept.max_ratio * (1 - third[0]):
        return suit
    sigma = index_blur(rank_glyph, profile.ranks[rank])
    if sigma is None:
        return suit
    index = profile.spec.index
    # The rank's sigma in face pixels, then in the suit template's pixels (each has its own scale).
    sigma *= (SUIT_FILL * SUIT_SIZE[1] / index.suit_height) / (RANK_FILL * RANK_SIZE[1] / index.rank_height)
    pair = [(suit.name, suit.score), (suit.runner, suit.runner_score)]
    settled = settle(glyph, profile.suits[suit.name], profile.suits[suit.runner], sigma, SPLIT_RATIO)
    if settled is None:
        return suit
    won, split = settled
    (name, score), (runner, runner_score) = pair[won], pair[1 - won]
    return Match(name, score, runner, runner_score, split)
