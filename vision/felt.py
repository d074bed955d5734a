"""Whether a window that reads empty is the empty window seen before the card: a hand is no cleared window.

Why: a card is reported once and not again until the window has been seen empty (:mod:`vision.stable`),
and "empty" is what the detector says of a window with no contrast or nothing card-sized in it. A hand or
a sleeve passing right over the lens, out of focus, fills the window with a blur that has neither, and so
does a palm held a little above the card, or an arm lying across it: seen so for a few frames, the card
lying under it was taken for gone and dealt a second time when the hand moved away (a second reading,
2026-12-06).

A truly empty window is the felt, as it was before the card came: the same pixels, the same light, the
same exposure (a camera's automatic exposure darkens the frame while a white card lies in it, so the felt
*around* the card is no reference; an empty window is). So the window settled empty is kept
(:class:`Settled`; :func:`look`, the frame shrunk to :data:`WIDTH` pixels in Lab; a refused read only where
it is the felt round the next card under another light, :func:`healed`), and when a card is reported it
becomes that card's reference (:func:`before`, with the card's place, :func:`widened` as it is read again); a
frame that reads empty while the card lies in the window clears it only when
at least :data:`SHARE` of the window's pixels are alike in both (:func:`unlike`): a* and b* within
:data:`CHROMA`, the lightness within :data:`LIGHT`. A share, not a mean: a palm over the card leaves most
of the window felt, and the card's place is what matters. A light switched on or off between two cards,
or a camera's white balance moving, refuses an empty window too: the daemon then asks the dealer about an
identical next card (:mod:`controller.daemon.camera_link`), it never deals it silently or stalls.

What it cannot tell: something over the card of the felt's own colour and lightness. What it costs: the
frame shrunk and converted (about 1 ms), only for frames that read empty and frames a card is reported
from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.window import ScanWindow, bounds

Image = MatLike

#: The width (pixels) the window is compared at: colours and places, not detail (a sensor's noise and
#: the felt's weave average out).
WIDTH: Final = 96
#: The share of the window's pixels that must be alike for the window to be the empty one seen before.
#: The simulated table (vision.synth, both conditions, five felts): an empty window under another tint and
#: gradient of the light than the one before, 0.82 to 1 (399 of 400 at 0.9 or more); a hand or a sleeve
#: over the lens, or a palm over the card, read empty: 0.85 at most (262 frames).
SHARE: Final = 0.9
#: The largest distance of a pixel's a*b* from the reference's (OpenCV's 8-bit Lab, about one unit per
#: CIE unit): a light's tint moves the felt by a few.
CHROMA: Final = 12.0
#: A pixel's lightness over the reference's (each plus :data:`DARK`) must lie in this range.
LIGHT: Final = (0.75, 1.33)
#: Added to both lightnesses before their ratio: a dark felt's noise is no change of light.
DARK: Final = 10.0
#: What is not alike in a window that clears a card must be less than this share of the card's area: a palm
#: over the card covers it all (28 simulated palms over a small card that read empty: 0.89 to 2 times its
#: area). Not less: an arm's shadow at the window's edge, 7 % of it, is no hand over a card of the least
#: size the camera needs (200 px tall at 640 x 480, 9 to 13 % of the window; a third reading: at 0.5, it
#: held identical next cards for the dealer).
COVER: Final = 0.8
#: The share alike a run of empty reads keeps to its first read, and a window to the one settled before to
#: settle in ``frames`` (:class:`Settled`): under a steady light they are all alike; a hand over 9 % of the
#: window is not the window (a third reading: one such frame became the reference at :data:`SHARE`).
RUN: Final = 0.98
#: The reads of a card after its report whose places are judged beside the place at report (:func:`widened`).
RECENT: Final = 3


@dataclass(frozen=True)
class Look:
    """A window as compared: each pixel's Lab (float) at :data:`WIDTH` pixels wide, and the window's."""

    lab: NDArray[np.float32]
    inside: NDArray[np.bool_]


def thinned(frame: Image) -> tuple[Image, tuple[int, int]]:
    """``frame`` thinned for averaging down to :data:`WIDTH` pixels wide, and that size (width, height):
    a 12 MP frame is first thinned, a colour or a light being in any of its pixels. Shared with
    :func:`vision.unseen.levels`, which judges the same window at the same size."""
    h, w = frame.shape[:2]
    step = max(1, w // (4 * WIDTH))
    return np.ascontiguousarray(frame[::step, ::step]), (WIDTH, max(1, round(WIDTH * h / w)))


def look(frame: Image, window: ScanWindow | None) -> Look:
    """``frame``'s window as :func:`unlike` compares it."""
    thin, size = thinned(frame)
    small = cv2.resize(thin, size, interpolation=cv2.INTER_AREA)
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    elif small.shape[2] == 4:
        small = cv2.cvtColor(small, cv2.COLOR_BGRA2BGR)
    lab = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), np.float32)
    mask = bounds(window, size).inside
    inside = np.ones((size[1], size[0]), bool) if mask is None else mask > 0
    return Look(lab, inside)


