"""``croupier demo``'s options are checked before anything starts, and Ctrl-C never prints a traceback.

A mistyped option is one usage line naming the option (exit 2), with no temporary folder, key or process
left behind; Ctrl-C while the command is still loading, or while a simulation's worker processes run,
ends in one "interrupted" line.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal_support import as_from_a_terminal, assert_stopped_once, end_group, finish, read_until

ROOT = Path(__file__).resolve().parent.parent


def _croupier(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--ports", "70000"], ["--ports", "70000", "65532"]),
        (["--ports", "0"], ["--ports", "1..65532"]),
        (["--display", "127.0.0.1:99999"], ["--display", "99999", "HOST:PORT"]),
        (["--display", "nowhere"], ["--display", "HOST:PORT"]),
        (["--rounds", "-1"], ["--rounds", "'-1'", "1 or more"]),
        (["--rounds", "0"], ["--rounds", "'0'", "until Ctrl-C"]),
        (["--delay", "-1"], ["--delay", "'-1'", "0 or more"]),
        (["--delay", "nan"], ["--delay", "'nan'"]),
        (["--game", "poker"], ["--game", "'poker'", "baccarat", "one_card_poker", "swap_hand",
                               "two_way_winner", "all"]),
    ],
)
def test_a_bad_option_is_one_usage_line_and_leaves_nothing(tmp_path: Path, args: list[str],
                                                             words: list[str]) -> None:
    done = _croupier(["demo", *args], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)
    assert list(tmp_path.iterdir()) == []  # no croupier-demo-* folder, no key, no pty link


def test_game_all_refuses_ports_its_tables_cannot_fit(tmp_path: Path) -> None:
    done = _croupier(["demo", "--game", "all", "--ports", "65520"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--ports 65520" in done.stderr and "at most" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_internal_options_are_not_in_the_users_help(tmp_path: Path) -> None:
    for command in (["demo", "--help"], ["display", "--help"]):
        done = _croupier(command, tmp_path)
        assert done.returncode == 0
        assert "--exit-with-parent" not in done.stdout, command
    assert "play until Ctrl-C" in " ".join(_croupier(["demo", "--help"], tmp_path).stdout.split())


def _interrupted_group(args: list[str], tmp: Path, wait_for: str | None, after: float = 0.0,
                       timeout: float = 120) -> tuple[int, str]:
    """Start croupier ARGS in its own process group, Ctrl-C the whole group (as a terminal does) ``after``
    seconds once ``wait_for`` appeared on stderr (at once when None), and return its exit code and stderr
    (it must exit within ``timeout`` s of the Ctrl-C)."""
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=as_from_a_terminal)
    try:
        seen = b"" if wait_for is None else read_until(proc, wait_for.encode())
        time.sleep(after)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=timeout)  # generous: it waits for an exit, it measures nothing
    finally:
        end_group(proc)
    return proc.returncode, (seen + err).decode(errors="replace")


#: CPython's own message for a Ctrl-C before it has imported its site module, before any of ours runs.
IN_PYTHON_START = "Fatal Python error: init_import_site"


def test_ctrl_c_while_loading_is_one_line(tmp_path: Path) -> None:
    code, err = _interrupted_group(["demo", "--rounds", "1", "--no-display"], tmp_path, None)
    if err.startswith(IN_PYTHON_START):  # under load the Ctrl-C can land there: CPython aborts, not ours
        assert err.rstrip().endswith("KeyboardInterrupt") and "controller" not in err, err
        return
    assert "Traceback" not in err, err
    # SIGINT before Python set its handler ends the process by the signal itself, silently; once the
    # demo runs its table (a loaded machine gets there before the signal lands), Ctrl-C is its clean
    # stop ("stopping...", exit 0), as at any later instant.
    assert code in (130, -signal.SIGINT, 0), (code, err)
    assert code != 130 or err.strip().splitlines()[-1] == "interrupted"


def test_ctrl_c_during_a_parallel_simulation_is_one_line(tmp_path: Path) -> None:
    code, err = _interrupted_group(["math", "swap_hand", "--workers", "2", "--rounds", "2000000"], tmp_path,
                                   "round")
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.count("interrupted") == 1, err


@pytest.mark.parametrize("after", [0.01, 0.02, 0.03, 0.04])
def test_ctrl_c_while_the_workers_start_stops_them_all(tmp_path: Path, after: float) -> None:
    """Sixteen workers take a while to start once the progress bar shows: a Ctrl-C then (SIGINT blocked
    while they fork, pending until the pool is owned) stops the pool. Before, one landing as the block
    was lifted left the pool unowned: its workers were stopped at exit, the pool started new ones, and the
    exit waited for those for ever (about one run in three at these instants)."""
    code, err = _interrupted_group(["math", "swap_hand", "--workers", "16", "--rounds", "200000"], tmp_path,
                                   "round", after=after, timeout=30)
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.count("interrupted") == 1, err


def test_a_kill_of_a_parallel_simulation_stops_its_workers_too(tmp_path: Path) -> None:
    """``kill PID`` (SIGTERM to the parent alone) while two workers play: the run stops as on Ctrl-C,
    saying "interrupted" once, and no worker outlives it. Before, SIGTERM's default action ended the
    parent alone; each worker played its chunk on, then printed a BrokenPipeError traceback."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "math", "swap_hand", "--workers", "2",
                             "--rounds", "2000000"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        # The bar's first rate: a chunk merged, both workers deep in their next ones. Not its second
        # "00:01<": on a loaded machine the first update came at 2 s, and the wait ran out.
        seen = read_until(proc, re.compile(rb"\d(round/s|s/round)\]"))
        proc.send_signal(signal.SIGTERM)
        _, err, left = finish(proc, timeout=60)
    finally:
        end_group(proc)
    text = seen.decode(errors="replace") + err
    assert_stopped_once(proc, text, left)
    assert "BrokenPipeError" not in text, text
