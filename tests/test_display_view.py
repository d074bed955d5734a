"""The display's screen model (signage/view.py) on real engine events: what is shown and what is hidden."""

from __future__ import annotations

from typing import Any

from helpers import baccarat_table, deal

from controller import inputs as I
from controller.games import GAMES
from controller.table import Table
from signage.roads import compute
from signage.view import HIDDEN, TableView


def feed(view: TableView, table: Table, *inputs: I.Input) -> list[dict[str, Any]]:
    out = []
    for inp in inputs:
        for event in table.apply(inp):
            payload = {**event.to_dict(), "seq": view.seq + 1}
            view.apply(payload)
            out.append(payload)
    return out


def snapshot_of(table: Table, seq: int) -> dict[str, Any]:
    return {"ok": True, "seq": seq, "state": table.snapshot(), "journal_id": "j1"}


def test_baccarat_cards_scores_result_and_the_last_round_stays_until_the_next_deal() -> None:
    table = baccarat_table()
    view = TableView("t", "baccarat", {})
    feed(view, table, I.NewShoe(), I.OpenBetting(), I.CloseBetting())
    for event in deal(table, "5C 3D 2H AS"):  # Player 8 natural, Banker 3
        view.apply({**event.to_dict(), "seq": view.seq + 1})
    shown = {h["name"]: (h["cards"], h["score"]) for h in view.to_dict()["hands"]}
    assert shown == {"player": (["5C", "3D"], 8), "banker": (["2H", "AS"], 3)}
    assert view.result is not None and view.result["winner"] == "player"
    feed(view, table, I.OpenBetting())
    screen = view.to_dict()
    assert screen["phase"] == "betting" and screen["hands_round"] == 1  # last round still shown
    assert [h["cards"] for h in screen["hands"]] == [["5C", "3D"], ["2H", "AS"]]
    feed(view, table, I.CloseBetting())
    for event in deal(table, "9H"):
        view.apply({**event.to_dict(), "seq": view.seq + 1})
    assert view.to_dict()["hands"] == [{"name": "player", "cards": ["9H"], "score": 9}]


def test_a_round_voided_before_its_first_card_takes_the_last_rounds_cards_off_the_screen() -> None:
    """The voided round kept the last round's cards and payouts on screen beside ROUND VOIDED (a late
    joiner drew none; a helper's review, 2026-12-07)."""
    table = baccarat_table()
    view = TableView("t", "baccarat", {})
    feed(view, table, I.CreditIn(1, 10000), I.NewShoe(), I.OpenBetting(), I.PlaceWager(1, "player", 1000),
         I.CloseBetting())
    for event in deal(table, "9C 9D TC TS"):
        view.apply({**event.to_dict(), "seq": view.seq + 1})
    assert view.to_dict()["hands"] and view.outcomes == {"1": 1000}
    feed(view, table, I.OpenBetting(), I.VoidRound())
    screen = view.to_dict()
    assert screen["hands_round"] == 2 and screen["voided"]
    assert screen["hands"] == [] and screen["outcomes"] == {}


def test_a_late_display_draws_the_whole_shoe_from_the_snapshot_and_a_new_shoe_clears_it() -> None:
    table = baccarat_table()
    live = TableView("t", "baccarat", {})
    feed(live, table, I.NewShoe())
    for cards in ("5C 3D 2H AS", "3C AD 9H KS", "JH 8D 7C AH"):
        feed(live, table, I.OpenBetting(), I.CloseBetting())
        for event in deal(table, cards):
            live.apply({**event.to_dict(), "seq": live.seq + 1})
    late = TableView("t", "baccarat", {})
    late.load_snapshot(snapshot_of(table, live.seq))
    assert late.to_dict()["roads"] == live.to_dict()["roads"]
    assert late.to_dict()["roads"]["counts"] == {
        "rounds": 3,
        "banker": 1,
        "player": 1,
        "tie": 1,
        "banker_pair": 0,
        "player_pair": 0,
    }
    assert late.journal == "j1"
    # naturals: 5C 3D (Player 8), 9H KS (Banker 9), JH 8D against 7C AH (8 and 8)
    # the helper's table started shoe 1, this test's new_shoe shoe 2: the table counts them
    assert late.to_dict()["shoe_stats"] == {"shoe_number": 2, "natural": 3, "earlier_shoes": []}
    feed(live, table, I.NewShoe())
    assert live.to_dict()["roads"] == compute([]).to_dict()
    # the shoe that ended, summarised under its number
    ended = {"shoe": 2, **late.to_dict()["roads"]["counts"], "natural": 3}
    assert live.to_dict()["shoe_stats"] == {"shoe_number": 3, "natural": 0, "earlier_shoes": [ended]}
    late.load_snapshot(snapshot_of(table, live.seq))
    assert late.to_dict()["roads"] == compute([]).to_dict()
    assert late.to_dict()["shoe_stats"]["shoe_number"] == 3


