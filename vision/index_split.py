"""Which pieces of ink in an index are the rank and which the suit, decided by position and shape.

Why not by vertical overlap alone: on a real court card the frame line (a tall thin upright line
beside the rank, running far below it) and a sliver of a corner pip inside the glyph area overlap
the rank vertically; joined to it, they pushed the rank's bottom below the suit and the index was
refused ("no suit under the rank"). So a piece joins the rank only when it lies on the rank's line
(its top and bottom near the top glyph's, as the ``1`` and ``0`` of a ``10``), a long thin upright
line is never a glyph on its own (never the top, never the suit), and the suit is the largest glyph
under the rank that overlaps its columns, so a pip's piece at the side is neither.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import cv2
import numpy as np
from cv2.typing import MatLike

from vision.levels import median_of
from vision.regions import areas, components, labelled

Image = MatLike

#: A piece narrower than this share of its height is a line (frame line, a pip's cut edge), not a glyph.
LINE_ASPECT: Final = 0.22
#: How far (a share of the top glyph's height) a piece's top and bottom may lie from the top glyph's and
#: still be on the rank's line: blur, a serif, a ``1`` drawn a little taller than its ``0``.
LINE_SLACK: Final = 0.25
#: An upright run of ink this many times the top glyph's height is a frame line, not a stroke of a glyph.
LINE_RUN: Final = 1.1
#: Pieces smaller than this share of the crop are specks.
SPECK: Final = 0.012
#: Up to this many labels, :func:`pieces` tests each in plain Python; more (a crop of speckled texture), in
#: numpy's arrays. The same pieces either way.
FEW_PIECES: Final = 64
#: Where the second look at a refused index puts its lighter level: this share of the way from Otsu's
#: level to the paper's median...
FADED_LEVEL: Final = 0.5
#: ...and a piece it finds is faded ink when less than this share of it is dark at Otsu's level.
FADED_DARK: Final = 0.5
#: The look at an index's ink by its local contrast (:func:`local_ink`): the paper around the ink is
#: found over a disc of this share of the larger glyph's height (wider than a stroke, about a suit)...
LOCAL_PAPER: Final = 0.8
#: ...each pixel's darkness is judged against the darkest ink in a disc of this share of that height...
LOCAL_PEAK: Final = 0.31
#: ...a pixel is ink at this share of that darkest ink...
LOCAL_SHARE: Final = 0.45
#: ...taken as at least this many grey levels under its paper, so that the paper's own grain (a few
#: levels) is never stretched into ink: the faintest ink kept is LOCAL_SHARE of it, 9 levels.
LOCAL_LEAST: Final = 20.0
#: An index whose brightest tenth is at this grey level or over lies under a glare: not looked at so.
LOCAL_GLARE: Final = 245.0


#: Why an index's ink holds no rank and suit: fewer than two pieces, or none a glyph.
NO_PAIR: Final = "no rank and suit in the index"


class Blob(NamedTuple):
    """One connected piece of ink: its bounding box in the crop and its component label."""

    y: int
    x: int
    w: int
    h: int
    label: int

    @property
    def bottom(self) -> int:
        return self.y + self.h

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def is_line(self) -> bool:
        return self.w < LINE_ASPECT * self.h


def rank_and_suit(blobs: list[Blob]) -> tuple[list[Blob], Blob] | str:
    """The rank's pieces and the suit's, or why there are none.

    The top glyph is tried from the highest down (a stray piece above the rank, such as the end of a
    pip, has no suit under it), and the first with a suit under it wins.
    """
    glyphs = sorted(b for b in blobs if not b.is_line)
    if len(blobs) < 2 or not glyphs:
        return NO_PAIR
    for top in glyphs:
        rank = on_the_line(top, blobs)
        suit = suit_under(rank, glyphs)
        if suit is not None:
            return rank, suit
    return "no suit under the rank"


def on_the_line(top: Blob, blobs: list[Blob]) -> list[Blob]:
    """The top glyph and every piece on its line: top and bottom both near the top glyph's, or (a glyph,
    not a line) lying within the top glyph's height, such as a broken-off piece of the same glyph."""
    slack = LINE_SLACK * top.h

    def joins(b: Blob) -> bool:
        if abs(b.y - top.y) <= slack and abs(b.bottom - top.bottom) <= slack:
            return True
        inside = b.y >= top.y - slack and b.bottom <= top.bottom + slack
        overlap = min(b.bottom, top.bottom) - max(b.y, top.y)
        return not b.is_line and inside and overlap > 0.5 * min(b.h, top.h)

    return [b for b in blobs if b == top or joins(b)]


