"""Shared set-up for the tests of the alert service's rules without I/O (no tests here): the rows its
Pit judges and what it answered, and the real Baccarat engine's settled rounds for its drift window
(tests/test_floor_alerting_rules.py, _drift.py, _history.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from controller import inputs as I
from controller.cards import DECK
from controller.events import RoundSettled
from controller.floor.alerting.rules import Raise
from controller.games.baccarat.rules import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.money import Odds
from controller.simulation.shoe_shuffle import ShuffledShoe
from controller.table import Table

T0 = 1_800_000_000.0


def kinds(actions: list[Any]) -> list[tuple[str, str, str]]:
    return [("raise" if isinstance(a, Raise) else "clear", a.kind, a.key) for a in actions]


def row(table: str, at: float, *events: dict[str, Any], journal: str = "j1", seq: int = 1,
        game: str = "baccarat", options: dict[str, Any] | None = None,
        record: dict[str, Any] | None = None) -> dict[str, Any]:
    numbered = [{**e, "table": table, "seq": seq + i} for i, e in enumerate(events)]
    return {"table": table, "journal": journal, "row": seq, "at": at, "events": numbered, "game": game,
            "options": options or {}, "round": record}


def settled_row(table: str, n: int, game: str, record: dict[str, Any],
                options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The row that settled round ``record``: its ``round_settled`` event and the record."""
    settled = {"event": "round_settled", "round": record["round"], "game": game,
               "settlements": record["settlements"], "house_net": record["house_net"]}
    return row(table, T0, settled, seq=n, game=game, options=options, record=record)


def rigged_rounds(pays: Odds, rounds: int, seed: int) -> Iterator[dict[str, Any]]:
    """The real engine's rounds, one seat staking 100 on Banker, Banker paid ``pays``: the parts of each
    round's record drift reads (its settlement lines and the wager standing at the close; the record
    itself is the recorder's, as the other games' tests make it: not here, where 13,000 rounds are
    dealt)."""
    game = Baccarat(BaccaratOptions(decks=8))
    game.pays["banker"] = pays  # the rig: a pay table the options would refuse
    table = Table(game, TableLimits(seats=1))
    table.apply(I.CreditIn(1, 10**15))
    shoe = ShuffledShoe(8, seed, 16)
    card_inputs = {card: I.CardSeen(card) for card in DECK}
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            table.apply(I.NewShoe())
        for inp in (I.OpenBetting(), I.PlaceWager(1, "banker", 100), I.CloseBetting()):
            table.apply(inp)
        while not isinstance(settled := table.apply(card_inputs[shoe.draw()])[-1], RoundSettled):
            pass
        yield {"round": settled.round, "status": "settled", "settlements": settled.settlements,
               "house_net": settled.house_net, "bets": {"1": {"banker": 100}}}
