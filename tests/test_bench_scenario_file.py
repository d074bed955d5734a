"""bench/scenario_daemon.py --write: the generated Baccarat file a user runs by hand (issue 17's aim).

The bench times a file it makes in a temp dir; a user checking the aim with `croupier scenario FILE
--through-daemon` needs that same file, so `--write FILE` keeps it. The file must be a valid scenario
that settles every round it says it has, and the same seed must give the same file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write(path: Path, rounds: int, seed: int) -> str:
    args = ["--rounds", str(rounds), "--seed", str(seed), "--write", str(path)]
    done = subprocess.run([sys.executable, "bench/scenario_daemon.py", *args],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def test_written_file_is_the_scenario_the_bench_times(tmp_path: Path) -> None:
    path = tmp_path / "baccarat.yaml"
    out = write(path, 6, 3)
    assert f"wrote {path}: 6 Baccarat rounds" in out
    assert f"croupier scenario {path} --settled-only --through-daemon" in out
    done = subprocess.run([sys.executable, "-m", "controller.cli", "scenario", str(path), "--settled-only"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    settled = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["round"] for line in settled] == [1, 2, 3, 4, 5, 6]
    assert all(line["event"] == "round_settled" and line["settlements"] for line in settled)
    again = tmp_path / "again.yaml"
    write(again, 6, 3)
    assert again.read_text() == path.read_text()
    write(again, 6, 4)
    assert again.read_text() != path.read_text()
