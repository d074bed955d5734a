"""The Swap-Hand tools: the default strategy's chart, the simulator and the swap-table measurement.

Runs are tiny (the real figures come from the commands in the docs); these
tests check that the tools drive the real engine, are reproducible from a
seed, and that the chart plays the textbook moves.
"""

from __future__ import annotations

import pytest

from controller.cards import parse_cards
from controller.games.blackjack_strategy import SWAP_TABLE, Chart, basic_action, should_swap
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.par_sheet import Cell, measure
from controller.games.swap_hand.simulation import Job, play
from controller.tools.children import croupier_command

ALL = ("hit", "stand", "double", "split")


@pytest.mark.parametrize(
    ("cards", "up", "chart", "action"),
    [
        ("TS 6D", 10, Chart(), "hit"),
        ("TS 6D", 6, Chart(), "stand"),
        ("TS 2D", 3, Chart(), "hit"),
        ("TS 2D", 4, Chart(), "stand"),
        ("6S 5D", 11, Chart(), "hit"),
        ("6S 5D", 11, Chart(hits_soft_17=True), "double"),
        ("AS 7D", 9, Chart(), "hit"),
        ("AS 7D", 2, Chart(), "stand"),
        ("AS 7D", 2, Chart(hits_soft_17=True), "double"),
        ("AS 8D", 6, Chart(hits_soft_17=True), "double"),
        ("8S 8D", 10, Chart(), "split"),
        ("TS TD", 6, Chart(), "stand"),
        ("9S 9D", 7, Chart(), "stand"),
        ("4S 4D", 5, Chart(), "split"),
        ("4S 4D", 5, Chart(double_after_split=False), "hit"),
        ("5S 5D", 9, Chart(), "double"),
    ],
)
def test_basic_strategy_chart(cards: str, up: int, chart: Chart, action: str) -> None:
    assert basic_action(parse_cards(cards), up, ALL, chart) == action


def test_chart_falls_back_when_a_double_is_not_offered() -> None:
    assert basic_action(parse_cards("6S 5D"), 6, ("hit", "stand"), Chart()) == "hit"
    assert basic_action(parse_cards("AS 7D"), 4, ("hit", "stand"), Chart()) == "stand"
    assert basic_action(parse_cards("AS AD"), 6, ("stand", "split"), Chart()) == "split"


def test_swap_table_shape() -> None:
    assert set(SWAP_TABLE) == {14, 15, 16, 17, 18}
    assert should_swap(16, 10) and not should_swap(18, 7) and not should_swap(13, 10)


def test_simulation_is_reproducible_and_stakes_per_mode() -> None:
    opts = SwapHandOptions()
    a = play(Job(300, 5, opts, classic=False))
    b = play(Job(300, 5, opts, classic=False))
    assert a == b and a.rounds == 300
    # Every round stakes an Odds-Win and it is either lost (-100) or paid: its squares are non-zero.
    assert a.squares["odds_win"] > 0
    classic = play(Job(300, 5, opts, classic=True))
    assert classic.sums["odds_win"] == 0 and classic.squares["odds_win"] == 0
    assert classic.sums["main"] == classic.sums["total"]


def test_swap_measurement_finds_a_clear_case() -> None:
    # Hard 16 against a ten: swapping is far better (about +0.45 a unit); 400 trials separate it.
    res = measure(Cell(16, 10, 400, 3, 6))
    assert res.diff > res.half > 0
    assert res.swap > res.keep


def test_math_with_rounds_is_the_simulated_house_edge_sheet_with_its_method(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from controller.cli import build_parser, main

    defaults = build_parser().parse_args(["math", "swap_hand"])
    assert defaults.rounds is None and not defaults.swap_table  # no option: the exact sheet
    assert main(["math", "swap_hand", "--rounds", "500", "--seed", "3", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "method: simulation (Monte Carlo) through the real engine, 500 rounds, seed 3" in out
    spots = ("main", "odds_win", "total")
    rows = {line.split()[0]: line for line in out.splitlines() if line and line.split()[0] in spots}
    assert set(rows) == {"main", "odds_win", "total"} and all("%" in r for r in rows.values())
    assert f"command: {croupier_command()} math swap_hand --rounds 500 --seed 3 --decks 6" in out
