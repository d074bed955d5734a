"""The exact Swap-Hand par sheet: computed per up card in parallel, cached for the defaults, printed.

``croupier math swap_hand`` answers from :data:`DEFAULTS_FILE` when the
options are the table defaults (the file holds each up card's share, so a
test can recompute one of them and prove the file is not stale); any other
options are computed on the spot, one job per up card over ``--workers``
processes. The sheet prints the Main and Odds-Win returns under the
documented basic strategy and under the best composition-dependent one,
each wager's hit frequency and standard deviation (the Main's as bounds
where split rounds leave them open), and the best strategy's first
decision as a chart.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from controller.cards import decks_text
from controller.games.swap_hand.exact import MOMENTS, STRATEGIES, Job, UpResult, deal_values, up_result
from controller.games.swap_hand.options import SwapHandOptions
from controller.simulation.montecarlo import run_chunks

DEFAULTS_FILE: Final = Path(__file__).with_name("exact_defaults.json")
#: Chart columns (engine up values) in chart order: 2..9, ten, ace.
UP_ORDER: Final = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
CODES: Final = {"stand": "S", "hit": "H", "double": "D", "split": "P", "swap": "W"}
ROWS: Final = (
    [f"hard {t}" for t in range(5, 20)]
    + [f"A-{k}" for k in range(2, 10)]
    + [f"{r}-{r}" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")]
)


def options_key(options: SwapHandOptions) -> dict[str, Any]:
    """The options as plain JSON values (what the cache file is keyed on)."""
    data: dict[str, Any] = options.model_dump(mode="json")
    return data


#: The deals whose values the stored sheet carries for the staleness test: under a five, a hard 16 (swap),
#: 8-8 (split), an 11, a soft 18, a live 15, a hard 18 (the best play swaps it, the chart keeps it), 9-9.
CHECK_UP: Final = 5
CHECK_DEALS: Final = [(6, 10), (8, 8), (5, 6), (1, 7), (7, 8), (8, 10), (9, 9)]


@dataclass
class Sheet:
    """Every up card's share of the exact figures, for one set of options, and the check deals' values."""

    options: SwapHandOptions
    per_up: dict[int, UpResult]
    checks: dict[str, list[float]] = field(default_factory=dict)

    def merged(self) -> UpResult:
        whole = UpResult()
        for up in sorted(self.per_up):
            whole.merge(self.per_up[up])
        return whole

    def returns(self) -> dict[str, dict[str, float]]:
        """Per strategy: the player's return per unit staked on the Main, on the Odds-Win, and on both."""
        whole = self.merged()
        out = {}
        for k in STRATEGIES:
            odds = whole.shares["odds"][k]  # per main unit
            out[k] = {"main": whole.total[k] - odds, "odds_win": odds / 0.5, "both": whole.total[k] / 1.5}
        return out

    def odds_win_spread(self) -> dict[str, dict[str, float]]:
        """Per strategy: the Odds-Win's hit frequency and standard deviation per unit staked on it.

        Its net is +2 (a win), 0 (a push) or -1 (a loss) a unit, so P(win)
        and the mean fix P(loss) = 2 P(win) - mean and E[net^2] = 4 P(win) + P(loss).
        """
        whole = self.merged()
        out = {}
        for k in STRATEGIES:
            wins, mean = whole.shares["odds_wins"][k], whole.shares["odds"][k] / 0.5
            losses = 2 * wins - mean
            out[k] = {"hit_frequency": wins, "loss_frequency": losses,
                      "standard_deviation": math.sqrt(4 * wins + losses - mean * mean)}
        return out

    def main_spread(self) -> dict[str, dict[str, Any]]:
        """Per strategy: the Main's shares of rounds won, pushed and lost, and its standard deviation per
        unit, each as [low, high], and the split rounds' probability.

        Exact on the rounds without a split. A split round's hands share the dealer's cards, which the
        split simplification leaves out, so its sign and its square are unknown: each share lies between
        its part from the rounds without a split and that plus the split rounds' probability; E[net^2]
        between that part (a split round's square is at least 0) and that plus k times the split hands'
        squared nets summed (Cauchy-Schwarz: (x1 + .. + xk)^2 <= k (x1^2 + .. + xk^2), k the most hands).
        """
        whole = self.merged()
        most = self.options.max_split_hands
        out: dict[str, dict[str, Any]] = {}
        for k in STRATEGIES:
            c = {name: whole.shares[name][k] for name in MOMENTS}
            split, won, lost = c["split_rounds"], c["main_wins"], c["main_losses"]
            pushed = 1.0 - won - lost - split
            mean = whole.total[k] - whole.shares["odds"][k]
            unsplit, split_squares = c["main_square_unsplit"], c["main_square"] - c["main_square_unsplit"]
            out[k] = {"won": [won, won + split], "pushed": [pushed, pushed + split],
                      "lost": [lost, lost + split],
                      "standard_deviation": [math.sqrt(max(unsplit - mean * mean, 0.0)),
                                             math.sqrt(unsplit + most * split_squares - mean * mean)],
                      "split_rounds": split}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "options": options_key(self.options),
            "per_up": {str(up): {"total": r.total, "shares": r.shares,
                                 "cells": [[row, u, acts] for (row, u), acts in sorted(r.cells.items())]}
                       for up, r in sorted(self.per_up.items())},
            "checks": self.checks,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sheet:
        per_up = {}
        for up, r in data["per_up"].items():
            shares = {c: dict(v) for c, v in r["shares"].items()}
            per_up[int(up)] = UpResult(int(up), dict(r["total"]), shares,
                                       {(row, u): dict(acts) for row, u, acts in r["cells"]})
        return cls(SwapHandOptions.model_validate(data["options"]), per_up, data.get("checks", {}))


