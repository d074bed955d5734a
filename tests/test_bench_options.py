"""Benches' options a user types from their docstrings (issue 17's acceptance, tried by hand).

bench/scenario_daemon.py --write: the bench times a file it makes in a temp dir; a user checking
the aim with `croupier scenario FILE --through-daemon` needs that same
file, so `--write FILE` keeps it. The file must be a valid scenario that settles every round it says
it has, and the same seed must give the same file.
"""

from __future__ import annotations

import importlib.util
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
    done = subprocess.run([sys.executable, "-m", "controller.cli", "scenario", str(path), "--settled-only",
                           "--json"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    settled = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["round"] for line in settled] == [1, 2, 3, 4, 5, 6]
    assert all(line["event"] == "round_settled" and line["settlements"] for line in settled)
    again = tmp_path / "again.yaml"
    write(again, 6, 3)
    assert again.read_text() == path.read_text()
    write(again, 6, 4)
    assert again.read_text() != path.read_text()


def test_panel_memory_takes_game_names_and_names_an_unknown_table() -> None:
    # The docstring's example is `--tables baccarat,swap_hand`: game names, not the files' stems.
    spec = importlib.util.spec_from_file_location("panel_memory", ROOT / "bench" / "panel_memory.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.table_name("baccarat") == "baccarat_sim"
    assert bench.table_name("baccarat_shuffler_sim") == "baccarat_shuffler_sim"
    assert {bench.table_name(name) for name in ("baccarat", "swap_hand")} <= set(bench.TABLES)
    args = ["--tables", "baccarat,nope", "--rounds", "1"]
    done = subprocess.run([sys.executable, "bench/panel_memory.py", *args],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "--tables: no shipped simulated table nope (one of " in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_resync_bench_asks_for_make_node_when_the_node_follower_cannot_run(tmp_path: Path) -> None:
    # Without node on PATH the Node follower cannot start: one usage line saying `make node`, not a
    # traceback from inside the first run ("the follower stopped").
    args = ["--follower", "node", "--runs", "1"]
    done = subprocess.run([sys.executable, "bench/resync_after_restart.py", *args],
                          cwd=ROOT, capture_output=True, text=True, check=False, env={"PATH": str(tmp_path)})
    assert done.returncode == 2
    assert "--follower node needs Node and the follower's packages" in done.stderr
    assert "run `make node` first" in done.stderr and "Traceback" not in done.stderr


def test_the_full_table_bench_says_the_lines_are_identical_for_a_short_run() -> None:
    """bench/full_tables.py is issue 25's acceptance figure: a short run of one table must say "yes"
    (it said NO once the scenario command ended its output with a verdict line)."""
    args = ["--rounds", "3", "--table", "baccarat_7seat_sim"]
    done = subprocess.run([sys.executable, "bench/full_tables.py", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "settlement lines identical: yes (3 / 3, and the verdict)" in done.stdout, done.stdout


def test_photo_cut_writes_a_png_box_lossless_and_quietly(tmp_path: Path) -> None:
    # bench/vision_photos.py cut: a box of a PNG photograph stays a lossless PNG, without the JPEG quality
    # flag OpenCV warned about once per box ("unsupported key") on martinabeleda's 150 PNG boxes.
    import cv2
    import numpy as np

    photo = np.zeros((100, 200, 3), np.uint8)
    photo[:, :, 1] = np.arange(200, dtype=np.uint8)  # a ramp: any lossy step would change it
    (tmp_path / "src").mkdir()
    cv2.imwrite(str(tmp_path / "src" / "table.png"), photo)
    table = tmp_path / "set.csv"
    table.write_text("# a test table\nset,photo,card,box\ntest,table.png,none,0.25 0.5 0.75 1.0\n")
    args = ["cut", "--photos", str(tmp_path / "src"), "--table", str(table), "--out", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "bench/vision_photos.py", *args],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert "1 frames and labels.csv" in done.stdout
    assert "unsupported key" not in done.stderr
    box = cv2.imread(str(tmp_path / "out" / "test" / "table-none.png"))
    assert box is not None and np.array_equal(box, photo[50:100, 50:150])
    assert (tmp_path / "out" / "test" / "labels.csv").read_text() == "file,card\ntable-none.png,none\n"
