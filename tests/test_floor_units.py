"""The floor's systemd units (systemd/croupier-floor-*.service): systemd accepts them, they are hardened as
the table's units are, and their command lines, filled from docs/floor.md's example environment file, are
ones croupier's own parser takes (so a renamed option cannot leave a unit that never starts)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_install import exposure

from controller.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
UNITS = ("croupier-floor-record.service", "croupier-floor-alerts.service", "croupier-floor-serve.service")
#: docs/floor.md's /etc/croupier/floor.env, as a floor server would have it.
ENV = {"CROUPIER_NATS": "nats://floor1.example:4222", "CROUPIER_BOARD_LISTEN": "0.0.0.0:8090",
       "CROUPIER_FLOOR_DB": "postgresql://croupier_recorder@db1:5432/floor",
       "CROUPIER_BOARD_DB": "postgresql://croupier_board@db1:5432/floor",
       "CROUPIER_GAMING_DAY_STARTS": "06:00",
       "CROUPIER_FLOOR_OPTIONS": "--user floor --password-file /etc/croupier/floor-nats.password"}


def command_line(unit: str) -> list[str]:
    """ExecStart as systemd runs it: ``${X}`` one word, ``$X`` split at spaces (none if empty)."""
    start = next(line for line in (ROOT / "systemd" / unit).read_text().splitlines()
                 if line.startswith("ExecStart="))
    words: list[str] = []
    for word in shlex.split(start.removeprefix("ExecStart=")):
        if m := re.fullmatch(r"\$\{(\w+)\}", word):
            words.append(ENV[m.group(1)])
        elif m := re.fullmatch(r"\$(\w+)", word):
            words += ENV[m.group(1)].split()
        else:
            words.append(word)
    return words


@pytest.mark.parametrize("unit", UNITS)
def test_a_floor_unit_s_command_is_one_croupier_takes(unit: str) -> None:
    words = command_line(unit)
    assert words[0] == "/opt/croupier/venv/bin/croupier"
    args = build_parser().parse_args(words[1:])  # exits (SystemExit) on an option it does not know
    assert args.nats == ENV["CROUPIER_NATS"] and args.user == "floor"
    role = "CROUPIER_BOARD_DB" if unit.endswith("serve.service") else "CROUPIER_FLOOR_DB"
    assert args.db == ENV[role]
    if unit.endswith("serve.service"):  # the board's gaming day (docs/floor.md, "The gaming day")
        assert args.gaming_day_starts.isoformat(timespec="minutes") == ENV["CROUPIER_GAMING_DAY_STARTS"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze on this machine")
def test_systemd_accepts_the_floor_units_and_they_are_hardened(tmp_path: Path) -> None:
    units = tmp_path / "usr/lib/systemd/system"
    units.mkdir(parents=True)
    for pattern in ("*.target", "*.slice"):  # the distribution's own, so verify resolves the dependencies
        for found in Path("/usr/lib/systemd/system").glob(pattern):
            shutil.copy(found, units / found.name, follow_symlinks=True)
    (tmp_path / "etc/systemd/system").mkdir(parents=True)
    (tmp_path / "etc/croupier").mkdir(parents=True)
    (tmp_path / "etc/croupier/floor.env").write_text("".join(f"{k}={v}\n" for k, v in ENV.items()))
    croupier = tmp_path / "opt/croupier/venv/bin/croupier"  # this checkout's, where the units expect it
    croupier.parent.mkdir(parents=True)
    shutil.copy(Path(sys.executable).parent / "croupier", croupier)
    for unit in UNITS:
        shutil.copy(ROOT / "systemd" / unit, tmp_path / "etc/systemd/system" / unit)
    for unit in UNITS:
        verify = subprocess.run(["systemd-analyze", "verify", f"--root={tmp_path}", unit],
                                capture_output=True, text=True, check=False)
        assert verify.returncode == 0 and not verify.stderr.strip(), verify.stderr
        assert exposure(unit, tmp_path) <= 1.5, unit
