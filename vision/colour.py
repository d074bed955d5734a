"""The suit's ink colour measured against the card's own paper beside it, so the light's colour cancels out.

Why against the paper: the ink's colour alone ((max - min) / max of its mean BGR) is the light's as
much as the ink's. Under a phone's bluish light or a warm lamp, black ink comes out dark blue or dark
brown, and because it is dark a few grey levels between its channels are a large share of its
brightest one: GuilleX7's black clubs measured 0.79, more than the 0.52 of its red hearts, and
enrolment refused the deck. The paper around the index is lit by the same light, so each channel of
the ink over the same channel of the paper (a white balance by the card itself) is the ink's own
reflectance: about equal in the three channels for black ink, whatever the light, high in red and
low in green and blue for red ink, and low in red for a blue back's pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

Image = MatLike

#: The red suits, hearts and diamonds; clubs and spades are black.
RED_SUITS: Final = frozenset("HD")


@dataclass(frozen=True)
class InkColour:
    """The ink's reflectance in each channel over the paper's: how far apart they are, and which leads."""

    #: max - min of (ink / paper) over blue, green and red: near 0 for black (grey) ink under any light,
    #: 0.4 to 1 for red ink; the profile's ``colour.red_min`` and ``colour.black_max`` are in these units.
    spread: float
    #: Red's ratio is the highest of the three (red ink, not a blue or green one of the same spread).
    red: bool


def ink_colour(crop: Image, ink: Image, paper: Image) -> InkColour:
    """The colour of ``crop``'s pixels under the mask ``ink`` relative to those under ``paper`` (both
    uint8 masks of the crop's size, non-zero where they hold).

    The ink is the mask's mean (anti-aliased edges included, as the glyph itself was cut); the paper
    is the per-channel median of the paper pixels, so a court card's coloured artwork or a speck of
    table left among them moves it little.
    """
    b, g, r, _ = cv2.mean(crop, mask=ink)
    # Three numbers a channel: Python's floats, the same IEEE arithmetic as numpy's arrays of three, for
    # a third of the calls (32 us against 42 a suit glyph, most of it the three histograms).
    ratio = [min(v / max(_median(crop, channel, paper), 1.0), 1.0) for channel, v in enumerate((b, g, r))]
    top = max(ratio)
    return InkColour(top - min(ratio), ratio[2] >= top)


def _median(crop: Image, channel: int, mask: Image) -> float:
    """One channel's median under ``mask`` (0 when the mask is empty), from its histogram: a sixth of
    ``np.median``'s time on the masked pixels, which cost half a millisecond a glyph."""
    counts = cv2.calcHist([crop], [channel], mask, [256], [0, 256]).ravel().cumsum()
    total = counts[-1]
    return float(counts.searchsorted(total / 2)) if total > 0 else 0.0


#: Where enrolment puts the thresholds between the black ink's highest spread and the red ink's lowest
#: (shares of the gap from the black side). Close to black, because the two move differently away from
#: the enrolment photographs: black ink stays grey under any light and only gains a little noise (a
#: test frame's black rose 0.05 above its enrolment's highest), while red ink mixes with the paper
#: when blurred, small or glared and loses up to half its spread (kentdoan's warm-lit 7H: 0.40 against
#: 0.89 enrolled). Between the two is neither (a coloured thing): unknown.
BLACK_SHARE = 0.2
RED_SHARE = 0.3


def thresholds(red: list[float], black: list[float]) -> tuple[float, float] | str:
    """``(red_min, black_max)`` from the enrolled red and black suits' spreads, or why there are none.

    The 1st and 99th percentiles stand for the two sides; they must not overlap. One photograph can
    move them: a deck's 52 glyphs of a colour are 26 photographs' two indices each, and the 1st
    percentile lies between the two lowest spreads, often one photograph's pair (below about 200
    glyphs of a colour, four photographs a card, a pair still sets it). That is meant: a photograph
    whose ink is the other colour's is set aside before (:func:`out_of_line`), and every photograph
    left is the deck's own ink, which the thresholds must then read (a paler red lowers ``red_min``
    and ``black_max``, both still between the deck's highest black and its lowest red).
    """
    lo_red, hi_black = float(np.percentile(red, 1)), float(np.percentile(black, 99))
    if lo_red <= hi_black:
        return (
            f"red and black suits are not told apart by colour (red ink's spread against the paper from "
            f"{lo_red:.2f}, black up to {hi_black:.2f}): light the window with white light"
        )
    gap = lo_red - hi_black
    return round(hi_black + RED_SHARE * gap, 4), round(hi_black + BLACK_SHARE * gap, 4)


#: At most this share of either colour's photographs is set aside as out of line; when more would have
#: to go, the deck's red and black truly overlap (the light, not a few photographs).
ODD_SHARE = 0.25
#: ...and a photograph is out of line only when it lies further towards the other colour than this many
#: times its own colour's median absolute deviation: an overlap within the colours' own scatter (a light
#: that takes the colour from red ink, the two medians close) is the light, never a photograph.
OUTLIER = 5.0


def out_of_line(photos: list[tuple[bool, list[float]]]) -> dict[int, str]:
    """The photographs whose ink alone stops red and black being told apart, by position in ``photos``
    (each: whether its card is red, and its glyphs' spreads), with why.

    One photograph labelled red whose index is black (rd-pong's ``Jhearts.jpg``, which shows the jack of
    spades: 0.01 against the deck's red 0.66), painted over or printed grey made the 1st percentile of
    the red spreads black's, and the whole deck was refused with a message blaming the light. The
    lowest red and highest black photographs are peeled off, the one deeper into the other colour
    first, while the two still overlap and it is nearer the other colour's median than its own; each
    is named so that its label can be checked or it re-shot. Nothing is peeled when the colours
    overlap for want of light: the overlap within the colours' own scatter (:data:`OUTLIER`), or
    more than :data:`ODD_SHARE` of a colour.
    """
    reds = [i for i, (red, _) in enumerate(photos) if red]
    blacks = [i for i, (red, _) in enumerate(photos) if not red]
    if not reds or not blacks:
        return {}
    low = {i: min(photos[i][1]) for i in reds} | {i: max(photos[i][1]) for i in blacks}
    red_mid, black_mid = float(np.median([low[i] for i in reds])), float(np.median([low[i] for i in blacks]))
    scatter = {red: float(np.median([abs(low[i] - mid) for i in group]))
               for red, group, mid in ((True, reds, red_mid), (False, blacks, black_mid))}
    odd: dict[int, str] = {}
    while red_mid > black_mid:
        red_left = [i for i in reds if i not in odd]
        black_left = [i for i in blacks if i not in odd]
        spreads = [[s for i in group for s in photos[i][1]] for group in (red_left, black_left)]
        if not isinstance(thresholds(*spreads), str):
            break
        r, b = min(red_left, key=low.__getitem__), max(black_left, key=low.__getitem__)
        into = {r: (red_mid - low[r]), b: (low[b] - black_mid)}
        worst = max(into, key=into.__getitem__)
        group = reds if worst == r else blacks
        many = sum(i in odd for i in group) + 1 > ODD_SHARE * len(group)
        if into[worst] <= max((red_mid - black_mid) / 2, OUTLIER * scatter[worst == r]) or many:
            return {}
        kind, other = ("red", "black") if worst == r else ("black", "red")
        odd[worst] = (
            f"its {kind} suit's ink measures {low[worst]:.2f} against the paper, like {other} ink (the "
            f"deck's red {red_mid:.2f}, black {black_mid:.2f}): check its label, or re-shoot it, the "
            "index unmarked and free of glare"
        )
    return odd
