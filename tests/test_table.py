"""The table's lifecycle, wagers, tilts and voids: every refusal has a reason and changes nothing."""

from __future__ import annotations

import json
import re

import pytest

from controller import inputs as I
from controller.cards import DECK, parse_card
from controller.game_base import RoundLedger, Settlement
from controller.games.baccarat.rules import Baccarat, BaccaratOptions, BaccaratRound
from controller.limits import TableLimits
from controller.table import Table
from tests.helpers import baccarat_table, deal, names


def state(table: Table) -> str:
    return json.dumps(table.snapshot(), sort_keys=True)


def refused(table: Table, inp: I.Input, reason: str) -> None:
    """``inp`` is refused with a reason containing ``reason`` and the table does not change."""
    before = state(table)
    events = table.apply(inp)
    assert names(events) == ["refused"], events
    assert reason in events[0].to_dict()["reason"]
    assert events[0].to_dict()["input"] == inp.to_dict()
    assert state(table) == before


def open_with(table: Table, bets: list[tuple[int, str, int]]) -> None:
    table.apply(I.OpenBetting())
    for seat, spot, amount in bets:
        assert names(table.apply(I.PlaceWager(seat, spot, amount))) == ["wager_placed"]


@pytest.mark.parametrize(
    ("seat", "spot", "amount", "reason"),
    [
        (1, "player", 50, "not a multiple of the unit"),
        (1, "player", 150, "not a multiple of the unit"),
        (1, "banker", 2_000_000, "over the table maximum"),
        (1, "tie", 0, "must be positive"),
        (1, "dragon", 100, "no spot 'dragon'"),
        (9, "player", 100, "no seat 9"),
        (4, "player", 100, "not seated"),
        (2, "player", 200_000, "has 1,000.00 credits"),
    ],
)
def test_bad_wagers_are_refused_with_reasons(seat: int, spot: str, amount: int, reason: str) -> None:
    table = baccarat_table()
    table.apply(I.OpenBetting())
    refused(table, I.PlaceWager(seat, spot, amount), reason)


def test_below_minimum_is_refused() -> None:
    limits = TableLimits(min_bet=500)
    table = Table(Baccarat(BaccaratOptions()), limits)
    table.apply(I.CreditIn(1, 10_000))
    table.apply(I.OpenBetting())
    refused(table, I.PlaceWager(1, "player", 400), "below the table minimum 5.00")


def test_player_and_banker_together_is_refused() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 100)])
    refused(table, I.PlaceWager(1, "banker", 100), "Player and Banker")


def test_wager_outside_betting_is_refused() -> None:
    table = baccarat_table()
    refused(table, I.PlaceWager(1, "player", 100), "betting is not open")
    open_with(table, [(1, "player", 100)])
    table.apply(I.CloseBetting())
    refused(table, I.PlaceWager(1, "tie", 100), "betting is not open")
    refused(table, I.CancelWager(1, "player"), "betting is not open")


def test_wagers_add_up_and_cancel_returns_them() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 100), (1, "player", 200)])
    assert table.staked == {(1, "player"): 300}
    assert table.credits[1] == 99_700
    events = table.apply(I.CancelWager(1, "player"))
    assert [e.to_dict()["amount"] for e in events] == [300]
    assert table.credits[1] == 100_000 and table.staked == {}
    refused(table, I.CancelWager(1, "player"), "no wager")


def test_card_when_none_is_due_tilts_until_declared_a_burn() -> None:
    table = baccarat_table()
    events = deal(table, "5D")  # between rounds
    assert names(events) == ["tilt"]
    assert events[0].to_dict()["reason"] == "card_not_due"
    refused(table, I.OpenBetting(), "tilted")
    refused(table, I.NewShoe(), "tilted")
    events = table.apply(I.DeclareBurn())
    assert names(events) == ["card_burned", "tilt_cleared"]
    assert table.composition.burned == 1
    assert names(table.apply(I.OpenBetting())) == ["betting_opened"]


def test_extra_card_after_the_coup_tilts_and_nothing_more_is_settled() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 1000)])
    table.apply(I.CloseBetting())
    events = deal(table, "9C 9D KH KS")  # natural: settled on the 4th card
    assert names(events)[-1] == "round_settled"
    credits = dict(table.credits)
    events = deal(table, "2C")
    assert names(events) == ["tilt"]
    assert table.credits == credits


