"""2WayWinner's poker branch counted exactly: every showdown of a two-card hand against the dealer's.

A seat that plays poker sees its two cards ``P`` and, at check or bet, the
dealer's up and hole cards ``B`` (the first two community cards). Then come
three more community cards and the dealer's two poker cards, so for every
pair (B, P) of disjoint two-card sets this module counts, over all
C(48,3) x C(45,2) = 17,123,040 ways those five cards can fall, how many the
seat wins, ties, and wins holding a full house or better (which also pays
its blackjack ante). That is what the exact sheet needs for both the bet
and the "poker or blackjack?" choice.

Seven cards are ranked with the project's evaluator (``poker_hands.strength``,
the PH Evaluator) turned into two tables once: the best hand ignoring suits
for each multiset of seven ranks, and the best flush for each set of suited
ranks (a seven-card flush never coexists with a full house or quads, so the
hand is the larger of the two). The enumeration goes by the final five-card
board: one board per suit-permutation class (134,459 of 2,598,960), every
two-card hand on it ranked, each seat hand's wins and ties against every
dealer hand counted from a sort (minus the hands sharing one of its cards),
added to all ten (B, P) pairs the board extends with the class's size as
weight, and finally averaged over the 24 suit permutations, which turns
the class sums back into the sums over every board.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, combinations_with_replacement, permutations
from math import comb
from typing import Final

import numpy as np

from controller.cards import DECK
from controller.games.poker_hands import DISTINCT_HANDS, strength

#: Showdowns behind each (B, P): three community cards from 48, then the dealer's two from 45.
SHOWDOWNS: Final = comb(48, 3) * comb(45, 2)
#: The weakest full house's strength: at or above it a winning seat's blackjack ante wins too.
FULL_HOUSE: Final = DISTINCT_HANDS + 1 - 322
PAIRS: Final = comb(52, 2)
#: PAIR_INDEX[a, b]: the index (0..1325) of the two cards a != b (card indexes, rank-major).
PAIR_INDEX: Final = np.full((52, 52), -1, dtype=np.int64)
PAIR_CARDS: Final = np.array(list(combinations(range(52), 2)), dtype=np.int64)
PAIR_INDEX[PAIR_CARDS[:, 0], PAIR_CARDS[:, 1]] = np.arange(PAIRS)
PAIR_INDEX[PAIR_CARDS[:, 1], PAIR_CARDS[:, 0]] = np.arange(PAIRS)
_FIVE: Final = 5 ** np.arange(13, dtype=np.int64)
#: Two of the 47 cards off a board (local positions), and two of its five.
_LOCAL: Final = np.array(list(combinations(range(47), 2)), dtype=np.int64)
_BOARD_PAIRS: Final = np.array(list(combinations(range(5), 2)), dtype=np.int64)
#: Every permutation of the four suits, as a map of the 52 card indexes.
SUIT_MAPS: Final = np.array([[(c // 4) * 4 + perm[c % 4] for c in range(52)]
                             for perm in permutations(range(4))], dtype=np.int64)


@lru_cache(maxsize=1)
def rank_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted base-5 keys of every seven-rank multiset, their suitless strength, flush strength by mask)."""
    keys, values = [], []
    for ranks in _multisets(7):
        # Suits dealt round the sorted ranks: a rank's cards get distinct suits and no suit gets five.
        cards = [DECK[r * 4 + i % 4] for i, r in enumerate(ranks)]
        keys.append(int(sum(5 ** r for r in ranks)))
        values.append(strength(cards))
    order = np.argsort(keys)
    flush = np.zeros(1 << 13, dtype=np.int64)
    for mask in range(1 << 13):
        suited = [r for r in range(13) if mask >> r & 1]
        if 5 <= len(suited) <= 7:  # seven cards hold at most seven of a suit
            flush[mask] = strength([DECK[r * 4 + 3] for r in suited])
    return np.asarray(keys, dtype=np.int64)[order], np.asarray(values, dtype=np.int64)[order], flush


def _multisets(size: int) -> Iterator[tuple[int, ...]]:
    """Every multiset of ``size`` ranks that one deck can hold (at most four of a rank)."""
    for ranks in combinations_with_replacement(range(13), size):
        if max(ranks.count(r) for r in set(ranks)) <= 4:
            yield ranks


def seven_card_strength(cards: np.ndarray) -> np.ndarray:
    """``poker_hands.strength`` of many seven-card hands at once (rows of card indexes)."""
    keys, values, flush = rank_tables()
    ranks, suits = cards // 4, cards % 4
    suitless = values[np.searchsorted(keys, _FIVE[ranks].sum(axis=-1))]
    best: np.ndarray = suitless
    for s in range(4):
        mask = np.bitwise_or.reduce(np.where(suits == s, 1 << ranks, 0), axis=-1)
        best = np.maximum(best, flush[mask])
    return best


