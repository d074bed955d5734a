"""One Card Poker with a Designated Player: every path of play in docs/rules/one_card_poker.md, settled.

Each test plays real inputs into :class:`controller.table.Table` and checks
the settlement line, the cards each hand was given and what the round asked
for next; the expected figures are worked from the rules, not read back from
the engine. What the game refuses is in tests/test_one_card_poker_refusals.py.
"""

from __future__ import annotations

import pytest
from one_card_poker_support import CREDITS, Step, hands, make_table, names, play, result, settled, step

from controller import inputs as I
from controller.game_base import CardDue, DecisionDue
from controller.games.one_card_poker.rules import deal_order


# ------------------------------------------------------------------ deal, win, lose
def test_deal_order_starts_after_the_dp_and_wraps() -> None:
    assert deal_order(4, [1, 2, 3, 5, 6, 7]) == [5, 6, 7, 1, 2, 3]
    assert deal_order(7, [1, 3, 7]) == [1, 3]
    assert deal_order(1, [2, 5]) == [2, 5]


def test_win_and_lose_are_even_money_banked_by_the_dp() -> None:
    table = make_table(CREDITS, dp=4)
    events = play(table, {2: {"primary": 500}, 6: {"primary": 300, "tie": 100}}, ["AS", "3D", "KH"])
    assert hands(events) == [("seat 6", "AS"), ("seat 2", "3D"), ("dp", "KH")]
    lines, house = settled(events)
    assert lines == {
        (2, "primary"): (500, -500),
        (6, "primary"): (300, 300),
        (6, "tie"): (100, -100),
        (4, "bank"): (800, 200),
    }
    assert house == 100
    assert table.credits[4] == 50_200 and table.credits[2] == 9_500 and table.credits[6] == 10_200
    res = result(events)
    assert res["dp_seat"] == 4 and res["dp_card"] == "KH"
    assert res["players"] == {
        "6": {"cards": ["AS"], "dp_war_cards": [], "outcome": "win"},
        "2": {"cards": ["3D"], "dp_war_cards": [], "outcome": "lose"},
    }


def test_suits_do_not_count_only_ranks() -> None:
    table = make_table(CREDITS, dp=4)
    events = play(table, {5: {"primary": 500}}, ["QS", "QC"])
    assert table.due() == DecisionDue({5: ("extend", "surrender")})
    events += step(table, (5, "surrender"))
    assert result(events)["players"]["5"]["outcome"] == "surrender"


# --------------------------------------------------------------- ties: the choices
def test_surrender_loses_the_larger_half_and_keeps_the_tie_wager() -> None:
    table = make_table(CREDITS, dp=4, unit=1)
    events = play(table, {1: {"primary": 501, "tie": 10}}, ["7C", "7D", (1, "surrender")])
    lines, house = settled(events)
    assert lines[(1, "primary")] == (501, -251)
    assert lines[(1, "tie")] == (10, 100)
    assert lines[(4, "bank")] == (501, 251)
    assert house == -100


def test_extend_then_dp_decline_pays_the_smaller_half_and_returns_the_extension() -> None:
    table = make_table(CREDITS, dp=4, unit=1)
    events = play(table, {1: {"primary": 501}}, ["7C", "7D", (1, "extend")])
    assert table.due() == DecisionDue({4: ("dp_extend", "dp_decline")})
    assert table.credits[1] == 10_000 - 2 * 501
    events += step(table, (4, "dp_decline"))
    lines, house = settled(events)
    assert lines == {(1, "primary"): (501, 250), (1, "extension"): (501, 0), (4, "bank"): (501, -250)}
    assert house == 0
    assert table.credits[1] == 10_250
    assert result(events)["players"]["1"]["outcome"] == "dp_decline"


def test_extend_and_dp_extend_war_won_by_the_player() -> None:
    table = make_table(CREDITS, dp=4)
    events = play(table, {1: {"primary": 500, "tie": 100}}, ["9C", "9D", (1, "extend"), (4, "dp_extend")])
    assert table.due() == CardDue("seat 1 war")
    events += step(table, "2H")
    assert table.due() == CardDue("dp war seat 1")
    events += step(table, "AC")
    lines, house = settled(events)
    assert lines == {
        (1, "primary"): (500, -500),
        (1, "extension"): (500, -500),
        (1, "tie"): (100, 1000),
        (4, "bank"): (1000, 1000),
    }
    assert house == -1000
    assert result(events)["players"]["1"] == {
        "cards": ["9C", "2H"],
        "dp_war_cards": ["AC"],
        "outcome": "lose",
    }