def suit_under(rank: list[Blob], glyphs: list[Blob]) -> Blob | None:
    """The largest glyph below the rank's bottom that shares columns with the rank, if any."""
    bottom = max(b.bottom for b in rank)
    left, right = min(b.x for b in rank), max(b.right for b in rank)
    under = [
        b for b in glyphs if b not in rank and b.y >= bottom - 2 and min(b.right, right) > max(b.x, left)
    ]
    return max(under, key=lambda b: b.w * b.h) if under else None


def split_binary(
    binary: Image, rank_height: float | None = None
) -> tuple[Image, tuple[list[Blob], Blob] | str]:
    """The component labels of an index's ink and its rank and suit pieces (or why there are none).

    When no suit lies under the rank, the suit may be joined to a court card's frame line (one blurred
    piece running from beside the rank down past the suit): thin upright runs of ink longer than the
    top glyph are then erased and the ink split again. Longer than the top glyph, so a ``1`` standing
    beside its ``0`` is never taken for a line. With the deck's enrolled ``rank_height`` (crop pixels),
    longer than the shorter of the two: a rank joined to the frame line is as tall as the line, and
    only the rank's own height tells the line from the glyph.

    Ink of one piece at most is refused from its labels alone, before their statistics (5 us against 19
    on an index crop): most candidate indices beside a card read are one piece of texture (651 of 803
    crops on four sets' captured frames), and their statistics were a fifth of their split.
    """
    n, labels = labelled(binary)
    if n <= 2:  # one piece at most: no rank over a suit, whatever its size (:func:`rank_and_suit`)
        return labels, NO_PAIR
    labels, blobs = pieces(binary)
    split = rank_and_suit(blobs)
    if split != "no suit under the rank":
        return labels, split
    top = min(b for b in blobs if not b.is_line)
    tallest = top.h if rank_height is None else min(top.h, rank_height)
    cleaned = erase_lines(binary, int(LINE_RUN * tallest) + 1)
    if cleaned is None:
        return labels, split
    labels, blobs = pieces(cleaned)
    return labels, rank_and_suit(blobs)


def pieces(binary: Image) -> tuple[Image, list[Blob]]:
    """Connected pieces of ink, without specks and without anything cut by the crop's edge (the card's
    corner, a centre pip)."""
    n, labels, stats, _ = components(binary)
    h, w = binary.shape
    if n <= FEW_PIECES:  # the same tests on plain ints: an index holds a few pieces, numpy's calls cost 10 us
        least = SPECK * h * w
        return labels, [Blob(y, x, bw, bh, i) for i, (x, y, bw, bh, pixels) in enumerate(stats.tolist())
                        if i and pixels >= least and x > 0 and y > 0 and x + bw < w and y + bh < h]
    x, y, bw, bh, pixels = stats[1:].T
    keep = (pixels >= SPECK * h * w) & (x > 0) & (y > 0) & (x + bw < w) & (y + bh < h)
    kept = np.flatnonzero(keep) + 1  # labels (0 is the paper)
    rows = stats[kept].tolist()
    return labels, [Blob(r[1], r[0], r[2], r[3], i) for i, r in zip(kept.tolist(), rows, strict=True)]


def erase_lines(binary: Image, run: int) -> Image | None:
    """The ink with its thin upright lines of at least ``run`` pixels erased (with their anti-aliased
    fringe), or None when there are none."""
    runs = cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((run, 1), np.uint8))
    n, labels, stats, _ = components(runs)
    thin = [i for i in range(1, n) if stats[i][2] < LINE_ASPECT * stats[i][3]]
    if not thin:
        return None
    chosen = np.zeros(n, np.uint8)
    chosen[thin] = 255
    line = cv2.dilate(chosen[labels], np.ones((1, 3), np.uint8))
    return cv2.bitwise_and(binary, cv2.bitwise_not(line))


def within(binary: Image, area: tuple[int, int, int, int] | None) -> Image:
    """``binary`` with everything outside ``area`` (x0, y0, x1, y1; None: nowhere) cleared."""
    if area is None:
        return binary
    x0, y0, x1, y1 = area
    x0, y0, x1, y1 = max(0, x0), max(0, y0), max(0, x1), max(0, y1)
    kept = np.zeros(binary.shape, binary.dtype)  # zeros_like's own wrapper cost as much as the rest
    kept[y0:y1, x0:x1] = binary[y0:y1, x0:x1]
    return kept


