"""Cards delivered while the table is tilted are held by the tilt, and the dealer decides their fate.

The engine's side of docs/rules/common.md, "Faults": a card during any tilt is
held in order (``card_held``), not counted in the shoe; once the tilt's cause
is resolved the tilt becomes ``held_card`` and the dealer takes (``take_held``:
applied as if delivered now) or burns each held card in order, or voids the
round (every held card burned). Past :data:`MAX_HELD` a card is refused.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller import inputs as I
from controller.cards import DECK, parse_card
from controller.events import Event
from controller.table import Table
from controller.tilts import MAX_HELD
from tests.helpers import baccarat_table, deal, names


def state(table: Table) -> str:
    return json.dumps(table.snapshot(), sort_keys=True)


def dealing(table: Table, bets: tuple[tuple[int, str, int], ...] = ((1, "player", 1000),)) -> None:
    table.apply(I.OpenBetting())
    for seat, spot, amount in bets:
        assert names(table.apply(I.PlaceWager(seat, spot, amount))) == ["wager_placed"]
    assert names(table.apply(I.CloseBetting())) == ["betting_closed"]


def held_event(events: list[Event]) -> dict[str, Any]:
    assert names(events) == ["card_held"], events
    return events[0].to_dict()


def tilt_of(events: list[Event]) -> dict[str, Any]:
    return next(e.to_dict() for e in events if e.event == "tilt")


def test_cards_during_a_device_tilt_are_held_in_order_and_not_counted() -> None:
    table = baccarat_table()
    dealing(table)
    deal(table, "2C 3C")
    raised = table.apply(I.DeviceStatus("shoe lid", False, "lid open"))
    assert tilt_of(raised) == {"event": "tilt", "round": 1, "reason": "device_offline", "card": "",
                               "detail": "shoe lid offline", "held": []}
    shoe = table.composition.to_dict()
    assert held_event(deal(table, "4C")) == {"event": "card_held", "round": 1, "card": "4C", "held": ["4C"]}
    assert held_event(deal(table, "KH"))["held"] == ["4C", "KH"]
    assert table.composition.to_dict() == shoe  # neither dealt nor burned yet
    assert table.snapshot()["tilt"] == {"reason": "device_offline", "card": "", "detail": "shoe lid offline",
                                        "held": ["4C", "KH"]}
    # The lid closes: the cause is gone but cards wait, so the table does not apply them by itself.
    events = table.apply(I.DeviceStatus("shoe lid", True, "lid closed"))
    assert names(events) == ["device", "tilt_cleared", "tilt"]
    assert events[1].to_dict()["how"] == "device_back"
    assert tilt_of(events)["reason"] == "held_card" and tilt_of(events)["card"] == "4C"
    assert tilt_of(events)["held"] == ["4C", "KH"]
    assert table.due() is None
    events = table.apply(I.TakeHeld())
    assert names(events) == ["tilt_cleared", "card_dealt", "tilt"]
    assert events[0].to_dict()["how"] == "taken"
    assert events[1].to_dict()["card"] == "4C" and events[1].to_dict()["hand"] == "banker"
    assert tilt_of(events)["reason"] == "held_card" and tilt_of(events)["held"] == ["KH"]
    events = table.apply(I.TakeHeld())  # Player 2+3 = 5 draws, Banker 4+K = 4
    assert names(events) == ["tilt_cleared", "card_dealt"] and table.tilt is None
    assert names(deal(table, "9D"))[-2:] == ["round_result", "round_settled"]  # Banker stands on a 9
    assert table.composition.dealt == 5 and table.composition.burned == 0


def test_held_cards_during_a_card_not_due_tilt_burn_the_tilt_card_then_wait() -> None:
    table = baccarat_table()
    assert tilt_of(deal(table, "5D"))["reason"] == "card_not_due"  # between rounds
    assert held_event(deal(table, "6D"))["held"] == ["6D"]
    assert held_event(deal(table, "7D"))["held"] == ["6D", "7D"]
    events = table.apply(I.DeclareBurn())  # burns 5D, the tilt's own card
    assert names(events) == ["card_burned", "tilt_cleared", "tilt"]
    assert events[0].to_dict()["card"] == "5D"
    assert tilt_of(events) | {"detail": ""} == {"event": "tilt", "round": 0, "reason": "held_card",
                                                "card": "6D", "detail": "", "held": ["6D", "7D"]}
    # Taken between rounds, 6D is not due either: the tilt it would raise, 7D still held.
    events = table.apply(I.TakeHeld())
    assert names(events) == ["tilt_cleared", "tilt"]
    assert tilt_of(events) | {"detail": ""} == {"event": "tilt", "round": 0, "reason": "card_not_due",
                                                "card": "6D", "detail": "", "held": ["7D"]}
    events = table.apply(I.DeclareBurn())
    assert names(events) == ["card_burned", "tilt_cleared", "tilt"] and tilt_of(events)["held"] == ["7D"]
    events = table.apply(I.DeclareBurn())  # during held_card: burns the first held card
    assert names(events) == ["card_burned", "tilt_cleared"]
    assert events[0].to_dict() == {"event": "card_burned", "round": 0, "card": "7D", "why": "dealer"}
    assert table.tilt is None and table.composition.burned == 3 and table.composition.dealt == 0
    assert names(table.apply(I.OpenBetting())) == ["betting_opened"]


def test_an_impossible_card_cleared_leaves_the_held_cards_to_take() -> None:
    table = baccarat_table(decks=1)
    dealing(table)
    deal(table, "AS 2S")
    assert tilt_of(deal(table, "AS"))["reason"] == "impossible_card"
    assert held_event(deal(table, "9S"))["held"] == ["9S"]
    events = table.apply(I.ClearTilt())
    assert names(events) == ["tilt_cleared", "tilt"] and tilt_of(events)["reason"] == "held_card"
    assert table.composition.seen(parse_card("AS")) == 1  # the impossible card was never counted
    events = table.apply(I.TakeHeld())
    assert names(events)[:2] == ["tilt_cleared", "card_dealt"]
    assert events[1].to_dict() == {"event": "card_dealt", "round": 1, "card": "9S", "hand": "banker"}


def test_taking_an_impossible_held_card_raises_its_tilt_and_it_cannot_be_burned() -> None:
    table = baccarat_table(decks=1)
    dealing(table)
    deal(table, "AS")
    table.apply(I.DeviceStatus("shoe", False, "unplugged"))
    deal(table, "AS 3H")  # a second AS from a one-deck shoe, then 3H
    table.apply(I.DeviceStatus("shoe", True))
    before = state(table)
    [refusal] = table.apply(I.DeclareBurn())
    assert refusal.event == "refused" and "AS cannot be in the shoe" in refusal.to_dict()["reason"]
    assert state(table) == before
    events = table.apply(I.TakeHeld())
    assert names(events) == ["tilt_cleared", "tilt"]
    assert tilt_of(events)["reason"] == "impossible_card" and tilt_of(events)["held"] == ["3H"]
    events = table.apply(I.ClearTilt())
    assert tilt_of(events)["reason"] == "held_card" and tilt_of(events)["card"] == "3H"


def test_void_burns_every_held_card_and_returns_the_wagers() -> None:
    table = baccarat_table()
    dealing(table, ((1, "player", 1000), (2, "banker", 500)))
    deal(table, "2C")
    table.apply(I.DeviceStatus("shoe lid", False, "lid open"))
    deal(table, "3C 4C")
    events = table.apply(I.VoidRound())
    assert names(events) == ["card_burned", "card_burned", "tilt_cleared", "round_voided"]
    assert [e.to_dict()["card"] for e in events[:2]] == ["3C", "4C"]
    assert table.composition.burned == 2 and table.composition.dealt == 1
    assert table.credits == {1: 100_000, 2: 100_000, 3: 100_000} and table.tilt is None


def test_void_of_a_held_card_tilt_between_rounds_burns_the_tilt_card_and_the_held() -> None:
    table = baccarat_table()
    deal(table, "5D 6D")
    table.apply(I.DeclareBurn())
    assert table.tilt is not None and table.tilt.reason == "held_card"
    events = table.apply(I.VoidRound())
    assert names(events) == ["card_burned", "tilt_cleared"] and events[0].to_dict()["card"] == "6D"
    assert table.composition.burned == 2


def test_a_card_past_the_bound_is_refused_and_changes_nothing() -> None:
    table = baccarat_table()
    deal(table, "5D")
    codes = [c.code for c in DECK[:MAX_HELD]]
    for n, code in enumerate(codes, 1):
        assert held_event(deal(table, code))["held"] == codes[:n]
    before = state(table)
    [refusal] = deal(table, "KS")
    assert refusal.event == "refused"
    assert f"already holds {MAX_HELD} cards" in refusal.to_dict()["reason"]
    assert state(table) == before


def test_what_a_held_card_tilt_refuses() -> None:
    table = baccarat_table()
    dealing(table)
    [refusal] = table.apply(I.TakeHeld())
    assert "no card is held" in refusal.to_dict()["reason"]
    table.apply(I.DeviceStatus("shoe", False, "unplugged"))
    deal(table, "2C")
    [refusal] = table.apply(I.TakeHeld())
    assert "the device_offline tilt comes first" in refusal.to_dict()["reason"]
    table.apply(I.DeviceStatus("shoe", True))
    for inp in (I.ClearTilt(), I.NewShoe(), I.OpenBetting(), I.Decision(1, "hit")):
        before = state(table)
        [refusal] = table.apply(inp)
        assert refusal.event == "refused", inp
        assert state(table) == before
    assert "take or burn each" in table.apply(I.ClearTilt())[0].to_dict()["reason"]


def test_a_device_lost_during_another_tilt_halts_the_deal_once_that_tilt_is_cleared() -> None:
    """The lid opens while an impossible card's tilt stands (a review, 2026-12-05: clearing that tilt let
    play resume with the lid open, and the next card was dealt): clearing it raises the device's tilt, a
    card is held, and play waits for the lid."""
    table = baccarat_table(decks=1)
    dealing(table)
    deal(table, "AS")
    assert tilt_of(deal(table, "AS"))["reason"] == "impossible_card"
    assert names(table.apply(I.DeviceStatus("shoe lid", False, "lid open"))) == ["device"]
    events = table.apply(I.ClearTilt())
    assert names(events) == ["tilt_cleared", "tilt"]
    assert tilt_of(events) == {"event": "tilt", "round": 1, "reason": "device_offline", "card": "",
                               "detail": "shoe lid offline", "held": []}
    assert held_event(deal(table, "2H"))["held"] == ["2H"]
    events = table.apply(I.DeviceStatus("shoe lid", True, "lid closed"))
    assert names(events) == ["device", "tilt_cleared", "tilt"] and tilt_of(events)["reason"] == "held_card"


def test_a_device_lost_while_cards_wait_holds_them_until_it_is_back() -> None:
    table = baccarat_table()
    dealing(table)
    table.apply(I.DeviceStatus("shoe lid", False, "lid open"))
    deal(table, "2C")
    table.apply(I.DeviceStatus("shoe lid", True))
    assert table.tilt is not None and table.tilt.reason == "held_card"
    events = table.apply(I.DeviceStatus("shoe", False, "unplugged"))
    assert tilt_of(events)["reason"] == "device_offline" and tilt_of(events)["held"] == ["2C"]
    events = table.apply(I.DeviceStatus("shoe", True))
    assert tilt_of(events)["reason"] == "held_card" and tilt_of(events)["held"] == ["2C"]


def test_a_card_the_shoe_flagged_as_a_burn_is_still_a_burn_when_taken() -> None:
    table = baccarat_table()
    dealing(table)
    table.apply(I.DeviceStatus("shoe lid", False, "lid open"))
    table.apply(I.CardSeen(parse_card("2C"), burn=True))
    table.apply(I.DeviceStatus("shoe lid", True))
    events = table.apply(I.TakeHeld())
    assert names(events) == ["tilt_cleared", "card_burned"]
    assert events[1].to_dict()["why"] == "shoe"


def test_take_held_is_an_input_like_the_others() -> None:
    assert I.input_from_dict({"input": "take_held"}) == I.TakeHeld()
    assert I.TakeHeld().to_dict() == {"input": "take_held"}


# --------------------------------------------------------------- accounting
def pending(table: Table) -> int:
    """Cards out of the shoe that a tilt holds: its own card (not due, impossible) and the held ones."""
    tilt = table.tilt
    if tilt is None:
        return 0
    return len(tilt.held) + (tilt.card is not None and tilt.reason != "held_card")


_ACTIONS = st.sampled_from(["card", "card", "card", "card", "burn", "take", "void", "clear", "lid_open",
                            "lid_closed", "open", "close", "declare_burn_next"])


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(_ACTIONS, st.sampled_from([c.code for c in DECK[:6]])), max_size=60))
def test_every_card_delivered_is_dealt_burned_held_refused_or_set_aside_exactly_once(
    steps: list[tuple[str, str]],
) -> None:
    """Whatever the dealer does, each card delivered ends in exactly one place, and the shoe's counts
    are exactly the cards dealt and burned (one-deck shoe, six ranks: impossible cards come often)."""
    table = baccarat_table(decks=1)
    inputs = {
        "burn": I.DeclareBurn(), "take": I.TakeHeld(), "void": I.VoidRound(), "clear": I.ClearTilt(),
        "lid_open": I.DeviceStatus("shoe lid", False, "lid open"),
        "lid_closed": I.DeviceStatus("shoe lid", True),
        "open": I.OpenBetting(), "declare_burn_next": I.DeclareBurn(),
    }
    delivered = dealt = burned = refused = set_aside = 0
    applied: list[I.Input] = []

    def apply(inp: I.Input) -> list[Event]:
        applied.append(inp)
        return table.apply(inp)

    for action, code in steps:
        if action == "card":
            delivered += 1
            events = apply(I.CardSeen(parse_card(code)))
            refused += names(events) == ["refused"]
        elif action == "close":
            apply(I.PlaceWager(1, "player", 100))
            events = apply(I.CloseBetting())
        else:
            tilt, before = table.tilt, pending(table)
            events = apply(inputs[action])
            if events[0].event != "refused":
                # An impossible card cleared, or voided, is out of play without being counted.
                if action == "clear" and tilt is not None and tilt.reason == "impossible_card":
                    set_aside += 1
                if action == "void":
                    set_aside += before - names(events).count("card_burned")
        dealt += names(events).count("card_dealt")
        burned += names(events).count("card_burned")
    assert delivered == dealt + burned + refused + set_aside + pending(table)
    assert (table.composition.dealt, table.composition.burned) == (dealt, burned)
    # Replaying the same inputs, read back from their journal form, gives the same table.
    again = baccarat_table(decks=1)
    for inp in applied:
        again.apply(I.input_from_dict(inp.to_dict()))
    assert state(again) == state(table)