@dataclass(frozen=True)
class Before:
    """The window as it was empty before a card, and the card's place in it (None: not known): where it
    was reported and where it was read last (:func:`widened`)."""

    empty: Look
    place: NDArray[np.bool_] | None
    reported: NDArray[np.bool_] | None = None  # None: ``place`` is the place at report
    recent: tuple[NDArray[np.bool_], ...] = ()


def before(empty: Look, corners: NDArray[np.float32] | None, frame: tuple[int, ...]) -> Before:
    """A card's reference: the window ``empty`` before it, and its place from its ``corners`` in a frame of
    shape ``frame`` (widened by a pixel of the working size: a palm over it covers its edge too)."""
    if corners is None:
        return Before(empty, None)
    h, w = empty.inside.shape
    mask = np.zeros((h, w), np.uint8)
    cv2.fillPoly(mask, [np.round(corners * (w / frame[1])).astype(np.int32)], 255)
    wide = cv2.dilate(mask, np.ones((3, 3), np.uint8))
    return Before(empty, (np.asarray(wide) > 0) & empty.inside)


Corners = NDArray[np.float32] | None


def widened(card: Before | None, corners: Corners, frame: tuple[int, ...]) -> Before | None:
    """``card``'s reference with its place widened to where it is read now (``corners``): a card moved a
    little after its report, then covered, is judged where it lies. Only its place at report and at its
    last :data:`RECENT` reads: a card dragged across the window while read spread its place over most of
    it, and a palm over the card then left 90 % of that place alike (a third reading)."""
    if card is None or card.place is None or corners is None:
        return card
    moved = before(card.empty, corners, frame).place
    if moved is None:
        return card
    reported = card.place if card.reported is None else card.reported
    recent = (*card.recent, moved)[-RECENT:]
    place = reported.copy()
    for read in recent:
        place |= read
    return Before(card.empty, place, reported, recent)


def healed(recent: Sequence[Look], now: Look, corners: Corners, frame: tuple[int, ...],
           kept: Look | None = None) -> Look | None:
    """The newest of ``recent``, empty reads since the last card (refused or not, oldest first), that is the
    window under another light, not a hand, or None: the ``kept`` reference is unlike the frame ``now`` a
    new card is reported from outside that card's place (the light changed), the read is alike ``now``
    there and on the ring round the card, and both the ring in ``now`` and the card's place in the read are
    the felt, the window's own colour outside the card in ``now``. Readings: a palm over the last card,
    lying where this one lies, became the reference and a like palm then dealt the card twice (a third); a
    hand over the spot a little larger than the card made the felt round the place itself (a fourth); an
    arm beside the card over half the ring made the ring's colour skin (a fifth). And a second: after a
    light switched on, every identical next card went to the dealer for good. What depends on ``now``
    alone (the place, the ring, the felt, the kept reference's test) is found once for every read tried;
    a read of another size than ``now`` (the camera opened again at another resolution) is never alike."""
    if not recent or corners is None:
        return None
    place = before(now, corners, frame).place
    if place is None:
        return None
    outside = _outside(now, place)
    if kept is not None and share_alike(kept, now, outside) >= SHARE:
        return None  # the light did not change: the kept reference stands
    ring = (np.asarray(cv2.dilate(place.astype(np.uint8), np.ones((15, 15), np.uint8))) > 0) & outside
    if not ring.any():
        return None
    # The felt is the window's own, outside the card in the card's frame, not the ring's: an arm beside the
    # card over half its ring made the ring's median skin, and a hand over the spot passed (a fifth reading).
    felt = Look(np.broadcast_to(np.median(now.lab[outside], axis=0), now.lab.shape).astype(np.float32),
                now.inside)
    if share_alike(felt, now, ring) < SHARE:
        return None
    for latest in reversed(recent):
        if (latest.lab.shape == now.lab.shape and share_alike(latest, now, outside) >= SHARE
                # the ring in the card's frame is the felt (the card was just read): a hand over it is not
                and share_alike(latest, now, ring) >= SHARE and share_alike(felt, latest, place) >= SHARE):
            return latest
    return None


