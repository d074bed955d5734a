"""A restarted camera's card it cannot tell from the last one it delivered: held until the dealer says.

The engine's side of docs/vision.md, "Across restarts": a ``card`` input with ``repeat`` raises a
``repeat_card`` tilt holding it (never dealt, never counted by itself); ``clear_tilt`` says it is the
card already dealt (dropped: nothing dealt, nothing counted), ``take_held`` that it is a new card
(applied as if delivered now), ``declare_burn`` a new card burned; a void does not count it.
"""

from __future__ import annotations

import json

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.table import Table
from tests.helpers import baccarat_table, deal, names
from tests.test_held_cards import dealing, tilt_of


def repeat(code: str) -> I.CardSeen:
    return I.CardSeen(parse_card(code), repeat=True)


def dealt_first(code: str) -> Table:
    """A Baccarat round being dealt, its first card ``code`` dealt."""
    table = baccarat_table()
    dealing(table)
    deal(table, code)
    return table


def counted(table: Table) -> tuple[int, int]:
    return table.composition.dealt, table.composition.burned


def test_a_repeat_card_is_held_in_a_repeat_card_tilt_and_clearing_it_takes_nothing() -> None:
    table = dealt_first("6C")
    before = json.dumps(table.composition.to_dict())
    events = table.apply(repeat("6C"))
    assert tilt_of(events) == {
        "event": "tilt", "round": 1, "reason": "repeat_card", "card": "6C", "held": ["6C"],
        "detail": "6C is in the camera's window again, never seen gone (after a restart, or a hand over the "
                  "window): the 6C already dealt (clear the tilt) or a new one (take or burn it)"}
    assert table.snapshot()["tilt"]["held"] == ["6C"] and table.due() is None
    events = table.apply(I.ClearTilt())
    assert names(events) == ["tilt_cleared"] and events[0].to_dict()["how"] == "cleared"
    assert table.tilt is None and json.dumps(table.composition.to_dict()) == before
    assert table.due() is not None and table.due().hand == "player"  # type: ignore[union-attr]  # PPBB: 2nd card
    assert counted(table) == (1, 0)


def test_a_repeat_card_taken_is_a_new_card_dealt_and_burned_is_a_new_card_burned() -> None:
    table = dealt_first("6C")
    table.apply(repeat("6C"))
    events = table.apply(I.TakeHeld())
    assert names(events) == ["tilt_cleared", "card_dealt"] and events[1].to_dict()["hand"] == "player"
    assert counted(table) == (2, 0)
    table.apply(repeat("7D"))
    assert names(table.apply(I.DeclareBurn())) == ["card_burned", "tilt_cleared"]
    assert counted(table) == (2, 1) and table.tilt is None


def test_a_repeat_card_between_rounds_taken_raises_the_card_not_due_tilt() -> None:
    table = baccarat_table()
    assert tilt_of(table.apply(repeat("9S")))["reason"] == "repeat_card"
    assert names(table.apply(I.OpenBetting())) == ["refused"]
    events = table.apply(I.TakeHeld())
    assert tilt_of(events)["reason"] == "card_not_due" and tilt_of(events)["card"] == "9S"


def test_a_repeat_card_during_another_tilt_is_held_and_asked_about_once_that_tilt_ends() -> None:
    table = baccarat_table()
    dealing(table)
    deal(table, "2C")
    table.apply(I.DeviceStatus("camera", False, "no frames"))
    assert names(table.apply(repeat("2C"))) == ["card_held"]
    assert names(deal(table, "3D")) == ["card_held"]
    events = table.apply(I.DeviceStatus("camera", True, "frames"))
    assert names(events) == ["device", "tilt_cleared", "tilt"]
    assert tilt_of(events)["reason"] == "repeat_card" and tilt_of(events)["held"] == ["2C", "3D"]
    events = table.apply(I.ClearTilt())  # the 2C already dealt; the 3D is a card held meanwhile
    assert tilt_of(events)["reason"] == "held_card" and tilt_of(events)["held"] == ["3D"]
    assert names(table.apply(I.TakeHeld())) == ["tilt_cleared", "card_dealt"]
    assert counted(table) == (2, 0)


def test_a_void_during_a_repeat_card_tilt_does_not_count_the_repeat() -> None:
    table = dealt_first("4H")
    table.apply(repeat("4H"))
    deal(table, "5H")  # held behind it: out of the shoe, counted as burned by the void
    events = table.apply(I.VoidRound())
    assert names(events) == ["card_burned", "tilt_cleared", "round_voided"]
    assert events[0].to_dict()["card"] == "5H" and counted(table) == (1, 1)


def test_a_repeat_card_reads_back_from_its_journal_form_and_other_cards_keep_theirs() -> None:
    assert I.CardSeen(parse_card("6C")).to_json() == '{"input": "card", "card": "6C", "burn": false}'
    text = repeat("6C").to_json()
    assert json.loads(text) == {"input": "card", "card": "6C", "burn": False, "repeat": True}
    assert I.input_from_dict(json.loads(text)) == repeat("6C")
    with pytest.raises(I.InputError, match="repeat"):
        I.input_from_dict({"input": "card", "card": "6C", "repeat": "yes"})


def test_the_dealer_panel_offers_confirm_burn_and_void_and_confirm_takes_nothing() -> None:
    """The lamps of a ``repeat_card`` tilt: confirm (the card already dealt), burn (a new card) and void."""
    from tests.test_gpio_rig import Rig, build_map

    rig = Rig(build_map("baccarat", {1: {"spots": ["player"]}}, dealer=True))
    rig.posted.extend([(I.OpenBetting(), "test"), (I.PlaceWager(1, "player", 100), "test"),
                       (I.CloseBetting(), "test"), (I.CardSeen(parse_card("2H")), "camera"),
                       (repeat("2H"), "camera")])
    rig.sync()
    assert rig.table.tilt is not None and rig.table.tilt.reason == "repeat_card"
    assert rig.panel.logic._dealer_lit() == {"confirm", "burn", "void"}
    rig.press(None, "confirm")
    assert [inp for inp, _ in rig.posted] == [I.ClearTilt()]
    assert [e.event for e in rig.sync()] == ["tilt_cleared"]
    assert rig.table.tilt is None and counted(rig.table) == (1, 0)
