"""Shared test helpers: tables built the way the daemon builds them."""

from __future__ import annotations

from typing import Any

from controller import inputs as I
from controller.cards import parse_card
from controller.events import Event
from controller.games.baccarat.rules import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.table import Table


def baccarat_table(credits: dict[int, int] | None = None, **options: Any) -> Table:
    table = Table(Baccarat(BaccaratOptions(**options)), TableLimits())
    for seat, amount in (credits or {1: 100_000, 2: 100_000, 3: 100_000}).items():
        table.apply(I.CreditIn(seat, amount))
    table.apply(I.NewShoe())
    return table


def deal(table: Table, cards: str) -> list[Event]:
    """Feed cards (``"AS KD 9h"``) and return every event."""
    events: list[Event] = []
    for text in cards.split():
        events.extend(table.apply(I.CardSeen(parse_card(text))))
    return events


def names(events: list[Event]) -> list[str]:
    return [e.event for e in events]
