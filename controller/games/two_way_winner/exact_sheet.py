"""The exact 2WayWinner par sheet: computed over ``--workers``, stored for the defaults, printed.

``croupier math two_way_winner`` answers from :data:`DEFAULTS_FILE` when
``natural_pays`` is the table default (the only option that changes the
main game); another value, or ``--recompute``, enumerates every showdown
again (controller/games/two_way_winner/showdown_exact.py, a progress bar)
and values both strategies (exact.py). The stored file carries check
values that a test recomputes in seconds, so it cannot go stale unnoticed.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from controller.cards import parse_card
from controller.games.two_way_winner.exact import (
    CHOICES,
    STRATEGIES,
    WAGERS,
    Sheet,
    blackjack_values,
    evaluate,
)
from controller.games.two_way_winner.showdown_exact import info_set_counts, showdown_counts

DEFAULTS_FILE: Final = Path(__file__).with_name("exact_defaults.json")
#: Blackjack starts (up value, card values, may split) whose stored values a test recomputes.
CHECK_STARTS: Final = [(6, 10, 10, False), (6, 6, 10, False), (10, 8, 8, True), (1, 5, 6, False),
                       (9, 2, 2, True)]
#: (seat cards, shown cards) whose showdown counts over every 997th run-out a test recomputes.
CHECK_SHOWDOWNS: Final = [(("AS", "KS"), ("QS", "2H")), (("7D", "7C"), ("7H", "KD"))]
CHECK_STRIDE: Final = 997
CODES: Final = {"blackjack": "B", "poker": "P", "surrender": "R", "take_natural": "N"}
RANK_ORDER: Final = "AKQJT98765432"
UP_ORDER: Final = "23456789TJQKA"


@dataclass
class ExactSheet:
    """Both strategies' figures for one ``natural_pays``, and the check values."""

    natural_pays: str
    sheets: dict[str, Sheet]
    checks: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        sheets = {k: {**asdict(s), "cells": [[c, u, acts] for (c, u), acts in sorted(s.cells.items())]}
                  for k, s in self.sheets.items()}
        return {"natural_pays": self.natural_pays, "checks": self.checks, "sheets": sheets}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExactSheet:
        sheets = {}
        for k, s in data["sheets"].items():
            cells = {(c, u): dict(acts) for c, u, acts in s.pop("cells")}
            sheets[k] = Sheet(**s, cells=cells)
        return cls(data["natural_pays"], sheets, data["checks"])


def check_values() -> dict[str, Any]:
    """The values the staleness test recomputes: a few blackjack starts and strided showdown counts."""
    optimal = blackjack_values("optimal", CHECK_STARTS)
    return {
        "blackjack": [[list(s), optimal[s]] for s in CHECK_STARTS],
        "showdowns": [[list(seat), list(shown), list(showdown_check(seat, shown))]
                      for seat, shown in CHECK_SHOWDOWNS],
    }


def showdown_check(seat: tuple[str, str], shown: tuple[str, str]) -> tuple[int, int, int]:
    s, b = (parse_card(c).index for c in seat), (parse_card(c).index for c in shown)
    return info_set_counts(tuple(s), tuple(b), CHECK_STRIDE)  # type: ignore[arg-type]


def compute(natural_pays: str, workers: int) -> ExactSheet:
    """Every showdown, then both strategies over every deal of two cards and an up card."""
    counts = showdown_counts(workers)
    num, den = (int(x) for x in natural_pays.split(":"))
    sheets = {k: evaluate(counts, num / den, k) for k in STRATEGIES}
    return ExactSheet(natural_pays, sheets, check_values())


def cached(natural_pays: str) -> ExactSheet | None:
    if not DEFAULTS_FILE.exists():
        return None
    sheet = ExactSheet.from_json(json.loads(DEFAULTS_FILE.read_text()))
    return sheet if sheet.natural_pays == natural_pays else None


def chart(sheet: Sheet) -> dict[str, dict[str, str]]:
    """The choice per Hold'em class and up rank; ``*``: the suits (of the two cards against the up card)
    change it, the most frequent choice shown."""
    rows: dict[str, dict[str, str]] = {}
    for (cls, up), acts in sheet.cells.items():
        best = max(acts, key=acts.__getitem__)
        rows.setdefault(cls, {})[up] = CODES[best] + ("*" if len(acts) > 1 else "")
    return rows


def class_order() -> list[str]:
    """The 169 classes: pairs, then suited and offsuit hands, higher card first."""
    out = [r + r for r in RANK_ORDER]
    for i, hi in enumerate(RANK_ORDER):
        for lo in RANK_ORDER[i + 1:]:
            out += [hi + lo + "s", hi + lo + "o"]
    return out