#: A window whose lightness varies less than this (its standard deviation at :data:`WIDTH` pixels wide,
#: OpenCV's 8-bit L) is flat, one colour: no felt to judge by. A flat frame with a sensor's noise of 6
#: levels: 0.4 to 0.7; the simulated felts, the plainest there are: 0.97 and more (the whole frame; less in a
#: small window, so it only ever refuses a reference, never stops a camera).
FLAT: Final = 0.75
#: A reference whose pixels, this share of them or more, are under :data:`UNLIT` or over :data:`WASHED`
#: times the light of the frame a card is reported from (away from the card) is no window under that
#: light: a lamp off, the lens covered, an exposure gone wrong. A camera's automatic exposure darkening the
#: felt round a white card is at about 0.6 (:func:`reference` must keep it).
UNLIT: Final = 0.4
WASHED: Final = 2.5
BLANK_SHARE: Final = 0.9


def blank(kept: Look, now: Look, where: NDArray[np.bool_] | None = None) -> bool:
    """Whether ``kept``, an empty window settled, is no window to judge the frame ``now`` by: flat, or far
    darker or lighter than ``now`` over ``where`` (away from the card)."""
    where = now.inside if where is None else where
    light = kept.lab[..., 0][kept.inside]
    if light.size == 0 or float(light.std()) < FLAT or kept.lab.shape != now.lab.shape or not where.any():
        return True
    ratio = (now.lab[..., 0][where] + DARK) / (kept.lab[..., 0][where] + DARK)
    return bool(np.count_nonzero((ratio < UNLIT) | (ratio > WASHED)) >= BLANK_SHARE * ratio.size)


def reference(recent: Sequence[Look], now: Look, corners: Corners, frame: tuple[int, ...],
              kept: Look | None) -> Look | None:
    """The window a card reported from the frame ``now`` is judged by when it seems gone (:func:`before`):
    a read of ``recent`` under a new light (:func:`healed`), else the ``kept`` settled window unless it is
    :func:`blank`, else none: then no empty read clears the card, and read again it goes to the dealer
    (``repeat_card``), never dealt twice.

    Why not ``kept`` whatever it is: a camera dark (or flat grey) for two seconds over the empty window, a
    lamp off or the lens covered, settled that as the window; a card laid then and read once the light
    was back took it for its reference, and the next dark moment passed for its empty window: the card
    was dealt again (a review, 2026-12-07)."""
    found = healed(recent, now, corners, frame, kept)
    if found is not None or kept is None:
        return found
    place = None if corners is None else before(now, corners, frame).place
    return None if blank(kept, now, None if place is None else _outside(now, place)) else kept


