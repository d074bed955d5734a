"""The full-size shipped tables: real and simulated twins on the same pin maps and expanders, every
seat wired, and each simulated one plays a seeded every-seat scenario through the daemon on its own
expander pins with the engine-only run's lines, byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from controller.daemon.config import TableConfig, load_table
from controller.scenario import run_scenario, scenario_from_data
from controller.tools.daemon_scenario import run_through_daemon
from controller.tools.table_scenario import panel_seats, table_scenario

TABLES = Path(__file__).resolve().parents[1] / "firmware_configs" / "tables"
FULL = ("baccarat_7seat", "one_card_poker_6seat", "swap_hand_7seat", "two_way_winner_6seat")


@pytest.mark.parametrize("name", FULL)
def test_the_real_table_and_its_simulated_twin_have_the_same_wiring(name: str) -> None:
    real, sim = load_table(TABLES / f"{name}.yaml"), load_table(TABLES / f"{name}_sim.yaml")
    assert real.spec.gpio is not None and sim.spec.gpio is not None
    assert [m for _, m in real.panels] == [m for _, m in sim.panels]
    assert real.spec.gpio.expanders == sim.spec.gpio.expanders
    assert (real.spec.gpio.backend, sim.spec.gpio.backend) == ("lgpio", "mock")
    assert real.shoe_profile is not None and real.shoe_profile.port == "/dev/croupier-shoe"
    # Every seat has a panel, on expander lines only (the header carries the dealer panel and tower).
    assert panel_seats(real) == list(range(1, real.limits.seats + 1))
    seat_chips = {chip for _, m in real.panels if m.seats for _, chip, _ in m.lines()}
    assert "header" not in seat_chips
    assert len(seat_chips) == len(real.spec.gpio.expanders)


def engine_lines(scenario: dict[str, object]) -> str:
    loaded = scenario_from_data(scenario)
    return "".join(json.dumps(e.to_dict()) + "\n" for e in run_scenario(loaded) if e.event == "round_settled")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", FULL)
def test_every_seat_plays_through_the_daemon_on_the_tables_own_expander_pins(name: str) -> None:
    config: TableConfig = load_table(TABLES / f"{name}_sim.yaml")
    scenario = yaml.safe_load(yaml.safe_dump(table_scenario(config, 3, seed=7)))
    players = {seat for spec in scenario["rounds"] for seat in spec["bets"]}
    dp = {spec.get("dp") for spec in scenario["rounds"]} - {None}
    assert players | dp == set(range(1, config.limits.seats + 1))  # every seat is active
    out = io.StringIO()
    run_through_daemon(scenario_from_data(scenario), name, out, settled_only=True, table=config)
    assert out.getvalue() == engine_lines(scenario)
    assert out.getvalue().count("round_settled") == 3


@pytest.mark.parametrize("name", FULL)
def test_docs_wiring_holds_each_tables_wiring_tables_as_its_pin_maps_say(name: str) -> None:
    from controller.tools.wiring_tables import wiring_markdown

    doc = (Path(__file__).resolve().parents[1] / "docs" / "wiring.md").read_text(encoding="utf-8")
    assert wiring_markdown(load_table(TABLES / f"{name}.yaml")) in doc, (
        f"regenerate: .venv/bin/python -m controller.tools.wiring_tables firmware_configs/tables/{name}.yaml")
