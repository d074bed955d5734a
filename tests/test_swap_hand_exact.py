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

from controller.games.swap_hand.exact import SHARES, deal_values
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


@pytest.fixture(scope="module")
def check_values() -> dict[str, list[float]]:
    """The check deals' values, computed now (several seconds: shared by the tests below)."""
    return deal_values(SwapHandOptions(), CHECK_UP, CHECK_DEALS)


def test_the_engine_still_gives_the_stored_values_of_the_check_deals(
        check_values: dict[str, list[float]]) -> None:
    # Recomputing the whole sheet takes minutes; these seven deals (a few seconds) run every rule the
    # sheet uses (swap, split, double, the live Odds-Win, a hard 18 the two strategies play differently)
    # through the same code, so any change to the engine's figures shows here.
    fresh = check_values
    kept = stored().checks
    for strategy in ("basic", "optimal"):
        assert fresh[strategy] == pytest.approx(kept[strategy], rel=1e-9, abs=1e-12)
    assert fresh["optimal"] != pytest.approx(fresh["basic"])


def _counted(values: list[float], count: str, deal: tuple[int, int]) -> float:
    """One check deal's value for one count: deal_values lists the totals, then each count of SHARES."""
    n = len(CHECK_DEALS)
    return values[(1 + SHARES.index(count)) * n + CHECK_DEALS.index(deal)]


def test_the_main_moments_of_a_deal_are_exact(check_values: dict[str, list[float]]) -> None:
    for strategy in ("basic", "optimal"):
        v = check_values[strategy]
        # 5-6 against a five: both strategies double, never split, so every round nets +-2 or 0 a unit.
        eleven = {c: _counted(v, c, (5, 6)) for c in SHARES}
        main = v[CHECK_DEALS.index((5, 6))] - eleven["odds"]
        assert eleven["split_rounds"] == 0.0
        assert eleven["main_square"] == pytest.approx(eleven["main_square_unsplit"], abs=1e-15)
        assert eleven["main_square"] == pytest.approx(4 * (eleven["main_wins"] + eleven["main_losses"]))
        assert main == pytest.approx(2 * (eleven["main_wins"] - eleven["main_losses"]))
        assert 0 < 1 - eleven["main_wins"] - eleven["main_losses"] < 0.1  # a push on the dealer's 21
    # The best play splits 8-8 against a five every time: every round is a split round.
    optimal = check_values["optimal"]
    assert _counted(optimal, "split_rounds", (8, 8)) == pytest.approx(1.0)
    assert _counted(optimal, "main_wins", (8, 8)) == 0.0 == _counted(optimal, "main_square_unsplit", (8, 8))
    assert _counted(optimal, "main_square", (8, 8)) > 2  # two hands' squares at least


def test_the_main_spread_bounds_hold_together() -> None:
    for strategy, f in stored().main_spread().items():
        assert 0 < f["split_rounds"] < 0.05, strategy
        assert sum(f[k][0] for k in ("won", "pushed", "lost")) + f["split_rounds"] == pytest.approx(1.0)
        assert 0.4 < f["won"][0] < f["won"][1] < 0.5 and 0.4 < f["lost"][0] < f["lost"][1] < 0.5
        assert 1.0 < f["standard_deviation"][0] < f["standard_deviation"][1] < 1.3


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
    # The Main's shares of rounds won and lost lie in the sheet's bounds (Hoeffding again, on indicators).
    main = stored().main_spread()["basic"]
    slack = math.sqrt(math.log(2 / 0.001) / (2 * tally.rounds))
    for share, counted in (("won", tally.won["main"]), ("lost", tally.lost["main"])):
        low, high = main[share]
        simulated = counted / tally.rounds
        assert low - slack <= simulated <= high + slack, (share, simulated, low, high)


def test_math_with_no_options_prints_the_stored_exact_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["math", "swap_hand"]) == 0
    out = capsys.readouterr().out
    returns = stored().returns()
    assert f"{100 * (1 + returns['optimal']['main']):.4f} %" in out
    assert "Stored figures" in out and "Best first decision" in out and "Odds-Win (per unit staked" in out
    assert "Main (per unit staked on it" in out and "split rounds" in out
    assert main(["math", "swap_hand", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["returns"]["basic"]["odds_win"] == pytest.approx(returns["basic"]["odds_win"])
    assert data["rules"]["decks"] == 6 and data["chart"]["hard 16"]["10"].startswith("W")
    assert data["main"]["optimal"]["won"] == pytest.approx(stored().main_spread()["optimal"]["won"])
    # The stored figures' own file, as `make swap-hand-sheet` writes it after a --recompute.
    assert main(["math", "swap_hand", "--format", "stored"]) == 0
    assert capsys.readouterr().out == DEFAULTS_FILE.read_text()
    assert main(["math", "swap_hand", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# Swap-Hand Blackjack: exact par sheet")


def test_math_refuses_options_outside_the_table_rules(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["math", "swap_hand", "--decks", "9"]) == 2
    assert "decks" in capsys.readouterr().err