def _outside(now: Look, place: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """The window in ``now`` away from a card's ``place`` (two pixels of the working size off its edge)."""
    wide = cv2.dilate(place.astype(np.uint8), np.ones((5, 5), np.uint8))
    return now.inside & ~(np.asarray(wide) > 0)


class Settled:
    """The window as last seen empty for a run of reads, each :data:`RUN` alike the first of them: the
    reference a new card is judged by (:func:`before`). A run as alike the window kept already settles
    after ``frames`` reads; any other (a new light, or the first of all) only after ``new`` reads. Empty
    reads refused are never fed to it, even with no reference to judge them by: a palm held over the card
    lying there at start settled, and became the next card's reference (a third reading).

    Why not the last empty read: a hand or a sleeve over the *empty* window, right before a card is dealt,
    also reads empty, and with no card there nothing refuses it; as the card's reference, a like hand over
    the card later passed for its empty window and the card was dealt twice (a second reading,
    2026-12-06). Why a longer run for a new window: a sleeve over the whole lens is a smooth blur of one
    colour, alike from frame to frame even while it moves (a third reading: four black sleeves, 92 % alike
    or more, settled in half a second); an arm rarely lies across the lens for ``new`` reads, a new light
    stays (until then, :func:`healed` takes it at the next card). Each run is compared with its first
    read, not the one before, and at :data:`RUN`, not :data:`SHARE`: a hand coming in slowly, or over a
    tenth of the window, does not creep into the reference. What it cannot tell: a hand or a sleeve over
    the empty window for ``new`` reads."""

    def __init__(self, frames: int, new: int) -> None:
        self.frames, self.new = frames, new
        #: The settled empty window (None: not seen empty for long enough yet).
        self.kept: Look | None = None
        self._first: Look | None = None
        self._run = self._needed = 0

    def seen(self, now: Look) -> None:
        """An empty read: it extends the run alike its first read, or starts a new run."""
        if self._first is not None and share_alike(self._first, now) >= RUN:
            self._run += 1
        else:
            known = self.kept is not None and share_alike(self.kept, now) >= RUN
            self._first, self._run, self._needed = now, 1, self.frames if known else self.new
        if self._run >= self._needed:
            self.kept = now

    def broken(self) -> None:
        """A read that is not an empty window, or one refused: the run starts again."""
        self._first, self._run = None, 0


def share_alike(empty: Look, now: Look, where: NDArray[np.bool_] | None = None) -> float:
    """The share of the window's pixels (or those ``where`` says) alike in ``empty`` and ``now`` (0 when
    their sizes differ: a camera opened again at another resolution)."""
    where = empty.inside if where is None else where
    if empty.lab.shape != now.lab.shape or not where.any():
        return 0.0
    a, b = empty.lab[where], now.lab[where]
    chroma = np.hypot(b[:, 1] - a[:, 1], b[:, 2] - a[:, 2])
    ratio = (b[:, 0] + DARK) / (a[:, 0] + DARK)
    alike = (chroma <= CHROMA) & (ratio >= LIGHT[0]) & (ratio <= LIGHT[1])
    return float(np.count_nonzero(alike)) / len(alike)


def unlike(card: Before, now: Look) -> str | None:
    """Why ``now`` is not the window as it was empty before the ``card`` (None: it is): the whole window
    and the card's own place must each be :data:`SHARE` alike (a palm over a small card leaves most of
    the window as it was), and what is not alike in the window less than :data:`COVER` of the card's
    area (a hand that moved a small card while covering it, never read where it came to rest, left its
    place at report bare and 93 % of the window alike: a second reading)."""
    share = share_alike(card.empty, now)
    place = 1.0 if card.place is None else share_alike(card.empty, now, card.place)
    reported = card.place if card.reported is None else card.reported
    inside = max(1, int(np.count_nonzero(card.empty.inside)))
    area = 1.0 if reported is None else int(np.count_nonzero(reported)) / inside
    if share >= SHARE and place >= SHARE and 1.0 - share < COVER * area:
        return None
    if share >= SHARE and place >= SHARE:
        return (f"{1.0 - share:.0%} of the window is not as it was empty before the card, as much as "
                f"{COVER:.0%} of the card (a hand that moved it, or a shadow?)")
    where = "the card's place" if place < share else "the window"
    return (f"only {min(share, place):.0%} of {where} is as it was empty before the card (a hand or a sleeve "
            "over it, or the light changed?)")
