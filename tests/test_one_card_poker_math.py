"""``croupier math one_card_poker``: the exact figures against ones worked by hand.

P(tie) for d decks is (4d - 1) / (52d - 1): whatever the player's card, 4d - 1
of the other 52d - 1 cards share its rank. The Tie wager at n:1 then has a
house edge of 1 - (n + 1) * P(tie).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.cli import main
from controller.games.one_card_poker.par_sheet import (
    STRATEGIES,
    dp_expectation,
    first_cards,
    first_war_pair,
    tie_wager_edge,
)
from controller.money import Odds


@pytest.mark.parametrize("decks", range(1, 9))
def test_tie_probability_matches_the_closed_form(decks: int) -> None:
    higher, lower, tie = first_cards(decks)
    assert tie == Fraction(4 * decks - 1, 52 * decks - 1)
    assert higher == lower and higher + lower + tie == 1


def test_tie_wager_edges_worked_by_hand() -> None:
    assert first_cards(1)[2] == Fraction(3, 51)
    assert tie_wager_edge(1, Odds(10, 1)) == Fraction(18, 51)
    assert first_cards(6)[2] == Fraction(23, 311)
    assert tie_wager_edge(6, Odds(10, 1)) == Fraction(58, 311)
    assert tie_wager_edge(1, Odds(16, 1)) == 0  # 17 * 3/51: a fair Tie wager


def test_war_is_even_and_its_tie_again_worked_by_hand() -> None:
    for decks in (1, 2, 8):
        higher, lower, again = first_war_pair(decks)
        assert higher == lower and higher + lower + again == 1
    # One deck, by hand: 50 cards left, 2 of the tied rank and 4 of each of 12 others.
    assert first_war_pair(1)[2] == Fraction(2 * 1 + 12 * 4 * 3, 50 * 49)


def test_dp_expectation_by_strategy() -> None:
    by_name = {s.name: dp_expectation(1, s) for s in STRATEGIES}
    assert by_name == {"optimal": 0, "decline": Fraction(-1, 34), "surrender": Fraction(1, 34)}
    assert dp_expectation(6, STRATEGIES[2]) == Fraction(23, 622)


def test_command_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "one_card_poker"]) == 0
    out = capsys.readouterr().out
    assert "P(tie)                      3/51 (= 1/17) = 0.0588" in out
    assert "house edge 18/51 (= 6/17) = 0.3529 (35.29 %)" in out
    assert main(["math", "one_card_poker", "--decks", "6", "--fee", "100", "--action", "2000"]) == 0
    out = capsys.readouterr().out
    assert "23/311 = 0.0740" in out and "58/311 = 0.1865 (18.65 %)" in out
    assert "optimal    -1/20 = -0.0500 per unit (-100.00 per round)" in out
    assert main(["math", "one_card_poker", "--tie-pays", "8:1"]) == 0
    assert "Tie wager at 8:1: house edge 24/51 (= 8/17) = 0.4706" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["--decks", "9"], ["--tie-pays", "541"], ["--tie-pays", "10:2"], ["--action", "0"]]
)
def test_command_refuses_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "one_card_poker", *argv]) == 2
    assert "croupier math one_card_poker" in capsys.readouterr().out
