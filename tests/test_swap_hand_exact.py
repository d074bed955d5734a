"""The exact Swap-Hand sheet: the stored figures are current, and the simulator agrees with them.

The whole default sheet takes minutes on two cores, so the staleness test
recomputes the stored values of a few deals (see CHECK_DEALS) instead; the
whole sheet is `croupier math swap_hand --recompute`. The simulation
cross-check is a short run through the real engine: its 99.9 % interval
must contain the exact figure of the same (basic) strategy.
"""

from __future__ import annotations

import json
import math

import pytest

from controller.games.swap_hand.exact import deal_values
from controller.games.swap_hand.exact_sheet import CHECK_DEALS, CHECK_UP, DEFAULTS_FILE, Sheet, cached, chart
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import STAKE
from controller.games.swap_hand.simulation import Job as SimJob
from controller.games.swap_hand.simulation import play

#: z of a two-sided 99.9 % normal interval.
Z999 = 3.2905


def stored() -> Sheet:
    return Sheet.from_json(json.loads(DEFAULTS_FILE.read_text()))


def test_the_stored_sheet_is_for_the_table_defaults_and_every_up_card() -> None:
    sheet = cached(SwapHandOptions())
    assert sheet is not None
    assert sorted(sheet.per_up) == list(range(1, 11))
    assert cached(SwapHandOptions(decks=2)) is None


def test_the_engine_still_gives_the_stored_values_of_the_check_deals() -> None:
    # Recomputing the whole sheet takes minutes; these seven deals (a few seconds) run every rule the
    # sheet uses (swap, split, double, the live Odds-Win, a hard 18 the two strategies play differently)
    # through the same code, so any change to the engine's figures shows here.
    fresh = deal_values(SwapHandOptions(), CHECK_UP, CHECK_DEALS)
    kept = stored().checks
    for strategy in ("basic", "optimal"):
        assert fresh[strategy] == pytest.approx(kept[strategy], rel=1e-9, abs=1e-12)
    assert fresh["optimal"] != pytest.approx(fresh["basic"])


def test_the_best_strategy_is_never_worse_and_swaps_stiffs() -> None:
    sheet = stored()
    returns = sheet.returns()
    assert returns["optimal"]["both"] > returns["basic"]["both"]
    table = chart(sheet)
    assert table["hard 16"][10].startswith("W")  # a stiff 16 against a ten is thrown away
    assert table["hard 11"][6].startswith("D")


def test_a_short_simulation_contains_the_exact_basic_strategy_figures() -> None:
    options = SwapHandOptions()
    returns = stored().returns()["basic"]
    tally = play(SimJob(20_000, 5, options, False))
    for spot, stake, exact in (("main", STAKE, returns["main"]),
                               ("odds_win", STAKE // 2, returns["odds_win"])):
        n = tally.rounds
        mean = tally.sums[spot] / n
        sd = math.sqrt(tally.squares[spot] / n - mean * mean)
        half = Z999 * sd / math.sqrt(n)
        assert mean - half <= exact * stake <= mean + half, (spot, mean / stake, half / stake, exact)
    # The Odds-Win's second moment (its net is +2, 0 or -1 a unit, so its square lies in [0, 4]): Hoeffding's
    # bound at 99.9 % holds whatever the distribution.
    spread = stored().odds_win_spread()["basic"]
    second = 4 * spread["hit_frequency"] + spread["loss_frequency"]
    simulated = tally.squares["odds_win"] / tally.rounds / (STAKE // 2) ** 2
    assert abs(simulated - second) <= 4 * math.sqrt(math.log(2 / 0.001) / (2 * tally.rounds))
    assert 0 < spread["hit_frequency"] < 0.5 < spread["hit_frequency"] + spread["loss_frequency"] <= 1


def test_math_with_no_options_prints_the_stored_exact_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["math", "swap_hand"]) == 0
    out = capsys.readouterr().out
    returns = stored().returns()
    assert f"{100 * (1 + returns['optimal']['main']):.4f} %" in out
    assert "Stored figures" in out and "Best first decision" in out and "Odds-Win (per unit staked" in out
    assert main(["math", "swap_hand", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["returns"]["basic"]["odds_win"] == pytest.approx(returns["basic"]["odds_win"])
    assert data["rules"]["decks"] == 6 and data["chart"]["hard 16"]["10"].startswith("W")
    assert main(["math", "swap_hand", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# Swap-Hand Blackjack: exact par sheet")


def test_math_refuses_options_outside_the_table_rules(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["math", "swap_hand", "--decks", "9"]) == 2
    assert "decks" in capsys.readouterr().err
