"""Every scenario file, played through the daemon, prints the engine-only run's lines byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from controller.games import GAMES
from controller.scenario import ScenarioError, load_scenario, run_scenario
from controller.tools.daemon_scenario import run_through_daemon

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


def _registered(path: Path) -> bool:
    import yaml

    return bool(yaml.safe_load(path.read_text())["game"] in GAMES)


def engine_lines(path: Path) -> tuple[str, str | None]:
    out = io.StringIO()
    try:
        for event in run_scenario(load_scenario(path)):
            out.write(json.dumps(event.to_dict()) + "\n")
    except ScenarioError as err:
        return out.getvalue(), err.reason
    return out.getvalue(), None


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", [p for p in SCENARIOS if _registered(p)], ids=lambda p: p.stem)
def test_through_daemon_matches_engine(path: Path) -> None:
    want, want_error = engine_lines(path)
    out = io.StringIO()
    error = None
    try:
        run_through_daemon(load_scenario(path), str(path), out, settled_only=False)
    except ScenarioError as err:
        error = err.reason
    assert out.getvalue() == want
    assert error == want_error
    settled = [line for line in want.splitlines() if '"round_settled"' in line]
    assert settled, "a scenario settles rounds"


def test_cli_settled_only_lines_identical(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    path = str(Path(__file__).parent / "scenarios" / "baccarat.yaml")
    assert main(["scenario", path, "--settled-only"]) == 0
    engine = capsys.readouterr().out
    assert main(["scenario", path, "--settled-only", "--through-daemon"]) == 0
    assert capsys.readouterr().out == engine


@pytest.mark.timeout(120)
def test_a_seat_listed_with_no_credits_is_seated_through_the_daemon_too(tmp_path: Path) -> None:
    """The daemon takes no credit_in of 0, so the run through it refused the file at round 0; the engine
    seats the seat, the Designated Player rotates onto it, and the round it cannot cover is not dealt."""
    path = tmp_path / "zero.yaml"
    path.write_text("game: one_card_poker\noptions: {dp_rotation: rotate}\n"
                    "credits: {1: 10000, 2: 0, 3: 10000}\n"
                    "rounds:\n  - dp: 1\n    bets: {3: {primary: 500}}\n    cards: [~2C, KD, 3S]\n"
                    "  - bets: {3: {primary: 500}}\n    cards: []\n")
    want, want_error = engine_lines(path)
    assert want_error is None and want.count('"round_settled"') == 2
    out = io.StringIO()
    run_through_daemon(load_scenario(path), str(path), out, settled_only=False)
    assert out.getvalue() == want


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("bets", "why"), [
    ("{1: {banker: 1000}, 9: {player: 500}}", "no seat 9: this table has seats 1..7"),
    ("{1: {bankr: 1000}}", "baccarat has no spot 'bankr'"),
])
def test_a_bet_on_a_seat_or_spot_the_table_lacks_fails_the_run_through_the_daemon_with_its_reason(
        tmp_path: Path, bets: str, why: str) -> None:
    """A review (2026-12-07): the run through the daemon looked for the seat's panel first and stopped on a
    KeyError traceback; the engine run fails the file naming the seat or spot. Both fail with it now."""
    path = tmp_path / "bad.yaml"
    path.write_text(f"game: baccarat\ncredits: {{1: 100000}}\nrounds:\n  - bets: {bets}\n"
                    "    cards: [2H, KS, 9C, KD]\n")
    _, engine_error = engine_lines(path)
    assert engine_error is not None and why in engine_error
    with pytest.raises(ScenarioError, match=why):
        run_through_daemon(load_scenario(path), str(path), io.StringIO(), settled_only=False)