def _combinations(n: int, k: int) -> np.ndarray:
    """Every k of range(n), ascending rows in lexicographic order (numpy, not millions of tuples)."""
    rows = np.arange(n, dtype=np.int64)[:, None]
    for _ in range(k - 1):
        last = rows[:, -1]
        more = n - 1 - last
        keep = np.repeat(np.arange(len(rows)), more)
        step = np.arange(more.sum()) - np.repeat(np.cumsum(more) - more, more)
        rows = np.concatenate([rows[keep], (last[keep] + 1 + step)[:, None]], axis=1)
    return rows


@lru_cache(maxsize=1)
def board_classes() -> tuple[np.ndarray, np.ndarray]:
    """One five-card board per suit-permutation class (card indexes, ascending) and the class's size.

    Renaming suits permutes the four per-suit sets of ranks, so their sorted tuple names the class.
    """
    boards = _combinations(52, 5)
    suits = [np.zeros(len(boards), dtype=np.int64) for _ in range(4)]
    for column in boards.T:
        bit = np.int64(1) << (column // 4)
        for s in range(4):
            suits[s] |= np.where(column % 4 == s, bit, 0)
    for i, j in ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2)):  # a sorting network for four values
        suits[i], suits[j] = np.minimum(suits[i], suits[j]), np.maximum(suits[i], suits[j])
    code = ((suits[0] << 39) | (suits[1] << 26) | (suits[2] << 13)) | suits[3]
    _, first, sizes = np.unique(code, return_index=True, return_counts=True)
    return boards[first], sizes


#: Boards ranked together in one batch (its arrays stay near 100 MB).
BATCH: Final = 384


@dataclass
class Counts:
    """Per (B, P), as arrays indexed [pair index of B, pair index of P]: wins, ties, full-house wins."""

    wins: np.ndarray
    ties: np.ndarray
    full_house_wins: np.ndarray

    def add(self, other: Counts) -> None:
        self.wins += other.wins
        self.ties += other.ties
        self.full_house_wins += other.full_house_wins


def empty() -> Counts:
    return Counts(*(np.zeros(PAIRS * PAIRS) for _ in range(3)))


def board_counts(boards: np.ndarray, sizes: np.ndarray) -> Counts:
    """The class sums of ``boards`` (weighted by ``sizes``), not yet averaged over suit permutations."""
    out = empty()
    for start in range(0, len(boards), BATCH):
        part = slice(start, start + BATCH)
        where, stats = _ranked(boards[part], sizes[part])
        for stat, into in zip(stats, (out.wins, out.ties, out.full_house_wins), strict=True):
            into += np.bincount(where, weights=stat, minlength=PAIRS * PAIRS)
    return out


