"""The exact blackjack engine against exact fractions and against published combinatorial figures.

The published figures are the Wizard of Odds' "Blackjack Appendix 9" tables
(docs/strategy/exact.md lists the rule sets): per-hand stand/hit/double
expectations, which test the dealer probabilities and the composition-
dependent recursion to the sixth decimal, and one whole-game figure, which
also tests splitting (agreement to 5e-6, not to the last digit: the
post-split simplification is not spelled out by the source).
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.blackjack_dealer import (
    forget,
    full_shoe,
    no_blackjack,
    outcomes,
    outcomes_exact,
    prefetch,
    remove,
)
from controller.games.blackjack_exact import PLAIN, Evaluator, Rules, game_value


@settings(max_examples=12, deadline=None)
@given(
    counts=st.lists(st.integers(1, 6), min_size=9, max_size=9),
    tens=st.integers(1, 20),
    up=st.integers(1, 10),
    h17=st.booleans(),
)
def test_dealer_probabilities_are_exact_and_sum_to_one(counts: list[int], tens: int, up: int,
                                                       h17: bool) -> None:
    shoe = (*counts, tens)
    floats = outcomes(shoe, up, h17)
    exact = outcomes_exact(shoe, up, h17)
    assert sum(exact) == Fraction(1)
    assert sum(floats) == pytest.approx(1.0, abs=1e-12)
    for f, e in zip(floats, exact, strict=True):
        assert f == pytest.approx(float(e), abs=1e-12)


def test_batched_dealer_probabilities_are_exact() -> None:
    # Batches go through the draw graph, single shoes through the multiset sums: both against fractions.
    rng = random.Random(4)
    shoes = [tuple(rng.randint(1, 4) for _ in range(9)) + (rng.randint(4, 16),) for _ in range(20)]
    for up in (1, 2, 7, 10):
        for h17 in (False, True):
            forget()
            prefetch({(shoe, up, h17) for shoe in shoes})
            for shoe in shoes[:4]:
                exact = outcomes_exact(shoe, up, h17)
                assert outcomes(shoe, up, h17) == pytest.approx([float(e) for e in exact], abs=1e-12)
    forget()


def test_dealer_bust_six_decks_against_a_six() -> None:
    # The textbook figure: the dealer busts 42.28 % of the time with a 6 up, six decks, S17.
    assert outcomes(remove(full_shoe(6), 6), 6, False)[5] == pytest.approx(0.4228, abs=5e-5)


# (decks, dealer hits soft 17, player cards, stand, hit, double) against an ace, given no dealer
# blackjack: Wizard of Odds, Blackjack Appendix 9, tables for 1ds17r4, 2dh17r4 and 5dh17r4.
PUBLISHED_HANDS = [
    (1, False, (2, 1), -0.661732, -0.067808, -0.593281),
    (1, False, (6, 5), -0.634013, 0.172946, 0.240259),
    (2, True, (2, 1), -0.594150, -0.103429, -0.571816),
    (2, True, (6, 5), -0.587564, 0.121079, 0.166650),
    (5, True, (2, 1), -0.596923, -0.100728, -0.583036),
    (5, True, (6, 5), -0.594346, 0.109880, 0.128187),
]


@pytest.mark.parametrize(("decks", "h17", "cards", "stand", "hit", "double"), PUBLISHED_HANDS)
def test_hand_values_match_the_published_tables(decks: int, h17: bool, cards: tuple[int, int], stand: float,
                                                hit: float, double: float) -> None:
    up = 1
    rest = remove(full_shoe(decks), up, *cards)
    values = Evaluator(Rules(hits_soft_17=h17)).options(rest, cards[0], cards[1], up, PLAIN)
    given_no_blackjack = no_blackjack(up, rest)
    assert values["stand"] / given_no_blackjack == pytest.approx(stand, abs=5e-7)
    assert values["hit"] / given_no_blackjack == pytest.approx(hit, abs=5e-7)
    assert values["double"] / given_no_blackjack == pytest.approx(double, abs=5e-7)


def test_single_deck_game_matches_the_published_return() -> None:
    # 1 deck, S17, double any two, double after split, resplit to 4 hands except aces, one card on
    # split aces, 3:2, peek, no surrender: published +0.001839 (Wizard of Odds appendix 9, 1ds17r4).
    assert game_value(full_shoe(1), Rules()) == pytest.approx(0.001839, abs=5e-6)
