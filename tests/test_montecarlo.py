"""The simulation tools' shared statistics and chunked runs."""

from __future__ import annotations

import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal_support import as_from_a_terminal, end_group, group_alive, read_until

from controller.games.baccarat.simulation import simulate
from controller.simulation.montecarlo import chunks, mean_interval


def test_mean_interval_matches_the_textbook_formula() -> None:
    data = [3, -1, 4, -1, -5, 9, 2, -6]
    mean, half = mean_interval(sum(data), sum(x * x for x in data), len(data))
    assert mean == pytest.approx(statistics.fmean(data))
    assert half == pytest.approx(1.96 * statistics.stdev(data) / math.sqrt(len(data)))
    with pytest.raises(ValueError):
        mean_interval(1, 1, 1)


def test_chunks_cover_the_run_exactly() -> None:
    assert list(chunks(120, 50)) == [(0, 50), (1, 50), (2, 20)]
    assert sum(n for _, n in chunks(1_000_001, 50_000)) == 1_000_001


@pytest.mark.timeout(120)
def test_the_answer_does_not_depend_on_the_number_of_workers() -> None:
    one = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=1)
    two = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=2)
    assert one == two and one.rounds == 60_000



ROOT = Path(__file__).resolve().parent.parent

#: A parallel run of a short job and a long one in two workers: the first worker then waits for a task
#: that never comes; says when the short job is done.
IDLE_WORKER = """
import sys, time
from controller.simulation.montecarlo import run_chunks

def play(seconds: float) -> float:
    time.sleep(seconds)
    if seconds < 1:
        print("short job done", file=sys.stderr, flush=True)
    return seconds

if __name__ == "__main__":
    try:
        run_chunks([0.2, 60.0], play, lambda seconds: None, lambda seconds: 1, 2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
"""


def test_a_kill_of_the_whole_group_while_a_worker_waits_for_a_task_stops_the_run(tmp_path: Path) -> None:
    """SIGTERM to the run's whole process group (``timeout``, ``kill -- -PGID``, systemd's stop) while one
    worker waits for a task, as at every run's tail: the run stops, "interrupted" once, no worker left.
    Before, the waiting worker died by SIGTERM's default action holding the task queue's read lock, and
    ``pool.terminate()``, which takes that lock first, waited for ever: the run hung until SIGKILL."""
    script = tmp_path / "idle_worker.py"
    script.write_text(IDLE_WORKER)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        seen = read_until(proc, b"short job done")
        time.sleep(0.5)  # the worker back at its wait for a task
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        left = group_alive(proc.pid)  # before the clean-up below kills what is left
    finally:
        end_group(proc)
    text = (seen + err).decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    assert text.count("interrupted") == 1, text
    assert not left, "a worker outlived the run"


#: A parallel run of two long jobs in two workers whose pool, once stopped, takes a second to drain its
#: task queue (``Pool._help_stuff_finish`` slowed: the test's window inside ``pool.terminate()``); says when
#: both jobs have started and when the drain begins and ends.
SLOW_DRAIN = """
import sys, time
from multiprocessing import pool
from controller.simulation.montecarlo import run_chunks

def play(seconds: float) -> float:
    print("started", file=sys.stderr, flush=True)
    time.sleep(seconds)
    return seconds

if __name__ == "__main__":
    drain = pool.Pool._help_stuff_finish
    def slow(*args: object) -> None:
        print("draining", file=sys.stderr, flush=True)
        time.sleep(1.0)
        drain(*args)
        print("drained", file=sys.stderr, flush=True)
    pool.Pool._help_stuff_finish = staticmethod(slow)
    try:
        run_chunks([60.0, 60.0], play, lambda seconds: None, lambda seconds: 1, 2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
"""


def test_a_second_ctrl_c_while_the_pool_shuts_down_waits_for_the_shutdown(tmp_path: Path) -> None:
    """A second Ctrl-C while the pool, stopped by the first, shuts down (an impatient user): the shutdown is
    finished, then the run says "interrupted" once, exit 130, no worker left. Before (helper-142), the
    second was raised inside ``pool.terminate()``, which was left part done; the exit's clean-up then sent
    the workers a SIGTERM they block, and waited for them for ever."""
    script = tmp_path / "slow_drain.py"
    script.write_text(SLOW_DRAIN)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=as_from_a_terminal)
    try:
        seen = read_until(proc, re.compile(rb"started[^s]*started"))
        proc.send_signal(signal.SIGINT)
        seen += read_until(proc, b"draining")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        left = group_alive(proc.pid)  # before the clean-up below kills what is left
    finally:
        end_group(proc)
    text = (seen + err).decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert text.index("drained") < text.index("interrupted") and text.count("interrupted") == 1, text
    assert not left, "a worker outlived the run"


#: A parallel run of two long jobs in two workers; says when each has started.
BUSY_WORKERS = """
import sys, time
from controller.simulation.montecarlo import run_chunks

def play(seconds: float) -> float:
    print("started", file=sys.stderr, flush=True)
    time.sleep(seconds)
    return seconds

if __name__ == "__main__":
    try:
        run_chunks([60.0, 60.0], play, lambda seconds: None, lambda seconds: 1, 2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
"""


def test_two_stops_back_to_back_are_one_stop(tmp_path: Path) -> None:
    """A Ctrl-C and, at once, a kill while the workers play: one "interrupted", exit 130, no traceback, no
    worker left. Before, the second was raised inside the wait for a result the first had broken off: a
    RuntimeError traceback ("release unlocked lock") and exit 1 (helper-143: 15 of 15; two Ctrl-Cs 0.1 ms
    apart, as a terminal's under ``timeout``, which passes it on, did so 2 to 4 times in 12: two sent back
    to back here merge into one, so the kill stands in for the second)."""
    script = tmp_path / "busy_workers.py"
    script.write_text(BUSY_WORKERS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=as_from_a_terminal)
    try:
        seen = read_until(proc, re.compile(rb"started[^s]*started"))
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        left = group_alive(proc.pid)  # before the clean-up below kills what is left
    finally:
        end_group(proc)
    text = (seen + err).decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert text.count("interrupted") == 1, text
    assert not left, "a worker outlived the run"
