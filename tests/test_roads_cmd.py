"""``croupier roads``: a scenario file (shoes split at shuffle), a journal, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from controller import inputs as I
from controller.cli import main
from controller.daemon.journal import Journal
from controller.events import Event
from controller.games.baccarat.rules import BaccaratOptions
from controller.scenario import load_scenario, round_inputs, run_scenario
from signage.roads import Result, compute
from signage.roads_cmd import shoe_text

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "tests" / "scenarios" / "baccarat.yaml"


def results_of(events: list[Event]) -> list[list[Result]]:
    shoes: list[list[Result]] = []
    for e in events:
        d = e.to_dict()
        if d["event"] == "new_shoe":
            shoes.append([])
        elif d["event"] == "round_result":
            shoes[-1].append(Result.from_record(d["result"]))
    return shoes


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["roads", *args, "--json"]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_scenario_file_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", str(SCENARIO)]) == 0
    text = capsys.readouterr().out
    for name in ("bead plate:", "big road:", "big eye boy:", "small road:", "cockroach pig:", "if banker:"):
        assert name in text
    shoes = results_of(list(run_scenario(load_scenario(SCENARIO))))
    out = run_json(capsys, str(SCENARIO))
    expected = [{"shoe": i, "rounds": len(rs), **compute(rs).to_dict()} for i, rs in enumerate(shoes, 1)]
    assert out == {"shoes": expected}


def test_shoes_split_at_shuffle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = yaml.safe_load(SCENARIO.read_text())
    raw["rounds"] = raw["rounds"][:5]
    raw["rounds"][3]["shuffle"] = True  # rounds 1-3 in shoe 1, 4-5 in shoe 2
    path = tmp_path / "two_shoes.yaml"
    path.write_text(yaml.safe_dump(raw))
    out = run_json(capsys, str(path))
    assert [s["rounds"] for s in out["shoes"]] == [3, 2]  # type: ignore[index]
    last = run_json(capsys, str(path), "--shoe", "-1")
    assert last["shoes"] == [out["shoes"][1]]  # type: ignore[index]
    assert main(["roads", str(path), "--shoe", "3"]) == 2
    assert "has shoe(s) 1, 2, no shoe 3" in capsys.readouterr().err


def test_a_journal_read_only_gives_the_same_roads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = load_scenario(SCENARIO)
    table = scenario.new_table()
    options = BaccaratOptions().model_dump(mode="json")
    journal = Journal.open(tmp_path / "state", table="t1", game="baccarat", options=options, fsync=False)
    events: list[Event] = []
    for seat, amount in sorted(scenario.spec.credits.items()):
        journal.append(I.CreditIn(seat, amount), "command", 0.0)
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(table, spec, n, first=n == 1):
            journal.append(inp, "command", 0.0)
            events += table.apply(inp)
    journal.close()
    expected = results_of(events)[-1]
    for where in (tmp_path / "state", tmp_path / "state" / "journal.sqlite3"):
        out = run_json(capsys, str(where), "--shoe", "-1")
        assert out["shoes"] == [{"shoe": 1, "rounds": len(expected), **compute(expected).to_dict()}]


def test_errors_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roads", str(ROOT / "tests" / "scenarios" / "swap_hand.yaml")]) == 2
    assert "roads are the Baccarat scoreboard; this is a swap_hand table" in capsys.readouterr().err
    assert main(["roads", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: cannot read" in capsys.readouterr().err
    assert main(["roads", str(tmp_path)]) == 2  # a directory with no journal
    assert "no journal here" in capsys.readouterr().err


def test_shoes_carry_the_tables_own_shoe_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pit boss reads the printout beside the signage and the journal: one number for one shoe.

    The table counts its ``new_shoe`` inputs (the snapshot's and each ``new_shoe`` event's ``shoe_number``,
    the signage's "Shoe N"); rounds dealt before any new shoe are its shoe 0.
    """
    scenario = load_scenario(SCENARIO)
    table = scenario.new_table()
    options = BaccaratOptions().model_dump(mode="json")
    journal = Journal.open(tmp_path / "state", table="t1", game="baccarat", options=options, fsync=False)
    for seat, amount in sorted(scenario.spec.credits.items()):
        journal.append(I.CreditIn(seat, amount), "command", 0.0)
    numbers: list[int] = []
    rounds = scenario.spec.rounds[:5]
    rounds[2] = rounds[2].model_copy(update={"shuffle": True})  # rounds 1-2 before any new shoe; 3-5: shoe 1
    for n, spec in enumerate(rounds, start=1):
        for inp in round_inputs(table, spec, n, first=False):
            journal.append(inp, "command", 0.0)
            numbers += [e.to_dict()["shoe_number"] for e in table.apply(inp) if e.event == "new_shoe"]
    journal.close()
    assert numbers == [1] and table.snapshot()["shoe_number"] == 1
    out = run_json(capsys, str(tmp_path / "state"))
    assert [(s["shoe"], s["rounds"]) for s in out["shoes"]] == [(0, 2), (1, 3)]  # type: ignore[index]
    one = run_json(capsys, str(tmp_path / "state"), "--shoe", "1")
    assert one["shoes"] == [out["shoes"][1]]  # type: ignore[index]
    assert main(["roads", str(tmp_path / "state"), "--shoe", "1"]) == 0
    assert "\nshoe 1: 3 rounds," in capsys.readouterr().out
    assert main(["roads", str(tmp_path / "state"), "--shoe", "2"]) == 2
    assert "no shoe 2" in capsys.readouterr().err


def test_a_shoe_of_one_round_says_round() -> None:
    assert shoe_text(1, [Result("banker")]).startswith("shoe 1: 1 round, Banker 1,")
    assert shoe_text(2, [Result("banker"), Result("tie")]).startswith("shoe 2: 2 rounds, ")