def test_card_while_a_round_is_tilted_then_void_returns_every_wager() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 1000), (2, "banker", 500), (2, "tie", 100)])
    table.apply(I.CloseBetting())
    deal(table, "2C 3C")
    table.apply(I.DeclareBurn())
    deal(table, "4C")  # a declared burn mid-round is fine
    assert table.composition.burned == 1
    events = table.apply(I.VoidRound())
    assert names(events) == ["round_voided"]
    voided = events[0].to_dict()
    assert {(s["seat"], s["spot"], s["net"]) for s in voided["settlements"]} == {
        (1, "player", 0), (2, "banker", 0), (2, "tie", 0)
    }
    assert table.credits == {1: 100_000, 2: 100_000, 3: 100_000}
    assert table.phase == "idle"
    refused(table, I.VoidRound(), "no round to void")


@pytest.mark.parametrize(
    ("when", "burn"),
    [("due", False), ("due", True), ("declared burn", False), ("idle", False), ("idle", True)],
)
def test_an_impossible_card_tilts_first_whatever_else_it_is(when: str, burn: bool) -> None:
    """An impossible card is neither burned nor dealt nor a card not due: the shoe's count comes first."""
    table = baccarat_table(decks=1)
    deal(table, "AS")  # a one-deck shoe's only ace of spades, dealt to nobody: its own tilt, burned
    table.apply(I.DeclareBurn())
    if when != "idle":
        open_with(table, [(1, "player", 1000)])
        table.apply(I.CloseBetting())
    if when == "declared burn":
        table.apply(I.DeclareBurn())
    before = table.composition.to_dict()
    events = table.apply(I.CardSeen(parse_card("AS"), burn=burn))
    assert [(e.event, e.to_dict()["reason"]) for e in events] == [("tilt", "impossible_card")]
    assert table.composition.to_dict() == before


def test_impossible_card_halts_without_using_the_card() -> None:
    table = baccarat_table(decks=1)
    open_with(table, [(1, "player", 1000)])
    table.apply(I.CloseBetting())
    deal(table, "AS 2S")
    events = deal(table, "AS")  # a second ace of spades from a one-deck shoe
    assert names(events) == ["tilt"]
    assert events[0].to_dict()["reason"] == "impossible_card"
    assert table.composition.seen(parse_card("AS")) == 1
    refused(table, I.Decision(1, "hit"), "tilted")
    refused(table, I.DeclareBurn(), "cannot be burned")
    assert names(table.apply(I.ClearTilt())) == ["tilt_cleared"]
    events = deal(table, "9S KH")  # Banker natural 9 ends the coup
    assert names(events)[-1] == "round_settled"
    assert table.snapshot()["shoe"]["dealt"] == 4


def test_decision_in_baccarat_is_refused() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 1000)])
    table.apply(I.CloseBetting())
    refused(table, I.Decision(1, "hit"), "no decision is due")


def test_lifecycle_refusals() -> None:
    table = baccarat_table()
    refused(table, I.SetDesignatedPlayer(1), "no Designated Player")
    refused(table, I.CloseBetting(), "betting is not open")
    table.apply(I.OpenBetting())
    refused(table, I.OpenBetting(), "betting cannot open")
    table.apply(I.CloseBetting())
    refused(table, I.NewShoe(), "while a round is being dealt")
    refused(table, I.CreditOut(1, 100), "while a round is being dealt")


def test_baccarat_round_is_dealt_with_no_wagers() -> None:
    table = baccarat_table()
    table.apply(I.OpenBetting())
    table.apply(I.CloseBetting())
    events = deal(table, "9C 9D KH KS")
    settled = events[-1].to_dict()
    assert settled["settlements"] == [] and settled["house_net"] == 0


def test_credits_and_meters() -> None:
    table = baccarat_table({1: 1000})
    refused(table, I.CreditOut(1, 1001), "cannot pay out")
    refused(table, I.CreditIn(1, -5), "must not be negative")
    table.apply(I.CreditOut(1, 400))
    open_with(table, [(1, "banker", 500)])
    table.apply(I.CloseBetting())
    deal(table, "2C 3C 9H KH")  # banker natural 9
    meters = table.meters_dict()
    assert meters["seats"]["1"] == {
        "credits_in": 1000, "credits_out": 400, "wagered": 500, "won": 475, "lost": 0, "rounds": 1
    }
    assert meters["table"] == {"rounds_settled": 1, "rounds_voided": 0, "house_net": -475}
    assert table.credits[1] == 1075


