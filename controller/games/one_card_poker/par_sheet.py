"""Exact One Card Poker par sheet: the tie, the Tie wager's house edge and the DP's expected result.

Everything is counted over the ranks the shoe can deal (each rank weighted
by how many cards of it remain), never simulated, so every figure is an
exact fraction for the given number of decks. Suits never matter, so ranks
are all that is enumerated.

A player's result depends only on its own first card, the DP's first card
and its own War cards. With several players at the table those cards sit at
other places in the shoe, but a shuffled shoe is exchangeable and the places
are chosen from what was dealt before (predictable sampling), so each
player's figures are exactly those of a player alone with the DP; the DP's
expected result is therefore linear in the primary action it banks.

A War is symmetric: the player's and the DP's War cards are exchangeable at
every pair, repeated ties included, so the player wins a War exactly as
often as it loses it. The sheet shows the first War pair's split, counted,
to make that visible.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from fractions import Fraction

from controller.money import Odds, OddsError

RANKS = 13


def _counts(decks: int) -> list[int]:
    return [4 * decks] * RANKS


def _showdown(counts: list[int], weight: int = 1) -> tuple[int, int, int]:
    """Ways (player higher, lower, tie) to draw the player's card then the DP's from ``counts``,
    each way counted ``weight`` times (the ways the cards already gone could have come)."""
    higher = lower = tie = 0
    for p in range(RANKS):
        for d in range(RANKS):
            ways = weight * counts[p] * (counts[d] - (p == d))
            if p > d:
                higher += ways
            elif p < d:
                lower += ways
            else:
                tie += ways
    return higher, lower, tie


def first_cards(decks: int) -> tuple[Fraction, Fraction, Fraction]:
    """(player higher, player lower, tie) for one player's first card against the DP's."""
    counts = _counts(decks)
    n = sum(counts)
    higher, lower, tie = _showdown(counts)
    total = n * (n - 1)
    return Fraction(higher, total), Fraction(lower, total), Fraction(tie, total)


def first_war_pair(decks: int) -> tuple[Fraction, Fraction, Fraction]:
    """(player higher, lower, tie again) for the first War pair, given that the first cards tied."""
    counts = _counts(decks)
    higher = lower = tie = 0
    for r in range(RANKS):  # the tied rank: two of its cards are gone
        w_tie = counts[r] * (counts[r] - 1)
        counts[r] -= 2
        h, lo, t = _showdown(counts, w_tie)
        higher, lower, tie = higher + h, lower + lo, tie + t
        counts[r] += 2
    total = higher + lower + tie
    return Fraction(higher, total), Fraction(lower, total), Fraction(tie, total)


def tie_wager_edge(decks: int, pays: Odds) -> Fraction:
    """The house's edge on the Tie wager: it wins ``pays`` whenever the first cards tie."""
    p_tie = first_cards(decks)[2]
    return 1 - p_tie * (1 + Fraction(pays.num, pays.den))


@dataclass(frozen=True, slots=True)
class Strategy:
    """What tied players and the DP choose; ``dp_value`` is the DP's result per unit of that tie."""

    name: str
    text: str
    dp_value: Fraction


#: On a tie, per unit of primary, from the DP's side. A matched War stakes two
#: units and is even (symmetric); a decline pays half; a surrender takes half
#: (exactly half: a primary of whole units of 100 is even).
STRATEGIES = (
    Strategy("optimal", "tied players always extend and the DP always matches (best for both)", Fraction(0)),
    Strategy("decline", "tied players always extend and the DP always declines", Fraction(-1, 2)),
    Strategy("surrender", "tied players always surrender", Fraction(1, 2)),
)


def dp_expectation(decks: int, strategy: Strategy) -> Fraction:
    """The DP's expected result per unit of primary action it banks (fee and Tie wagers aside)."""
    higher, lower, tie = first_cards(decks)
    war_higher, war_lower, _ = first_war_pair(decks)
    if war_higher != war_lower:  # pragma: no cover - the War is symmetric by exchangeability
        raise AssertionError("a War must be even")
    return lower - higher + tie * strategy.dp_value


def _frac(value: Fraction, den: int) -> str:
    """``value`` over ``den`` when it divides (3/51), then reduced if different (= 1/17)."""
    text = str(value)
    if (value * den).denominator == 1 and value.denominator != den and value != 0:
        text = f"{value * den}/{den} (= {value})"
    return f"{text} = {float(value):.4f}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decks", type=int, default=1, help="decks in the shoe (1..8, default 1)")
    parser.add_argument("--tie-pays", default="10:1", help="Tie wager odds n:1 (default '10:1')")
    parser.add_argument("--fee", type=int, default=0, help="DP fee per dealt round, minor units (default 0)")
    parser.add_argument(
        "--action",
        type=int,
        default=1000,
        help="primary action the DP banks per round, minor units, to express the fee per unit (default 1000)",
    )


def run(args: argparse.Namespace) -> int:
    prog = "croupier math one_card_poker"
    if not 1 <= args.decks <= 8:
        print(f"{prog}: --decks must be 1..8, not {args.decks}")
        return 2
    try:
        pays = Odds.parse(args.tie_pays)
    except OddsError as exc:
        print(f"{prog}: --tie-pays: {exc}")
        return 2
    if pays.den != 1:
        print(f"{prog}: --tie-pays must be n:1, not '{pays}'")
        return 2
    if args.fee < 0 or args.action <= 0:
        print(f"{prog}: --fee must be >= 0 and --action > 0")
        return 2
    d = args.decks
    den = 52 * d - 1
    higher, lower, tie = first_cards(d)
    war_h, war_l, war_t = first_war_pair(d)
    edge = tie_wager_edge(d, pays)
    print(f"One Card Poker with a Designated Player, {d} deck{'s' if d > 1 else ''}, exact (all rank pairs)")
    print(f"  P(player higher)            {_frac(higher, den)}")
    print(f"  P(player lower)             {_frac(lower, den)}")
    print(f"  P(tie)                      {_frac(tie, den)}")
    print(
        f"  first War pair after a tie: higher {float(war_h):.4f}, lower {float(war_l):.4f}, "
        f"tie again {float(war_t):.4f} ("
        + ("higher and lower equally likely: a War is even" if war_h == war_l else "higher and lower differ")
        + ")"
    )
    print(f"Tie wager at {pays}: house edge {_frac(edge, den)} ({float(edge) * 100:.2f} %)")
    print("  (it wins whenever the first cards tie: a surrender keeps it unless tie_requires_extend,")
    print("   and under tie_requires_extend a tied player extends anyway, as below)")
    print("DP's expected result per unit of primary action it banks (positive: the DP gains):")
    for s in STRATEGIES:
        print(f"  {s.name:<10} {_frac(dp_expectation(d, s), den):<24} {s.text}")
    fee_per_unit = Fraction(args.fee, args.action)
    best = dp_expectation(d, STRATEGIES[0])
    print(f"  with a fee of {args.fee} per dealt round and {args.action} of primary action banked:")
    print(
        f"  optimal    {_frac(best - fee_per_unit, den)} per unit "
        f"({float((best - fee_per_unit) * args.action):.2f} per round)"
    )
    print("Assumptions: the Tie wager is banked by the house (tie_banker house); with tie_banker dp the")
    print("DP also gains the Tie wager's edge above per unit of Tie wager. Every extension is fundable;")
    print("primaries are whole units (even), so a surrender or decline moves exactly half.")
    return 0
