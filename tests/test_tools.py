"""The command-line tools: exact par sheet, the simulation through the engine, the demo."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.cli import main
from controller.games.baccarat.par_sheet import outcome_weights, par_sheet
from controller.games.baccarat.simulation import play
from controller.money import Odds


def test_par_sheet_reproduces_the_published_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "baccarat"]) == 0
    out = capsys.readouterr().out
    for figure in ("0.458597", "0.446247", "0.095156", "1.0579 %", "1.2351 %", "4.8440 %", "14.3596 %"):
        assert figure in out
    assert main(["math", "baccarat", "--decks", "6"]) == 0
    out = capsys.readouterr().out
    for figure in ("0.458653", "0.446279", "0.095069"):
        assert figure in out


def test_one_deck_enumeration_is_consistent() -> None:
    b, p, t, total = outcome_weights(1)
    assert b + p + t == total == 52 * 51 * 50 * 49 * 48 * 47
    sheet = par_sheet(1, Odds(9, 1), Odds(19, 20))
    assert sheet["banker"] + sheet["player"] + sheet["tie"] == 1
    assert sheet["ev_player"] == sheet["player"] - sheet["banker"]
    assert isinstance(sheet["ev_banker"], Fraction)


@pytest.mark.parametrize("args", [["--decks", "9"], ["--tie-pays", "7:1"], ["--tie-pays", "x"]])
def test_par_sheet_refuses_bad_options(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "baccarat", *args]) == 2
    assert "croupier math baccarat" in capsys.readouterr().out


def test_simulation_is_seeded_and_conserves_money() -> None:
    a = play(3000, seed=7, decks=8, tie_pays="9:1")
    b = play(3000, seed=7, decks=8, tie_pays="9:1")
    c = play(3000, seed=8, decks=8, tie_pays="9:1")
    assert a == b
    assert a != c
    assert a.rounds == 3000
    # Every round's Player and Banker nets are opposite unless a tie pushes both.
    assert a.sums["player"] + a.sums["banker"] <= 0


def test_simulation_brackets_the_exact_returns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "baccarat", "--rounds", "20000", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count(" yes") == 3, out
