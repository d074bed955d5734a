"""2WayWinner par sheet: the Dealer Bonus exactly, the game itself by simulation.

The Dealer Bonus is decided before the deal, when the five community cards
are any five cards of the deck, so its return is exact over the 2,598,960
five-card hands. They are not ranked one by one: the hands are grouped by
their multiset of ranks (6,175 groups) and each group's hands are counted
with binomial coefficients (which suits can the ranks take, how many of
those are flushes). That takes milliseconds and shares nothing with the
evaluator, so the test suite can check the two against each other.

The game itself (both antes, plays, the blackjack and poker hands) has no
closed form worth trusting, so its house edge is measured and the sheet
says so: a Monte Carlo through the real engine with the default player
policy (docs/strategy/two_way_winner.md), with its 95 % interval and round
count, in well under a minute. --bonus prints the exact Dealer Bonus only.

The pay table is the shipped default, changed by a table file
(--table FILE, its options.dealer_bonus_paytable) and then by
--paytable KEY=ODDS pairs (lose for a hand that does not pay).
Returns are per unit staked with exact odds; the engine floors each win to
the cent, which can only lower the return of an odd stake.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations_with_replacement
from math import comb
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from controller.configfile import ConfigFileError, read_yaml
from controller.games.two_way_winner.options import (
    BONUS_KEYS,
    JACKS,
    DealerBonusPayTable,
    TwoWayWinnerOptions,
)

#: Every five-card hand of one deck.
ALL_HANDS: Final = comb(52, 5)

#: Rank indexes (2 = 0 .. A = 12) of the ten straights, the wheel included.
_STRAIGHTS: Final = frozenset(
    [frozenset(range(low, low + 5)) for low in range(9)] + [frozenset({12, 0, 1, 2, 3})]
)
_ACE_HIGH_STRAIGHT: Final = frozenset(range(8, 13))


def bonus_class_counts() -> dict[str | None, int]:
    """How many five-card hands fall in each pay-table class (``None``: below a pair of jacks)."""
    counts: dict[str | None, int] = dict.fromkeys((*BONUS_KEYS, None), 0)
    for ranks in combinations_with_replacement(range(13), 5):
        per_rank = {r: ranks.count(r) for r in set(ranks)}
        if max(per_rank.values()) > 4:
            continue
        ways = 1
        for n in per_rank.values():
            ways *= comb(4, n)
        shape = sorted(per_rank.values(), reverse=True)
        if len(per_rank) == 5:
            distinct = frozenset(per_rank)
            flushes = 4  # all five of one suit
            straight = distinct in _STRAIGHTS
            if straight:
                top = "royal_flush" if distinct == _ACE_HIGH_STRAIGHT else "straight_flush"
                counts[top] += flushes
                counts["straight"] += ways - flushes
            else:
                counts["flush"] += flushes
                counts[None] += ways - flushes
        elif shape == [4, 1]:
            counts["four_of_a_kind"] += ways
        elif shape == [3, 2]:
            counts["full_house"] += ways
        elif shape == [3, 1, 1]:
            counts["three_of_a_kind"] += ways
        elif shape == [2, 2, 1]:
            counts["two_pair"] += ways
        else:  # one pair
            pair = next(r for r, n in per_rank.items() if n == 2)
            counts["jacks_or_better" if pair + 2 >= JACKS else None] += ways
    return counts


def par_sheet(table: DealerBonusPayTable) -> dict[str, Any]:
    """Exact return, house edge, hit rate and per-class lines of a pay table (fractions)."""
    counts = bonus_class_counts()
    assert sum(counts.values()) == ALL_HANDS
    returned = Fraction(0)
    hits = 0
    second = Fraction(0)  # E[net^2] per unit
    lines = []
    for key in (*BONUS_KEYS, None):
        n = counts[key]
        odds = table.pays(key)
        net = Fraction(-1) if odds is None else Fraction(odds.num, odds.den)
        if odds is not None:
            hits += n
            returned += n * (1 + net)
        second += n * net * net
        lines.append({"hand": key or "nothing", "hands": n, "pays": "lose" if odds is None else str(odds)})
    ret = returned / ALL_HANDS
    edge = 1 - ret
    variance = second / ALL_HANDS - edge * edge
    return {
        "hands": ALL_HANDS,
        "lines": lines,
        "return": ret,
        "house_edge": edge,
        "hit_rate": Fraction(hits, ALL_HANDS),
        "variance": variance,
    }


def load_paytable(table_file: str | None, pairs: Sequence[str]) -> DealerBonusPayTable:
    """The pay table from the defaults, a table file, then ``KEY=ODDS`` pairs; ValueError names the key."""
    data: dict[str, Any] = {}
    if table_file is not None:
        raw = read_yaml(Path(table_file), ConfigFileError)  # a ValueError naming the file (and line)
        if not isinstance(raw, Mapping):
            raise ValueError(f"{table_file}: a table file is a mapping")
        options = raw.get("options", raw)
        if not isinstance(options, Mapping):
            raise ValueError(f"{table_file}: options must be a mapping")
        given = options.get("dealer_bonus_paytable", {})
        if not isinstance(given, Mapping):
            raise ValueError(f"{table_file}: dealer_bonus_paytable must be a mapping of hand to odds")
        data.update(given)
    for pair in pairs:
        key, sep, odds = pair.partition("=")
        if not sep:
            raise ValueError(f"--paytable takes KEY=ODDS (e.g. full_house=30:1), not {pair!r}")
        data[key.strip()] = odds.strip()
    try:
        return TwoWayWinnerOptions.model_validate({"dealer_bonus_paytable": data}).dealer_bonus_paytable
    except ValidationError as exc:
        reasons = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"][1:])
            if err["type"] == "extra_forbidden":
                msg = f"unknown key; keys: {', '.join(BONUS_KEYS)}"
            else:
                msg = err["msg"].removeprefix("Value error, ")
            reasons.append(f"dealer_bonus_paytable.{where}: {msg}")
        raise ValueError("; ".join(reasons)) from None


#: Rounds of the game's simulation: a 95 % interval of about +/-0.8 % of the ante, in under a minute.
SHEET_ROUNDS: Final = 100_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bonus", action="store_true", help="the exact Dealer Bonus sheet only (no game simulation)"
    )
    parser.add_argument(
        "--rounds", type=int, default=SHEET_ROUNDS,
        help=f"rounds of the game's house-edge simulation (default {SHEET_ROUNDS})",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation's shuffles (default 1)")
    parser.add_argument("--table", metavar="FILE", help="a table or scenario file with dealer_bonus_paytable")
    parser.add_argument(
        "--paytable", nargs="+", default=[], metavar="KEY=ODDS",
        help=f"change pay-table entries, e.g. full_house=30:1 two_pair=lose; keys: {', '.join(BONUS_KEYS)}",
    )
    parser.add_argument("--json", action="store_true", help="print the sheet as JSON (fractions as text)")


def _pct(value: Fraction, places: int = 4) -> str:
    return f"{100 * float(value):.{places}f} %"


def run(args: argparse.Namespace) -> int:
    try:
        table = load_paytable(args.table, args.paytable)
    except (OSError, ValueError) as exc:
        print(f"croupier math two_way_winner: {exc}", file=sys.stderr)
        return 2
    sheet = par_sheet(table)
    if args.json:
        out = {k: (str(v) if isinstance(v, Fraction) else v) for k, v in sheet.items()}
        out.update({f"{k}_float": float(v) for k, v in sheet.items() if isinstance(v, Fraction)})
        print(json.dumps(out))
        return 0
    print(f"2WayWinner Dealer Bonus (exact), one deck, all {sheet['hands']:,} five-card community hands")
    print(f"{'community hand':<18} {'hands':>10} {'probability':>13} {'pays':>8} {'return':>10}")
    for line in sheet["lines"]:
        p = Fraction(line["hands"], sheet["hands"])
        pays = line["pays"]
        contrib = Fraction(0) if pays == "lose" else p * (1 + Fraction(*map(int, pays.split(":"))))
        print(f"{line['hand']:<18} {line['hands']:>10,} {float(p):>13.8f} {pays:>8} {_pct(contrib):>10}")
    print(f"return     {_pct(sheet['return'])}")
    print(f"house edge {_pct(sheet['house_edge'])}")
    print(f"hit rate   {_pct(sheet['hit_rate'], 2)}")
    print(f"std dev    {float(sheet['variance']) ** 0.5:.4f} units")
    if args.bonus:
        return 0
    return game_sheet(args.rounds, args.seed)


def game_sheet(rounds: int, seed: int) -> int:
    """The game's house edge by simulation, with the method, its size and its interval stated."""
    from controller.games.two_way_winner.simulation import ANTE, interval, play  # it imports this module

    if rounds < 2:
        print("croupier math two_way_winner: --rounds must be at least 2", file=sys.stderr)
        return 2
    natural = TwoWayWinnerOptions().natural_pays
    print()
    print(f"2WayWinner game (both antes, plays, bets), one deck, natural pays {natural}")
    print(f"method: simulation (Monte Carlo) through the real engine, {rounds:,} rounds x 1 seat, seed "
          f"{seed}, default player policy (docs/strategy/two_way_winner.md); 95 % interval")
    t = play(rounds, seed, 1, str(natural), False)
    edge, half = interval(t.house, t.house_sq, t.rounds, 2 * ANTE)
    print(f"house edge per unit of total ante: {100 * edge:.3f} % "
          f"(95 % interval {100 * (edge - half):.3f} % .. {100 * (edge + half):.3f} %)")
    print(f"command: croupier math two_way_winner --rounds {rounds} --seed {seed}")
    return 0