def test_war_repeats_on_ties_without_new_wagers() -> None:
    table = make_table(CREDITS, dp=4, decks=2)
    steps: list[Step] = [
        "9C",
        "9D",
        (1, "extend"),
        (4, "dp_extend"),
        "5C",
        "5H",
        "JS",
        "JD",
        "2C",
        "2D",
        "KS",
    ]
    events = play(table, {1: {"primary": 500}}, steps)
    assert table.due() == CardDue("dp war seat 1")
    events += step(table, "QH")
    assert names(events).count("wager_placed") == 2  # the primary and one extension, no more
    lines, _ = settled(events)
    assert lines[(1, "primary")] == (500, 500) and lines[(1, "extension")] == (500, 500)
    assert result(events)["players"]["1"] == {
        "cards": ["9C", "5C", "JS", "2C", "KS"],
        "dp_war_cards": ["5H", "JD", "2D", "QH"],
        "outcome": "win",
    }
    assert [e.to_dict()["what"] for e in events if e.event == "notice"] == [
        "tie",
        "war",
        "war_tie",
        "war_tie",
        "war_tie",
    ]


def test_several_ties_decide_in_any_order_and_go_to_war_in_deal_order() -> None:
    table = make_table(CREDITS, dp=4)
    bets = {1: {"primary": 300}, 2: {"primary": 200}, 5: {"primary": 500}, 7: {"primary": 100}}
    events = play(table, bets, ["8C", "3D", "8H", "8S", "8D"])  # seats 5, 7, 1, 2, DP
    assert table.due() == DecisionDue(
        {5: ("extend", "surrender"), 1: ("extend", "surrender"), 2: ("extend", "surrender")}
    )
    events += step(table, (2, "extend"))
    # After an extend only the DP may act: the other tied players wait.
    assert table.due() == DecisionDue({4: ("dp_extend", "dp_decline")})
    before = table.snapshot()
    refused = step(table, (1, "surrender"))
    assert names(refused) == ["refused"] and "not to act" in refused[0].to_dict()["reason"]
    assert table.snapshot() == before
    events += step(table, (4, "dp_extend"))
    events += step(table, (1, "extend")) + step(table, (4, "dp_extend"))
    events += step(table, (5, "extend")) + step(table, (4, "dp_extend"))
    # War in deal order 5, 1, 2 (not decision order 2, 1, 5), each to its end.
    wars: list[Step] = ["4C", "4H", "6C", "TS", "QS", "3C", "2S", "7S"]
    for s in wars:
        events += step(table, s)
    assert hands(events)[5:] == [
        ("seat 5 war", "4C"),
        ("dp war seat 5", "4H"),
        ("seat 5 war", "6C"),
        ("dp war seat 5", "TS"),
        ("seat 1 war", "QS"),
        ("dp war seat 1", "3C"),
        ("seat 2 war", "2S"),
        ("dp war seat 2", "7S"),
    ]
    lines, house = settled(events)
    assert lines[(5, "extension")] == (500, -500) and lines[(1, "extension")] == (300, 300)
    assert lines[(2, "extension")] == (200, -200) and lines[(7, "primary")] == (100, -100)
    # Bank: primaries 1100 plus the three matched extensions 1000; nets 2*500 - 2*300 + 2*200 + 100.
    assert lines[(4, "bank")] == (1100 + 1000, 900)
    assert house == 0


def test_extend_is_offered_only_when_the_player_can_fund_it() -> None:
    table = make_table({1: 700, 4: 50_000}, dp=4)
    play(table, {1: {"primary": 400}}, ["JC", "JD"])
    assert table.due() == DecisionDue({1: ("surrender",)})
    before = table.snapshot()
    refused = step(table, (1, "extend"))
    assert names(refused) == ["refused"] and "not legal" in refused[0].to_dict()["reason"]
    assert table.snapshot() == before


# ----------------------------------------------------------------------- the Tie wager
@pytest.mark.parametrize(("requires", "surrender_tie_net"), [(False, 1000), (True, -100)])
def test_tie_requires_extend(requires: bool, surrender_tie_net: int) -> None:
    table = make_table(CREDITS, dp=4, tie_requires_extend=requires)
    bets = {1: {"primary": 500, "tie": 100}, 2: {"primary": 500, "tie": 100}, 3: {"primary": 500, "tie": 100}}
    steps: list[Step] = [
        "5C",
        "5D",
        "5H",
        "5S",
        (1, "surrender"),
        (2, "extend"),
        (4, "dp_decline"),
        (3, "extend"),
        (4, "dp_extend"),
        "9C",
        "2C",
    ]
    lines, _ = settled(play(table, bets, steps))
    assert lines[(1, "tie")] == (100, surrender_tie_net)
    assert lines[(2, "tie")] == (100, 1000)  # extended (then declined): the Tie wins either way
    assert lines[(3, "tie")] == (100, 1000)


