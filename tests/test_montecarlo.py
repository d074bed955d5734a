"""The simulation tools' shared statistics and chunked runs."""

from __future__ import annotations

import math
import os
import signal
import statistics
import subprocess
import sys
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

#: A parallel run of a few short jobs whose pool takes a second to begin its shutdown at the run's end
#: (``Pool.terminate`` wrapped: the test's window for a Ctrl-C there); prints each step.
SLOW_SHUTDOWN = """
import sys, time
from multiprocessing import pool
from controller.simulation.montecarlo import run_chunks

def play(n: int) -> int:
    return n

if __name__ == "__main__":
    terminate = pool.Pool.terminate
    def slow(self: pool.Pool) -> None:
        print("terminating", file=sys.stderr, flush=True)
        time.sleep(1.0)
        terminate(self)
        print("terminated", file=sys.stderr, flush=True)
    pool.Pool.terminate = slow
    try:
        run_chunks(list(range(8)), play, lambda n: None, lambda n: 1, 2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
"""


def test_a_ctrl_c_while_the_pool_shuts_down_waits_for_its_shutdown(tmp_path: Path) -> None:
    """A Ctrl-C as a parallel run ends, while its pool shuts down: the shutdown is finished, then the stop
    is taken ("interrupted"), and no worker outlives the run. Before, the stop was raised inside
    ``Pool.terminate()``, which was left part done: a pool whose worker handler had not been told to stop
    starts new workers, and the exit then waits for them."""
    script = tmp_path / "slow_shutdown.py"
    script.write_text(SLOW_SHUTDOWN)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=as_from_a_terminal)
    try:
        seen = read_until(proc, b"terminating")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        left = group_alive(proc.pid)  # before the clean-up below kills what is left
    finally:
        end_group(proc)
    text = (seen + err).decode(errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    assert text.index("terminated") < text.index("interrupted"), text
    assert not left, "a worker outlived the run"
