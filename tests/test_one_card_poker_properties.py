"""Properties of random One Card Poker rounds played through the real table.

Hypothesis draws the seats, credits, options, wagers, a shuffled shoe and
every decision (from the choices the round offers), and between decisions
throws in illegal ones. Whatever happens: money is conserved, credits move
by exactly the nets, the DP never goes below zero, a refused input changes
nothing, and the round takes exactly the cards the rules call for, to the
hands the rules name (checked against a small model of the deal written
here from the rules text).
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from controller import inputs as I
from controller.cards import DECK, Card
from controller.game_base import CardDue, DecisionDue
from controller.games.one_card_poker.rules import OneCardPoker, OneCardPokerOptions
from controller.limits import TableLimits
from controller.table import Table


@st.composite
def table_rounds(draw: st.DrawFn) -> dict[str, Any]:
    n_seats = draw(st.integers(2, 7))
    seated = sorted(draw(st.sets(st.integers(1, n_seats), min_size=2, max_size=n_seats)))
    dp = draw(st.sampled_from(seated))
    credits = {s: 100 * draw(st.integers(1, 80)) for s in seated}
    credits[dp] = 100 * draw(st.one_of(st.integers(0, 40), st.integers(200, 400)))
    bets: dict[int, dict[str, int]] = {}
    for seat in seated:
        if seat == dp or credits[seat] < 100:
            continue
        if draw(st.integers(0, 4)) > 0:
            primary = 100 * draw(st.integers(1, max(1, credits[seat] // 200)))
            bets[seat] = {"primary": primary}
            tie = 100 * draw(st.integers(0, (credits[seat] - primary) // 100 // 4))
            if tie:
                bets[seat]["tie"] = tie
    options = {
        "tie_pays": f"{draw(st.integers(1, 12))}:1",
        "tie_banker": draw(st.sampled_from(["house", "dp"])),
        "tie_requires_extend": draw(st.booleans()),
        "dp_fee": draw(st.sampled_from([0, 100, 250])),
    }
    # Ties are the interesting part: often stack the shoe's top with cards of a few ranks.
    decks: int = draw(st.integers(1, 2))
    options["decks"] = decks
    full = list(DECK) * decks
    few = draw(st.sets(st.sampled_from("23456789TJQKA"), max_size=3))
    top = [c for c in full if c.rank in few]
    rest = [c for c in full if c.rank not in few]
    shoe = draw(st.permutations(top)) + draw(st.permutations(rest))
    return {"seats": n_seats, "credits": credits, "dp": dp, "bets": bets, "options": options, "shoe": shoe}


def refused_without_change(table: Table, inp: I.Input) -> bool:
    before = table.snapshot()
    events = table.apply(inp)
    return [e.event for e in events] == ["refused"] and table.snapshot() == before


@settings(max_examples=150, deadline=None)
@given(spec=table_rounds(), data=st.data())
def test_random_rounds_conserve_money_and_take_exactly_the_cards_the_rules_call_for(
    spec: dict[str, Any], data: st.DataObject
) -> None:
    opts = OneCardPokerOptions(**spec["options"])
    table = Table(OneCardPoker(opts), TableLimits(seats=spec["seats"]))
    for seat, amount in spec["credits"].items():
        table.apply(I.CreditIn(seat, amount))
    table.apply(I.NewShoe())
    dp = spec["dp"]
    table.apply(I.SetDesignatedPlayer(dp))
    table.apply(I.OpenBetting())
    for seat, spots in spec["bets"].items():
        for spot, amount in spots.items():
            assert [e.event for e in table.apply(I.PlaceWager(seat, spot, amount))] == ["wager_placed"]
    events = table.apply(I.CloseBetting())

    shoe: list[Card] = spec["shoe"]
    used = 0
    made: dict[int, list[str]] = {}  # seat -> [player's choice, DP's answer]
    while table.phase == "dealing":
        due = table.due()
        if isinstance(due, CardDue):
            events += table.apply(I.CardSeen(shoe[used]))
            used += 1
            continue
        assert isinstance(due, DecisionDue)
        # An illegal decision first: a seat not to act, or an action not offered to it.
        idle = [s for s in range(1, spec["seats"] + 1) if s not in due.choices]
        try_idle: bool = data.draw(st.booleans(), label="try a seat not to act")
        if idle and try_idle:
            assert refused_without_change(table, I.Decision(data.draw(st.sampled_from(idle)), "extend"))
        seat = data.draw(st.sampled_from(sorted(due.choices)), label="seat")
        legal = due.choices[seat]
        not_offered = [a for a in ("extend", "surrender", "dp_extend", "dp_decline") if a not in legal]
        assert refused_without_change(table, I.Decision(seat, data.draw(st.sampled_from(not_offered))))
        if "extend" in legal:
            assert refused_without_change(
                table, I.Decision(seat, "extend", table.staked[(seat, "primary")] + 100)
            )
        action = data.draw(st.sampled_from(legal), label="action")
        events += table.apply(I.Decision(seat, action))
        if seat == dp:
            waiting = [s for s, m in made.items() if m[0] == "extend" and len(m) == 1]
            assert len(waiting) == 1  # the DP answers the one extend just made
            made[waiting[0]].append(action)
        else:
            made[seat] = [action]

    assert not [e.to_dict() for e in events if e.event == "refused"]
    (line,) = [e.to_dict() for e in events if e.event == "round_settled"]
    nets = [s["net"] for s in line["settlements"]]
    assert sum(nets) + line["house_net"] == 0
    for seat, before in spec["credits"].items():
        assert table.credits[seat] == before + sum(s["net"] for s in line["settlements"] if s["seat"] == seat)
    assert table.credits[dp] >= 0

    # The model of the deal: coverage from the DP's left, then first cards, then each War in deal order.
    order = sorted(spec["bets"], key=lambda s: (s < dp, s))
    left = spec["credits"][dp] - opts.dp_fee
    with_action: list[int] = []
    for seat in order:
        need = 2 * spec["bets"][seat]["primary"]
        if opts.tie_banker == "dp":
            need += opts.tie_pays.win(spec["bets"][seat].get("tie", 0))
        if need > left:
            break
        left -= need
        with_action.append(seat)
    results = [e.to_dict()["result"] for e in events if e.event == "round_result"]
    event(f"{len(with_action)} with action, {len(order) - len(with_action)} without")
    if not with_action:
        assert used == 0 and all(s["net"] == 0 for s in line["settlements"])
        return
    (res,) = results
    k = len(with_action)
    dp_card = shoe[k]
    pos = k + 1
    assert res["dp_card"] == dp_card.code
    # The model's view of each hand with action: cards, the DP's War cards, outcome ("" = War to come).
    model: dict[int, tuple[list[Card], list[Card], str]] = {}
    for seat, mine in zip(with_action, shoe[:k], strict=True):
        if mine.rank_value != dp_card.rank_value:
            outcome = "win" if mine.rank_value > dp_card.rank_value else "lose"
        else:
            outcome = {"surrender": "surrender", "extend dp_decline": "dp_decline", "extend dp_extend": ""}[
                " ".join(made[seat])
            ]
        model[seat] = ([mine], [], outcome)
    for seat in with_action:  # Wars in deal order, each to its end
        cards, dp_war, outcome = model[seat]
        while not outcome:
            mine, theirs = shoe[pos], shoe[pos + 1]
            pos += 2
            cards.append(mine)
            dp_war.append(theirs)
            if mine.rank_value != theirs.rank_value:
                outcome = "win" if mine.rank_value > theirs.rank_value else "lose"
        model[seat] = (cards, dp_war, outcome)
    assert used == pos
    for seat in order:
        player = res["players"][str(seat)]
        if seat not in model:
            assert player == {"cards": [], "dp_war_cards": [], "outcome": "no_action"}
            continue
        cards, dp_war, outcome = model[seat]
        event(f"outcome {outcome}, {len(dp_war)} War pairs")
        assert player == {
            "cards": [c.code for c in cards],
            "dp_war_cards": [c.code for c in dp_war],
            "outcome": outcome,
        }
    assert list(res["players"]) == [str(s) for s in order]
    fee_lines = [s for s in line["settlements"] if s["spot"] == "fee"]
    assert fee_lines == (
        [{"seat": dp, "spot": "fee", "stake": opts.dp_fee, "net": -opts.dp_fee}] if opts.dp_fee else []
    )


@settings(max_examples=60, deadline=None)
@given(
    seated=st.sets(st.integers(1, 7), min_size=1, max_size=7),
    first=st.integers(0, 6),
    rounds=st.lists(st.booleans(), min_size=1, max_size=8),
)
def test_a_rotating_dp_visits_the_seated_seats_clockwise_dealt_or_not(
    seated: set[int], first: int, rounds: list[bool]
) -> None:
    seats = sorted(seated)
    dp = seats[first % len(seats)]
    table = Table(OneCardPoker(OneCardPokerOptions(dp_rotation="rotate")), TableLimits())
    for seat in seats:
        table.apply(I.CreditIn(seat, 900))  # no DP can cover a primary of 500 (needs 1000)
    table.apply(I.NewShoe())
    table.apply(I.SetDesignatedPlayer(dp))
    for bet in rounds:
        table.apply(I.OpenBetting())
        # A wager the DP cannot cover (undealt), or none at all: either way the DP moves on.
        bettor = next((s for s in seats if s != dp), None)
        if bet and bettor is not None:
            table.apply(I.PlaceWager(bettor, "primary", 500))
        events = table.apply(I.CloseBetting())
        assert [e.event for e in events if e.event in ("refused", "card_dealt")] == []
        expected = seats[(seats.index(dp) + 1) % len(seats)]
        assert table.game.view()["dp_seat"] == expected
        assert table.credits == dict.fromkeys(seats, 900)
        dp = expected
