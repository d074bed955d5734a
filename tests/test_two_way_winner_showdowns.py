"""2WayWinner's exact poker branch: the fast board-by-board counts against brute force.

The whole enumeration (every board class, every seat hand, every shown
pair) takes minutes, so these tests check its three parts on small pieces:
the seven-card tables against the project's evaluator, the counts of a set
of boards against ranking every showdown one by one, and the suit classes
(with their symmetrising) against the full orbits they stand for.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from controller.cards import DECK, parse_card
from controller.games.poker_hands import strength
from controller.games.two_way_winner import showdown_exact as S


def test_the_seven_card_tables_rank_like_the_evaluator() -> None:
    rng = np.random.default_rng(3)
    hands = np.array([rng.choice(52, 7, replace=False) for _ in range(2000)])
    # Flushes and full houses are rare among random hands: add some on purpose.
    hands = np.concatenate([hands, [[c.index for c in map(parse_card, t.split())] for t in (
        "AS KS QS JS TS 2H 2D", "2S 3S 4S 5S AS AH AD", "9H 9D 9C 4S 4H 2H 7H", "KH QH 3H 8H 2D 2C 2S")]])
    ours = S.seven_card_strength(hands)
    assert ours.tolist() == [strength([DECK[c] for c in h]) for h in hands]


def test_board_counts_match_every_showdown_ranked_one_by_one() -> None:
    seat = (parse_card("AS").index, parse_card("KS").index)
    shown = (parse_card("QS").index, parse_card("2H").index)
    rest = [c for c in range(52) if c not in (*seat, *shown)]
    runs = list(combinations(rest, 3))[::211]  # a spread of the 17,296 run-outs, as info_set_counts takes
    boards = np.sort(np.array([[*shown, *t] for t in runs]), axis=1)
    counts = S.board_counts(boards, np.ones(len(boards), dtype=np.int64))
    k = S.PAIR_INDEX[shown] * S.PAIRS + S.PAIR_INDEX[seat]
    wins, ties, full = S.info_set_counts(seat, shown, stride=211)
    assert (counts.wins[k], counts.ties[k], counts.full_house_wins[k]) == (wins, ties, full)
    assert full > 0 and ties > 0


def test_suit_classes_stand_for_every_board_of_their_orbits() -> None:
    boards, sizes = S.board_classes()
    assert len(boards) == 134_459 and int(sizes.sum()) == comb(52, 5)
    pick = [0, 777, 5000, 60000, len(boards) - 1]
    orbits = np.unique(np.sort(np.concatenate([m[boards[pick]] for m in S.SUIT_MAPS]), axis=1), axis=0)
    assert len(orbits) == int(sizes[pick].sum())
    every = S.board_counts(orbits, np.ones(len(orbits), dtype=np.int64))
    classes = S.symmetrised(S.board_counts(boards[pick], sizes[pick]))
    for a, b in ((every.wins, classes.wins), (every.ties, classes.ties),
                 (every.full_house_wins, classes.full_house_wins)):
        assert np.array_equal(a, b) and a.sum() > 0
