"""The simulation tools' shared statistics and chunked runs."""

from __future__ import annotations

import math
import os
import re
import signal
import statistics
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from terminal_support import assert_stopped_once, finish, group_alive, read_until, script_group

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



def parallel_run(jobs: list[float] | str, play: str, setup: str = "") -> str:
    """A script that plays ``jobs`` (seconds; or a Python expression of them) through ``run_chunks`` in two
    workers, each job by the statements ``play`` (its ``seconds`` given) after ``setup``, and says
    "interrupted" and exits 130 when stopped, as the command line does."""
    listed = jobs if isinstance(jobs, str) else repr(jobs)
    return (
        "import sys, time\n"
        "from controller.simulation.montecarlo import run_chunks\n\n"
        f"def play(seconds: float) -> float:\n{textwrap.indent(play.strip(), '    ')}\n    return seconds\n\n"
        f"if __name__ == '__main__':\n{textwrap.indent(setup.strip() or 'pass', '    ')}\n    try:\n"
        f"        run_chunks({listed}, play, lambda seconds: None, lambda seconds: 1, 2)\n"
        "    except KeyboardInterrupt:\n        print('interrupted', file=sys.stderr, flush=True)\n"
        "        sys.exit(130)\n")


#: A job that says when it has started, then plays its seconds.
STARTED = """
print("started", file=sys.stderr, flush=True)
time.sleep(seconds)
"""


#: A parallel run of a short job and a long one in two workers: the first worker then waits for a task
#: that never comes; says when the short job is done.
IDLE_WORKER = parallel_run([0.2, 60.0], """
time.sleep(seconds)
if seconds < 1:
    print("short job done", file=sys.stderr, flush=True)
""")


def test_a_kill_of_the_whole_group_while_a_worker_waits_for_a_task_stops_the_run(tmp_path: Path) -> None:
    """SIGTERM to the run's whole process group (``timeout``, ``kill -- -PGID``, systemd's stop) while one
    worker waits for a task, as at every run's tail: the run stops, "interrupted" once, no worker left.
    Before, the waiting worker died by SIGTERM's default action holding the task queue's read lock, and
    ``pool.terminate()``, which takes that lock first, waited for ever: the run hung until SIGKILL."""
    with script_group(IDLE_WORKER, tmp_path) as proc:
        seen = read_until(proc, b"short job done").decode()
        time.sleep(0.5)  # the worker back at its wait for a task
        os.killpg(proc.pid, signal.SIGTERM)
        _, err, left = finish(proc)
    assert_stopped_once(proc, seen + err, left)


#: A parallel run of two long jobs in two workers whose pool, once stopped, takes a second to clean up after
#: its workers (``_ExecutorManagerThread.join_executor_internals`` slowed: the test's window inside the
#: pool's shutdown); says when both jobs have started and when the clean-up begins and ends.
SLOW_DRAIN = parallel_run([60.0, 60.0], STARTED, """
from concurrent.futures import process
drain = process._ExecutorManagerThread.join_executor_internals
def slow(self: object) -> None:
    print("draining", file=sys.stderr, flush=True)
    time.sleep(1.0)
    drain(self)
    print("drained", file=sys.stderr, flush=True)
process._ExecutorManagerThread.join_executor_internals = slow
""")