def compute(options: SwapHandOptions, workers: int) -> Sheet:
    """Every up card's share, one job per up card (the heaviest, the small cards, first)."""
    per_up: dict[int, UpResult] = {}
    jobs = [Job(up, options) for up in UP_ORDER]

    def merge(result: UpResult) -> None:
        per_up[result.up] = result

    run_chunks(jobs, up_result, merge, lambda job: 1, workers, unit="up card")
    return Sheet(options, per_up, deal_values(options, CHECK_UP, CHECK_DEALS))


def cached(options: SwapHandOptions) -> Sheet | None:
    """The stored sheet when ``options`` are the ones it was computed for."""
    if not DEFAULTS_FILE.exists():
        return None
    sheet = Sheet.from_json(json.loads(DEFAULTS_FILE.read_text()))
    return sheet if options_key(sheet.options) == options_key(options) else None


def chart(sheet: Sheet) -> dict[str, dict[int, str]]:
    """The best first decision per start and up card; ``*`` marks a cell whose compositions disagree."""
    whole = sheet.merged()
    rows: dict[str, dict[int, str]] = {}
    for (row, up), acts in whole.cells.items():
        acts = {a: p for a, p in acts.items() if a in CODES}
        if not acts:
            continue
        best = max(acts, key=acts.__getitem__)
        rows.setdefault(row, {})[up] = CODES[best] + ("*" if len(acts) > 1 else "")
    return rows


def main_line(sheet: Sheet) -> str:
    """The Main's hit frequency and standard deviation, bounds where split rounds leave them open."""
    spread = sheet.main_spread()
    parts = []
    for k in STRATEGIES:
        f = spread[k]
        parts.append(f"{k}: won {_span(f['won'])} %, pushed {_span(f['pushed'])} %, "
                     f"lost {_span(f['lost'])} %, "
                     f"standard deviation {_span(f['standard_deviation'], 1, 4)}")
    split = ", ".join(f"{k} {100 * spread[k]['split_rounds']:.4f} %" for k in STRATEGIES)
    return ("Main (per unit staked on it; each round's net): " + "; ".join(parts) + ". Exact for the rounds "
            f"without a split; the split rounds ({split} of rounds) make ranges: their hands share the "
            "dealer's cards, which the split simplification leaves out, so their sign and square are only "
            "bounded (docs/strategy/exact.md).")


def _span(bounds: list[float], scale: float = 100, places: int = 4) -> str:
    low, high = (f"{scale * b:.{places}f}" for b in bounds)
    return low if low == high else f"{low} to {high}"


