"""2WayWinner rules with stacked cards, through the real table, and refusals that change nothing."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from controller import inputs as I
from controller.cards import parse_card
from controller.events import CardBurned, CardDealt, Event, GameNotice, RoundResult, RoundSettled
from controller.game_base import DecisionDue
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.scenario import RoundSpec, round_inputs
from controller.table import Table

ANTES = {"bj_ante": 1000, "poker_ante": 1000}
BONUS = {**ANTES, "dealer_bonus": 500}


def new_table(credits: dict[int, int] | None = None, **options: Any) -> Table:
    table = Table(TwoWayWinner(TwoWayWinnerOptions(**options)), TableLimits(seats=6))
    for seat, amount in (credits or dict.fromkeys(range(1, 7), 100_000)).items():
        table.apply(I.CreditIn(seat, amount))
    return table


def play(table: Table, bets: dict[int, dict[str, int]], cards: str,
         decisions: list[list[int | str]]) -> list[Event]:
    """One round, each card and decision given when the table asks (as a scenario would)."""
    spec = RoundSpec(shuffle=True, bets=bets, cards=cards.split(), decisions=decisions)
    events: list[Event] = []
    for inp in round_inputs(table, spec, 1, first=True):
        out = table.apply(inp)
        refused = [e for e in out if e.event == "refused"]
        assert not refused, refused[0].to_dict()
        events.extend(out)
    return events


def start(table: Table, bets: dict[int, dict[str, int]], cards: str) -> None:
    """Betting and the given cards only (to stop at a decision)."""
    table.apply(I.NewShoe())
    table.apply(I.OpenBetting())
    for seat, spots in bets.items():
        for spot, amount in spots.items():
            assert table.apply(I.PlaceWager(seat, spot, amount))[0].event == "wager_placed"
    table.apply(I.CloseBetting())
    for text in cards.split():
        assert table.apply(I.CardSeen(parse_card(text)))[0].event == "card_dealt"


def nets(events: list[Event]) -> dict[tuple[int, str], int]:
    settled = [e for e in events if isinstance(e, RoundSettled)]
    assert len(settled) == 1
    return {(s["seat"], s["spot"]): s["net"] for s in settled[0].settlements}


def result(events: list[Event]) -> dict[str, Any]:
    return next(e for e in events if isinstance(e, RoundResult)).result


def dealt_to(events: list[Event], hand: str) -> list[str]:
    return [e.card for e in events if isinstance(e, CardDealt) and e.hand == hand]


def refused_unchanged(table: Table, inp: I.Input, reason: str) -> None:
    before = table.snapshot()
    out = table.apply(inp)
    assert [e.event for e in out] == ["refused"]
    assert reason in out[0].to_dict()["reason"]
    assert table.snapshot() == before


# ---------------------------------------------------------------- dealer blackjack
def test_dealer_blackjack_with_blackjack_poker_natural_and_surrendered_seats() -> None:
    # Seats 1..4, dealer TC up, AH in the hole. Seat 4 surrenders (a ten up allows it).
    events = play(
        new_table(),
        {1: ANTES, 2: ANTES, 3: ANTES, 4: BONUS},
        "9S QD AS 5C TC 7D QS KD 2H AH 3C 8D 4S 6H JC 9D",
        [[4, "surrender"], [3, "take_natural"], [2, "poker"], [1, "blackjack"], [2, "bet"]],
    )
    assert nets(events) == {
        (1, "bj_ante"): -1000, (1, "bj_play"): -1000, (1, "poker_ante"): 0,  # blackjack play and ante only
        (2, "bj_ante"): 0, (2, "poker_ante"): 1000, (2, "poker_play"): 1000, (2, "poker_bet"): 1000,
        (3, "bj_ante"): 0, (3, "poker_ante"): 0,  # both have blackjack: push
        (4, "bj_ante"): -1000, (4, "poker_ante"): 0, (4, "dealer_bonus"): -500,  # A T 8 6 4: nothing
    }
    peek = [e for e in events if isinstance(e, GameNotice) and e.what == "dealer_peek"]
    assert peek[0].detail == {"up": "TC", "blackjack": True}
    assert [e.card for e in events if isinstance(e, CardBurned)] == ["3C"]
    rec = result(events)
    assert rec["dealer_cards"] == ["TC", "AH"] and rec["dealer_bj_total"] == 21
    assert rec["burned"] == ["3C"]
    assert rec["community"] == ["TC", "AH", "8D", "4S", "6H"]
    assert rec["dealer_poker_cards"] == ["JC", "9D"]
    assert rec["seats"]["2"]["best_hand"] == {"rank": "one pair", "cards": ["QS", "QD", "AH", "TC", "8D"]}
    assert rec["dealer_best_hand"]["rank"] == "high card"
    assert rec["seats"]["4"] == {"choice": "surrender", "hands": [["5C", "2H"]]}
    assert rec["bonus_hand"]["pays"] is None


def test_dealer_blackjack_without_poker_or_bonus_ends_the_round_without_a_burn() -> None:
    events = play(new_table(), {1: ANTES}, "9D AH 8C QS", [[1, "blackjack"]])
    assert nets(events) == {(1, "bj_ante"): -1000, (1, "bj_play"): -1000, (1, "poker_ante"): 0}
    assert not [e for e in events if isinstance(e, CardBurned)]
    assert result(events)["community"] == ["AH", "QS"]


def test_dealer_six_card_hand_burns_the_sixth() -> None:
    # Dealer 2C 3D hits 4H, 5S, AC (15), 2D (17): the 2D counts for the total, not the community.
    events = play(
        new_table(), {1: ANTES, 2: BONUS}, "TS 6H 2C 8D 9H 3D 4H 5S AC 2D KC KH",
        [[1, "blackjack"], [2, "poker"], [1, "stand"], [2, "check"]],
    )
    burned = [e for e in events if isinstance(e, CardBurned)]
    assert [(e.card, e.why) for e in burned] == [("2D", "rules")]
    assert dealt_to(events, "dealer") == ["2C", "3D", "4H", "5S", "AC", "2D"]
    assert dealt_to(events, "community") == []
    rec = result(events)
    assert rec["dealer_bj_total"] == 17 and rec["burned"] == ["2D"]
    assert rec["community"] == ["2C", "3D", "4H", "5S", "AC"]
    wheel = ["5S", "4H", "3D", "2C", "AC"]
    assert rec["bonus_hand"] == {"rank": "straight", "cards": wheel, "pays": "straight"}
    n = nets(events)
    assert n[(1, "bj_play")] == 1000 and n[(2, "dealer_bonus")] == 7500
    assert n[(2, "poker_play")] == 1000  # 6-high straight beats the wheel


@pytest.mark.parametrize(
    ("cards", "decisions", "from_dealer", "drawn"),
    [
        # No blackjack seat: the dealer takes no card; three community cards are drawn.
        ("KD 7C 9C 2D KH 9S 4D QC QS", [[1, "poker"], [1, "bet"]], 2, 3),
        # The dealer hits 13 to 18 with three cards; two are drawn.
        ("TD 8S 5H 9H 5D 8C 5S 8D 2C KC KS",
         [[1, "blackjack"], [2, "poker"], [1, "stand"], [2, "bet"]], 3, 2),
        # Four dealer cards (6 4 2 7 = 19); one is drawn.
        ("TD 8S 6D 9H 5D 4C 2S 7H 9C 3C 3H",
         [[1, "blackjack"], [2, "poker"], [1, "stand"], [2, "check"]], 4, 1),
    ],
)
def test_community_completed_from_the_dealers_cards(
    cards: str, decisions: list[list[int | str]], from_dealer: int, drawn: int
) -> None:
    seats = {s: ANTES for s in {int(d[0]) for d in decisions}}
    events = play(new_table(), seats, cards, decisions)
    rec = result(events)
    assert len(rec["dealer_cards"]) == from_dealer
    assert rec["community"] == rec["dealer_cards"] + dealt_to(events, "community")
    assert len(dealt_to(events, "community")) == drawn and len(rec["community"]) == 5
    assert len(rec["dealer_poker_cards"]) == 2


def test_only_a_dealer_bonus_completes_the_community_without_dealer_poker_cards() -> None:
    events = play(new_table(), {1: BONUS}, "KC 5C AH 9D JH JS 3C", [[1, "take_natural"]])
    rec = result(events)
    assert rec["community"] == ["5C", "9D", "JH", "JS", "3C"] and rec["dealer_poker_cards"] == []
    assert rec["dealer_best_hand"] is None
    assert nets(events) == {(1, "bj_ante"): 1200, (1, "poker_ante"): 0, (1, "dealer_bonus"): 500}


def test_nothing_left_in_play_deals_nothing_more() -> None:
    events = play(new_table(), {1: ANTES}, "QH 8C AD 5S", [[1, "take_natural"]])
    assert nets(events) == {(1, "bj_ante"): 1200, (1, "poker_ante"): 0}  # 6:5 on 1000


# ---------------------------------------------------------------- poker
def test_natural_plays_poker_and_bets_twice_the_ante() -> None:
    events = play(
        new_table(), {1: ANTES}, "AS 7C JD 6D 3C 9S 2H KH 4D",
        [[1, "poker"], [1, "bet", 2000]],
    )
    n = nets(events)
    assert (n[(1, "poker_bet")], n[(1, "poker_play")], n[(1, "bj_ante")]) == (2000, 1000, 0)


def test_a_natural_may_bet_once_the_ante_but_not_three_times() -> None:
    table = new_table()
    start(table, {1: ANTES}, "AS 7C JD 6D")
    table.apply(I.Decision(1, "poker"))
    refused_unchanged(table, I.Decision(1, "bet", 3000), "may bet 1000 or 2000, not 3000")
    refused_unchanged(table, I.Decision(1, "check", 1000), "check takes no amount")
    assert table.apply(I.Decision(1, "bet", 1000))[1].to_dict()["amount"] == 1000


def test_a_plain_poker_seat_bets_exactly_the_ante() -> None:
    table = new_table()
    start(table, {1: ANTES}, "9S 7C 8D 6D")
    table.apply(I.Decision(1, "poker"))
    refused_unchanged(table, I.Decision(1, "bet", 2000), "may bet 1000, not 2000")
    refused_unchanged(table, I.Decision(1, "bet", 500), "may bet 1000, not 500")


def test_four_of_a_kind_on_the_board_pays_the_bj_ante() -> None:
    # Dealer 8C 8D; no blackjack hand, so no draw; the board is 8 8 8 8 K. The seat's ace kicker wins.
    events = play(
        new_table(), {1: ANTES}, "AS 8C 2D 8D 8H 8S KC QH 3C", [[1, "poker"], [1, "check"]],
    )
    assert nets(events) == {(1, "bj_ante"): 1000, (1, "poker_ante"): 1000, (1, "poker_play"): 1000}
    assert result(events)["seats"]["1"]["best_hand"]["rank"] == "four of a kind"


def test_full_house_pays_the_bj_ante_but_a_lower_winning_hand_pushes_it() -> None:
    full = play(new_table(), {1: ANTES}, "8S 5H 5D 8C 8D 2C 3H KC KS", [[1, "poker"], [1, "bet"]])
    assert nets(full)[(1, "bj_ante")] == 1000
    pair = play(new_table(), {1: ANTES}, "AS 7C AD 2H 9D 4C KC QS JH", [[1, "poker"], [1, "bet"]])
    n = nets(pair)
    assert n[(1, "poker_play")] == 1000 and n[(1, "bj_ante")] == 0


def test_equal_hands_push_everything() -> None:
    # The board is K Q J T A (a straight); both play it.
    events = play(
        new_table(), {1: ANTES}, "2S KD 3D QH JS TC AC 4C 5C", [[1, "poker"], [1, "bet"]],
    )
    assert set(nets(events).values()) == {0}
    assert len(nets(events)) == 4


def test_a_losing_poker_seat_loses_its_bj_ante_too() -> None:
    events = play(new_table(), {1: ANTES}, "2S KD 7D 5H 9H 4S 3C QC QS", [[1, "poker"], [1, "check"]])
    assert nets(events) == {(1, "bj_ante"): -1000, (1, "poker_ante"): -1000, (1, "poker_play"): -1000}


# ---------------------------------------------------------------- choice and blackjack
def test_surrender_is_barred_with_an_ace_up() -> None:
    table = new_table()
    start(table, {1: ANTES}, "9C AS 8H 6D")
    due = table.due()
    assert isinstance(due, DecisionDue) and due.choices == {1: ("blackjack", "poker")}
    refused_unchanged(table, I.Decision(1, "surrender"), "'surrender' is not legal for seat 1")


def test_a_natural_has_only_poker_or_take_natural() -> None:
    table = new_table()
    start(table, {1: ANTES, 2: ANTES}, "AS 9C 6D KH 8H 2C")
    due = table.due()
    assert isinstance(due, DecisionDue)
    assert due.choices == {1: ("poker", "take_natural"), 2: ("blackjack", "poker", "surrender")}
    refused_unchanged(table, I.Decision(1, "blackjack"), "not legal")
    refused_unchanged(table, I.Decision(2, "poker", 2000), "poker stakes exactly 10.00, not 20.00")
    # Any order: seat 2 may answer before seat 1.
    assert table.apply(I.Decision(2, "surrender"))[0].event == "decision"


def test_dealer_hits_soft_17() -> None:
    events = play(new_table(), {1: ANTES}, "TH AC 8S 6D 3C", [[1, "blackjack"], [1, "stand"]])
    assert result(events)["dealer_bj_total"] == 20
    assert nets(events) == {(1, "bj_ante"): -1000, (1, "bj_play"): -1000, (1, "poker_ante"): -1000}


def test_dealer_takes_no_card_when_every_blackjack_hand_busted() -> None:
    events = play(
        new_table(), {1: ANTES}, "9H 5C 7C 9S 8D", [[1, "blackjack"], [1, "hit"]],
    )
    assert result(events)["dealer_cards"] == ["5C", "9S"]
    assert nets(events)[(1, "poker_ante")] == -1000


def test_split_hands_settle_alone_and_antes_follow_the_first() -> None:
    # 8C 8H split: hand 1 8C 9D = 17 pushes the dealer's 17; hand 2 8H TD = 18 wins.
    events = play(
        new_table(), {1: ANTES}, "8C TS 8H 7S 9D TD",
        [[1, "blackjack"], [1, "split"], [1, "stand"], [1, "stand"]],
    )
    assert nets(events) == {
        (1, "bj_play"): 0, (1, "bj_play:2"): 1000, (1, "bj_ante"): 0, (1, "poker_ante"): 0,
    }
    assert result(events)["seats"]["1"]["hands"] == [["8C", "9D"], ["8H", "TD"]]


def test_no_double_or_second_split_after_a_split() -> None:
    table = new_table()
    start(table, {1: ANTES}, "8C TS 8H 7S")
    table.apply(I.Decision(1, "blackjack"))
    due = table.due()
    assert isinstance(due, DecisionDue) and due.choices == {1: ("hit", "stand", "double", "split")}
    table.apply(I.Decision(1, "split"))
    table.apply(I.CardSeen(parse_card("8D")))  # hand 1: 8C 8D, a pair again
    due = table.due()
    assert isinstance(due, DecisionDue) and due.choices == {1: ("hit", "stand")}
    refused_unchanged(table, I.Decision(1, "double"), "not legal")
    refused_unchanged(table, I.Decision(1, "split"), "not legal")
    refused_unchanged(table, I.Decision(1, "hit", 1000), "hit takes no amount")


def test_split_aces_take_one_card_each_and_21_is_no_natural() -> None:
    events = play(new_table(), {1: ANTES}, "AC 9D AD JS KH 5S", [[1, "blackjack"], [1, "split"]])
    assert nets(events) == {(1, "bj_play"): 1000, (1, "bj_play:2"): -1000, (1, "bj_ante"): 1000,
                            (1, "poker_ante"): 0}


def test_double_stakes_the_play_again_and_takes_one_card() -> None:
    table = new_table()
    start(table, {1: ANTES}, "5S 9C 6C 8D")
    table.apply(I.Decision(1, "blackjack"))
    refused_unchanged(table, I.Decision(1, "double", 500), "double stakes exactly 10.00, not 5.00")
    out = table.apply(I.Decision(1, "double"))
    assert [e.to_dict()["amount"] for e in out if e.event == "wager_placed"] == [2000]
    # 5 6 + 2 = 13 and the hand is over; the dealer's 9 8 = 17 stands: the round settles at once.
    out = table.apply(I.CardSeen(parse_card("2D")))
    settled = [e for e in out if isinstance(e, RoundSettled)]
    assert settled and {(s["spot"], s["stake"], s["net"]) for s in settled[0].settlements} == {
        ("bj_ante", 1000, -1000), ("bj_play", 2000, -2000), ("poker_ante", 1000, -1000),
    }


def test_decisions_in_seat_order_during_blackjack_turns() -> None:
    table = new_table()
    start(table, {1: ANTES, 2: ANTES}, "TC 9H 7D TH 8S 6C")
    table.apply(I.Decision(2, "blackjack"))
    table.apply(I.Decision(1, "blackjack"))
    refused_unchanged(table, I.Decision(2, "stand"), "seat 2 is not to act; waiting for seat 1")


def test_a_seat_that_cannot_fund_a_play_may_only_surrender() -> None:
    table = new_table({1: 2000, 2: 3000})
    start(table, {1: ANTES, 2: ANTES}, "9C 9H AS 8H 7H 6D")
    due = table.due()
    assert isinstance(due, DecisionDue)
    assert due.choices == {1: ("surrender",), 2: ("blackjack", "poker")}


# ---------------------------------------------------------------- betting and options
def test_both_antes_equal_are_required_when_betting_closes() -> None:
    table = new_table()
    table.apply(I.NewShoe())
    table.apply(I.OpenBetting())
    for seat, spot, amount in [(1, "bj_ante", 1000), (2, "bj_ante", 1000), (2, "poker_ante", 500),
                               (3, "dealer_bonus", 500), (4, "bj_ante", 1000), (4, "poker_ante", 1000)]:
        assert table.apply(I.PlaceWager(seat, spot, amount))[0].event == "wager_placed"
    out = table.apply(I.CloseBetting())
    returned = {(e.to_dict()["seat"], e.to_dict()["spot"]): e.to_dict()["reason"]
                for e in out if e.event == "wager_returned"}
    assert set(returned) == {(1, "bj_ante"), (2, "bj_ante"), (2, "poker_ante"), (3, "dealer_bonus")}
    assert "both antes" in returned[(1, "bj_ante")] and "equal" in returned[(2, "poker_ante")]
    assert next(e for e in out if e.event == "betting_closed").to_dict()["seats"] == [4]
    assert table.credits[1] == 100_000 and table.credits[3] == 100_000


def test_max_seats_refuses_a_seat_beyond_it() -> None:
    table = new_table(max_seats=3)
    table.apply(I.OpenBetting())
    out = table.apply(I.PlaceWager(4, "bj_ante", 1000))
    assert out[0].event == "refused" and "max_seats" in out[0].to_dict()["reason"]
    assert TwoWayWinner.default_seats == 6


def test_options_refuse_unknown_pay_table_keys_and_bare_numbers() -> None:
    with pytest.raises(ValidationError, match="dealer_bonus_paytable.fullhouse"):
        TwoWayWinnerOptions.model_validate({"dealer_bonus_paytable": {"fullhouse": "30:1"}})
    with pytest.raises(ValidationError, match="quoted string"):
        TwoWayWinnerOptions.model_validate({"dealer_bonus_paytable": {"full_house": 1801}})
    with pytest.raises(ValidationError, match="6:5"):
        TwoWayWinnerOptions.model_validate({"natural_pays": "2:1"})
    with pytest.raises(ValidationError):
        TwoWayWinnerOptions.model_validate({"decks": 2})
    opts = TwoWayWinnerOptions.model_validate(
        {"dealer_bonus_paytable": {"two_pair": "lose", "flush": "25:1"}}
    )
    table = opts.dealer_bonus_paytable.as_text()
    assert table["two_pair"] == "lose" and table["flush"] == "25:1" and table["royal_flush"] == "1000:1"


def test_custom_pay_table_settles_the_bonus() -> None:
    # Community 7S 7D 7H QD QS: a full house at 30:1; seat 1's blackjack loses to 21.
    events = play(
        new_table(dealer_bonus_paytable={"full_house": "30:1"}), {1: {**ANTES, "dealer_bonus": 1000}},
        "QH 7S QC 7D 7H QD QS", [[1, "blackjack"], [1, "stand"]],
    )
    assert nets(events)[(1, "dealer_bonus")] == 30000


def test_card_when_a_decision_is_due_tilts_and_changes_no_hand() -> None:
    table = new_table()
    start(table, {1: ANTES}, "9C 8S 7H 6D")
    before = table.snapshot()["round_view"]
    out = table.apply(I.CardSeen(parse_card("2C")))
    assert [e.event for e in out] == ["tilt"]
    assert table.snapshot()["round_view"] == before
    assert before["dealer_cards"] == ["8S", "??"]  # the hole card stays face down
