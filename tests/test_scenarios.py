"""Every worked example in tests/scenarios must settle exactly as written by hand.

The expected lines were worked out from the rules, not from this engine; a
difference means the engine (or its reading of the rules) is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from controller.cli import main
from controller.games import GAMES

HERE = Path(__file__).parent / "scenarios"
FILES = sorted(HERE.glob("*.yaml"))
KEYS = ("round", "game", "settlements", "house_net", "credits")


def test_every_game_has_examples() -> None:
    games = {yaml.safe_load(f.read_text())["game"] for f in FILES}
    assert {"baccarat", "one_card_poker", "swap_hand", "two_way_winner"} <= games


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_example_settles_as_worked_by_hand(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = yaml.safe_load(path.read_text())["game"]
    code = main(["scenario", str(path), "--json"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    if game not in GAMES:
        # A game not built yet must be refused clearly, never half-run.
        assert code == 1
        assert out == [{"event": "error", "round": 0, "reason": out[0]["reason"]}]
        assert f"unknown game {game!r}" in out[0]["reason"]
        return
    assert code == 0, out[-1]
    settled = [e for e in out if e["event"] == "round_settled"]
    expected = [
        json.loads(x)
        for x in (HERE / f"{path.stem}.expected.jsonl").read_text().splitlines()
        if x.strip()
    ]
    assert len(settled) == len(expected)
    for got, want in zip(settled, expected, strict=True):
        assert {k: got[k] for k in KEYS} == {k: want[k] for k in KEYS}
        # Money is conserved in every round: seat nets plus the house's net are zero.
        assert sum(s["net"] for s in got["settlements"]) + got["house_net"] == 0
    # The settlement line is the round's last event and exactly one per round.
    rounds = [e["round"] for e in settled]
    assert rounds == list(range(1, len(expected) + 1))


def test_settlement_line_is_byte_exact(capsys: pytest.CaptureFixture[str]) -> None:
    """The round_settled line is printed in exactly the documented shape, byte for byte."""
    assert main(["scenario", str(HERE / "baccarat.yaml"), "--json"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if '"round_settled"' in x]
    expected = (HERE / "baccarat.expected.jsonl").read_text().splitlines()
    assert lines == expected
