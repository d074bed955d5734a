"""A held-out-style scenario for a table file: every seat with a panel bets every round, from a seed.

The acceptance run of a full-size table (docs/wiring.md): ``croupier scenario
FILE --through-daemon --table TABLE`` plays it through the daemon on the table's
own pin maps and expanders, and its settlement lines must be the engine-only
run's, byte for byte. The rounds are not hand-worked: a seeded shoe deals
until each round settles and a seeded player picks each decision among the
legal ones, on a mirror table, so the file is valid by construction and
unlike any hand-written one. Amounts are a few table minimums, so a bet is
keyed on the seat's own buttons (held bet keys, chip keys) before the chips
go on the sensor.
"""

from __future__ import annotations

import random
from typing import Any

from controller import inputs as I
from controller.daemon.config import TableConfig
from controller.events import RoundSettled
from controller.game_base import CardDue, DecisionDue
from controller.games import GAMES
from controller.simulation.shoe_shuffle import ShuffledShoe
from controller.table import Table

#: Multiples of the table minimum a seat bets (each a whole number of the seat's bet steps).
STAKES = (1, 2, 3, 5)
#: Spots a seat bets every round, by game (the rest, side bets, now and then).
MAIN_SPOTS = {"baccarat": ("player", "banker"), "one_card_poker": ("primary",), "swap_hand": ("main",),
              "two_way_winner": ("bj_ante", "poker_ante")}
#: Games whose main spots all take the same amount (2WayWinner's two antes).
SAME_STAKE = {"two_way_winner"}


def panel_seats(config: TableConfig) -> list[int]:
    """The seats the table file wires a panel for."""
    return sorted({seat for _, pin_map in config.panels for seat in pin_map.seats})


def table_scenario(config: TableConfig, rounds: int, seed: int) -> dict[str, Any]:
    """``rounds`` rounds for ``config``'s game, seats and limits, its simulation's cut card and DP."""
    game_name = config.spec.game
    sim = config.spec.simulation
    cut_card = 16 if sim is None else sim.cut_card
    dp = None if sim is None else sim.dp
    cls = GAMES[game_name]
    rng = random.Random(seed)
    limits = config.limits
    shoe = ShuffledShoe(cls(config.options).decks, seed, cut_card)
    table = Table(cls(config.options), limits)
    seats = panel_seats(config)
    credits = {seat: 10**8 for seat in seats}
    for seat, amount in credits.items():
        table.apply(I.CreditIn(seat, amount))
    players = [s for s in seats if s != dp]
    out: list[dict[str, Any]] = []
    for n in range(rounds):
        spec: dict[str, Any] = {}
        if n > 0 and shoe.needs_shuffle():
            shoe.shuffle()
            spec["shuffle"] = True
        if n == 0 or spec.get("shuffle"):
            _apply(table, I.NewShoe(), n)
        if n == 0 and dp is not None:
            spec["dp"] = dp
            _apply(table, I.SetDesignatedPlayer(dp), n)
        _apply(table, I.OpenBetting(), n)
        bets = {seat: _bets(game_name, rng, limits.min_bet) for seat in players}
        for seat, spots in bets.items():
            for spot, amount in spots.items():
                _apply(table, I.PlaceWager(seat, spot, amount), n)
        _apply(table, I.CloseBetting(), n)
        spec["bets"] = bets
        spec["cards"], spec["decisions"] = _deal(table, shoe, rng, n)
        out.append(spec)
    table_spec = {"seats": limits.seats, "unit": limits.unit, "min_bet": limits.min_bet,
                  "max_bet": limits.max_bet}
    return {"game": game_name, "options": config.spec.options, "table": table_spec,
            "credits": credits, "rounds": out}


def _bets(game: str, rng: random.Random, minimum: int) -> dict[str, int]:
    spots = MAIN_SPOTS[game]
    if game not in SAME_STAKE:
        spots = (rng.choice(spots),)
    stake = minimum * rng.choice(STAKES)
    bets = dict.fromkeys(spots, stake)
    side = {"baccarat": "tie", "one_card_poker": "tie", "two_way_winner": "dealer_bonus"}.get(game)
    if side is not None and rng.random() < 0.2:
        bets[side] = minimum
    return bets


def _deal(table: Table, shoe: ShuffledShoe, rng: random.Random, n: int) -> tuple[list[str], list[list[Any]]]:
    """Cards from the shoe when one is due, a random legal decision when one is, until settled."""
    cards: list[str] = []
    decisions: list[list[Any]] = []
    while True:
        due = table.due()
        if isinstance(due, CardDue):
            card = shoe.draw()
            cards.append(str(card))
            events = _apply(table, I.CardSeen(card), n)
        elif isinstance(due, DecisionDue):
            seat, legal = min(due.choices.items())
            action = rng.choice(sorted(legal))
            decisions.append([seat, action])
            events = _apply(table, I.Decision(seat, action), n)
        else:
            raise RuntimeError(f"round {n + 1}: the table waits for nothing in phase {table.phase}")
        if any(isinstance(e, RoundSettled) for e in events):
            return cards, decisions


def _apply(table: Table, inp: I.Input, n: int) -> list[Any]:
    events = table.apply(inp)
    refused = [e for e in events if e.event in ("refused", "tilt")]
    if refused:
        raise RuntimeError(f"round {n + 1}: the mirror table refused {inp.to_dict()}: {refused[0].to_dict()}")
    return events
