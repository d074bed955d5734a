"""2WayWinner par sheet: the Dealer Bonus and the game itself, both exact.

The Dealer Bonus's return is exact over every five-card hand (bonus_math.py
says how it is counted, in milliseconds, without the hand evaluator).

The game itself (both antes, plays, bets) is exact too (exact.py): every
two cards and up card, blackjack by the exact engine, poker by every
showdown, under the optimal choice and under the simulator's policy, with
the optimal choice's chart. The default table's figures are stored and
print at once; --natural-pays 3:2 or --recompute computes them (a few
minutes of CPU, --workers processes, a progress bar). --format
markdown|json prints the game's sheet as a document; --output writes it to
a file (docs/strategy/two_way_winner_exact.md). --bonus prints the Dealer
Bonus only; --rounds N measures the game by simulation instead (a Monte
Carlo through the real engine with the default player policy, its 95 %
interval and round count).

The pay table is the shipped default, changed by a table file
(--table FILE, its options.dealer_bonus_paytable) and then by
--paytable KEY=ODDS pairs (lose for a hand that does not pay).
Returns are per unit staked with exact odds; the engine floors each win to
the cent, which can only lower the return of an odd stake.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from controller.configfile import ConfigFileError, read_yaml
from controller.games.sheet_output import deliver
from controller.games.two_way_winner.bonus_math import ALL_HANDS, bonus_class_counts, par_sheet
from controller.games.two_way_winner.exact_sheet import DEFAULTS_FILE, cached, compute, render
from controller.games.two_way_winner.options import (
    BONUS_KEYS,
    DealerBonusPayTable,
    TwoWayWinnerOptions,
)
from controller.games.two_way_winner.simulation import ANTE, interval, play

__all__ = ["ALL_HANDS", "bonus_class_counts", "par_sheet", "load_paytable", "add_arguments", "run"]

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bonus", action="store_true", help="the exact Dealer Bonus sheet only (not the game's)"
    )
    parser.add_argument(
        "--rounds", type=int, help="measure the game by simulating this many rounds instead (e.g. 100000)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation's shuffles (default 1)")
    parser.add_argument("--natural-pays", default="6:5", choices=("6:5", "3:2"), help="default 6:5")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                        help="the exact game sheet as text, a markdown document or JSON")
    parser.add_argument("--output", metavar="FILE", help="exact game sheet: write it to FILE instead")
    parser.add_argument("--recompute", action="store_true",
                        help="compute the exact game sheet even when stored figures exist")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes for computing the exact sheet (default: up to 2)")
    parser.add_argument("--table", metavar="FILE", help="a table or scenario file with dealer_bonus_paytable")
    parser.add_argument(
        "--paytable", nargs="+", default=[], metavar="KEY=ODDS",
        help=f"change pay-table entries, e.g. full_house=30:1 two_pair=lose; keys: {', '.join(BONUS_KEYS)}",
    )
    parser.add_argument("--json", action="store_true",
                        help="print the Dealer Bonus sheet as JSON (fractions as text)")


def _pct(value: Fraction, places: int = 4) -> str:
    return f"{100 * float(value):.{places}f} %"


def run(args: argparse.Namespace) -> int:
    try:
        table = load_paytable(args.table, args.paytable)
    except (OSError, ValueError) as exc:
        print(f"croupier math two_way_winner: {exc}", file=sys.stderr)
        return 2
    sheet = par_sheet(table)
    if args.format != "text" or args.output:
        return exact_game(args)
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
    if args.rounds is not None:
        return game_sheet(args.rounds, args.seed, args.natural_pays, args.croupier)
    print()
    return exact_game(args)


def exact_game(args: argparse.Namespace) -> int:
    """The game's exact sheet: stored for the default natural_pays, else computed (progress on stderr)."""
    return deliver(None if args.recompute else cached(args.natural_pays),
                   lambda: compute(args.natural_pays, args.workers),
                   lambda sheet, source: render(sheet, args.format, source),
                   DEFAULTS_FILE.name, args.workers)


def game_sheet(rounds: int, seed: int, natural: str, croupier: str = "croupier") -> int:
    """The game's house edge by simulation, with the method, its size and its interval stated."""
    if rounds < 2:
        print("croupier math two_way_winner: --rounds must be at least 2", file=sys.stderr)
        return 2
    print()
    print(f"2WayWinner game (both antes, plays, bets), one deck, natural pays {natural}")
    print(f"method: simulation (Monte Carlo) through the real engine, {rounds:,} rounds x 1 seat, seed "
          f"{seed}, default player policy (docs/strategy/two_way_winner.md); 95 % interval")
    t = play(rounds, seed, 1, natural, False)
    edge, half = interval(t.house, t.house_sq, t.rounds, 2 * ANTE)
    print(f"house edge per unit of total ante: {100 * edge:.3f} % "
          f"(95 % interval {100 * (edge - half):.3f} % .. {100 * (edge + half):.3f} %)")
    print(f"command: {croupier} math two_way_winner --rounds {rounds} --seed {seed}"
          + ("" if natural == "6:5" else f" --natural-pays {natural}"))
    return 0