def test_seats_arriving_out_of_order_read_in_seat_order_everywhere() -> None:
    """Credits are kept in seat order as seats arrive (one even mid-round), so every view lists seats 1..n."""
    table = baccarat_table({5: 1000, 2: 1000})
    open_with(table, [(5, "player", 100), (2, "banker", 100)])
    assert names(table.apply(I.CloseBetting())) == ["betting_closed"]
    deal(table, "2C 3C")
    assert table.apply(I.CreditIn(1, 700))[0].to_dict()["credits"] == 700  # seated while the round is dealt
    events = deal(table, "9H KH")  # banker natural 9: seat 5 loses, seat 2 wins 0.95
    settled = events[-1].to_dict()
    assert list(settled["credits"]) == ["1", "2", "5"]
    assert settled["credits"] == {"1": 700, "2": 1095, "5": 900}
    assert [(line["seat"], line["spot"]) for line in settled["settlements"]] == [(2, "banker"), (5, "player")]
    assert list(table.snapshot()["credits"]) == ["1", "2", "5"]
    assert table.seated() == [1, 2, 5]
    assert list(table.meters_dict()["seats"]) == ["1", "2", "5"]


def test_inputs_round_trip_through_json() -> None:
    for inp in [
        I.PlaceWager(1, "tie", 100), I.CardSeen(parse_card("10h"), burn=True), I.Decision(2, "bet", 2000),
        I.Decision(3, "hit"), I.VoidRound(), I.SetDesignatedPlayer(4), I.CreditOut(1, 5),
    ]:
        assert I.input_from_dict(json.loads(json.dumps(inp.to_dict()))) == inp
        assert inp.to_json() == json.dumps(inp.to_dict())


@pytest.mark.parametrize("burn", [False, True])
def test_a_card_inputs_remembered_json_is_its_json(burn: bool) -> None:
    """CardSeen.to_json is memoised (it is most of the journal): for every card, the same text as the
    generic encoding, and it reads back as the same input."""
    for card in DECK:
        inp = I.CardSeen(card, burn)
        assert inp.to_json() == json.dumps(inp.to_dict())
        assert I.input_from_dict(json.loads(inp.to_json())) == inp


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"input": "teleport"}, "unknown input"),
        ({"input": "card", "card": "ZZ"}, "field 'card'"),
        ({"input": "place_wager", "seat": "1", "spot": "tie", "amount": 1}, "'seat' must be an integer"),
        ({"input": "decision", "seat": 1}, "missing field 'action'"),
        ({"input": "void", "extra": 1}, "unknown field 'extra'"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_serialised_inputs_name_the_field(data: object, reason: str) -> None:
    with pytest.raises(I.InputError, match=reason):
        I.input_from_dict(data)  # type: ignore[arg-type]


def test_shoe_offline_mid_round_tilts_and_resumes_when_back() -> None:
    table = baccarat_table()
    open_with(table, [(1, "player", 1000)])
    table.apply(I.CloseBetting())
    deal(table, "2C 3C")
    events = table.apply(I.DeviceStatus("shoe", False, "port closed"))
    assert names(events) == ["device", "tilt"]
    assert events[1].to_dict()["reason"] == "device_offline"
    refused(table, I.ClearTilt(), "resumes when it is back")
    events = table.apply(I.DeviceStatus("shoe", True))
    assert names(events) == ["device", "tilt_cleared"]
    assert names(deal(table, "9H KH"))[-1] == "round_settled"


def test_shoe_offline_between_rounds_blocks_the_deal_only() -> None:
    table = baccarat_table()
    table.apply(I.DeviceStatus("shoe", False, "unplugged"))
    table.apply(I.OpenBetting())
    table.apply(I.PlaceWager(1, "player", 100))
    refused(table, I.CloseBetting(), "shoe is offline (unplugged)")
    table.apply(I.DeviceStatus("shoe", True))
    assert names(table.apply(I.CloseBetting())) == ["betting_closed"]


class _MisSettledRound(BaccaratRound):
    """A deliberately wrong game: its settlement drops or repeats the first line."""

    __slots__ = ("fault",)

    def settlements(self) -> list[Settlement]:
        lines = super().settlements()
        return lines[1:] if self.fault == "drops" else [lines[0], *lines]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("drops", "wagers without a settlement line: [(1, 'player')]"),
     ("repeats", "wager (1, 'player') has more than one settlement line")],
)
def test_a_game_that_settles_a_wager_twice_or_never_is_stopped(fault: str, reason: str) -> None:
    """The table pays nothing it cannot account for: every staked wager has exactly one line."""

    class Faulty(Baccarat):
        def new_round(self, ledger: RoundLedger) -> BaccaratRound:
            round_ = _MisSettledRound(self, ledger)
            round_.fault = fault
            return round_

    table = Table(Faulty(BaccaratOptions()), TableLimits())
    for seat in (1, 2):
        table.apply(I.CreditIn(seat, 10_000))
    open_with(table, [(1, "player", 100), (2, "banker", 100)])
    table.apply(I.CloseBetting())
    with pytest.raises(AssertionError, match=re.escape(reason)):
        deal(table, "2C 3C 9H KH")
