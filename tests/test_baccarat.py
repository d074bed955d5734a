"""Baccarat: every cell of the third-card tableau, naturals, ties, floored commission, properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller import inputs as I
from controller.cards import DECK, Card, parse_card
from controller.table import Table
from tests.helpers import baccarat_table, deal, names

# The seed's tableau, written out as the rule sheet states it (not taken from the engine):
# Banker score -> Player third-card values on which the Banker draws.
TABLEAU = {
    0: set(range(10)), 1: set(range(10)), 2: set(range(10)),
    3: set(range(10)) - {8}, 4: {2, 3, 4, 5, 6, 7}, 5: {4, 5, 6, 7}, 6: {6, 7}, 7: set(),
}
# One card of each baccarat value 0..9.
OF_VALUE = {0: "K", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def two_cards(score: int, suit: str) -> list[str]:
    """Two cards making ``score`` (never a pair-sensitive case that matters here)."""
    first = 0 if score != 0 else 5
    second = (score - first) % 10
    return [OF_VALUE[first] + suit, OF_VALUE[second] + suit]


def round_of(table: Table, cards: list[str]) -> list[Any]:
    table.apply(I.OpenBetting())
    table.apply(I.PlaceWager(1, "player", 1000))
    table.apply(I.PlaceWager(2, "banker", 1000))
    table.apply(I.PlaceWager(3, "tie", 100))
    table.apply(I.CloseBetting())
    return [e.to_dict() for e in deal(table, " ".join(cards))]


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("third", range(10))
def test_every_cell_of_the_banker_tableau(banker: int, third: int) -> None:
    table = baccarat_table()
    player = two_cards(3, "C")  # Player 3 draws
    cards = player + two_cards(banker, "D") + [OF_VALUE[third] + "H"]
    events = round_of(table, cards)
    if third in TABLEAU[banker]:
        assert table.due() is not None and table.due().hand == "banker"  # type: ignore[union-attr]
        events = [e.to_dict() for e in deal(table, "2S")]
        assert events[-1]["event"] == "round_settled"
        assert len(events[-2]["result"]["banker_cards"]) == 3
    else:
        assert events[-1]["event"] == "round_settled"
        assert len(events[-2]["result"]["banker_cards"]) == 2


@pytest.mark.parametrize("player", range(10))
@pytest.mark.parametrize("banker", range(10))
def test_two_card_decisions_for_every_pair_of_scores(player: int, banker: int) -> None:
    table = baccarat_table()
    events = round_of(table, two_cards(player, "C") + two_cards(banker, "D"))
    natural = player >= 8 or banker >= 8
    if natural or (player >= 6 and banker >= 6):
        result = events[-2]["result"]
        assert result["natural"] is natural
        assert events[-1]["event"] == "round_settled"
    else:
        # Player 0-5 draws; a standing Player (6-7) leaves the Banker to draw on 0-5.
        assert table.due().hand == ("player" if player <= 5 else "banker")  # type: ignore[union-attr]


def test_natural_tie_pays_tie_and_pushes_the_rest() -> None:
    table = baccarat_table()
    events = round_of(table, ["JH", "8D", "7C", "AH"])
    result, settled = events[-2]["result"], events[-1]
    assert result == {
        "winner": "tie", "player_cards": ["JH", "8D"], "banker_cards": ["7C", "AH"],
        "player_score": 8, "banker_score": 8, "natural": True, "player_pair": False, "banker_pair": False,
    }
    assert [(s["spot"], s["net"]) for s in settled["settlements"]] == [
        ("player", 0), ("banker", 0), ("tie", 900)
    ]


def test_pairs_in_the_result_record() -> None:
    table = baccarat_table()
    result = round_of(table, ["4C", "4D", "2S", "2H"])[-2]["result"]
    assert result["player_pair"] and result["banker_pair"] and result["winner"] == "player"


def test_commission_is_floored_and_tie_8_to_1() -> None:
    table = baccarat_table({1: 10_000}, tie_pays="8:1")
    table.limits = table.limits.model_copy(update={"unit": 10, "min_bet": 10})
    table.apply(I.OpenBetting())
    table.apply(I.PlaceWager(1, "banker", 250))
    table.apply(I.CloseBetting())
    settled = deal(table, "2C 3C 9H KH")[-1].to_dict()  # Banker natural 9
    assert settled["settlements"] == [{"seat": 1, "spot": "banker", "stake": 250, "net": 237}]
    assert settled["house_net"] == -237


def test_pbpb_deal_order() -> None:
    table = baccarat_table(deal_order="PBPB")
    events = round_of(table, ["9C", "2D", "KH", "5S"])
    hands = [e["hand"] for e in events if e["event"] == "card_dealt"]
    assert hands == ["player", "banker", "player", "banker"]
    assert events[-2]["result"]["player_cards"] == ["9C", "KH"]


def oracle_cards_used(cards: list[Card], order: str) -> int:
    """How many cards a coup uses, from the textbook rules (independent of the engine)."""
    v = [min(c.rank_value, 10) % 10 if c.rank != "A" else 1 for c in cards]
    if order == "PPBB":
        p, b = (v[0] + v[1]) % 10, (v[2] + v[3]) % 10
    else:
        p, b = (v[0] + v[2]) % 10, (v[1] + v[3]) % 10
    if p >= 8 or b >= 8:
        return 4
    if p >= 6:
        return 5 if b <= 5 else 4
    third = v[4]
    return 6 if third in TABLEAU[b] else 5


bets = st.lists(
    st.tuples(st.integers(1, 3), st.sampled_from(["player", "banker", "tie"]), st.integers(1, 50)),
    max_size=6,
)


@given(
    cards=st.lists(st.sampled_from(DECK), min_size=6, max_size=6),
    wagers=bets,
    order=st.sampled_from(["PPBB", "PBPB"]),
)
def test_any_round_conserves_money_and_uses_exactly_the_cards_the_rules_call_for(
    cards: list[Card], wagers: list[tuple[int, str, int]], order: str
) -> None:
    table = baccarat_table(deal_order=order)
    before = dict(table.credits)
    table.apply(I.OpenBetting())
    for seat, spot, units in wagers:
        table.apply(I.PlaceWager(seat, spot, units * 100))  # some are refused: that is fine
    table.apply(I.CloseBetting())
    used = 0
    settled = None
    for card in cards:
        used += 1
        out = table.apply(I.CardSeen(card))
        assert "tilt" not in names(out)
        if out[-1].event == "round_settled":
            settled = out[-1].to_dict()
            break
    assert settled is not None
    assert used == oracle_cards_used(cards, order)
    assert table.composition.dealt == used
    nets = sum(s["net"] for s in settled["settlements"])
    assert nets + settled["house_net"] == 0
    for seat in before:
        seat_net = sum(s["net"] for s in settled["settlements"] if s["seat"] == seat)
        assert table.credits[seat] == before[seat] + seat_net
    # The next card is not due: a tilt, and no money moves.
    credits = dict(table.credits)
    assert names(table.apply(I.CardSeen(parse_card("2C")))) == ["tilt"]
    assert table.credits == credits
