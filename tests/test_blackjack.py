"""Tests of the shared blackjack building blocks (hand totals, dealer rule, split/double legality)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import DECK, parse_cards
from controller.games.blackjack import (
    Hand,
    SplitRules,
    can_double,
    can_hit,
    can_split,
    card_points,
    dealer_should_hit,
    double_total_allowed,
    hand_total,
    is_natural,
    is_pair,
    split_spot,
    ten_value,
)


@pytest.mark.parametrize(
    ("cards", "total", "soft"),
    [
        ("AS KD", 21, True),
        ("AS AD", 12, True),
        ("AS AD AH", 13, True),
        ("AS 6D", 17, True),
        ("AS 6D TC", 17, False),
        ("TS 6D", 16, False),
        ("TS 6D 9C", 25, False),
        ("AS AD 9C", 21, True),
        ("AS AD 9C TH", 21, False),
        ("", 0, False),
    ],
)
def test_hand_total(cards: str, total: int, soft: bool) -> None:
    assert hand_total(parse_cards(cards)) == (total, soft)


def test_card_points_and_ten_value() -> None:
    points = {c.rank: card_points(c) for c in DECK}
    assert points == {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
                      "T": 10, "J": 10, "Q": 10, "K": 10, "A": 1}
    assert {c.rank for c in DECK if ten_value(c)} == set("TJQK")


@given(st.lists(st.sampled_from(DECK), max_size=8))
@settings(max_examples=200)
def test_total_is_hard_count_or_plus_ten(cards: list) -> None:  # type: ignore[type-arg]
    hard = sum(card_points(c) for c in cards)
    total, soft = hand_total(cards)
    assert total in (hard, hard + 10)
    assert soft == (total == hard + 10)
    assert not soft or total <= 21
    assert not soft or any(c.rank == "A" for c in cards)


def test_natural_and_pair() -> None:
    assert is_natural(parse_cards("AS QD"))
    assert not is_natural(parse_cards("AS 5D 5C"))
    assert is_pair(parse_cards("KS KD"))
    assert not is_pair(parse_cards("KS QD"))
    assert not is_pair(parse_cards("8S 8D 8C"))


@pytest.mark.parametrize(
    ("cards", "h17", "hit"),
    [
        ("TS 6D", False, True),
        ("TS 7D", False, False),
        ("AS 6D", False, False),
        ("AS 6D", True, True),
        ("AS 6D TC", True, False),  # hard 17
        ("AS 7D", True, False),
        ("5S AD AC", True, True),  # soft 17 made of three cards
        ("4S 2D AC", True, True),
        ("5S 5D AC", True, False),  # soft 21
    ],
)
def test_dealer_rule(cards: str, h17: bool, hit: bool) -> None:
    assert dealer_should_hit(parse_cards(cards), h17) is hit


def test_dealer_stands_on_soft_21_and_18() -> None:
    assert not dealer_should_hit(parse_cards("5S 5D AC"), True)
    assert not dealer_should_hit(parse_cards("AS 7D"), True)


@pytest.mark.parametrize(
    ("cards", "double_on", "ok"),
    [
        ("5S 4D", "9-11", True),
        ("5S 4D", "10-11", False),
        ("6S 4D", "10-11", True),
        ("6S 5D", "10-11", True),
        ("6S 6D", "9-11", False),
        ("AS 8D", "9-11", False),  # soft 19
        ("AS 9D", "10-11", False),  # soft 20, hard count 10: soft never qualifies
        ("AS TD", "10-11", False),  # soft 21
        ("AS AD", "any2", True),
        ("TS 9D", "any2", True),
    ],
)
def test_double_on_ranges(cards: str, double_on: str, ok: bool) -> None:
    assert double_total_allowed(parse_cards(cards), double_on) is ok


def test_unknown_double_on_is_an_error() -> None:
    with pytest.raises(ValueError, match="double_on"):
        double_total_allowed(parse_cards("5S 5D"), "8-11")


def test_double_rules() -> None:
    rules = SplitRules()
    hand = Hand("main", parse_cards("5S 6D"))
    assert can_double(hand, rules)
    hand.cards.append(parse_cards("2C")[0])
    assert not can_double(hand, rules)  # three cards
    split = Hand("main:2", parse_cards("8S 3D"), split_from="main")
    assert can_double(split, rules)
    assert not can_double(split, SplitRules(double_after_split=False))
    ace = Hand("main:2", parse_cards("AS 9D"), split_from="main", split_aces=True)
    assert not can_double(ace, rules)
    assert can_double(ace, SplitRules(hit_split_aces=True))


def test_split_rules() -> None:
    rules = SplitRules(max_split_hands=3)
    pair = Hand("main", parse_cards("8S 8D"))
    assert can_split(pair, 1, rules)
    assert can_split(pair, 2, rules)
    assert not can_split(pair, 3, rules)
    assert not can_split(pair, 1, SplitRules(max_split_hands=1))
    assert not can_split(Hand("main", parse_cards("KS QD")), 1, rules)
    aces = Hand("main:2", parse_cards("AS AD"), split_from="main", split_aces=True)
    assert not can_split(aces, 2, rules)
    assert can_split(aces, 2, SplitRules(resplit_aces=True))
    assert can_split(Hand("main", parse_cards("AS AD")), 1, rules)  # first split of aces


def test_hit_rules() -> None:
    rules = SplitRules()
    assert can_hit(Hand("main", parse_cards("TS 6D")), rules)
    assert not can_hit(Hand("main", parse_cards("TS AD")), rules)
    assert not can_hit(Hand("main", parse_cards("TS 6D 8C")), rules)
    ace = Hand("main:2", parse_cards("AS 5D"), split_from="main", split_aces=True)
    assert not can_hit(ace, rules)
    assert can_hit(ace, SplitRules(hit_split_aces=True))


def test_hand_properties_and_spots() -> None:
    hand = Hand("main", parse_cards("AS KD"))
    assert hand.natural() and not hand.is_split and hand.total == 21 and hand.soft
    assert not Hand("main:2", parse_cards("AS KD"), split_from="main").natural()
    assert Hand("main", parse_cards("TS 6D 8C")).busted
    assert hand.codes() == ["AS", "KD"]
    assert [split_spot("main", n) for n in (1, 2, 4)] == ["main", "main:2", "main:4"]