def swap_hand_table() -> Table:
    cls = GAMES["swap_hand"]
    table = Table(cls(cls.options_model.model_validate({})))
    table.apply(I.CreditIn(1, 100_000))
    return table


def test_the_dealer_hole_card_stays_hidden_until_the_dealer_plays() -> None:
    table = swap_hand_table()
    view = TableView("t", "swap_hand", {})
    feed(view, table, I.NewShoe(), I.OpenBetting(), I.PlaceWager(1, "main", 1000), I.CloseBetting())
    # seat 1 two hands (swap hand), dealer up card 9, hole card K; deal until the seat must decide
    for code in ("TS", "7H", "9D", "8C", "6S", "KC"):
        if table.due() is None or not hasattr(table.due(), "hand"):
            break
        feed(view, table, I.CardSeen(_card(code)))
    dealer = next(h for h in view.to_dict()["hands"] if h["name"] == "dealer")
    assert len(dealer["cards"]) == 2 and dealer["cards"][1] == HIDDEN
    assert dealer["cards"][0] != HIDDEN
    events = []
    for _ in range(20):  # stand everywhere, then let the dealer draw what it needs
        due = table.due()
        if due is None:
            break
        if hasattr(due, "choices"):
            seat = int(next(iter(due.choices)))
            events += feed(view, table, I.Decision(seat, "stand", None))
        else:
            events += feed(view, table, I.CardSeen(_card("2D")))
    assert any(e["event"] == "round_result" for e in events)
    hands = view.to_dict()["hands"]
    dealer = next(h for h in hands if h["name"] == "dealer")
    assert HIDDEN not in dealer["cards"]
    record = next(e for e in events if e["event"] == "round_result")["result"]
    assert dealer["cards"] == record["dealer_cards"]
    seat = next(h for h in hands if h["name"] == "seat 1")  # the record's hands, total and outcome
    main_hand = next(h for h in record["seats"]["1"]["hands"] if h["spot"] == "main")
    assert (seat["cards"], seat["total"], seat["outcome"]) == (
        main_hand["cards"],
        main_hand["total"],
        main_hand["outcome"],
    )


def _card(code: str) -> Any:
    from controller.cards import parse_card

    return parse_card(code)


def test_one_card_poker_shows_cards_as_dealt_and_the_designated_player() -> None:
    cls = GAMES["one_card_poker"]
    table = Table(cls(cls.options_model.model_validate({})))
    view = TableView("t", "one_card_poker", {})
    for seat in (1, 2):
        table.apply(I.CreditIn(seat, 100_000))
    feed(
        view,
        table,
        I.NewShoe(),
        I.SetDesignatedPlayer(2),
        I.OpenBetting(),
        I.PlaceWager(1, "primary", 1000),
        I.CloseBetting(),
    )
    feed(view, table, I.CardSeen(_card("9S")))
    assert view.to_dict()["hands"] == [{"name": "seat 1", "cards": ["9S"]}]
    events = feed(view, table, I.CardSeen(_card("4H")))
    assert [e["event"] for e in events] == ["card_dealt", "round_result", "round_settled"]
    screen = view.to_dict()
    assert screen["dp_seat"] == 2
    assert {h["name"]: h["cards"] for h in screen["hands"]} == {"seat 1": ["9S"], "dp": ["4H"]}
    assert screen["outcomes"] == {"1": 1000, "2": -1000}  # seat 1 wins, the DP's bank loses


def _played(game: str, spots: list[str], cards: str, plan: list[str]) -> tuple[Table, TableView]:
    """Seat 1 dealt ``cards`` in order, deciding ``plan`` in turn, each event applied to a live view."""
    cls = GAMES[game]
    table = Table(cls(cls.options_model.model_validate({})))
    view = TableView("t", game, {})
    feed(view, table, I.CreditIn(1, 100_000), I.NewShoe(), I.OpenBetting(),
         *[I.PlaceWager(1, s, 1000) for s in spots], I.CloseBetting())
    codes = cards.split()
    while (due := table.due()) is not None and (plan or codes):
        if hasattr(due, "choices"):
            if not plan:
                break
            feed(view, table, I.Decision(1, plan.pop(0)))
        else:
            feed(view, table, I.CardSeen(_card(codes.pop(0))))
    return table, view