def rules_line(options: SwapHandOptions) -> str:
    return (f"{decks_text(options.decks)}, {'H17' if options.dealer_hits_soft_17 else 'S17'}, blackjack pays "
            f"{options.blackjack_pays}, double on {options.double_on}, "
            f"{'double after split' if options.double_after_split else 'no double after split'}, up to "
            f"{options.max_split_hands} split hands, "
            f"{'resplit aces' if options.resplit_aces else 'no resplit aces'}, "
            f"{'hit split aces' if options.hit_split_aces else 'one card on split aces'}, dealer peeks")


METHOD: Final = (
    "exact expectation of one round off a full shoe, one player: every deal (up card, two cards) valued on "
    "the exact composition left, the dealer's outcome probabilities computed for the exact composition at "
    "each stand; splits valued with only the pair cards removed (not the other split hands' cards), every "
    "split hand played the same composition-dependent way, pair cards always resplit while allowed "
    "(docs/strategy/exact.md)"
)


def render(sheet: Sheet, fmt: str, source: str) -> str:
    """The sheet as ``text``, ``markdown`` or ``json``, or ``stored``: the figures as :data:`DEFAULTS_FILE`
    holds them (``source`` left out: the file is the source)."""
    if fmt == "stored":
        return json.dumps(sheet.to_json(), indent=0) + "\n"
    returns = sheet.returns()
    if fmt == "json":
        return json.dumps({"game": "swap_hand", "rules": options_key(sheet.options), "method": METHOD,
                           "source": source, "returns": returns, "odds_win": sheet.odds_win_spread(),
                           "main": sheet.main_spread(),
                           "chart": chart(sheet)}, indent=1)
    md = fmt == "markdown"
    lines = ["# Swap-Hand Blackjack: exact par sheet" if md else "Swap-Hand Blackjack: exact par sheet", "",
             f"Rules: {rules_line(sheet.options)}.", "", f"Method: {METHOD}. {source}", ""]
    head = ["strategy", "Main return", "Odds-Win return", "both (per unit staked)",
            "Main house edge", "Odds-Win house edge", "house edge, both"]
    lines.append("| " + " | ".join(head) + " |" if md else "  ".join(f"{h:>14}" for h in head))
    if md:
        lines.append("|" + " --- |" * len(head))
    for k in STRATEGIES:
        r = returns[k]
        cells = [k, *(f"{100 * (1 + r[w]):.4f} %" for w in ("main", "odds_win", "both")),
                 *(f"{-100 * r[w]:.4f} %" for w in ("main", "odds_win", "both"))]
        lines.append("| " + " | ".join(cells) + " |" if md else "  ".join(f"{c:>14}" for c in cells))
    spread = sheet.odds_win_spread()
    lines += ["", "Odds-Win (per unit staked on it; it wins 2:1, pushes or loses): "
              + "; ".join(f"{k}: hit frequency {100 * spread[k]['hit_frequency']:.4f} %, loses "
                          f"{100 * spread[k]['loss_frequency']:.4f} %, standard deviation "
                          f"{spread[k]['standard_deviation']:.4f}" for k in STRATEGIES) + ".",
              main_line(sheet)]
    gain = returns["optimal"]["both"] - returns["basic"]["both"]
    lines += ["", f"The best strategy gains {100 * gain:.4f} % of everything staked over the basic strategy "
              f"({100 * 1.5 * gain:.4f} % of the main wager).", ""]
    lines += ["## Best first decision" if md else "Best first decision",
              "", "S stand, H hit, D double, P split, W swap; * the best play depends on the cards making "
              "the total (the most frequent is shown).", ""]
    table = chart(sheet)
    head2 = ["hand", *("A" if u == 1 else "T" if u == 10 else str(u) for u in UP_ORDER)]
    lines.append("| " + " | ".join(head2) + " |" if md else " ".join(f"{h:>8}" for h in head2))
    if md:
        lines.append("|" + " --- |" * len(head2))
    for row in ROWS:
        if row in table:
            cells2 = [row, *(table[row].get(u, "") for u in UP_ORDER)]
            lines.append("| " + " | ".join(cells2) + " |" if md else " ".join(f"{c:>8}" for c in cells2))
    return "\n".join(lines) + "\n"
