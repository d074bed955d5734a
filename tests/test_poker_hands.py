"""The poker ranking wrapper against hands made by hand: every rank, kickers, the wheel, suits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import DECK, parse_cards
from controller.games.poker_hands import HandRank, best_hand, rank_of, strength

EVERY_RANK = [
    ("AS KS QS JS TS", HandRank.ROYAL_FLUSH),
    ("9H 8H 7H 6H 5H", HandRank.STRAIGHT_FLUSH),
    ("5D 4D 3D 2D AD", HandRank.STRAIGHT_FLUSH),
    ("7C 7D 7H 7S 2C", HandRank.FOUR_OF_A_KIND),
    ("TC TD TH 4S 4C", HandRank.FULL_HOUSE),
    ("KC 9C 7C 4C 2C", HandRank.FLUSH),
    ("AC KD QH JS TC", HandRank.STRAIGHT),
    ("5C 4D 3H 2S AC", HandRank.STRAIGHT),
    ("8C 8D 8H KS 2C", HandRank.THREE_OF_A_KIND),
    ("JC JD 5H 5S AC", HandRank.TWO_PAIR),
    ("QC QD 9H 5S 2C", HandRank.ONE_PAIR),
    ("AC JD 9H 5S 3C", HandRank.HIGH_CARD),
]


@pytest.mark.parametrize(("text", "rank"), EVERY_RANK, ids=[t for t, _ in EVERY_RANK])
def test_every_named_rank(text: str, rank: HandRank) -> None:
    hand = best_hand(parse_cards(text))
    assert hand.rank is rank
    assert sorted(c.code for c in hand.cards) == sorted(text.split())


def test_ranks_order_the_classes() -> None:
    hands = [best_hand(parse_cards(t)) for t, _ in EVERY_RANK]
    ranks = [h.rank for h in hands]
    # The list is strongest first (within a rank, the stronger example first).
    assert all(a >= b for a, b in zip(hands, hands[1:], strict=False))
    assert ranks == sorted(ranks, reverse=True)
    assert HandRank.FULL_HOUSE.label == "full house" and HandRank.ROYAL_FLUSH.label == "royal flush"


def test_wheel_is_the_lowest_straight() -> None:
    wheel = best_hand(parse_cards("AC 2D 3H 4S 5C"))
    six_high = best_hand(parse_cards("2D 3H 4S 5C 6D"))
    ace_high_nothing = best_hand(parse_cards("AC KD QH JS 9C"))
    assert wheel.rank is HandRank.STRAIGHT
    assert six_high > wheel > ace_high_nothing
    # The ace plays low and is read last.
    assert [c.code for c in wheel.cards] == ["5C", "4S", "3H", "2D", "AC"]
    steel = best_hand(parse_cards("AH 2H 3H 4H 5H"))
    assert steel.rank is HandRank.STRAIGHT_FLUSH
    assert best_hand(parse_cards("2H 3H 4H 5H 6H")) > steel


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("QC QD AH 5S 2C", "QH QS KC 5D 2H"),  # pair kicker
        ("QC QD AH 6S 2C", "QH QS AC 5D 4H"),  # third kicker
        ("JC JD 5H 5S AC", "JH JS 5C 5D KC"),  # two pair kicker
        ("JC JD 6H 6S 2C", "JH JS 5C 5D AC"),  # second pair beats kicker
        ("8C 8D 8H AS 2C", "8S 8C 8D KS QC"),  # trips kicker (different decks' worth, values only)
        ("TC TD TH 5S 5C", "9C 9D 9H AS AC"),  # full house: the set decides
        ("AC 9C 7C 4C 3C", "KH QH JH 9H 7H"),  # flush: the top card decides
        ("KC 9C 7C 4C 3C", "KH 9H 7H 4H 2H"),  # flush: the last card decides
    ],
)
def test_kickers_decide_within_a_rank(better: str, worse: str) -> None:
    a, b = best_hand(parse_cards(better)), best_hand(parse_cards(worse))
    assert a.rank is b.rank
    assert a > b and b < a and a != b


def test_suits_never_break_ties() -> None:
    for suits in ("CDHSC", "SHDCD", "HSCDS"):
        hand = best_hand([parse_cards(f"{r}{s}")[0] for r, s in zip("AKQJ9", suits, strict=True)])
        assert hand == best_hand(parse_cards("AD KS QC JH 9D"))
    assert best_hand(parse_cards("AS KS QS JS 9S")) > best_hand(parse_cards("AD KS QC JH 9D"))
    flush_c = best_hand(parse_cards("AC JC 8C 6C 2C"))
    flush_s = best_hand(parse_cards("AS JS 8S 6S 2S"))
    assert flush_c == flush_s and hash(flush_c) == hash(flush_s)


def test_best_five_of_seven() -> None:
    # Hold'em: the board plays when the hole cards do not improve it.
    board = parse_cards("AC KD QH JS 9C")
    a = best_hand([*board, *parse_cards("2C 3D")])
    b = best_hand([*board, *parse_cards("4H 5S")])
    assert a == b and [c.code for c in a.cards] == ["AC", "KD", "QH", "JS", "9C"]
    # One hole card makes the straight.
    c = best_hand([*board, *parse_cards("TC 2D")])
    assert c.rank is HandRank.STRAIGHT and "TC" in [x.code for x in c.cards]
    # Three pairs: the best two with the best kicker.
    d = best_hand(parse_cards("KC KD 8H 8S 4C 4D AS"))
    assert d.rank is HandRank.TWO_PAIR
    assert [x.rank for x in d.cards] == ["K", "K", "8", "8", "A"]
    # Two sets make a full house of the higher set.
    e = best_hand(parse_cards("7C 7D 7H 5S 5C 5D 2S"))
    assert e.rank is HandRank.FULL_HOUSE and [x.rank for x in e.cards] == ["7", "7", "7", "5", "5"]
    # Six of one suit: the best five of them.
    f = best_hand(parse_cards("2H 5H 9H JH KH 3H AC"))
    assert f.rank is HandRank.FLUSH and sorted(x.rank_value for x in f.cards) == [3, 5, 9, 11, 13]


def test_reading_order_and_record() -> None:
    hand = best_hand(parse_cards("5S 8C 5H 8D 8S"))
    assert hand.to_dict() == {"rank": "full house", "cards": ["8S", "8D", "8C", "5S", "5H"]}
    assert str(hand) == "full house (8S 8D 8C 5S 5H)"


def test_refuses_wrong_sizes_and_duplicates() -> None:
    with pytest.raises(ValueError, match="5 to 7"):
        best_hand(parse_cards("AS KS QS JS"))
    with pytest.raises(ValueError, match="5 to 7"):
        strength(parse_cards("AS KS QS JS TS 9S 8S 7S"))
    with pytest.raises(ValueError, match="same card twice"):
        strength(parse_cards("AS AS QS JS TS"))
    with pytest.raises(ValueError):
        rank_of(0)


@given(st.permutations(DECK))
def test_best_five_is_a_subset_with_the_same_value(deck: list) -> None:  # type: ignore[type-arg]
    seven = deck[:7]
    hand = best_hand(seven)
    assert len(hand.cards) == 5 and set(hand.cards) <= set(seven)
    assert strength(hand.cards) == hand.strength == strength(seven)
    assert rank_of(hand.strength) is hand.rank
    # No five of the seven is stronger; the order of the cards does not matter.
    assert best_hand(list(reversed(seven))).cards == hand.cards