def test_tie_banked_by_the_dp_is_covered_paid_and_in_the_bank_line() -> None:
    table = make_table({1: 10_000, 2: 10_000, 4: 2_800}, dp=4, tie_banker="dp", tie_pays="8:1")
    # Seat 1 needs 2*500 + 8*100 = 1800 of the DP's 2800; seat 2 needs 2*400 + 8*50... 100 tie: 1600 > 1000.
    events = play(table, {1: {"primary": 500, "tie": 100}, 2: {"primary": 400, "tie": 100}}, ["6C", "6D"])
    events += step(table, (1, "surrender"))
    lines, house = settled(events)
    assert lines == {
        (1, "primary"): (500, -250),
        (1, "tie"): (100, 800),
        (2, "primary"): (400, 0),
        (2, "tie"): (100, 0),
        (4, "bank"): (600, -550),
    }
    assert house == 0
    assert result(events)["players"]["2"]["outcome"] == "no_action"


def test_a_tie_wager_without_a_primary_is_returned_at_close() -> None:
    table = make_table(CREDITS, dp=4)
    events = play(table, {1: {"tie": 100}, 2: {"primary": 100}}, ["5C", "6C"])
    returned = [e.to_dict() for e in events if e.event == "wager_returned"]
    assert [(r["seat"], r["spot"], r["amount"]) for r in returned] == [(1, "tie", 100)]
    assert (1, "tie") not in settled(events)[0]


# ----------------------------------------------------------------------- coverage
def test_coverage_stops_at_the_first_uncovered_seat_from_the_dps_left() -> None:
    table = make_table({1: 10_000, 2: 10_000, 3: 10_000, 5: 2_000, 6: 10_000, 7: 10_000}, dp=5)
    bets = {6: {"primary": 400}, 7: {"primary": 700, "tie": 100}, 1: {"primary": 100}, 3: {"primary": 100}}
    events = play(table, bets, ["KC", "2D"])  # seat 6 (800 of 2000), seat 7 needs 1400 > 1200: stop
    assert [e.to_dict()["detail"] for e in events if e.event == "notice"][0]["seats"] == [7, 1, 3]
    lines, house = settled(events)
    assert lines == {
        (1, "primary"): (100, 0),
        (3, "primary"): (100, 0),
        (5, "bank"): (400, -400),
        (6, "primary"): (400, 400),
        (7, "primary"): (700, 0),
        (7, "tie"): (100, 0),
    }
    assert house == 0
    assert table.credits[7] == 10_000 and table.credits[1] == 10_000
    assert {s: p["outcome"] for s, p in result(events)["players"].items()} == {
        "6": "win",
        "7": "no_action",
        "1": "no_action",
        "3": "no_action",
    }


def test_a_round_with_no_covered_primary_is_not_dealt_and_charges_no_fee() -> None:
    table = make_table({1: 10_000, 2: 1_000, 3: 10_000}, dp=2, dp_fee=100)
    events = play(table, {3: {"primary": 500}, 1: {"primary": 100}})  # 1000 > 1000 - 100
    assert table.phase == "idle" and table.due() is None
    lines, house = settled(events)
    assert lines == {(1, "primary"): (100, 0), (3, "primary"): (500, 0)}
    assert house == 0 and table.credits == {1: 10_000, 2: 1_000, 3: 10_000}
    assert result(events)["dp_card"] is None


# ---------------------------------------------------------------------------- fee
def test_fee_line_when_dealt_and_coverage_counts_it() -> None:
    table = make_table({1: 10_000, 2: 1_100, 3: 10_000}, dp=2, dp_fee=100)
    events = play(table, {3: {"primary": 500}}, ["4C", "4D", (3, "extend"), (2, "dp_extend"), "3C", "9H"])
    lines, house = settled(events)
    assert lines == {
        (2, "bank"): (1000, 1000),
        (2, "fee"): (100, -100),
        (3, "extension"): (500, -500),
        (3, "primary"): (500, -500),
    }
    assert house == 100 and table.credits[2] == 2_000


# ------------------------------------------------------------------ the DP seat
def test_rotation_passes_clockwise_after_every_round_dealt_or_not() -> None:
    table = make_table({1: 10_000, 3: 10_000, 6: 500}, dp=3, dp_rotation="rotate")
    events = play(table, {1: {"primary": 100}}, ["2C", "3C"])
    assert names(events)[-1] == "dp_set" and table.game.view()["dp_seat"] == 6
    events = play(table, {1: {"primary": 500}})  # DP 6 cannot cover 1000: not dealt, still rotates
    assert table.game.view()["dp_seat"] == 1  # wrapped past the last seat
    play(table, {})  # no wagers at all
    assert table.game.view()["dp_seat"] == 3
    assert [e.to_dict()["seat"] for e in events if e.event == "dp_set"] == [1]


def test_fixed_dp_stays_until_set_again() -> None:
    table = make_table(CREDITS, dp=4)
    play(table, {1: {"primary": 100}}, ["2C", "3C"])
    assert table.game.view()["dp_seat"] == 4
    assert names(table.apply(I.SetDesignatedPlayer(6))) == ["dp_set"]
    events = play(table, {1: {"primary": 100}}, ["2D", "3D"])
    assert result(events)["dp_seat"] == 6
