"""The looks for a second card's paper beside a card read: a bright region (:func:`apart`) or grey
paper, however dim (:func:`dim_second`).

Why: one card at a time must hold whatever light the second card is in. A second card brighter than the
table is a second bright region: the detector refuses it inside the window, and :func:`apart` finds one
reaching the window's edge beside a card read by its indices. One dimmer than the table (in shadow, under
the far side of a lamp) is no bright region at all, and its index may not read alone (a 10's rank is
two pieces), so it was missed beside a card read by its outline on felt and beside a card read by its
indices on pale wood; sweeps of two-card scenes found the reader reading one of two cards apart, one of
two touching, and the top card over a dim card showing most of its face (with the lower card as bright
as the top one, never: the two make one odd outline). Saturation hardly depends on the light: a dim
card's paper is nearly as grey as a lit one's (exactly, for brightness alone; a shadow lit by the room,
not the lamp, takes a cast: :data:`TABLE_SHARE`), while felt, wood and tinted cloth are coloured. So the
grey pixels at any level but a dark one show every card, bright or dim, and a region of them apart from
the card read, wholly inside the window and shaped like a card, or the regions along its outline making
one outline with it (a card under it), is a second card.

What it cannot see: on a grey or pale table the table is grey too and reaches the window's edge, so a
dim card there is still the other looks' to find (:mod:`vision.face_down`, the candidate indices); nor a
card apart showing less than :data:`LEAST_SHOWN` of its area, or a triangle of it; a card under the card
showing less than about a quarter of its width (:data:`THICK`); a dim card joined to a neighbour reaching
the window's edge; a card darker than :data:`DARKEST_PAPER` (:data:`DARKEST_ON_COLOUR` on a coloured
table). What it leaves alone: a neighbour reaching the window's edge, a grey sheet or mat the card lies
on. It sets no upper size: a chip touching a dim card makes their region larger than a card, and a
limit let the card be read past (a sweep's finding).
What it costs: a grey object of a card's size and shape in the window (a white box, a sheet of paper, a
discard holder) leaves the frame unknown, a read lost, never a wrong one; so does, in a frame without
colour (a mono camera), any such object above :data:`DARKEST_PAPER`; and about 0.4 ms per card read (at
the looks' half working size; 13 % less since its medians and grey mask are OpenCV's, 2026-12-07, and no
longer 1 ms more where a median fell between two levels).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import Tinted, median_under, tint_of
from vision.regions import areas, labelled
from vision.window import Bounds, side_lengths

#: Grey levels below this are no paper, however grey: ink, a shadow, a dark gap (the ink search's floor
#: for paper too, :data:`vision.candidates.MIN_PAPER`), on a table as grey as paper (dark grey or black
#: cloth: below it, the table itself would be paper, and a dim card on it would join it).
DARKEST_PAPER: Final = 80
#: The same floor on a coloured table (its median pixel not grey: felt, wood, tinted cloth), where dark
#: grey is no table: a card at a fifth of the light still shows (at 80, under a third did not).
DARKEST_ON_COLOUR: Final = 50
#: A second card's paper shows by at least this share of the card's area (its convex hull), filling at
#: least :data:`RECT_FILL` of its least rectangle: a card apart, or a band of one showing from under the
#: card. Chips (a tenth of a card's area, round), a laptop's lit rim (thin) and a grey table's grain are
#: not.
LEAST_SHOWN: Final = 0.4
RECT_FILL: Final = 0.8
#: A card under the card read, showing along its outline, shows by at least this share of the card's area
#: (its pixels, after the card's own rim), at least :data:`THICK` of the card's width thick: a 10 lying
#: under the QS a quarter of its width aside and down. The card's own paper past a loose outline is a
#: sliver (thin); a chip touching the card is round, no outline of straight sides with it
#: (:func:`one_outline`).
LEAST_BAND: Final = 0.08
THICK: Final = 0.15
#: The band fills at least this share of what its joint hull with the card adds to the card: an L round
#: a corner 0.84 to 0.89, a straight band 0.89 to 0.93, the wedge of a card turned under it 0.79 to 0.86,
#: a round blob touching the card about 0.6.
BAND_FILL: Final = 0.7
#: A piece along the outline smaller than this share of the card is a speck of grey (a corner's glint,
#: the table's grain), left out of the band: it would only stretch the band's hull.
SPECK: Final = 0.02
#: How far past the card's outline its own paper may show in the grey pixels (working pixels): blur.
OWN_RIM: Final = 3
#: The opening's square as a share of the working width (5 pixels at the looks' 240): specks of grey
#: table grain go, a card's paper stays.
OPEN_SHARE: Final = 7 / 320
#: A second card's paper under a light of another colour (a lamp's warm light on the card, the room's cooler
#: light in its shadow) takes a cast of that colour: paper is grey up to this share of the table's
#: saturation (green felt's 0.67: 0.27; a cast of 15 % is 0.15), when that is more than the bright paper's.
TABLE_SHARE: Final = 0.4
#: The closing's square (working pixels): a dim card's pips and thin margins break its grey paper into
#: pieces, which it joins again.
CLOSE: Final = 5


def grey_paper(small: MatLike, inside: MatLike | None, seen: Tinted | None = None) -> MatLike:
    """The grey pixels of the working frame ``small`` (in the window ``inside``, if any) not darker than
    :data:`DARKEST_PAPER` (:data:`DARKEST_ON_COLOUR` on a coloured table): those whose saturation (the
    greatest channel less the least, over the greatest, blurred) is at most the bright paper's (Otsu's
    level of the bright pixels' chroma over their median light) or :data:`TABLE_SHARE` of the table's
    (its median, the pixels not bright), the higher; opened by :data:`OPEN_SHARE` of the width. ``seen``:
    ``small``'s :func:`vision.levels.tint_of`, if made already."""
    _, most, chroma = tint_of(small) if seen is None else seen
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    table = cv2.bitwise_not(bright)
    if inside is not None:
        bright = cv2.bitwise_and(bright, inside)
        table = cv2.bitwise_and(table, inside)
    where = bright > 0
    if not where.any():
        return np.zeros_like(grey)
    saturation = cv2.divide(chroma, most, scale=255)
    level = cv2.threshold(chroma[where].reshape(1, -1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
    # The medians from their histograms (:func:`vision.levels.median_under`, numpy's median exactly, as the
    # 50th percentile of :func:`vision.levels.grey_percentile` was; it fell back on numpy's partition of the
    # masked pixels, about 1 ms, where the middle fell between two levels: 2 of the slowest frames' 20 looks).
    bright_level = median_under(most, bright)  # some bright pixel (``where``)
    paper = level * 255 / max(0.0 if bright_level is None else bright_level, 1.0)
    table_level = median_under(saturation, table)  # None: no table pixel
    tinted = 0.0 if table_level is None else table_level
    cut = max(paper, TABLE_SHARE * tinted)
    # saturation <= cut and grey >= the floor, as 255 and 0: OpenCV thresholds an 8-bit image at the floor of
    # its level (a level's pixel is above ``cut`` exactly when above its floor; a level past 255 or under 0
    # sets all or none, as the test does), for a sixth of numpy's comparisons and conversions.
    floor = DARKEST_ON_COLOUR if tinted > cut else DARKEST_PAPER
    found = cv2.bitwise_and(cv2.threshold(saturation, cut, 255, cv2.THRESH_BINARY_INV)[1],
                            cv2.threshold(grey, floor - 1, 255, cv2.THRESH_BINARY)[1])
    side = max(3, round(OPEN_SHARE * small.shape[1]) | 1)
    opened = cv2.morphologyEx(found, cv2.MORPH_OPEN, np.ones((side, side), np.uint8))
    return opened if inside is None else cv2.bitwise_and(opened, inside)


def second_grey(grey: MatLike, quad: NDArray[np.float32], rim: MatLike) -> bool:
    """Whether the grey pixels ``grey`` (in the window) hold, besides the card at ``quad`` (working
    pixels), a card's paper wholly inside the window (off its ``rim``) and not around the card's centre
    (a grey sheet the card lies on): a region apart whose convex hull covers at least :data:`LEAST_SHOWN`
    of the card's area and :data:`RECT_FILL` of its least rectangle, or the regions along the card's
    outline, together a band at least :data:`LEAST_BAND` of its area and :data:`THICK` of its width thick
    that makes one outline with the card (a card lying under it: :func:`one_outline`)."""
    rest = grey.copy()
    corners = np.round(quad).astype(np.int32)
    cv2.fillConvexPoly(rest, corners, 0)
    cv2.polylines(rest, [corners.reshape(-1, 1, 2)], True, 0, 2 * OWN_RIM + 1)
    card = cv2.contourArea(quad)
    sides = sorted(side_lengths(quad))
    closed = cv2.morphologyEx(rest, cv2.MORPH_CLOSE, np.ones((CLOSE, CLOSE), np.uint8))
    contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    along = np.zeros_like(rest)
    cv2.polylines(along, [corners.reshape(-1, 1, 2)], True, 255, 2 * (OWN_RIM + CLOSE) + 1)
    band: list[MatLike] = []
    for contour in contours:
        if np.any(rim[contour[:, 0, 1], contour[:, 0, 0]]):
            continue  # a neighbour reaching the window's edge
        hull = cv2.convexHull(contour)
        if not card_sized(hull, sides, quad):
            continue
        if np.any(along[contour[:, 0, 1], contour[:, 0, 0]]) and cv2.contourArea(contour) >= SPECK * card:
            band.append(contour)  # a speck would only stretch the band's hull
        area = cv2.contourArea(hull)
        (_, _), (w, h), _ = cv2.minAreaRect(hull)
        if area >= LEAST_SHOWN * card and area >= RECT_FILL * w * h:
            return True
    return bool(band) and one_outline(closed, band, quad, sides)


def card_sized(hull: MatLike, sides: list[float], quad: NDArray[np.float32]) -> bool:
    """Whether a region's convex ``hull`` could be a card's paper beside the card at ``quad`` (its
    ``sides``, shorter first): not around the card's centre (a sheet or a mat the card lies on is). No
    upper size: a chip touching a dim card makes one region larger than a card."""
    return bool(cv2.pointPolygonTest(hull, tuple(map(float, quad.mean(axis=0))), False) < 0)


def one_outline(closed: MatLike, band: list[MatLike], quad: NDArray[np.float32],
                sides: list[float]) -> bool:
    """Whether the regions ``band`` along the card's outline are a card under it: at least
    :data:`LEAST_BAND` of the card's area, :data:`THICK` of its width thick somewhere, and filling
    :data:`BAND_FILL` of what their joint convex hull with the card adds to the card (two cards, one over
    the other, make one outline of straight sides; a grey blob touching the card does not)."""
    mask = np.zeros_like(closed)
    cv2.drawContours(mask, band, -1, 255, cv2.FILLED)
    mask = cv2.bitwise_and(mask, closed)
    shown = float(cv2.countNonZero(mask))
    card = cv2.contourArea(quad)
    if shown < LEAST_BAND * card:
        return False
    if cv2.distanceTransform(mask, cv2.DIST_L2, 3).max() * 2 < THICK * sides[0]:
        return False
    points = np.vstack([np.vstack(band).reshape(-1, 2).astype(np.float32), quad])
    room = np.zeros_like(closed)
    cv2.fillConvexPoly(room, np.round(cv2.convexHull(points)).astype(np.int32), 255)
    corners = np.round(quad).astype(np.int32)
    cv2.fillConvexPoly(room, corners, 0)
    cv2.polylines(room, [corners.reshape(-1, 1, 2)], True, 0, 2 * OWN_RIM + 1)
    return shown >= BAND_FILL * cv2.countNonZero(room)


def dim_second(small: MatLike, quad: NDArray[np.float32], win: Bounds, seen: Tinted | None = None) -> bool:
    """Whether the window (``win``, in the working frame ``small``) holds a second card's grey paper,
    however dim, apart from the card at ``quad`` (:func:`grey_paper`, :func:`second_grey`). ``seen``:
    ``small``'s :func:`vision.levels.tint_of`, if made already."""
    return second_grey(grey_paper(small, win.inside, seen), quad, win.rim)


def apart(small: MatLike, quad: NDArray[np.float32], inside: NDArray[np.uint8] | None, least: float) -> bool:
    """Whether the window holds a bright region of a card's size (``least``: a share of the frame) apart
    from the card at ``quad`` (Otsu's bright mask, as the detector's): a second card that shows no index
    (a face-down back, a pile of them) reaching the window's edge beside a card read by its indices."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    bright = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
    if inside is not None:
        bright = cv2.bitwise_and(bright, inside)
    n, labels = labelled(bright)  # the regions' sizes only: OpenCV's statistics of all cost three times more
    card = np.zeros_like(bright)
    cv2.fillConvexPoly(card, np.round(quad).astype(np.int32), 255)
    big = np.flatnonzero(areas(labels, n)[1:n] >= least * bright.size) + 1  # no loop over specks
    return any(not np.any(card[labels == k]) for k in big.tolist())  # plain ints: no int64 copy of labels
