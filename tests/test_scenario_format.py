"""Scenario files are read strictly: every error names the key or the round, and exits non-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main

BASE = """\
game: baccarat
credits: {1: 10000}
rounds:
  - bets: {1: {player: 100}}
    cards: [9C, 9D, KH, KS]
"""


def run(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    code = main(["scenario", str(path), "--json"])
    return code, [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_valid_file_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, events = run(tmp_path, BASE, capsys)
    assert code == 0
    assert events[-1]["event"] == "round_settled"
    # Player 9C 9D = natural 8 against Banker 0.
    assert events[-1]["settlements"] == [{"seat": 1, "spot": "player", "stake": 100, "net": 100}]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("game: baccarat", "game: baccarat\ncolour: red"), "colour: unknown key"),
        (("rounds:", "options: {tie_pays: 8:1}\nrounds:"), "options.tie_pays: odds must be a quoted string"),
        (("rounds:", "options: {tie_pays: '7:1'}\nrounds:"), "options.tie_pays: must be one of"),
        (("rounds:", "options: {decks: 9}\nrounds:"), "options.decks"),
        (("rounds:", "options: {deck: 6}\nrounds:"), "options.deck: unknown key"),
        (("rounds:", "table: {seats: 7, limit: 5}\nrounds:"), "table.limit: unknown key"),
        (("cards:", "burns: []\n    cards:"), "rounds.0.burns: unknown key"),
        (("[9C, 9D, KH, KS]", "[9C, 9D, KH, XX]"), "not a card: 'XX'"),
        (("game: baccarat", "game: roulette"), "unknown game 'roulette'"),
    ],
)
def test_file_errors_name_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], reason: str
) -> None:
    code, events = run(tmp_path, BASE.replace(*edit), capsys)
    assert code == 1
    assert len(events) == 1 and events[0]["event"] == "error" and events[0]["round"] == 0
    assert reason in str(events[0]["reason"]), events[0]["reason"]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("[9C, 9D, KH, KS]", "[9C, 9D, KH]"), "too few cards: a card for banker is due"),
        (("[9C, 9D, KH, KS]", "[9C, 9D, KH, KS, 2C]"), "too many cards: 2C"),
        (("cards:", "decisions: [[1, hit]]\n    cards:"), "decisions left after the round settled"),
        (("{1: {player: 100}}", "{1: {player: 150}}"), "not a multiple of the unit"),
        (("{1: {player: 100}}", "{1: {player: 100, banker: 100}}"), "Player and Banker"),
        (("{1: {player: 100}}", "{2: {player: 100}}"), "not seated"),
    ],
)
def test_round_errors_name_the_round_and_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], reason: str
) -> None:
    text = BASE.replace(*edit) + "  - bets: {1: {player: 100}}\n    cards: [2C, 3C, 9H, KH]\n"
    code, events = run(tmp_path, text, capsys)
    assert code == 1
    assert events[-1]["event"] == "error" and events[-1]["round"] == 1
    assert reason in str(events[-1]["reason"]), events[-1]["reason"]
    # Nothing after the error is played: round 2 never settles. (Surplus cards or
    # decisions are found once round 1 has settled, so its line may stand before the error.)
    assert not [e for e in events if e.get("round") == 2]


def test_impossible_card_in_a_scenario_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = BASE.replace("credits:", "options: {decks: 1}\ncredits:")
    text = text.replace("[9C, 9D, KH, KS]", "[9C, 9C, KH, KS]")
    code, events = run(tmp_path, text, capsys)
    assert code == 1
    assert events[-1]["reason"] == "tilt (impossible_card): 9C seen 2 times in a 1-deck shoe"


def test_missing_file_and_bad_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(tmp_path / "nope.yaml"), "--json"]) == 1
    assert "cannot read" in capsys.readouterr().out
    code, events = run(tmp_path, "game: [baccarat\n", capsys)
    assert code == 1 and "not valid YAML" in str(events[0]["reason"])


def test_scenarios_md_baccarat_example_prints_the_documented_line(tmp_path: Path) -> None:
    """The example of docs/scenarios.md, run as a user would, through the installed command."""
    path = tmp_path / "example.yaml"
    path.write_text(
        "game: baccarat\noptions: {decks: 8}\ntable: {seats: 7, unit: 100, min_bet: 100, max_bet: 1000000}\n"
        "credits: {1: 100000, 2: 50000}\nrounds:\n  - shuffle: true\n"
        "    bets: {1: {banker: 1000, tie: 200}, 2: {player: 500}}\n    cards: [2H, KS, 9C, KD]\n"
        "    decisions: []\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "scenario", str(path), "--json"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()
    assert out[-1] == (
        '{"event": "round_settled", "round": 1, "game": "baccarat", "settlements": '
        '[{"seat": 1, "spot": "banker", "stake": 1000, "net": 950}, '
        '{"seat": 1, "spot": "tie", "stake": 200, "net": -200}, '
        '{"seat": 2, "spot": "player", "stake": 500, "net": -500}], '
        '"house_net": -250, "credits": {"1": 100750, "2": 49500}}'
    )
