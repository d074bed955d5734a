"""Each shipped real table file, installed as docs/install.md says, on a machine without its hardware.

Issue 25's acceptance: following docs/install.md on a copy of a real table
file, the only refusals are about missing hardware, each naming the device.
This machine has no GPIO chip, no I2C expander and no shoe, so starting a copy
(renamed, its state dir and key folder where the unit puts them, under a
temporary root) must stop on the first missing device by name, with no
traceback; with the pins simulated the next one, the shoe, is named. The key
folder the file names is the one the unit's ``--keys`` gives, so ``croupier
keys ... --table FILE`` on the Pi reaches the folder the daemon reads.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_daemon_support import free_port_base

from controller.cli import main
from controller.daemon.config import load_table

ROOT = Path(__file__).resolve().parents[1]
REAL = sorted(p for p in (ROOT / "firmware_configs/tables").glob("*.yaml") if "sim" not in p.stem)
UNIT = ROOT / "systemd/croupier@.service"
pytestmark = pytest.mark.timeout(60)


def install_copy(real: Path, root: Path, name: str = "table_1", **changes: object) -> Path:
    """``real`` copied as docs/install.md says: under its new name, its state dir and keys where the unit
    has them (below ``root`` here), the rest as shipped but for free ports (tests may run side by side);
    ``changes``: more top-level keys changed."""
    data = yaml.safe_load(real.read_text())
    base = free_port_base(3)  # pub, snapshot, command
    ports = {"pub": base, "snapshot": base + 1, "command": base + 2}
    data.update({"table": name, "state_dir": str(root / "var/lib/croupier" / name),
                 "security": {"keys": str(keys_of(root, name))},
                 "zeromq": {k: f"tcp://127.0.0.1:{port}" for k, port in ports.items()}, **changes})
    copy = root / "etc/croupier/tables" / f"{name}.yaml"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["keys", "server", "--keys", str(keys_of(root, name))]) == 0
    return copy


def keys_of(root: Path, name: str) -> Path:
    return root / "etc/croupier/keys" / name


def test_the_real_tables_are_the_four_full_size_ones_and_name_the_units_folders() -> None:
    assert [p.stem for p in REAL] == ["baccarat_7seat", "one_card_poker_6seat", "swap_hand_7seat",
                                      "two_way_winner_6seat"]
    exec_start = next(line for line in UNIT.read_text().splitlines() if line.startswith("ExecStart="))
    state = re.search(r"--state-dir (\S+)", exec_start)
    keys = re.search(r"--keys (\S+)", exec_start)
    assert state is not None and keys is not None
    for real in REAL:  # installed under its own name, the unit instance %i is the file's name
        config = load_table(real)
        assert config.state_dir == Path(state.group(1).replace("%i", real.stem))
        assert config.key_folder() == Path(keys.group(1).replace("%i", real.stem))


def test_keys_authorize_by_the_table_file_reaches_the_folder_the_daemon_reads(tmp_path: Path) -> None:
    copy = install_copy(REAL[0], tmp_path)
    public = tmp_path / "alice.key"
    assert main(["keys", "request", "alice", "--out", str(tmp_path)]) == 0
    assert main(["keys", "authorize", str(public), "--name", "alice", "--role", "operator",
                 "--table", str(copy)]) == 0
    assert (keys_of(tmp_path, "table_1") / "authorized/alice.key").is_file()


def test_a_daemon_given_another_key_folder_than_its_file_names_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy = install_copy(REAL[0], tmp_path, security={})  # security.keys left out: <state_dir>/keys
    assert main(["run", str(copy), "--keys", str(keys_of(tmp_path, "table_1"))]) == 4  # no expanders here
    assert (f"--keys {keys_of(tmp_path, 'table_1')} is not the key folder {copy} names "
            f"({tmp_path / 'var/lib/croupier/table_1/keys'})") in caplog.text
    assert "set security.keys:" in caplog.text


@pytest.mark.parametrize("real", REAL, ids=lambda path: path.stem)
def test_starting_a_real_table_here_is_refused_naming_the_missing_device(
    real: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    copy = install_copy(real, tmp_path)
    state, keys = tmp_path / "var/lib/croupier/table_1", keys_of(tmp_path, "table_1")
    capsys.readouterr()
    assert main(["run", str(copy), "--state-dir", str(state), "--keys", str(keys)]) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and "is not the key folder" not in caplog.text
    gpio = load_table(real).spec.gpio
    assert gpio is not None and gpio.expanders
    exp = gpio.expanders[0]
    assert err == (f"croupier run: cannot open the GPIO panels: expander {exp.name}: no gpiochip at "
                   f"/sys/bus/i2c/devices/{exp.bus}-{exp.address:04x} (is dtoverlay=mcp23017,"
                   f"addr={exp.address:#04x},gpiopin={exp.int} in /boot/firmware/config.txt, and the chip "
                   "powered and wired?)\n")
    assert main(["gpio", "check", str(copy)]) == 4
    assert capsys.readouterr().err == f"croupier gpio check: cannot open the pins: {err.split(': ', 2)[2]}"


def test_without_expanders_the_header_is_named_and_with_simulated_pins_the_shoe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = REAL[0]
    data = yaml.safe_load(real.read_text())
    header_only = install_copy(real, tmp_path, "header_1", panels=data["panels"][:1],
                               gpio={"backend": "lgpio"})
    capsys.readouterr()
    assert main(["run", str(header_only)]) == 4
    err = capsys.readouterr().err
    assert err.startswith("croupier run: cannot open the GPIO panels: pin factory 'lgpio' cannot be opened")
    assert "Traceback" not in err
    if not any(Path("/dev").glob("gpiochip[0-9]*")):  # not a Pi: the refusal says so
        assert "(this machine has no GPIO chip /dev/gpiochip0: not a Raspberry Pi?)" in err
    simulated = install_copy(real, tmp_path, "mock_1", gpio={**data["gpio"], "backend": "mock"})
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", str(simulated), "--hello-timeout",
                             "0.2", "--log-level", "WARNING"], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if "no HELLO" in line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    text = "".join(lines)
    assert "cannot open /dev/croupier-shoe" in text and "no HELLO from /dev/croupier-shoe" in text, text
    assert "Traceback" not in text