def test_a_second_ctrl_c_while_the_pool_shuts_down_waits_for_the_shutdown(tmp_path: Path) -> None:
    """A second Ctrl-C while the pool, stopped by the first, shuts down (an impatient user): the shutdown is
    finished, then the run says "interrupted" once, exit 130, no worker left. Before (helper-142, with
    ``multiprocessing.Pool``), the second was raised inside ``pool.terminate()``, which was left part done;
    the exit's clean-up then sent the workers a SIGTERM they block, and waited for them for ever."""
    with script_group(SLOW_DRAIN, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started[^s]*started"))
        proc.send_signal(signal.SIGINT)
        seen += read_until(proc, b"draining")
        proc.send_signal(signal.SIGINT)
        _, err, left = finish(proc)
    text = seen.decode() + err
    assert_stopped_once(proc, text, left)
    assert text.index("drained") < text.index("interrupted"), text


#: A parallel run of two long jobs in two workers; says when each has started.
BUSY_WORKERS = parallel_run([60.0, 60.0], STARTED)


def test_two_stops_back_to_back_are_one_stop(tmp_path: Path) -> None:
    """A Ctrl-C and, at once, a kill while the workers play: one "interrupted", exit 130, no traceback, no
    worker left. Before, the second was raised inside the wait for a result the first had broken off: a
    RuntimeError traceback ("release unlocked lock") and exit 1 (helper-143: 15 of 15; two Ctrl-Cs 0.1 ms
    apart, as a terminal's under ``timeout``, which passes it on, did so 2 to 4 times in 12: two sent back
    to back here merge into one, so the kill stands in for the second)."""
    with script_group(BUSY_WORKERS, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started[^s]*started")).decode()
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        _, err, left = finish(proc)
    assert_stopped_once(proc, seen + err, left)


def test_a_run_killed_alone_leaves_no_worker_playing(tmp_path: Path) -> None:
    """SIGKILL of the run's parent alone (``kill -9 PID``, the OOM killer) while its workers play: they end
    too, by the kernel's SIGKILL when their parent dies (controller.orphans). Before, the workers, which
    block every stop, played their chunks on (a minute each here; a simulation's can be longer) with no one
    to take their results."""
    with script_group(BUSY_WORKERS, tmp_path) as proc:
        read_until(proc, re.compile(rb"started[^s]*started"))
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30
        while group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not group_alive(proc.pid), "a worker outlived its killed parent"


#: A job that says when it has started, and in which process, then plays its seconds.
STARTED_IN = """
import os
print(f"started in {os.getpid()}", file=sys.stderr, flush=True)
time.sleep(seconds)
"""


def assert_lost(proc: subprocess.Popen[bytes], text: str, left: bool) -> None:
    """A parallel run stopped by a worker lost: exit 1 with the reason, no traceback, no worker left."""
    assert proc.returncode == 1, text
    assert "a simulation worker process ended abruptly" in text and "incomplete" in text, text
    assert "Traceback" not in text and "interrupted" not in text, text
    assert not left, "a worker outlived the run"


def test_a_worker_killed_from_outside_while_it_plays_stops_the_run_and_says_so(tmp_path: Path) -> None:
    """SIGKILL of one worker (the OOM killer picks the largest process) while both play: the run stops at
    once, exit 1, "ended abruptly ... incomplete", the other worker ended too. Before, the pool started a
    new worker, the killed one's chunk was never played again, and the run waited for its result for ever."""
    with script_group(parallel_run([60.0, 60.0], STARTED_IN), tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started in \d+[^s]*started in \d+")).decode()
        os.kill(int(re.findall(r"started in (\d+)", seen)[0]), signal.SIGKILL)
        _, err, left = finish(proc)
    assert_lost(proc, seen + err, left)


#: A parallel run of a short job and a long one in two workers; the short one's worker says its pid when
#: done, then waits for a task that never comes, holding the task queue's lock.
IDLE_WORKER_PID = parallel_run([0.2, 60.0], """
import os
time.sleep(seconds)
if seconds < 1:
    print(f"short job done in {os.getpid()}", file=sys.stderr, flush=True)
""")


def test_a_worker_killed_from_outside_while_it_waits_for_a_task_stops_the_run(tmp_path: Path) -> None:
    """SIGKILL of the worker that waits for a task (it holds the task queue's read lock, which a dead process
    never gives back): the run stops, exit 1, says why, no worker left. Before, the pool's shutdown took that
    lock first, and the run hung until SIGKILL; the chunk the other worker played was waited for anyway."""
    with script_group(IDLE_WORKER_PID, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"short job done in \d+\n")).decode()
        time.sleep(0.5)  # the worker back at its wait for a task
        os.kill(int(re.findall(r"done in (\d+)", seen)[0]), signal.SIGKILL)
        _, err, left = finish(proc)
    assert_lost(proc, seen + err, left)


def test_a_worker_lost_while_the_jobs_are_handed_out_stops_the_run_and_says_so(tmp_path: Path) -> None:
    """A worker gone before every job is handed to the pool (here the first job's own worker SIGKILLs itself
    while 200,000 more are submitted): exit 1 and the reason, no traceback, no worker left. Before
    (helper-147), ``submit`` raised BrokenProcessPool outside the run's handling: a traceback."""
    script = parallel_run("[0.0] * 200_000", """
import os, signal
os.kill(os.getpid(), signal.SIGKILL)
""")
    with script_group(script, tmp_path) as proc:
        _, err, left = finish(proc, timeout=60)
    assert_lost(proc, err, left)
