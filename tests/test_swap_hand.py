"""Swap-Hand Blackjack: each rule of docs/rules/swap_hand.md played through the table with stacked cards.

Rounds are fed in the scenario runner's own input order (a card when a card
is due, a decision when one is due), so a test reads like a scenario file;
the expected nets are worked from the rules by hand.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from controller import inputs as I
from controller.cards import parse_card
from controller.events import Event
from controller.game_base import DecisionDue, Refusal
from controller.games.swap_hand.options import CLASSIC, SwapHandOptions, Variant
from controller.games.swap_hand.round import SwapHandRound
from controller.games.swap_hand.rules import SwapHand
from controller.limits import TableLimits
from controller.scenario import RoundSpec, betting_inputs, play_round
from controller.table import Table

SWAP_HAND = Variant()


def make_table(credits: dict[int, int] | None = None, variant: Variant = SWAP_HAND, **options: Any) -> Table:
    table = Table(SwapHand(SwapHandOptions(**options), variant), TableLimits(seats=3))
    for seat, amount in (credits or {1: 100_000, 2: 100_000, 3: 100_000}).items():
        table.apply(I.CreditIn(seat, amount))
    return table


def spec(bets: dict[int, int], cards: str, decisions: list[list[Any]] | None) -> RoundSpec:
    return RoundSpec(bets={s: {"main": m} for s, m in bets.items()}, cards=cards.split(),
                     decisions=decisions or [])


Decisions = list[list[Any]] | None


def play(table: Table, bets: dict[int, int], cards: str, decisions: Decisions = None) -> list[Event]:
    """A whole round; the runner refuses too few or too many cards or decisions."""
    return list(play_round(table, spec(bets, cards, decisions), table.round_no + 1, table.round_no == 0))


def feed(table: Table, bets: dict[int, int], cards: str, decisions: Decisions = None) -> list[Event]:
    """Start a round and give it these cards and decisions as it asks, then stop (mid-round)."""
    events: list[Event] = []
    for inp in betting_inputs(spec(bets, cards, decisions), table.round_no == 0):
        events += table.apply(inp)
    todo_cards = [parse_card(c) for c in cards.split()]
    todo = [I.Decision(d[0], d[1], *d[2:]) for d in decisions or []]
    while table.phase == "dealing":
        due = table.due()
        if isinstance(due, DecisionDue):
            if not todo:
                break
            events += table.apply(todo.pop(0))
        elif todo_cards:
            events += table.apply(I.CardSeen(todo_cards.pop(0)))
        else:
            break
    assert not todo_cards and not todo, "the round did not ask for everything given"
    assert not [e for e in events if e.event in ("refused", "tilt")]
    return events


def nets(events: list[Event]) -> dict[tuple[int, str], tuple[int, int]]:
    settled = [e.to_dict() for e in events if e.event == "round_settled"]
    assert len(settled) == 1
    return {(s["seat"], s["spot"]): (s["stake"], s["net"]) for s in settled[0]["settlements"]}


def result(events: list[Event]) -> dict[str, Any]:
    [res] = [e.to_dict()["result"] for e in events if e.event == "round_result"]
    assert isinstance(res, dict)
    return res


def offered(events: list[Event]) -> list[dict[str, list[str]]]:
    return [e.to_dict()["choices"] for e in events if e.event == "decision_due"]


def dealt(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.to_dict()["hand"], e.to_dict()["card"]) for e in events if e.event == "card_dealt"]


def choices(table: Table) -> tuple[str, ...]:
    due = table.due()
    assert isinstance(due, DecisionDue)
    [acts] = due.choices.values()
    return acts


# ------------------------------------------------------------------ wagers and options
def test_odds_win_is_half_the_main_and_odd_units_are_refused() -> None:
    table = make_table()
    table.apply(I.NewShoe())
    table.apply(I.OpenBetting())
    [refused] = table.apply(I.PlaceWager(1, "main", 300))
    assert refused.event == "refused" and "even number of units" in refused.to_dict()["reason"]
    assert table.credits[1] == 100_000 and table.staked == {}
    events = table.apply(I.PlaceWager(1, "main", 400))
    placed = [(e.to_dict()["spot"], e.to_dict()["amount"], e.to_dict()["credits"]) for e in events]
    # Each event's credits are the seat's after it (docs/events.md): the main's were after both (a review).
    assert placed == [("main", 400, 100_000 - 400), ("odds_win", 200, 100_000 - 600)]
    assert table.credits[1] == 100_000 - 600
    more = [(e.to_dict()["spot"], e.to_dict()["amount"], e.to_dict()["credits"])
            for e in table.apply(I.PlaceWager(1, "main", 200))]  # spot totals; each step's credits
    assert more == [("main", 600, 100_000 - 800), ("odds_win", 300, 100_000 - 900)]
    [refused] = table.apply(I.PlaceWager(1, "odds_win", 200))
    assert refused.event == "refused"  # the Odds-Win is never chosen separately


def test_options_are_validated() -> None:
    # true or false only, a whole number only (a review, 2026-12-05: 1, "yes", "off", "6" and 6.0 were read)
    flags = ("dealer_hits_soft_17", "double_after_split", "resplit_aces", "hit_split_aces")
    lax = [{key: value} for key in flags for value in (1, 0, "yes", "1", "off")]
    lax += [{"decks": "6"}, {"decks": 6.0}, {"max_split_hands": "2"}]
    for bad in ({"blackjack_pays": "2:1"}, {"blackjack_pays": 1.5}, {"dealer_peek": False},
                {"max_split_hands": 5}, {"decks": 9}, {"double_on": "8-11"}, {"surrender": True}, *lax):
        with pytest.raises(ValidationError):
            SwapHandOptions.model_validate(bad)
    opts = SwapHandOptions.model_validate({"blackjack_pays": "6:5", "double_on": "10-11"})
    assert str(opts.blackjack_pays) == "6:5" and opts.decks == 6 and not opts.dealer_hits_soft_17


# ------------------------------------------------------------------ deal and parity
def test_deal_order_and_parity_both_ways() -> None:
    table = make_table()
    # seat 1 TC 9D = 19 odd; seat 2 TH 5S = 15 odd (keeps); seat 3 8C 8D = 16 even. Dealer 7C JD = 17.
    events = play(table, {1: 1000, 2: 1000, 3: 1000}, "TC TH 8C 7C 9D 5S 8D JD",
                  [[1, "stand"], [2, "keep"], [2, "stand"], [3, "keep"], [3, "stand"]])
    assert dealt(events) == [("seat 1", "TC"), ("seat 2", "TH"), ("seat 3", "8C"), ("dealer", "7C"),
                             ("seat 1", "9D"), ("seat 2", "5S"), ("seat 3", "8D"), ("dealer", "JD")]
    notices = [e.to_dict() for e in events if e.event == "notice"]
    assert [(n["what"], n["detail"]["seat"]) for n in notices] == [("odds_win_lost", 3)]
    assert nets(events) == {
        (1, "main"): (1000, 1000), (1, "odds_win"): (500, 1000),
        (2, "main"): (1000, -1000), (2, "odds_win"): (500, -500),
        (3, "main"): (1000, -1000), (3, "odds_win"): (500, -500),
    }
    res = result(events)
    assert [res["seats"][s]["odds_win_parity"] for s in "123"] == ["odd", "odd", "even"]
    assert res["dealer_cards"] == ["7C", "JD"] and res["dealer_total"] == 17


def test_even_parity_loses_the_odds_win_even_when_the_hand_wins() -> None:
    # TC 6D = 16 (even) keeps and stands; the dealer's 6H TS = 16 draws 9S and busts.
    events = play(make_table(), {1: 1000}, "TC 6H 6D TS 9S", [[1, "keep"], [1, "stand"]])
    assert result(events)["dealer_cards"] == ["6H", "TS", "9S"]  # 25: bust
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "odds_win"): (500, -500)}


# ------------------------------------------------------------------ swap
@pytest.mark.parametrize(
    ("cards", "eligible"),
    [("TC 4D", True), ("9C 9D", True), ("TC 8D", True), ("7C 7D", True), ("TC 3D", False),
     ("TC 9D", False), ("AC 6D", False), ("AC 3D", False), ("5C 4D", False)],
)
def test_swap_offered_first_only_on_hard_14_to_18(cards: str, eligible: bool) -> None:
    c1, c2 = cards.split()
    table = make_table()
    feed(table, {1: 1000}, f"{c1} 6S {c2} TS")
    assert (choices(table) == ("swap", "keep")) is eligible


def test_swap_into_a_natural_pays_blackjack_and_the_dealer_draws_nothing() -> None:
    events = play(make_table(), {1: 1000}, "9C 6H 8D TD AS KC", [[1, "swap"]])
    assert nets(events) == {(1, "main"): (1000, 1500), (1, "odds_win"): (500, 1000)}
    seat = result(events)["seats"]["1"]
    assert seat["swapped"] and seat["discarded"] == ["9C", "8D"]
    assert seat["hands"][0]["outcome"] == "blackjack" and seat["hands"][0]["cards"] == ["AS", "KC"]
    assert result(events)["dealer_cards"] == ["6H", "TD"]


def test_swap_into_a_natural_at_six_to_five() -> None:
    events = play(make_table(blackjack_pays="6:5"), {1: 1000}, "9C 6H 8D TD AS KC", [[1, "swap"]])
    assert nets(events)[(1, "main")] == (1000, 1200)


def test_swap_is_once_and_the_parity_is_not_checked_again() -> None:
    # 9D 6S = 15 (odd) swaps into TC 4H = 14 (even, and a swap total): no second swap, the Odds-Win stays.
    # Hit 5D -> 19; dealer 6C TS = 16 draws 6H -> 22.
    events = play(make_table(), {1: 1000}, "9D 6C 6S TS TC 4H 5D 6H", [[1, "swap"], [1, "hit"], [1, "stand"]])
    assert offered(events) == [{"1": ["swap", "keep"]}, {"1": ["hit", "stand", "double"]},
                               {"1": ["hit", "stand"]}]
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "odds_win"): (500, 1000)}
    assert dealt(events)[4:6] == [("seat 1", "TC"), ("seat 1", "4H")]


# ------------------------------------------------------------------ 21 always wins
def test_twenty_one_on_a_hit_beats_a_dealer_21() -> None:
    # Seat 1 6C 5S hits TC -> 21; seat 2 TH 7S keeps and stands; dealer 9D 2H draws KS -> 21.
    cards, decisions = "6C TH 9D 5S 7S 2H TC KS", [[1, "hit"], [2, "keep"], [2, "stand"]]
    events = play(make_table(), {1: 1000, 2: 1000}, cards, decisions)
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "odds_win"): (500, 1000),
                            (2, "main"): (1000, -1000), (2, "odds_win"): (500, -500)}
    assert result(events)["dealer_total"] == 21
    # The calibration variant (plain blackjack) pushes the same 21 against the dealer's 21.
    classic = play(make_table(variant=CLASSIC), {1: 1000, 2: 1000}, cards, [[1, "hit"], [2, "stand"]])
    assert nets(classic) == {(1, "main"): (1000, 0), (2, "main"): (1000, -1000)}


def test_the_dealer_draws_nothing_once_every_hand_is_decided() -> None:
    events = play(make_table(), {1: 1000}, "6C 9D 5S 2H TC", [[1, "hit"]])
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "odds_win"): (500, 1000)}
    assert result(events)["dealer_cards"] == ["9D", "2H"]


def test_a_doubled_21_wins_on_the_doubled_stake() -> None:
    events = play(make_table(), {1: 1000}, "7C AH 4H 9C TD", [[1, "double"]])
    assert nets(events) == {(1, "main"): (2000, 2000), (1, "odds_win"): (500, 1000)}
    assert result(events)["seats"]["1"]["hands"][0]["doubled"] is True


# ------------------------------------------------------------------ dealer peek
def test_dealer_blackjack_against_a_natural_a_swap_hand_and_a_live_odds_win() -> None:
    # Seat 1 AS QC natural; seat 2 TC 4D = 14 (even, swap-eligible); seat 3 9S 8H = 17 (odd).
    events = play(make_table(), {1: 1000, 2: 1000, 3: 1000}, "AS TC 9S AH QC 4D 8H KD")
    assert offered(events) == []  # the round ends at the peek: no swap is asked
    assert nets(events) == {
        (1, "main"): (1000, 1500), (1, "odds_win"): (500, 1000),
        (2, "main"): (1000, -1000), (2, "odds_win"): (500, -500),
        (3, "main"): (1000, -1000), (3, "odds_win"): (500, -500),
    }
    notices = [e.to_dict() for e in events if e.event == "notice"]
    peek = [n["detail"] for n in notices if n["what"] == "dealer_peek"]
    assert peek == [{"up": "AH", "blackjack": True}]
    assert result(events)["dealer_blackjack"] is True


def test_ten_up_without_blackjack_plays_on() -> None:
    table = make_table()
    feed(table, {1: 1000}, "TC KS 5D 9H")
    assert choices(table) == ("swap", "keep")


# ------------------------------------------------------------------ splits and the Odds-Win
@pytest.mark.parametrize(
    ("main_card", "main_decisions", "main_net", "odds_net"),
    [("9C", [[1, "stand"]], 0, 0),  # main 8H 9C = 17 pushes the dealer's 17: the Odds-Win pushes
     ("5C", [[1, "stand"]], -1000, -500)],  # main 13 loses though main:2 wins: the Odds-Win loses
)
def test_odds_win_follows_the_first_split_hand(main_card: str, main_decisions: list[list[Any]],
                                               main_net: int, odds_net: int) -> None:
    # 9D 6S = 15 (odd) swaps into 8H 8C and splits; main:2 gets TD = 18 and stands; dealer 7C TS = 17.
    cards = f"9D 7C 6S TS 8H 8C {main_card} TD"
    events = play(make_table(), {1: 1000}, cards, [[1, "swap"], [1, "split"], *main_decisions, [1, "stand"]])
    assert nets(events) == {(1, "main"): (1000, main_net), (1, "main:2"): (1000, 1000),
                            (1, "odds_win"): (500, odds_net)}
    assert dealt(events)[6:] == [("seat 1", main_card), ("seat 1 main:2", "TD")]


def test_split_aces_take_one_card_each_and_a_split_21_is_paid_even_money() -> None:
    events = play(make_table(), {1: 1000}, "AD 9S AC 8D KH AH", [[1, "split"]])
    assert offered(events) == [{"1": ["hit", "stand", "double", "split"]}]
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "main:2"): (1000, -1000),
                            (1, "odds_win"): (500, -500)}
    hands = result(events)["seats"]["1"]["hands"]
    assert [(h["spot"], h["cards"], h["outcome"]) for h in hands] == [
        ("main", ["AD", "KH"], "win"), ("main:2", ["AC", "AH"], "lose")]


def test_resplit_aces_offers_split_or_stand_only() -> None:
    table = make_table(resplit_aces=True)
    events = play(table, {1: 1000}, "AD 9S AC 8D AH 9C KC 7D", [[1, "split"], [1, "split"]])
    assert offered(events) == [{"1": ["hit", "stand", "double", "split"]}, {"1": ["stand", "split"]}]
    # main AD 9C soft 20, main:2 AC KC 21 (wins at once), main:3 AH 7D 18; dealer 17.
    assert nets(events) == {(1, "main"): (1000, 1000), (1, "main:2"): (1000, 1000),
                            (1, "main:3"): (1000, 1000), (1, "odds_win"): (500, -500)}


def test_hit_split_aces_gives_them_decisions() -> None:
    table = make_table(hit_split_aces=True, double_after_split=False)
    feed(table, {1: 1000}, "AD 9S AC 8D 5H", [[1, "split"]])
    assert choices(table) == ("hit", "stand")


@pytest.mark.parametrize(("max_hands", "splits_offered"), [(1, 0), (2, 1), (3, 2), (4, 3)])
def test_split_limit(max_hands: int, splits_offered: int) -> None:
    table = make_table(max_split_hands=max_hands)
    # 8S 8D against 6C: split while allowed; each new first-hand card is another 8.
    cards = "8S 6C 8D TH" + " 8C" * splits_offered
    feed(table, {1: 1000}, cards, [[1, "keep"]] + [[1, "split"]] * splits_offered)
    assert "split" not in choices(table)
    assert [h.spot for h in _round(table).seats[0].hands] == ["main"] + [f"main:{n}" for n in
                                                                       range(2, splits_offered + 2)]


def _round(table: Table) -> SwapHandRound:
    assert isinstance(table.round, SwapHandRound)
    return table.round


# ------------------------------------------------------------------ doubles
@pytest.mark.parametrize(
    ("cards", "double_on", "ok"),
    [("5S 4D", "9-11", True), ("5S 4D", "10-11", False), ("6S 4D", "10-11", True), ("5S 3D", "9-11", False),
     ("AS 8D", "9-11", False), ("AS 9D", "10-11", False), ("AS 8D", "any2", True), ("3S 2D", "any2", True)],
)
def test_double_on(cards: str, double_on: str, ok: bool) -> None:
    c1, c2 = cards.split()
    table = make_table(double_on=double_on)
    feed(table, {1: 1000}, f"{c1} 6C {c2} 9H")
    assert ("double" in choices(table)) is ok


@pytest.mark.parametrize("das", [True, False])
def test_double_after_split(das: bool) -> None:
    table = make_table(double_after_split=das)
    feed(table, {1: 1000}, "8S 6C 8D TH 3C", [[1, "keep"], [1, "split"]])
    assert ("double" in choices(table)) is das


def test_no_double_or_split_that_the_seat_cannot_fund() -> None:
    table = make_table({1: 1500})  # main 1000 + Odds-Win 500: nothing left
    feed(table, {1: 1000}, "8S 6C 8D TH", [[1, "keep"]])
    assert choices(table) == ("hit", "stand")


# ------------------------------------------------------------------ dealer rules
def test_dealer_hits_soft_17_only_when_told() -> None:
    stands = play(make_table(), {1: 1000}, "TD 6S 7C AD", [[1, "keep"], [1, "stand"]])
    assert nets(stands) == {(1, "main"): (1000, 0), (1, "odds_win"): (500, 0)}
    h17 = make_table(dealer_hits_soft_17=True)
    hits = play(h17, {1: 1000}, "TD 6S 7C AD 4C", [[1, "keep"], [1, "stand"]])
    assert nets(hits) == {(1, "main"): (1000, -1000), (1, "odds_win"): (500, -500)}
    assert result(hits)["dealer_cards"] == ["6S", "AD", "4C"]


def test_dealt_natural_at_six_to_five_and_no_draw() -> None:
    events = play(make_table(blackjack_pays="6:5"), {1: 1000}, "AS 9H KD 8C")
    assert nets(events) == {(1, "main"): (1000, 1200), (1, "odds_win"): (500, 1000)}


# ------------------------------------------------------------------ refusals
def test_illegal_decisions_are_refused_and_change_nothing() -> None:
    table = make_table()
    feed(table, {1: 1000, 2: 1000}, "9C TH 6H 8D 7S 7D")  # seat 1 17 (swap prompt), seat 2 17
    for inp, reason in [
        (I.Decision(1, "hit"), "'hit' is not legal"),
        (I.Decision(2, "keep"), "seat 2 is not to act"),
        (I.Decision(1, "keep", 500), "keep takes no amount"),
    ]:
        before = table.snapshot()
        [refused] = table.apply(inp)
        assert refused.event == "refused" and reason in refused.to_dict()["reason"]
        assert table.snapshot() == before
    table.apply(I.Decision(1, "keep"))
    before = table.snapshot()
    [refused] = table.apply(I.Decision(1, "double", 500))
    assert "double costs exactly 10.00, not 5.00" in refused.to_dict()["reason"]
    assert table.snapshot() == before
    # The round itself refuses what it did not offer, even when called directly.
    rnd = _round(table)
    with pytest.raises(Refusal, match="not legal"):
        rnd.on_decision(1, "split", None)
    assert table.snapshot() == before
    events = table.apply(I.Decision(1, "double", 1000))
    assert [e.event for e in events][:2] == ["decision", "wager_placed"]
    assert table.staked[(1, "main")] == 2000


def test_a_card_when_a_decision_is_due_tilts_and_is_not_used() -> None:
    table = make_table()
    feed(table, {1: 1000}, "9C 6H 8D 7D")
    [tilt] = table.apply(I.CardSeen(parse_card("2C")))
    assert tilt.event == "tilt"
    assert _round(table).seats[0].first.codes() == ["9C", "8D"]


# ------------------------------------------------------------------ displays and the calibration variant
def test_the_hole_card_is_hidden_until_the_dealer_plays() -> None:
    table = make_table()
    feed(table, {1: 1000}, "9C 6H 8D TD", [[1, "keep"]])
    assert table.snapshot()["round_view"]["dealer_cards"] == ["6H", "??"]
    table.apply(I.Decision(1, "stand"))
    assert table.snapshot()["round_view"]["dealer_cards"] == ["6H", "TD"]  # the dealer's turn
    events = table.apply(I.CardSeen(parse_card("5S")))  # dealer 16 draws 5S -> 21
    assert nets(events) == {(1, "main"): (1000, -1000), (1, "odds_win"): (500, -500)}


def test_classic_variant_pushes_a_natural_against_a_dealer_blackjack_and_stakes_no_odds_win() -> None:
    events = play(make_table(variant=CLASSIC), {1: 1000}, "AS AH QC KD")
    assert nets(events) == {(1, "main"): (1000, 0)}