def test_a_swap_and_a_split_are_drawn_as_the_engine_holds_the_hands() -> None:
    """A Swap-Hand swap showed the two cards thrown away beside the new ones as one hand of four, and a
    split (Swap-Hand, 2WayWinner) one hand of three, until the result (a helper's review, 2026-12-07)."""
    _, swapped = _played("swap_hand", ["main"], "TS 9D 5H 7C AS 8D", ["swap"])
    assert [h["cards"] for h in swapped.to_dict()["hands"] if h["name"] == "seat 1"] == [["AS", "8D"]]
    _, split = _played("swap_hand", ["main"], "8C 9D 8H 7C 3H", ["keep", "split"])
    assert {h["name"]: h["cards"] for h in split.to_dict()["hands"] if h["name"].startswith("seat")} == {
        "seat 1": ["8C", "3H"], "seat 1 main:2": ["8H"]}
    _, split = _played("two_way_winner", ["bj_ante", "poker_ante"], "JC 7D JH 9S 3H", ["blackjack", "split"])
    assert {h["name"]: h["cards"] for h in split.to_dict()["hands"] if h["name"].startswith("seat")} == {
        "seat 1": ["JC", "3H"], "seat 1 hand 2": ["JH"]}


def test_the_last_rounds_designated_player_stays_its_own_while_its_cards_stay_on_screen() -> None:
    """With the DP rotating, the next round's DP labelled the last round's DP card and wore its badge while
    that round's cards stayed up (a helper's review, 2026-12-07)."""
    cls = GAMES["one_card_poker"]
    table = Table(cls(cls.options_model.model_validate({"dp_rotation": "rotate"})))
    view = TableView("t", "one_card_poker", {})
    feed(view, table, *[I.CreditIn(s, 100_000) for s in (1, 2, 3)], I.NewShoe(), I.SetDesignatedPlayer(2),
         I.OpenBetting(), I.PlaceWager(1, "primary", 1000), I.PlaceWager(3, "primary", 1000),
         I.CloseBetting(), *[I.CardSeen(_card(c)) for c in ("9S", "2C", "4H")], I.OpenBetting())
    assert view.dp_seat == 3 and view.to_dict()["dp_seat"] == 2  # the round shown was DP seat 2's
    feed(view, table, I.PlaceWager(1, "primary", 1000), I.CloseBetting(), I.CardSeen(_card("5D")))
    assert view.to_dict()["dp_seat"] == 3  # its first card: the new round, its DP


def test_a_display_started_after_the_result_draws_the_last_rounds_cards_as_a_live_one() -> None:
    """The last round stays on screen until the next one's first card; a display started (or re-synced)
    after its result drew the verdict without its cards, and during the next betting nothing (a helper's
    review, 2026-12-07): the cards are in the snapshot's shoe results."""
    table = baccarat_table()
    live = TableView("t", "baccarat", {})
    feed(live, table, I.NewShoe(), I.OpenBetting(), I.CloseBetting())
    for event in deal(table, "5C 3D 2H AS"):
        live.apply({**event.to_dict(), "seq": live.seq + 1})
    for step in ((), (I.OpenBetting(),)):
        feed(live, table, *step)
        late = TableView("t", "baccarat", {})
        late.load_snapshot(snapshot_of(table, live.seq))
        shown = late.to_dict()
        assert shown["hands"] == live.to_dict()["hands"] and shown["hands_round"] == 1
        assert shown["result"] is not None and shown["result"]["round"] == 1


def test_a_late_display_mid_war_draws_the_war_cards_as_the_live_one() -> None:
    """A One Card Poker War in progress: the late joiner put the seat's war card in its first hand and lost
    the DP's war card (a helper's review, 2026-12-07)."""
    cls = GAMES["one_card_poker"]
    table = Table(cls(cls.options_model.model_validate({})))
    live = TableView("t", "one_card_poker", {})
    feed(live, table, *[I.CreditIn(s, 100_000) for s in (1, 2)], I.NewShoe(), I.SetDesignatedPlayer(2),
         I.OpenBetting(), I.PlaceWager(1, "primary", 1000), I.CloseBetting(),
         *[I.CardSeen(_card(c)) for c in ("9S", "9H")])
    feed(live, table, I.Decision(1, "extend", 1000), I.Decision(2, "dp_extend"), I.CardSeen(_card("KC")))
    late = TableView("t", "one_card_poker", {})
    late.load_snapshot(snapshot_of(table, live.seq))
    named = lambda view: {h["name"]: h["cards"] for h in view.to_dict()["hands"]}  # noqa: E731
    assert named(late) == named(live) and named(live)["seat 1 war"] == ["KC"]
