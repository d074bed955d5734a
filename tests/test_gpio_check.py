"""``croupier gpio check``: the technician's wiring test, on the simulated world (docs/gpio-check.md).

The shipped simulated Baccarat table (four pin maps, each a header of mock pins as in the daemon).
A person is played by a function answering the prompts as printed, acting on the simulated pins
of the devices as this test wired them; the command itself runs with ``--sim``, its own simulated
hands, on the correct wiring and with two pairs swapped. The full-size tables (the dealer panel on
the header, each seat on its own simulated MCP23017) pass, and a swap on one expander or across two
chips is reported by chip and line.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from controller.cli import main
from controller.daemon.config import load_table
from controller.tools.gpio_check import Person, open_backends, simulated_wiring
from controller.tools.wiring_check import Line, WiringCheck, lines_of, report

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "firmware_configs/tables/baccarat_sim.yaml"
FULL_SIZE = sorted((ROOT / "firmware_configs/tables").glob("*_[67]seat_sim.yaml"))
pytestmark = pytest.mark.timeout(60)


def test_a_person_answering_the_prompts_finds_every_kind_of_mistake() -> None:
    config = load_table(TABLE)
    lines = lines_of(config.panels)
    by_name = {line.name: line for line in lines}
    assert len(by_name) == len(lines)  # every line has a name of its own
    swaps = ["0:seats.1.buttons.bet_up.pin,0:seats.1.buttons.bet_down.pin", "0:tower.idle,0:tower.fault"]
    wiring = simulated_wiring(lines, swaps)
    backends, pins = open_backends(config, sim=True)
    dead = by_name["seat 2 banker chip sensor"]  # its wire is cut: nothing changes when covered
    shorted = (by_name["seat 3 player chip sensor"], by_name["seat 3 tie chip sensor"])  # bridged wires
    asked: list[str] = []

    def person(prompt: str) -> str:
        """Reads the prompt as printed, does what it says to the device it names, answers."""
        asked.append(prompt)
        device = next(line for name, line in by_name.items() if f" {name}" in f" {prompt}")
        wire: Line = wiring[device]
        if prompt.startswith("Is "):
            lit = pins[wire.map].level(wire.spec.pin, wire.chip) == (device.spec.active == "high")
            return "s" if device.name == "tower in_play lamp" else ("y" if lit else "n")
        if device == dead:
            return ""
        touched = [wire, wiring[shorted[1]]] if device == shorted[0] else [wire]
        for level in (device.spec.active == "high", device.spec.active != "high"):
            for line in touched:
                pins[line.map].drive(line.spec.pin, level, line.chip)
        return ""

    check = WiringCheck(lines, backends)
    check.open()
    try:
        findings = {f.line.name: f for f in check.run(Person(person), say=lambda _text: None)}
    finally:
        check.close()
    assert len(asked) == len(lines)
    wrong = {name: (f.verdict, f.detail) for name, f in findings.items() if f.verdict != "ok"}
    assert sorted(wrong) == sorted(["seat 1 bet_up button", "seat 1 bet_down button", "tower idle lamp",
                                    "tower fault lamp", "tower in_play lamp", "seat 2 banker chip sensor",
                                    "seat 3 player chip sensor"]), wrong
    assert "seat 1 bet_down button (GPIO 27) changed instead" in wrong["seat 1 bet_up button"][1]
    assert "seat 1 bet_up button (GPIO 4) changed instead" in wrong["seat 1 bet_down button"][1]
    assert wrong["tower idle lamp"][0] == "miswired" and "did not light" in wrong["tower idle lamp"][1]
    assert wrong["tower in_play lamp"][0] == "skipped"
    assert "nothing changed: no contact on GPIO 26" in wrong["seat 2 banker chip sensor"][1]
    assert "seat 3 tie chip sensor (GPIO 20) changed too" in wrong["seat 3 player chip sensor"][1]
    text = report("t", list(findings.values()))
    assert f"{len(lines)} lines: {len(lines) - 7} ok, 6 miswired, 1 skipped" in text


def test_the_command_on_the_simulated_world_passes_and_reports_a_swap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gpio", "check", str(TABLE), "--sim"]) == 0
    out = capsys.readouterr().out
    assert "74 lines: 74 ok, 0 miswired, 0 skipped" in out and "MISWIRED" not in out
    written = tmp_path / "wiring.txt"
    assert main(["gpio", "check", str(TABLE), "--sim", "--report", str(written), "--sim-swap",
                 "2:seats.3.buttons.repeat_bet.pin,2:seats.3.spots.banker.sensor"]) == 1
    text = written.read_text()
    assert stat.S_IMODE(written.stat().st_mode) == 0o600 and text in capsys.readouterr().out
    miswired = _miswired(text)
    names = [line.split(" [")[0] for line in miswired]
    assert names == ["- seat 3 repeat_bet button", "- seat 3 banker chip sensor"]
    assert "seat 3 banker chip sensor (GPIO 26) changed instead" in miswired[0]


def _miswired(text: str) -> list[str]:
    """The report's MISWIRED lines."""
    return text.split("MISWIRED\n", 1)[1].split("\n\n", 1)[0].splitlines()


