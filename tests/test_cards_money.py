"""Cards parse leniently and print canonically; money is integer and floored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import DECK, CardError, parse_card, parse_cards
from controller.composition import ShoeComposition
from controller.money import Odds, OddsError, half_lost


@pytest.mark.parametrize(
    ("text", "code"),
    [("AS", "AS"), ("as", "AS"), ("10h", "TH"), ("10H", "TH"), ("td", "TD"), (" 9c ", "9C"), ("kD", "KD")],
)
def test_parse_any_case_and_ten(text: str, code: str) -> None:
    assert parse_card(text).code == code
    assert str(parse_card(text)) == code


@pytest.mark.parametrize("text", ["", "A", "1S", "11H", "AX", "ZZ", "10", "ASS", "0S"])
def test_not_a_card_is_refused_with_the_text_quoted(text: str) -> None:
    with pytest.raises(CardError, match="not a card"):
        parse_card(text)


def test_deck_is_52_distinct_interned_cards() -> None:
    assert len({c.code for c in DECK}) == 52
    assert all(DECK[i].index == i for i in range(52))
    assert parse_card("qh") is parse_card("QH")
    assert [c.code for c in parse_cards("AS 10d 2c")] == ["AS", "TD", "2C"]


@given(st.sampled_from(DECK))
def test_canonical_text_round_trips(card: object) -> None:
    assert parse_card(str(card)) is card


def test_odds_parse_and_floor() -> None:
    assert Odds.parse("19:20").win(250) == 237  # 237.5 floored: the house keeps the half
    assert Odds.parse("9:1").win(100) == 900
    assert Odds.parse(" 6 : 5 ").win(1010) == 1212
    assert half_lost(501) == -251  # the house keeps the odd cent
    assert half_lost(500) == -250


@pytest.mark.parametrize("bad", [541, 9.1, None, "9-1", "9:", ":1", "9:0", "a:b"])
def test_bad_odds_are_refused(bad: object) -> None:
    with pytest.raises(OddsError):
        Odds.parse(bad)


@given(st.integers(0, 10**9), st.integers(0, 1000), st.integers(1, 1000))
def test_win_never_exceeds_the_exact_fraction(stake: int, num: int, den: int) -> None:
    won = Odds(num, den).win(stake)
    assert won * den <= stake * num < (won + 1) * den


def test_composition_counts_and_impossible_cards() -> None:
    shoe = ShoeComposition(2)
    ace = parse_card("AS")
    for _ in range(2):
        assert shoe.is_possible(ace)
        shoe.see(ace)
    assert not shoe.is_possible(ace)
    shoe.see(parse_card("2C"), burn=True)
    assert (shoe.dealt, shoe.burned, shoe.remaining()) == (2, 1, 101)
    shoe.shuffle()
    assert shoe.is_possible(ace) and shoe.remaining() == 104
