"""A suit is read only when its shape alone says its colour: the ink's colour is never the only guard.

Why: the reader matches a suit by shape, then checks the ink's colour (:mod:`vision.colour`). Where the
shape pointed at the wrong colour, the colour check alone held the wrong card out: four small webcam
spades of BlackjackCV whose best template is the diamond, and GuilleX7's q12-7S, a small blurry spade
whose proportions (wider than the deck's spade, 1.00 against 0.75 x 1.35) ruled the spade template
out, so the diamond was best among those left. ``vision.synth``'s serif clubs blurred 3 face pixels
read as the diamond (D 0.94, C and S 0.92): blur rounds any suit into a convex blob, and the diamond is
the most blob-like template; the whole-glyph margin failed, and only where-the-two-differ (the
``split``, meant for a club's lobes against a spade's point) let the diamond through. A frame whose
colour cannot be trusted (a grey camera, a warm light, a faded red) would turn those into wrong cards.

So the shape must say the read suit's colour by itself: the best template *of the read suit's colour*
must beat the best template of the other colour by the deck's own ratio test (``accept.max_ratio``,
as the reader's runner-up test), over all four templates whatever the glyph's proportions, and with no
``split`` to excuse it (the split settles a suit within a colour only, where no colour check could
help anyway). Nothing new is learned or tuned: the deck's templates and its acceptance ratio decide.
The best of the read colour, not the read suit itself, is compared, so a soft club settled against a
spade at the index's sharpness (:func:`vision.sharpness.at_sharpness`) is judged as black ink's shape,
which it is.

What it does not hold: BlackjackCV's webcam spades, about 10 source pixels tall, correlate with the
deck's diamond at 0.96 against the spade's 0.89-0.92, inside the deck's ratio (0.33-0.58 of the
spade's distance): at that resolution the spade is drawn as a diamond, and only their ink's colour
tells them apart. A stricter cross-colour ratio (0.3) that would refuse them also refuses GuilleX7's
correctly read q11-7S and q17-3S (0.34, 0.37).
"""

from __future__ import annotations

from vision.colour import RED_SUITS


def why_not_by_shape(scores: dict[str, float], suit: str, max_ratio: float) -> str | None:
    """None when a normalised suit glyph's shape alone says ``suit``'s colour; else the reason.

    ``scores``: the glyph's correlation (:func:`vision.compare.correlations`) with each of the deck's
    suit templates, whatever their proportions; ``max_ratio``: the deck's ``accept.max_ratio``.
    """
    red = suit in RED_SUITS
    mine = max(score for name, score in scores.items() if (name in RED_SUITS) == red)
    rival = max((name for name in scores if (name in RED_SUITS) != red), key=scores.__getitem__)
    if (1 - mine) <= max_ratio * (1 - scores[rival]):
        return None
    colour = "red" if red else "black"
    return f"suit {suit} not clearly {colour} by its shape ({rival} {scores[rival]:.2f}, {mine:.2f})"