@pytest.mark.parametrize("table", FULL_SIZE, ids=lambda path: path.stem)
def test_every_full_size_table_passes_on_its_simulated_expanders(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(FULL_SIZE) == 4
    assert main(["gpio", "check", str(table), "--sim"]) == 0
    out = capsys.readouterr().out
    assert " ok, 0 miswired, 0 skipped" in out and "MISWIRED" not in out
    # every seat's line is named by its expander's chip and line, the dealer panel's by its header GPIO
    every = out.split("EVERY LINE\n", 1)[1].splitlines()
    seats = [row for row in every if " seat " in row]
    assert seats and all(re.search(r", (0x2\d|s\d_\w+) line \d+\]$", row) for row in seats), seats
    assert all(re.search(r", GPIO \d+\]$", row) for row in every if row not in seats)


def test_a_swap_on_one_expander_and_across_two_chips_is_reported_by_chip_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table, written = FULL_SIZE[0], tmp_path / "wiring.txt"
    assert table.name == "baccarat_7seat_sim.yaml"
    on_one_expander = "2:seats.2.buttons.bet_up.pin,2:seats.2.spots.banker.sensor"  # 0x21 lines 0 and 8
    across_chips = "3:seats.3.spots.tie.lamp,0:tower.fault"  # 0x22 line 15 and a header GPIO
    across_expanders = "5:seats.5.buttons.add_5.pin,7:seats.7.buttons.clear_bet.pin"  # 0x24, 0x26
    assert main(["gpio", "check", str(table), "--sim", "--report", str(written),
                 "--sim-swap", on_one_expander,
                 "--sim-swap", across_chips, "--sim-swap", across_expanders]) == 1
    text = written.read_text()
    assert text in capsys.readouterr().out
    miswired = _miswired(text)
    assert [line.split(" [")[0] for line in miswired] == [
        "- tower fault lamp", "- seat 3 tie lamp", "- seat 2 bet_up button", "- seat 2 banker chip sensor",
        "- seat 5 add_5 button", "- seat 7 clear_bet button"]
    assert "[map 0: tower.fault, GPIO 9]: driving GPIO 9 did not light" in miswired[0]
    assert "[map 3: seats.3.spots.tie.lamp, 0x22 line 15]: driving 0x22 line 15 did not light" in miswired[1]
    assert "seat 2 banker chip sensor (0x21 line 8) changed instead" in miswired[2]
    assert "seat 2 bet_up button (0x21 line 0) changed instead" in miswired[3]
    assert "seat 7 clear_bet button (0x26 line 6) changed instead" in miswired[4]
    assert "seat 5 add_5 button (0x24 line 3) changed instead" in miswired[5]


def test_what_cannot_be_checked_is_refused_naming_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gpio", "check", str(TABLE)]) == 2  # mock pins with nobody to press them
    assert "gpio.backend is mock" in capsys.readouterr().err
    for swap, why in (("0:tower.idle", "two lines"), ("9:nope,0:tower.idle", "two lines"),
                      ("0:tower.idle,0:seats.1.buttons.add_5.pin", "a lamp and an input")):
        assert main(["gpio", "check", str(TABLE), "--sim", "--sim-swap", swap]) == 2
        assert why in capsys.readouterr().err
    bare = tmp_path / "bare.yaml"
    bare.write_text("table: bare\ngame: baccarat\nstate_dir: /tmp/x\n")
    assert main(["gpio", "check", str(bare), "--sim"]) == 2
    assert "no panels to check" in capsys.readouterr().err
    on_a_pi = tmp_path / "pi.yaml"  # this machine is no Pi: the real backend cannot open
    on_a_pi.write_text(f"table: pi\ngame: baccarat\nstate_dir: /tmp/x\ngpio: {{backend: rpigpio}}\n"
                       f"panels: [{ROOT / 'firmware_configs/panels/baccarat.yaml'}]\n")
    assert main(["gpio", "check", str(on_a_pi)]) == 4
    assert "cannot open the pins: pin factory 'rpigpio'" in capsys.readouterr().err
