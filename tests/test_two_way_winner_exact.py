"""The exact 2WayWinner sheet: the stored figures are current, and the simulator agrees with them.

Enumerating every showdown takes minutes of CPU, so the staleness test
recomputes the stored check values instead (a few blackjack starts through
the exact engine, two showdown counts over a spread of run-outs); the
whole sheet is `croupier math two_way_winner --recompute`. The simulation
cross-check is a short run through the real engine with the default
policy: its 99.9 % interval must contain the exact figure of that policy.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from controller.cards import DECK
from controller.cli import main
from controller.games.blackjack import is_natural
from controller.games.two_way_winner.exact import blackjack_values, policy_bets
from controller.games.two_way_winner.exact_sheet import (
    CHECK_SHOWDOWNS,
    CHECK_STARTS,
    DEFAULTS_FILE,
    ExactSheet,
    cached,
    chart,
    class_order,
    figures,
    showdown_check,
)
from controller.games.two_way_winner.policy import check_or_bet
from controller.games.two_way_winner.showdown_exact import PAIR_CARDS, PAIR_INDEX
from controller.games.two_way_winner.simulation import ANTE, play

#: z of a two-sided 99.9 % normal interval.
Z999 = 3.2905


def stored() -> ExactSheet:
    return ExactSheet.from_json(json.loads(DEFAULTS_FILE.read_text()))


def test_the_stored_sheet_is_for_the_default_table() -> None:
    assert cached("6:5") is not None and cached("3:2") is None
    sheet = stored()
    for s in sheet.sheets.values():
        assert sum(s.choices.values()) == pytest.approx(1.0, abs=1e-12)
        assert sum(s.shares.values()) == pytest.approx(s.net, abs=1e-12)  # the wagers make up the round


def test_the_engine_still_gives_the_stored_check_values() -> None:
    checks = stored().checks
    values = blackjack_values("optimal", CHECK_STARTS)
    for start, expected in checks["blackjack"]:
        got = values[tuple(start)]
        assert {k: got[k] for k in expected} == pytest.approx(expected, abs=1e-12), start
    assert [[list(seat), list(shown), list(showdown_check(seat, shown))] for seat, shown in CHECK_SHOWDOWNS] \
        == checks["showdowns"]
    assert [list(s) for s in CHECK_STARTS] == [s for s, _ in checks["blackjack"]]


def test_the_optimal_strategy_is_never_worse_and_its_chart_is_whole() -> None:
    sheets = stored().sheets
    assert sheets["optimal"].net > sheets["policy"].net
    table = chart(sheets["optimal"])
    assert sorted(table) == sorted(class_order()) and all(len(row) == 13 for row in table.values())
    assert table["AA"]["6"] == "P" and not any(table[c]["A"].startswith("R") for c in table)  # not offered
    assert table["AKo"]["6"] == "N" and table["AKs"]["6"] == "N*"  # suited, some keep it for poker
    assert table["T9o"]["6"] == "B" and table["84o"]["T"] == "R" and table["T9o"]["9"] == "P"  # 9s paired


def test_the_exact_policy_bets_as_the_simulator_does() -> None:
    natural = np.array([is_natural([DECK[a], DECK[b]]) for a, b in PAIR_CARDS.tolist()])[:, None, None]
    bets = policy_bets(PAIR_CARDS // 4, natural)
    rng = np.random.default_rng(5)
    for _ in range(3000):
        a, b, up, hole = (DECK[int(i)] for i in rng.choice(52, 4, replace=False))
        action, amount = check_or_bet([a, b], [up, hole], is_natural([a, b]), 1, ("check", "bet"), 2)
        expected = 0 if action == "check" else amount or 1
        assert bets[PAIR_INDEX[a.index, b.index], up.index, hole.index] == expected, (a, b, up, hole)


def test_a_short_simulation_contains_the_exact_policy_figures() -> None:
    exact = figures(stored().sheets["policy"])
    tally = play(4000, 11, 1, "6:5", False, progress=False)
    n = tally.rounds
    mean = -tally.house / n / (2 * ANTE)
    sd = math.sqrt(tally.house_sq / n / (2 * ANTE) ** 2 - mean * mean)
    half = Z999 * sd / math.sqrt(n)
    assert mean - half <= exact["net_per_round_in_antes"] / 2 <= mean + half, (mean, half, exact)
    # The round's second moment: its net lies in -5..+5 antes, so Hoeffding's bound at 99.9 % holds.
    simulated = tally.house_sq / n / ANTE ** 2
    net = exact["net_per_round_in_antes"]
    low, high = (s ** 2 + net ** 2 for s in exact["standard_deviation_per_round_in_antes"])
    slack = 25 * math.sqrt(math.log(2 / 0.001) / (2 * n))
    assert low - slack <= simulated <= high + slack, (simulated, low, high)


def test_math_prints_the_stored_exact_game_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "two_way_winner"]) == 0
    out = capsys.readouterr().out
    edge = figures(stored().sheets["optimal"])["house_edge_per_total_ante"]
    assert "Dealer Bonus (exact)" in out and "2WayWinner: exact par sheet" in out
    assert f"{100 * edge:.4f} %" in out and "Stored figures" in out and "The optimal choice" in out
    assert main(["math", "two_way_winner", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["strategies"]["optimal"]["house_edge_per_total_ante"] == pytest.approx(edge)
    assert data["rules"] == {"decks": 1, "natural_pays": "6:5"} and data["chart"]["AA"]["2"] == "P"
    assert main(["math", "two_way_winner", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# 2WayWinner: exact par sheet")