def with_faded(grey: Image, binary: Image, level: float) -> Image | None:
    """The ink of ``binary`` (Otsu's, at ``level``: ``grey`` cut there, from which with ``level`` alone the
    paper is found, :func:`_paper`) with the faded pieces added, or None when there are none.

    Why: blur takes far more contrast from a thin stroke than from a solid shape. In an index seen far
    off or small (the far index of a card under a low camera, a card 170 px long), the rank's strokes
    fade to half the suit's darkness, and one threshold for both puts them with the paper: Otsu splits
    the dark suit and corner pip from everything else, the rank falls apart and the index is refused
    ("no rank and suit in the index"). A lighter level, halfway to the paper, finds the faded strokes;
    only pieces mostly paler than Otsu's level are added from it, so the dark glyphs keep the shape
    Otsu gives them (not swollen by the lighter level's halo) and each glyph is cut at a level that
    suits its own ink.
    """
    paper = _paper(grey, level)
    if paper is None:
        return None
    light_level = level + FADED_LEVEL * (paper - level)
    light = cv2.threshold(grey, light_level, 255, cv2.THRESH_BINARY_INV)[1]
    # Each piece's pixels dark at Otsu's level and its pixels ink at the lighter level only (together, all
    # of it), counted from its labels alone: labels with statistics cost three times as much on an index
    # crop. No piece is faded where no pixel is ink at the lighter level only (FADED_DARK is under 1).
    paler = cv2.bitwise_and(light, cv2.bitwise_not(binary))
    pale_pixels = cv2.countNonZero(paler)
    if pale_pixels == 0:
        return None
    n, labels = labelled(light)
    if n == 2:
        # One piece of ink at the lighter level (most crops refused, a piece of texture): all of the pale
        # pixels are its, and its dark ones are Otsu's within it; added, it is the lighter level's ink.
        # Two counts instead of the labels' per-piece ones (3 us against 25, an index crop).
        dark_pixels = cv2.countNonZero(cv2.bitwise_and(binary, light))
        faded_one = dark_pixels < FADED_DARK * (dark_pixels + pale_pixels)
        return cv2.bitwise_or(binary, light) if faded_one else None
    dark, pale = (areas(labels, n, ink) for ink in (binary, paler))
    faded = dark < FADED_DARK * (dark + pale)
    faded[0] = False
    if not faded.any():
        return None
    out = binary.copy()
    out[faded[labels]] = 255
    return out


def _paper(grey: Image, level: float) -> float | None:
    """The paper's level for :func:`with_faded`: the median of ``grey``'s levels over Otsu's ``level`` (its
    pixels outside Otsu's ink, which a threshold at a level cuts at the level's floor), or None where there
    are none: :func:`vision.levels.median_of` the whole crop's histogram with the levels up to it cleared,
    which needs no mask made and applied (11 us against 18 an index crop)."""
    counts = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel()
    counts[: int(level) + 1] = 0
    return median_of(counts)


def local_ink(grey: Image, glyph: float) -> tuple[Image, Image]:
    """Each pixel's ink against its own surroundings (0 to 255: its darkness under the paper around it, over
    the darkest ink near it) and the binary ink that cuts it at :data:`LOCAL_SHARE`.

    Why: a glare or a lamp's fall-off across a small far index leaves one stroke of its rank half as dark
    as the next (kentdoan's 8S: the 8's upper loop pale pink, its lower left black). No one level,
    Otsu's or :func:`with_faded`'s, then cuts the whole rank: it falls apart or keeps only its dark part
    ("rank glyph 32 px tall", "rank unlike any enrolled"). Judged against its own paper (a closing wider
    than any stroke) and its own darkest ink nearby, each stroke is cut at the same share of its own
    contrast, so it keeps its shape however unevenly it is lit.
    """
    def disc(share: float) -> Image:
        side = max(3, int(share * glyph) | 1)
        return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))

    dark = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, disc(LOCAL_PAPER)).astype(np.float32)
    near = np.maximum(cv2.dilate(dark, disc(LOCAL_PEAK)), LOCAL_LEAST)
    ink = np.clip(dark * (255 / near), 0, 255).astype(np.uint8)
    return ink, cv2.threshold(ink, LOCAL_SHARE * 255, 255, cv2.THRESH_BINARY)[1]
