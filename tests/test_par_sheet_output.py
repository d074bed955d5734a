"""``croupier math GAME --output FILE``: the exact sheet in docs/strategy/ is what the command writes,
and the file is written as every file we make: whole, and private from its first byte (0600)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("game", ["swap_hand", "two_way_winner"])
def test_the_committed_strategy_sheet_is_what_math_output_writes_privately(game: str, tmp_path: Path) -> None:
    target = tmp_path / f"{game}.md"
    argv = ["math", game, "--format", "markdown", "--output", str(target)]
    code = f"import os, sys; os.umask(0o022); from controller.cli import main; sys.exit(main({argv!r}))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the sheet went to the file, not the terminal
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == (ROOT / "docs" / "strategy" / f"{game}_exact.md").read_text()
    assert not [p for p in os.listdir(tmp_path) if p != target.name]  # no temporary file left


def test_math_output_to_a_folder_that_does_not_exist_is_refused_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "sheet.md"
    argv = ["math", "swap_hand", "--format", "markdown", "--output", str(target)]
    proc = subprocess.run([sys.executable, "-m", "controller.cli", *argv], cwd=ROOT, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert f"cannot write {target}" in proc.stderr and "Traceback" not in proc.stderr
