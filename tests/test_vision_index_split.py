"""The index split by position and shape, on crops drawn here the way real court and pip cards show them:
a frame line beside the rank running past the suit, a ``10`` of two pieces, a pip's sliver at the side,
a suit blurred into the frame line."""

from __future__ import annotations

import cv2
import numpy as np

from vision.glyphs import Glyphs, split_index

W, H = 72, 150
INK = (40, 40, 40)


def paper() -> np.ndarray:
    return np.full((H, W, 3), 235, np.uint8)


def rank_zero(crop: np.ndarray, x: int) -> None:
    """An ``O``-like rank glyph (a ``Q`` without its tail, or the ``0`` of a ``10``): rows 20-60."""
    cv2.ellipse(crop, (x + 11, 40), (10, 19), 0, 0, 360, INK, 4)


def diamond(crop: np.ndarray, cx: int = 22, top: int = 72, size: int = 30) -> None:
    """The suit: a filled diamond under the rank."""
    half = size // 2
    pts = np.array([(cx, top), (cx + half, top + half), (cx, top + size), (cx - half, top + half)])
    cv2.fillPoly(crop, [pts.astype(np.int32)], INK)


def frame_line(crop: np.ndarray, x: int = 50, top: int = 30, bottom: int = 140) -> None:
    """A court card's frame line: thin, upright, from beside the rank to well below the suit."""
    cv2.rectangle(crop, (x, top), (x + 2, bottom), INK, -1)


def split(crop: np.ndarray, area: tuple[int, int, int, int] | None = None) -> Glyphs:
    glyphs = split_index(crop, area)
    assert not isinstance(glyphs, str), glyphs
    return glyphs


def test_a_frame_line_beside_the_rank_running_past_the_suit_is_neither_rank_nor_suit() -> None:
    """Before: the line overlapped the rank by more than half the rank's height, joined it, and the
    rank's bottom fell below the suit: "no suit under the rank"."""
    crop = paper()
    rank_zero(crop, 10)
    diamond(crop)
    frame_line(crop)
    glyphs = split(crop)
    assert glyphs.box[2] < 50  # the line is not part of the index's glyphs
    assert 38 <= glyphs.rank_height <= 45
    assert 28 <= glyphs.suit_height <= 33


def test_a_ten_keeps_its_one_and_its_zero_with_a_frame_line_beside_them() -> None:
    """The ``1`` is as thin as a line, but it stands on the ``0``'s line (same top and bottom), so it
    joins the rank; the frame line, running far below, does not. Before: the frame line joined too and
    the index was refused ("no suit under the rank")."""
    crop = paper()
    cv2.rectangle(crop, (8, 21), (13, 60), INK, -1)  # the 1: 6 x 40, thinner than a line's share
    rank_zero(crop, 18)
    diamond(crop, cx=26)
    frame_line(crop, x=53)
    glyphs = split(crop)
    assert glyphs.rank.shape[1] >= 30, "the 1 and the 0 are one rank"  # 8..40
    assert glyphs.box[0] <= 9 and glyphs.box[2] < 53


def test_a_sliver_of_a_corner_pip_at_the_side_is_neither_rank_nor_suit() -> None:
    """A centre pip reaching into the glyph area leaves a sliver at its side, from the rank's middle to
    below it. Before: it overlapped the rank by more than half its own height, joined the rank, and the
    suit was no longer under the rank."""
    crop = paper()
    rank_zero(crop, 10)
    diamond(crop, top=66)
    cv2.circle(crop, (92, 60), 40, INK, -1)  # a pip, mostly outside the glyph area
    area = (4, 8, 58, 112)  # the learned glyph area cuts the pip: a sliver 6 px wide is left inside
    glyphs = split(crop, area)
    assert glyphs.box[2] < 50
    assert 38 <= glyphs.rank_height <= 45


def test_a_suit_blurred_into_the_frame_line_is_split_from_it() -> None:
    """A blurred suit touching the frame line is one piece with it, starting beside the rank. Before:
    that piece was not under the rank ("no suit under the rank"); now the line, longer than the rank
    glyph, is erased and the suit stands alone."""
    crop = paper()
    rank_zero(crop, 10)
    cv2.circle(crop, (30, 92), 16, INK, -1)  # a round suit whose right edge touches the line at x=46
    frame_line(crop, x=45)
    glyphs = split(crop)
    assert glyphs.suit.shape[1] <= 36, "the suit without the line"
    assert 30 <= glyphs.suit_height <= 35
    assert glyphs.box[2] < 47


def test_a_rank_joined_to_the_frame_line_is_split_from_it_by_the_decks_rank_height() -> None:
    """A queen's tail touching the frame line makes the rank and the line one piece as tall as the line,
    so the line's run is shorter than that "top glyph" and was never erased ("no suit under the rank":
    kentdoan's QS on a laptop). With the deck's enrolled rank height the line is erased and the rank
    stands alone; without it, the index stays refused as before."""
    crop = paper()
    rank_zero(crop, 10)
    cv2.line(crop, (26, 56), (46, 62), INK, 4)  # the tail, from the O's foot to the line
    diamond(crop)
    frame_line(crop, x=45, top=25, bottom=145)
    assert split_index(crop) == "no suit under the rank"
    glyphs = split_index(crop, None, rank_height=40)
    assert not isinstance(glyphs, str), glyphs
    assert glyphs.box[2] < 46, "the line is not part of the index's glyphs"
    assert 38 <= glyphs.rank_height <= 46
    assert 28 <= glyphs.suit_height <= 33


def test_the_suit_and_its_colour_made_when_asked_are_those_of_the_crop_as_split() -> None:
    """The suit's image and the ink's colour are made only when first asked for (most candidate indices
    are refused before): they are the crop's, cut from its labels as the rank is."""
    crop = paper()
    rank_zero(crop, 10)
    cv2.fillPoly(crop, [np.array([(22, 72), (37, 87), (22, 102), (7, 87)], np.int32)], (40, 40, 200))
    glyphs = split(crop)
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    level, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, labels = cv2.connectedComponents(binary, connectivity=8)
    suit = labels == labels[87, 22]
    ys, xs = np.nonzero(suit)
    assert glyphs.suit.shape == (ys.max() - ys.min() + 1, xs.max() - xs.min() + 1)
    assert glyphs.red_dominant and glyphs.chroma > 0.5  # red ink on white paper
    assert glyphs.suit is glyphs.suit  # made once


def test_ink_of_one_piece_holds_no_rank_and_suit() -> None:
    crop = paper()
    diamond(crop)
    assert split_index(crop) == "no rank and suit in the index"