def _ranked(boards: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """For every (B, P) a batch of boards extends: its flat index and its weighted wins, ties, FH wins."""
    keys, values, flush = rank_tables()
    nb = len(boards)
    present = np.zeros((nb, 52), dtype=bool)
    present[np.arange(nb)[:, None], boards] = True
    rest = np.nonzero(~present)[1].reshape(nb, 47)
    x, y = rest[:, _LOCAL[:, 0]], rest[:, _LOCAL[:, 1]]
    # Suitless strength: a 13 x 13 table per board from its rank key, then read by the two ranks.
    board_key = _FIVE[boards // 4].sum(axis=1)
    grid = board_key[:, None, None] + _FIVE[None, :, None] + _FIVE[None, None, :]
    table = values[np.minimum(np.searchsorted(keys, grid), len(keys) - 1)].reshape(nb, 169)
    rx, ry = x // 4, y // 4
    hand = np.take_along_axis(table, rx * 13 + ry, axis=1)
    # Flush: only the board's commonest suit can make one (five cards: at most one suit has three).
    suits = boards % 4
    counts = np.stack([(suits == s).sum(axis=1) for s in range(4)], axis=1)
    fs = counts.argmax(axis=1)
    bits = np.where(suits == fs[:, None], 1 << (boards // 4), 0).sum(axis=1)
    mask = bits[:, None] | np.where(x % 4 == fs[:, None], 1 << rx, 0)
    mask |= np.where(y % 4 == fs[:, None], 1 << ry, 0)
    hand = np.maximum(hand, flush[mask])
    wins, ties = _beaten(hand)
    fh = np.where(hand >= FULL_HOUSE, wins, 0)
    seat = PAIR_INDEX[x, y]
    shown = PAIR_INDEX[boards[:, _BOARD_PAIRS[:, 0]], boards[:, _BOARD_PAIRS[:, 1]]]
    where = (shown[:, :, None] * PAIRS + seat[:, None, :]).ravel()
    stats = tuple(np.broadcast_to((stat * sizes[:, None])[:, None, :], (nb, 10, 1081)).ravel()
                  for stat in (wins, ties, fh))
    return where, stats


def _beaten(hand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per board (row) and two-card hand: how many other hands of the 45 cards left it beats and ties.

    All hands below it, less those holding one of its own two cards: per card, a histogram of its
    hands over the board's distinct strengths (their levels), summed up to the hand's level.
    """
    nb = len(hand)
    ordered = np.sort(hand, axis=1)
    fresh = np.ones_like(ordered, dtype=bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    level_at = np.cumsum(fresh, axis=1) - 1  # the level of each place of the order
    shift = (np.arange(nb) * (DISTINCT_HANDS + 1))[:, None]
    flat = (ordered + shift).ravel()
    queries = (hand + shift).ravel()
    first = np.arange(nb)[:, None] * 1081
    below = np.searchsorted(flat, queries, "left").reshape(nb, -1) - first
    upto = np.searchsorted(flat, queries, "right").reshape(nb, -1) - first
    level = np.take_along_axis(level_at, below, axis=1)
    levels = int(level.max()) + 1
    base = (np.arange(nb) * 47)[:, None]
    where = np.concatenate([((base + side) * levels + level).ravel() for side in _LOCAL.T])
    at = np.bincount(where, minlength=nb * 47 * levels).reshape(nb, 47, levels)
    under = np.cumsum(at, axis=2) - at
    a, b = _LOCAL[:, 0], _LOCAL[:, 1]
    pick = np.arange(nb)[:, None]
    wins = below - under[pick, a, level] - under[pick, b, level]
    ties = (upto - below) - at[pick, a, level] - at[pick, b, level] + 1
    return wins, ties


def symmetrised(total: Counts) -> Counts:
    """Class sums averaged over the 24 suit permutations: the sums over every board (exact integers)."""
    out = empty()
    square = [a.reshape(PAIRS, PAIRS) for a in (total.wins, total.ties, total.full_house_wins)]
    for suit_map in SUIT_MAPS:
        moved = PAIR_INDEX[suit_map[PAIR_CARDS[:, 0]], suit_map[PAIR_CARDS[:, 1]]]
        where = np.ix_(moved, moved)
        out.add(Counts(*(a[where].ravel() for a in square)))
    for arr in (out.wins, out.ties, out.full_house_wins):
        arr /= len(SUIT_MAPS)
        np.rint(arr, out=arr)
    return out


def info_set_counts(seat: tuple[int, int], shown: tuple[int, int], stride: int = 1) -> tuple[int, int, int]:
    """Wins, ties and full-house wins of one (B, P) by brute force, every showdown ranked (a test oracle);
    ``stride`` > 1 takes every stride-th three-card run-out only (and the same boards' counts must match)."""
    rest = [c for c in range(52) if c not in (*seat, *shown)]
    dealer = np.array(list(combinations(range(45), 2)), dtype=np.int64)
    wins = ties = full = 0
    for run in list(combinations(rest, 3))[::stride]:
        left = np.array([c for c in rest if c not in run], dtype=np.int64)
        common = np.array([*run, *shown], dtype=np.int64)
        mine = int(seven_card_strength(np.array([[*common, *seat]]))[0])
        theirs = seven_card_strength(np.concatenate([np.broadcast_to(common, (len(dealer), 5)), left[dealer]],
                                                    axis=1))
        won = int((theirs < mine).sum())
        wins, ties = wins + won, ties + int((theirs == mine).sum())
        full += won if mine >= FULL_HOUSE else 0
    return wins, ties, full


#: Slices of the board classes handed to the workers (each sends back three int32 arrays of 7 MB).
JOBS: Final = 24


def counts_job(job: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One worker's slice of board classes, summed (int32: a class sum stays below 24 x 17,123,040)."""
    total = board_counts(*job)
    return total.wins.astype(np.int32), total.ties.astype(np.int32), total.full_house_wins.astype(np.int32)


def showdown_counts(workers: int) -> Counts:
    """Wins, ties and full-house wins of every (B, P), over every showdown (a progress bar on stderr)."""
    from controller.simulation.montecarlo import run_chunks

    boards, sizes = board_classes()
    jobs = [(boards[part], sizes[part]) for part in np.array_split(np.arange(len(boards)), JOBS)]
    total = empty()

    def merge(result: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        total.add(Counts(*(r.astype(np.float64) for r in result)))

    run_chunks(jobs, counts_job, merge, lambda job: len(job[0]), workers, unit="board")
    return symmetrised(total)
