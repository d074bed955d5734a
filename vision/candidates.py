"""The candidate indices of a frame: pieces of ink of a glyph's size (:func:`ink_pieces`), paired as a rank
over a suit at the deck's spacing (:func:`candidates`).

Why a module of its own: the search by indices (:mod:`vision.by_index`) places a card from two of them, and
the look at one card at a time (:mod:`vision.one_card`) reads those beside a card read; both find them the
same way, here.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import ink_on_paper, least_channel
from vision.profile import DeckProfile
from vision.regions import components

Image = MatLike

#: A pixel is ink when it is darker than this share of the brightest paper around it (its least
#: channel, so red ink is as dark as black), and that paper is at least :data:`MIN_PAPER` bright.
INK_SHARE: Final = 0.62
MIN_PAPER: Final = 80
#: Most pieces of ink kept after the size tests (the largest) and candidate indices kept (the nearest the
#: deck's glyph sizes): the work per frame is bounded whatever it shows.
MAX_PIECES: Final = 300
MAX_CANDIDATES: Final = 40
#: How far a glyph's size and spacing may be from the deck's at the pair's scale, as factors.
SIZE_FACTOR: Final = 1.6
#: Rank pieces by suit pieces above which the pairs are bounded by each piece's size before they are
#: measured (:func:`candidates`): fewer, the bounds cost more than they save.
MANY_PAIRS: Final = 4096


class Candidate(NamedTuple):
    """A rank piece above a suit piece: their centres (working pixels), the rank-to-suit unit axis
    (the face's "down"), the scale (working pixels per face pixel) and the pieces' labels. A named tuple,
    not a frozen dataclass: as immutable, read only by its fields, and made for a third of the time (0.4
    us against 2.7; a frame's ink search makes up to :data:`MAX_CANDIDATES`)."""

    rank: NDArray[np.float64]
    suit: NDArray[np.float64]
    down: NDArray[np.float64]
    scale: float
    pieces: tuple[int, int]


def ink_pieces(frame: Image, profile: DeckProfile, min_area: float, max_area: float
               ) -> tuple[NDArray[np.float64], NDArray[np.int32], tuple[float, float], Image]:
    """The ink's pieces of a glyph's size at some card scale the window allows: centres (n x 2), stats
    (x, y, w, h, pixels), the range of scales (working pixels per face pixel) and the paper's level
    around every pixel (its least channel)."""
    h, w = frame.shape[:2]
    fw, fh = profile.spec.face
    lo, hi = (np.sqrt(a * w * h / (fw * fh)) for a in (min_area, max_area))
    index = profile.spec.index
    least = least_channel(frame)  # red ink as dark as black
    # The paper around a glyph: closed over more than a glyph, at a quarter of the size (the paper's
    # level needs no detail).
    reach = max(3, int(1.5 * hi * max(index.rank_height, index.suit_height) / 4) | 1)
    paper, ink = ink_on_paper(least, 4, reach, INK_SHARE, MIN_PAPER)
    n, _, stats, centres = components(ink)
    stats, centres = stats[1:], centres[1:]
    big = np.maximum(stats[:, 2], stats[:, 3])
    smallest = min(index.rank_height, index.suit_height) * lo / SIZE_FACTOR
    largest = max(index.rank_height, index.suit_height) * hi * SIZE_FACTOR * 1.42
    keep = np.flatnonzero((big >= max(4.0, smallest)) & (big <= largest) & (stats[:, 4] >= 10))
    if len(keep) > MAX_PIECES:
        keep = keep[np.argsort(-stats[keep, 4])[:MAX_PIECES]]
    return centres[keep].astype(np.float64), stats[keep].astype(np.int32), (lo / SIZE_FACTOR, hi), paper


def candidates(centres: NDArray[np.float64], stats: NDArray[np.int32], profile: DeckProfile,
               scales: tuple[float, float]) -> list[Candidate]:
    """Every rank piece over a suit piece at the deck's spacing and sizes, the likeliest first."""
    index = profile.spec.index
    gap = (index.glyphs[3] - index.suit_height / 2) - (index.glyphs[1] + index.rank_height / 2)
    if len(centres) < 2 or gap <= 0:
        return []
    big = np.maximum(stats[:, 2], stats[:, 3]).astype(np.float64)
    fill = stats[:, 4] / np.maximum(stats[:, 2] * stats[:, 3], 1)
    # Only pieces of a rank's (a suit's) size at some scale of the range are paired (a hundredth's slack
    # for the rounding of the pairs' distances): the pairs kept, and their order, are those of every piece
    # with every other, for a fraction of the arrays (300 pieces made 90,000 pairs: 2.5 ms a search).
    least, most = scales[0] / SIZE_FACTOR / 1.01, scales[1] * 1.42 * SIZE_FACTOR * 1.01
    ranks = np.flatnonzero((big >= least * index.rank_height) & (big <= most * index.rank_height))
    suits = np.flatnonzero((big >= least * index.suit_height) & (big <= most * index.suit_height)
                           & (fill >= 0.3))
    x, y = (centres[:, k].astype(np.float32) for k in (0, 1))
    # The pairs' squared distances made in place in two arrays: a new array of 90,000 costs its pages'
    # first touch, more than its arithmetic.
    apart, across = np.subtract(x[None, suits], x[ranks, None]), np.subtract(y[None, suits], y[ranks, None])
    apart *= apart
    across *= across
    apart += across
    mask = (apart >= (scales[0] * gap) ** 2) & (apart <= (scales[1] * gap) ** 2)
    if mask.size > MANY_PAIRS:
        # Each pair's distance bounded by each piece's size too (a rank of size b lies at scales b / (1.42
        # SIZE_FACTOR h) to b SIZE_FACTOR / h; 2 % slack on the squared distance): a pair outside is one
        # the tests below refuse, and they judge the rest as they judged every pair (the same pairs kept,
        # in the same order). 300 pieces, a cluttered frame's ink: 14,800 pairs at a scale of the range,
        # 1,900 within the sizes' bounds; the candidates 2.0 -> 0.7 ms.
        at_r, at_t = big[ranks] * (gap / index.rank_height), big[suits] * (gap / index.suit_height)
        more = np.empty_like(mask)
        for test, at in ((np.less_equal, np.square(at_r * SIZE_FACTOR)[:, None] * 1.02),
                         (np.less_equal, np.square(at_t * SIZE_FACTOR)[None, :] * 1.02),
                         (np.greater_equal, np.square(at_r / (1.42 * SIZE_FACTOR))[:, None] / 1.02),
                         (np.greater_equal, np.square(at_t / (1.42 * SIZE_FACTOR))[None, :] / 1.02)):
            mask &= test(apart, at.astype(np.float32), out=more)
    i, j = np.divmod(np.flatnonzero(mask), len(suits))
    rs, ts = ranks[i], suits[j]
    dx, dy = x[ts] - x[rs], y[ts] - y[rs]  # the same float32 differences as the pairs' arrays'
    d = np.stack([dx, dy], axis=1).astype(np.float64)
    dist = np.hypot(d[:, 0], d[:, 1])
    scale = dist / gap
    # Seen turned, a glyph's box grows by up to sqrt(2): its larger side is between the glyph's height
    # (less the slack) and its diagonal (more the slack) at the pair's scale.
    rank_size = big[rs] / (scale * index.rank_height)
    suit_size = big[ts] / (scale * index.suit_height)
    ok = ((rank_size >= 1 / SIZE_FACTOR) & (rank_size <= 1.42 * SIZE_FACTOR)
          & (suit_size >= 1 / SIZE_FACTOR) & (suit_size <= 1.42 * SIZE_FACTOR) & (fill[ts] >= 0.3))
    keep = np.flatnonzero(ok)
    miss = np.abs(np.log(rank_size[keep])) + np.abs(np.log(suit_size[keep]))
    order = keep[np.argsort(miss)[:MAX_CANDIDATES]]
    # Indexed once for all of them (the same values as each candidate's own indexing and division).
    ranks_at, suits_at = rs[order], ts[order]
    downs = d[order] / dist[order][:, None]
    return [
        Candidate(rank, suit, down, scale_k, (r, t)) for rank, suit, down, scale_k, r, t in zip(
            centres[ranks_at], centres[suits_at], downs, scale[order].tolist(), ranks_at.tolist(),
            suits_at.tolist(), strict=True)
    ]