def figures(sheet: Sheet) -> dict[str, Any]:
    """The sheet's figures per ante and per round (two antes staked)."""
    per_round = 2.0
    out: dict[str, Any] = {
        "return_per_total_ante": 1 + sheet.net / per_round,
        "house_edge_per_total_ante": -sheet.net / per_round,
        "net_per_round_in_antes": sheet.net,
        "wager_net_per_round_in_antes": dict(sheet.shares),
        "choices": dict(sheet.choices),
        "poker_bets_per_round": sheet.poker_bets,
    }
    # A split round's two hands share the dealer's total: their covariance is not in ``second`` (at most
    # 3 x 1 a round: hand 1 nets -3..+2, hand 2 -1..+1) and a pushed hand 1 with a winning hand 2 is not in
    # ``wins``: both are bounded by the split rounds' probability.
    spread = [math.sqrt(max(sheet.second + k * 6 * sheet.splits - sheet.net ** 2, 0.0)) for k in (-1, 1)]
    out["hit_frequency"] = [sheet.wins, sheet.wins + sheet.splits]
    out["standard_deviation_per_round_in_antes"] = spread
    out["split_rounds"] = sheet.splits
    return out


METHOD: Final = (
    "exact expectation of one round, one seat, one deck shuffled every round: every two cards and up card; "
    "blackjack valued by the exact engine (composition-dependent, dealer hits soft 17, one split, no double "
    "after it, docs/strategy/exact.md); poker by enumerating, for each hole card the seat sees, every "
    "three-card run-out and dealer hand (17,123,040 showdowns), betting when it gains; the choice is the "
    "larger expectation (optimal) or the simulator's policy (docs/strategy/two_way_winner.md)"
)


def render(es: ExactSheet, fmt: str, source: str) -> str:
    """The sheet as ``text``, ``markdown`` or ``json``."""
    figs = {k: figures(s) for k, s in es.sheets.items()}
    if fmt == "json":
        return json.dumps({"game": "two_way_winner", "rules": {"decks": 1, "natural_pays": es.natural_pays},
                           "method": METHOD, "source": source, "strategies": figs,
                           "chart": chart(es.sheets["optimal"])}, indent=1)
    md = fmt == "markdown"

    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        if md:
            return ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head),
                    *("| " + " | ".join(r) + " |" for r in rows)]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        return ["  ".join(f"{c:>{w}}" for c, w in zip(r, widths, strict=True)) for r in [head, *rows]]

    lines = ["# 2WayWinner: exact par sheet" if md else "2WayWinner: exact par sheet", "",
             f"Rules: one deck shuffled every round, natural pays {es.natural_pays}, dealer hits soft 17, "
             "one split, no double after a split, split aces one card (docs/rules/two_way_winner.md).", "",
             f"Method: {METHOD}. {source}", ""]
    head = ["strategy", "return per total ante", "house edge", "net per round (antes)", "hit frequency",
            "standard deviation (antes)", "split rounds"]
    lines += table(head, [_main_row(k, f) for k, f in figs.items()])
    lines += ["", "Each wager's net per round, in antes (the antes are staked every round; the plays and "
              "the bet only when chosen):", ""]
    lines += table(["strategy", *WAGERS], [
        [k, *(f"{f['wager_net_per_round_in_antes'][w]:+.5f}" for w in WAGERS)] for k, f in figs.items()])
    lines += ["", "How often each answer is given, and poker bets per round:", ""]
    lines += table(["strategy", *CHOICES, "poker bets"], [
        [k, *(f"{100 * f['choices'][c]:.3f} %" for c in CHOICES), f"{f['poker_bets_per_round']:.4f}"]
        for k, f in figs.items()])
    gain = figs["optimal"]["net_per_round_in_antes"] - figs["policy"]["net_per_round_in_antes"]
    lines += ["", f"The optimal strategy gains {gain:.5f} antes a round over the policy "
              f"({100 * gain / 2:.4f} % of the total ante).", ""]
    lines += ["## The optimal choice" if md else "The optimal choice", "",
              "B blackjack, P poker, R surrender, N take the natural; rows are the two cards (s suited, o "
              "offsuit), columns the up card; * the suits change the choice (the most frequent shown).", ""]
    rows = chart(es.sheets["optimal"])
    lines += table(["hand", *UP_ORDER], [[c, *(rows[c].get(u, "") for u in UP_ORDER)] for c in class_order()])
    return "\n".join(lines) + "\n"


def _main_row(strategy: str, f: dict[str, Any]) -> list[str]:
    return [strategy, f"{100 * f['return_per_total_ante']:.4f} %",
            f"{100 * f['house_edge_per_total_ante']:.4f} %", f"{f['net_per_round_in_antes']:+.5f}",
            _span(f["hit_frequency"], 100, 4, " %"),
            _span(f["standard_deviation_per_round_in_antes"], 1, 4, ""),
            f"{100 * f['split_rounds']:.4f} %"]


def _span(bounds: list[float], scale: float, places: int, unit: str) -> str:
    """One figure, or its two bounds when they differ at the printed precision."""
    low, high = (f"{scale * b:.{places}f}" for b in bounds)
    return f"{low}{unit}" if low == high else f"{low} .. {high}{unit}"
